# tools/sinks_smoke.R -- every sink of the engine's table on the GPU, small,
# each against the CPU: dense (gpu_cor, gpu_cov's spreads), dist
# (gpu_dist, whole and a BiocParallel window), select (gpu_cor_edges,
# gpu_knn), dist on the device (gpu_hclust from x), dense on the device
# (gpu_tom), sums of powers (gpu_soft_threshold), file (output =
# gpu_hdf5(), when HDF5Array is installed).  Prints one line per sink and
# "sinks: N ok, M differ"; tools/device.sh's sanitize-sinks runs it under
# compute-sanitizer (memcheck with the leak check, then racecheck).
suppressMessages(library(gpucor))
set.seed(7)
x <- matrix(rnorm(60 * 40), 60); x[, 3] <- 1
xn <- x; xn[sample(length(x), 80)] <- NA
ok <- 0; bad <- 0
same <- function(what, a, b, tol = 1e-10) {
  a <- unclass(a); b <- unclass(b); attributes(a) <- NULL; attributes(b) <- NULL
  d <- if (length(a) != length(b)) Inf else max(c(0, abs(a - b)), na.rm = TRUE)
  good <- is.finite(d) && d <= tol && identical(is.na(a), is.na(b))
  cat(sprintf("%-34s %s (max diff %.2g)\n", what, if (good) "ok" else "DIFFERS", d))
  if (good) ok <<- ok + 1 else bad <<- bad + 1
}
run <- function(f) list(gpu = suppressWarnings(f("gpu")), cpu = suppressWarnings(f("cpu")))
r <- run(function(b) gpu_cor(xn, use = "pairwise", backend = b)); same("dense: gpu_cor", r$gpu, r$cpu)
r <- run(function(b) gpu_cov(x, method = "kendall", backend = b)); same("dense, spreads: gpu_cov", r$gpu, r$cpu, 1e-9)
r <- run(function(b) gpu_dist(x, "canberra", backend = b)); same("dist: gpu_dist", r$gpu, r$cpu)
r <- run(function(b) gpu_dist(xn, "spearman", backend = b)); same("dist: gpu_dist spearman NA", r$gpu, r$cpu)
r <- run(function(b) gpu_cor_edges(x, top_k = 3, backend = b)); same("select: gpu_cor_edges top_k", r$gpu$weight, r$cpu$weight)
r <- run(function(b) gpu_cor_edges(xn, use = "pairwise", fdr = 0.5, backend = b)); same("select: gpu_cor_edges fdr", r$gpu$weight, r$cpu$weight)
r <- run(function(b) gpu_knn(x, 5, backend = b)); same("select: gpu_knn", r$gpu$distance, r$cpu$distance)
r <- run(function(b) gpu_hclust(x = x, method = "average", backend = b)); same("dist on device: gpu_hclust", r$gpu$height, r$cpu$height)
r <- run(function(b) gpu_tom(x, power = 4, backend = b)); same("dense on device: gpu_tom", r$gpu, r$cpu)
r <- run(function(b) gpu_soft_threshold(x, powerVector = c(1, 3, 6), backend = b)$fitIndices)
same("sums of powers: gpu_soft_threshold", r$gpu$mean.k., r$cpu$mean.k.)
if (requireNamespace("HDF5Array", quietly = TRUE)) {
  f <- tempfile(fileext = ".h5")
  r <- list(gpu = gpu_cor(x, backend = "gpu", output = gpu_hdf5(f, "g")),
            cpu = gpu_cor(x, backend = "cpu", output = gpu_hdf5(f, "c")))
  same("file: gpu_cor(output =)", as.matrix(r$gpu), as.matrix(r$cpu))
  r <- list(gpu = gpu_dist(xn, "correlation", backend = "gpu", output = gpu_hdf5(f, "dg")),
            cpu = gpu_dist(xn, "correlation", backend = "cpu", output = gpu_hdf5(f, "dc")))
  same("file: gpu_dist(output =)", as.matrix(r$gpu), as.matrix(r$cpu))
}
cat(sprintf("sinks: %d ok, %d differ\n", ok, bad))
