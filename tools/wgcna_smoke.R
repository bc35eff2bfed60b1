# The GPU against the CPU engine (and WGCNA) for every WGCNA function, with
# default and forced small panels, double and single: a quick look before
# the test files run (tools/device.sh wgcna-smoke).
suppressPackageStartupMessages({library(gpucor); library(WGCNA)})
set.seed(2)
x <- matrix(rnorm(50 * 300), 50); x[, 1:40] <- x[, 1:40] + rnorm(50)
xn <- x; xn[sample(length(x), 300)] <- NA
x[, 7] <- round(x[, 7]); x[1:30, 9] <- 0
md <- function(a, b) {
  a <- as.vector(unclass(a)); b <- as.vector(unclass(b))
  if (!identical(is.na(a), is.na(b))) return(Inf)
  max(abs(a - b), na.rm = TRUE)
}
res <- list()
chk <- function(what, a, b, tol) {
  d <- md(a, b)
  res[[length(res) + 1]] <<- d <= tol
  cat(sprintf("%-60s %9.2e %s\n", what, d, if (d <= tol) "ok" else "FAIL"))
}
for (slab in list(NULL, 7L)) {
  options(gpucor.gpu_slab = slab)
  tag <- if (is.null(slab)) "" else " (panels of 7)"
  for (pr in c("double", "single")) {
    tol <- if (pr == "double") 1e-12 else 1e-4
    chk(paste0("bicor ", pr, tag), suppressWarnings(gpu_bicor(x, backend = "gpu", precision = pr)),
        suppressWarnings(gpu_bicor(x, backend = "cpu")), tol)
    for (ty in c("unsigned", "signed", "signed hybrid"))
      chk(paste("adjacency", ty, pr, tag), gpu_adjacency(xn, type = ty, backend = "gpu", precision = pr),
          gpu_adjacency(xn, type = ty, backend = "cpu"), tol)
    for (tt in c("unsigned", "signed", "signed Nowick", "unsigned 2", "signed 2", "signed Nowick 2"))
      for (dist in c(FALSE, TRUE))
        chk(sprintf("tom %s dist=%s %s%s", tt, dist, pr, tag),
            gpu_tom(x, TOMType = tt, dist = dist, backend = "gpu", precision = pr),
            gpu_tom(x, TOMType = tt, dist = dist, backend = "cpu"), tol)
    chk(paste("tom pairwise NA", pr, tag), gpu_tom(xn, backend = "gpu", precision = pr),
        gpu_tom(xn, backend = "cpu"), tol)
    A <- abs(cor(x))^6
    chk(paste("tom adjacency", pr, tag), gpu_tom(adjacency = A, backend = "gpu", precision = pr),
        gpu_tom(adjacency = A, backend = "cpu"), tol)
    for (nt in c("unsigned", "signed", "signed hybrid")) {
      a <- gpu_soft_threshold(xn, networkType = nt, backend = "gpu", precision = pr)
      b <- gpu_soft_threshold(xn, networkType = nt, backend = "cpu")
      chk(paste("soft threshold", nt, pr, tag), as.matrix(a$fitIndices), as.matrix(b$fitIndices),
          if (pr == "double") 1e-8 else 1e-2)
    }
  }
}
options(gpucor.gpu_slab = NULL)
chk("tom vs WGCNA (gpu, double)", gpu_tom(x, backend = "gpu"),
    TOMsimilarityFromExpr(x, verbose = 0), 1e-10)
invisible(capture.output(w <- suppressWarnings(pickSoftThreshold(xn, verbose = 0))))
chk("soft threshold vs WGCNA (gpu)", as.matrix(gpu_soft_threshold(xn, backend = "gpu")$fitIndices),
    as.matrix(w$fitIndices), 1e-8)
cat(sprintf("wgcna smoke: %d ok, %d failed\n", sum(unlist(res)), sum(!unlist(res))))
