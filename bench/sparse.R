# gpu_cor() of a sparse matrix (issue 15): 50000 cells x 2000 genes, 7%
# non-zero counts, correlations between the genes, three ways, each in its
# own process (time, and peak resident memory above the input's):
#   sparse   gpu_cor(m)                     (src/cpu/sparse.c, never dense)
#   route    Matrix::crossprod, then centring and scaling in R (the
#            "tcrossprod route" of the issue)
#   dense    gpu_cor(as.matrix(m))
# and the largest difference of each from the dense engine (exact like
# stats::cor to ~1e-15).  Rscript bench/sparse.R [cells] [genes] [density]
args <- commandArgs(TRUE)
if (length(args) && args[1] == "--one") {
  suppressPackageStartupMessages({ library(Matrix); library(gpucor) })
  n <- as.numeric(args[3]); p <- as.numeric(args[4]); dens <- as.numeric(args[5])
  set.seed(1)
  m <- rsparsematrix(n, p, dens, rand.x = function(k) rpois(k, 2) + 1)
  invisible(gc())
  peak <- function() as.numeric(sub("kB", "", grep("^VmHWM", readLines("/proc/self/status"),
                                                   value = TRUE)[1] |> sub(pattern = "VmHWM:", replacement = "")))
  cat("5", file = "/proc/self/clear_refs")       # reset the high-water mark
  base <- peak()
  t <- system.time(r <- switch(args[2],
    sparse = gpu_cor(m, backend = "cpu"),
    route = {
      mu <- colMeans(m)
      C <- (as.matrix(crossprod(m)) - n * tcrossprod(mu)) / (n - 1)
      s <- sqrt(diag(C))
      C / tcrossprod(s)
    },
    dense = gpu_cor(as.matrix(m), backend = "cpu")))[["elapsed"]]
  saveRDS(r, args[6])
  cat(sprintf("%.2f %.0f\n", t, (peak() - base) / 1024))
  quit("no")
}
n <- if (length(args) >= 1) args[1] else "50000"
p <- if (length(args) >= 2) args[2] else "2000"
dens <- if (length(args) >= 3) args[3] else "0.07"
out <- list()
for (how in c("sparse", "route", "dense")) {
  f <- tempfile(fileext = ".rds")
  res <- system2(file.path(R.home("bin"), "Rscript"),
                 c("bench/sparse.R", "--one", how, n, p, dens, f), stdout = TRUE)
  v <- as.numeric(strsplit(res[length(res)], " ")[[1]])
  out[[how]] <- list(t = v[1], mb = v[2], r = readRDS(f))
}
ref <- out$dense$r
cat(sprintf("%s, %s cores, %s cells x %s genes, density %s\n", format(Sys.time(), "%Y-%m-%d"),
            parallel::detectCores(), n, p, dens))
cat(sprintf("%-8s %9s %12s %14s\n", "way", "seconds", "peak MB", "max |diff|"))
for (how in names(out))
  cat(sprintf("%-8s %9.2f %12.0f %14.2e\n", how, out[[how]]$t, out[[how]]$mb,
              max(abs(out[[how]]$r - ref))))
