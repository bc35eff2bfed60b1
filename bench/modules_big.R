# Issue 38: gpu_blockwise_modules() on 300 samples x 50000 simulated genes
# (20 planted modules from latent factors, 40% unassigned), one block,
# with its defaults -- past WGCNA, whose blocks stop at 46340 genes (int
# indexing).  Prints the time, this process's peak host memory (VmHWM) and
# how well the modules recover the planted ones (adjusted Rand index).
#   Rscript bench/modules_big.R [genes]
suppressPackageStartupMessages(library(gpucor))
a <- commandArgs(TRUE)
p <- if (length(a)) as.integer(a[1]) else 50000L
n <- 300
set.seed(38)
f <- matrix(rnorm(n * 20), n, 20)
planted <- sample(0:20, p, TRUE, prob = c(0.4, rep(0.03, 20)))
load <- runif(p, 0.4, 0.9)
x <- matrix(rnorm(n * p), n, p)
for (j in which(planted > 0)) x[, j] <- load[j] * f[, planted[j]] + sqrt(1 - load[j]^2) * x[, j]
dimnames(x) <- list(paste0("s", 1:n), paste0("g", 1:p))
invisible(gpu_tom(x[, 1:50]))   # the GPU context, once
hwm0 <- grep("VmHWM", readLines("/proc/self/status"), value = TRUE)
t <- system.time(r <- gpu_blockwise_modules(x, maxBlockSize = p, verbose = 0))[["elapsed"]]
hwm <- grep("VmHWM", readLines("/proc/self/status"), value = TRUE)
ari <- function(a, b) {
  tab <- table(a, b); s <- function(v) sum(choose(v, 2))
  e <- s(rowSums(tab)) * s(colSums(tab)) / choose(sum(tab), 2)
  (s(tab) - e) / ((s(rowSums(tab)) + s(colSums(tab))) / 2 - e)
}
cat(sprintf("# %s, %d x %d simulated, %s\n", format(Sys.Date()), n, p,
            if (isTRUE(as.vector(gpu_available()))) gpu_info()$name[1] else "CPU"))
cat(sprintf("gpu_blockwise_modules: %.1f s; %s (data made: %s); modules %d; grey %d; ARI vs planted %.4f\n",
            t, hwm, hwm0, length(unique(r$colors)) - 1, sum(r$colors == "grey"),
            ari(r$colors, planted)))
