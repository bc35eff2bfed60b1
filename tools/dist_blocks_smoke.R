# gpu_dist()'s block reading (R/blocks.R) on the GPU, where the device
# bundle has no DelayedArray: the blocked path takes a plain matrix as its
# source, with DelayedArray's default block size (1e8 bytes), so 60 rows
# of 500000 coordinates make 3 blocks of 25 rows.  Prints one line per
# metric: the largest difference from gpu_dist() of the whole matrix.
suppressPackageStartupMessages(library(gpucor))
stopifnot(gpu_available())
set.seed(3)
x <- matrix(rnorm(60 * 5e5), 60)
x[2, ] <- 1
x[5, 7] <- NA
bad <- 0
for (m in c("euclidean", "maximum", "manhattan", "canberra", "minkowski", "correlation",
            "spearman", "kendall", "cosine")) {
  mi <- match(m, gpucor:::.gpucor_dist_methods)
  w <- suppressWarnings(gpu_dist(x, m, p = 3, backend = "gpu"))
  b <- suppressWarnings(gpucor:::.blocked_dist(x, mi, 3, "gpu", "double", 0L, FALSE))
  d <- max(abs(c(w) - c(b)), na.rm = TRUE)
  ok <- identical(is.na(c(w)), is.na(c(b))) && d <= 1e-12
  bad <- bad + !ok
  cat(sprintf("%-12s max |diff| %.3g  %s\n", m, d, if (ok) "ok" else "DIFFERS"))
}
cat(sprintf("dist blocks smoke: %d differ\n", bad))
