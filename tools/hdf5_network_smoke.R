# tools/hdf5_network_smoke.R -- gpu_adjacency()/gpu_tom()/gpu_bicor() with
# output = gpu_hdf5() on the GPU, one and two workers, against the same
# calls in memory (bitwise).  Run on the GPU machine with HDF5Array.
suppressMessages(library(gpucor))
set.seed(1)
x <- matrix(rnorm(40 * 3000), 40)
x[sample(length(x), 300)] <- NA
f <- tempfile(fileext = ".h5")
same <- function(a, b, what) cat(sprintf("%-40s %s\n", what, if (identical(a, b)) "identical" else "DIFFERENT"))
for (d in list(0L, c(0L, 0L))) {
  nm <- paste(length(d), "worker(s)")
  same(as.matrix(gpu_adjacency(x, backend = "gpu", devices = d, output = gpu_hdf5(f, paste0("a", length(d))))),
       gpu_adjacency(x, backend = "gpu", devices = d), paste("adjacency, NA,", nm))
  same(as.matrix(gpu_bicor(x, use = "pairwise", backend = "gpu", devices = d, output = gpu_hdf5(f, paste0("b", length(d))))),
       gpu_bicor(x, use = "pairwise", backend = "gpu", devices = d), paste("bicor pairwise,", nm))
}
xc <- x[, 1:2000]; xc[is.na(xc)] <- 0
# (as.matrix() of a 'dist' without labels names the rows 1..n: unname)
same(unname(as.matrix(gpu_tom(xc, dist = TRUE, backend = "gpu", output = gpu_hdf5(f, "t")))),
     unname(as.matrix(gpu_tom(xc, dist = TRUE, backend = "gpu"))), "tom dist")
same(as.matrix(gpu_tom(xc, backend = "gpu", precision = "single", output = gpu_hdf5(f, "ts"))),
     gpu_tom(xc, backend = "gpu", precision = "single"), "tom single")
