# bench/degree.R -- voxel degree centrality (issue 36): gpu_degree_centrality()
# of N voxels x T time points, Pearson and Spearman at r > 0.6, and at a
# density, on the GPU (and the CPU engine at a smaller N for scale).
#   Rscript bench/degree.R [N] [T] [backend]     (default 200000 1200 gpu)
suppressMessages(library(gpucor))
a <- commandArgs(TRUE)
N <- if (length(a) >= 1) as.numeric(a[1]) else 2e5
T <- if (length(a) >= 2) as.numeric(a[2]) else 1200
backend <- if (length(a) >= 3) a[3] else "gpu"
cat(sprintf("bench/degree.R, %s, %s, N = %d voxels, T = %d, backend %s\n",
            format(Sys.time(), "%Y-%m-%d %H:%M"),
            if (backend == "gpu") paste(gpu_info()$devices$name, collapse = " + ") else
              sprintf("%d threads", parallel::detectCores()), N, T, backend))
el <- function(expr) system.time(expr, gcFirst = FALSE)[["elapsed"]]
# voxels in 50 networks: a network's signal plus noise (r within a
# network ~0.5-0.8), so that degrees are not all 0
set.seed(1)
k <- 50
sig <- matrix(rnorm(T * k), T, k)
net <- sample.int(k, N, TRUE)
x <- sig[, net] * rep(runif(N, 0.8, 1.6), each = T)
x <- x + rnorm(length(x))
dim(x) <- c(T, N)
invisible(gpu_degree_centrality(x[, 1:2000], 0.6, backend = backend))   # contexts, warm
rows <- list()
for (m in c("pearson", "spearman")) {
  t1 <- el(d <- gpu_degree_centrality(x, 0.6, method = m, backend = backend))
  rows[[length(rows) + 1]] <- data.frame(case = sprintf("%s r > 0.6", m), seconds = t1,
                                         mean_degree = mean(d$degree))
}
t2 <- el(d <- gpu_degree_centrality(x, density = 0.01, backend = backend))
rows[[length(rows) + 1]] <- data.frame(case = "pearson density 0.01", seconds = t2,
                                       mean_degree = mean(d$degree))
# the dense check on a sample of voxels: their degrees from gpu_cor() of
# them against all
s <- sort(sample.int(N, 200))
d1 <- gpu_degree_centrality(x, 0.6, backend = backend)
r <- gpu_cor(x[, s], x, backend = backend)
r[cbind(seq_along(s), s)] <- NA
ref <- rowSums(r > 0.6, na.rm = TRUE)
print(do.call(rbind, rows), row.names = FALSE, digits = 4)
cat(sprintf("sampled voxels' degrees equal gpu_cor()'s count: %s (max |diff| %g)\n",
            identical(as.double(ref), d1$degree[s]), max(abs(ref - d1$degree[s]))))
ndev <- if (backend == "gpu") nrow(gpu_info()$devices) else 1
if (ndev > 1) {
  invisible(gpu_degree_centrality(x[, 1:20000], 0.6, devices = "all"))
  t3 <- el(da <- gpu_degree_centrality(x, 0.6, devices = "all"))
  cat(sprintf("pearson r > 0.6 on %d GPUs: %.2f s, %.2fx one GPU, identical %s\n",
              ndev, t3, rows[[1]]$seconds / t3, identical(da$degree, d1$degree)))
}
cat(grep("VmHWM", readLines("/proc/self/status"), value = TRUE), "\n")
