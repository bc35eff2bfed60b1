# Where gpu_soft_threshold()'s time goes at 300 x 50000 (the engine's call,
# with its stage timings, against the whole function).
suppressPackageStartupMessages(library(gpucor))
set.seed(1); n <- 300; p <- 50000
f <- matrix(rnorm(n * 20), n); w <- matrix(rnorm(20 * p) * (runif(20 * p) < 0.1), 20)
x <- f %*% w + matrix(rnorm(n * p), n)
invisible(gpu_soft_threshold(x[, 1:2000], backend = "gpu"))
options(gpucor.profile = TRUE)
opts <- gpucor:::.engine_opts("gpu", "double")
pw <- c(1:10, seq(12, 20, 2))
for (k in 1:2) {
  t <- system.time(K <- .Call(gpucor:::C_gpucor_network, x, 2L, "pearson", "pairwise.complete.obs", NULL,
                              gpucor:::.network_params(3L, 1, pw), opts))[["elapsed"]]
  cat(sprintf("engine call %.3f s; timing attr: %s\n", t, paste(round(attr(K, "timing"), 3), collapse = " ")))
}
t <- system.time(for (j in seq_along(pw)) gpucor:::.scale_free_fit(K[, j], 10, FALSE))[["elapsed"]]
cat(sprintf("15 scale-free fits %.3f s\n", t))
cat(sprintf("whole function %.3f s\n", system.time(gpu_soft_threshold(x, backend = "gpu"))[["elapsed"]]))
