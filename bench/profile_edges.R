# Where the time of the GPU's selections goes: the stage timings of option
# gpucor.profile (waiting for the device, committing on the host, total) for
# top-k and kNN, with the wide panels of the record-staging sinks and
# without (GPUCOR_TEST_WIDE=0).  Prints one table.
#   Rscript bench/profile_edges.R [select] [fdr]   (default: both)
suppressPackageStartupMessages(library(gpucor))
options(gpucor.profile = TRUE)
parts <- commandArgs(TRUE)
if (!length(parts)) parts <- c("select", "fdr")
if ("select" %in% parts) {
set.seed(1)
xv <- matrix(rnorm(300 * 100000), 300)
xk <- matrix(rnorm(100000 * 50), 100000)
invisible(gpu_cor_edges(xv[, 1:100], top_k = 10, backend = "gpu"))
invisible(gpu_knn(xk[1:1000, ], 15, backend = "gpu"))
cat(sprintf("%-32s %6s %8s %8s %8s %8s\n", "case", "wide", "elapsed", "wait", "commit", "engine"))
for (wide in c("1", "0")) {
  Sys.setenv(GPUCOR_TEST_WIDE = wide)
  t <- system.time(e <- gpu_cor_edges(xv, top_k = 10, backend = "gpu"))[["elapsed"]]
  s <- attr(e, "timing")
  cat(sprintf("%-32s %6s %8.3f %8.3f %8.3f %8.3f\n", "top_k 10, 300 x 100000", wide, t, s[1], s[2], s[3]))
  t <- system.time(nn <- gpu_knn(xk, 15, backend = "gpu"))[["elapsed"]]
  s <- attr(nn, "timing")
  cat(sprintf("%-32s %6s %8.3f %8.3f %8.3f %8.3f\n", "knn 100000 x 50, k 15", wide, t, s[1], s[2], s[3]))
  t <- system.time(d <- gpu_cor(xv[, 1:20000], backend = "gpu"))[["elapsed"]]
  cat(sprintf("%-32s %6s %8.3f\n", "(dense gpu_cor 300 x 20000)", wide, t))
}
}

# The FDR case of bench/edges.R, stage by stage (attribute "stages": the
# driver's host stages; "timing": device wait, host commit, engine total).
if ("fdr" %in% parts) {
set.seed(1)
x <- matrix(rnorm(300 * 20000), 300)
x[, 1:2000] <- x[, 1:2000] + rnorm(300)
invisible(gpu_cor_edges(x[, 1:100], fdr = 0.05, backend = "gpu"))
for (rep in 1:3) {
  t <- system.time(e <- gpu_cor_edges(x, fdr = 0.05, backend = "gpu"))[["elapsed"]]
  cat(sprintf("fdr 0.05, 300 x 20000: %.3f s, %d pairs\n", t, nrow(e)))
  print(round(attr(e, "stages"), 4))
  print(round(attr(e, "timing"), 4))
}
}
