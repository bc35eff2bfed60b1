# tools/bp_smoke.R -- BiocParallel shares on the GPU in this process
# (SerialParam), small, for compute-sanitizer (tools/device.sh sanitize-bp):
# the restricted panel plans of every GPU producer the shares use.
suppressMessages(library(gpucor))
set.seed(1)
x <- matrix(rnorm(60 * 300), 60)
x[, 2] <- x[, 1] + rnorm(60, sd = 0.3)
xn <- x; xn[sample(length(x), 200)] <- NA
bp <- BiocParallel::SerialParam()
ok <- TRUE
chk <- function(a, b, what) if (!identical(a, b)) { ok <<- FALSE; cat("DIFFERENT:", what, "\n") }
for (pr in c("double", "single")) {
  for (m in c("pearson", "spearman", "kendall"))
    for (cr in list(list(fdr = 0.3), list(top_k = 5), list(top_k = 40), list(density = 0.01))) {
      f <- function(d, use, b) do.call(gpu_cor_edges, c(list(d, method = m, use = use,
        backend = "gpu", precision = pr, BPPARAM = b), cr))
      chk(f(x, "everything", NULL), f(x, "everything", bp), paste(pr, m, names(cr)))
      chk(f(xn, "pairwise", NULL), f(xn, "pairwise", bp), paste(pr, m, names(cr), "NA"))
    }
  for (m in c("euclidean", "manhattan", "correlation", "cosine"))
    chk(gpu_knn(t(x), 7, m, backend = "gpu", precision = pr),
        gpu_knn(t(x), 7, m, backend = "gpu", precision = pr, BPPARAM = bp), paste(pr, "knn", m))
  # gpu_dist: the panels that meet each range, the sink's window
  for (m in c("euclidean", "canberra", "correlation", "spearman", "kendall"))
    for (d in list(t(x), t(xn))) {
      a <- suppressWarnings(gpu_dist(d, m, backend = "gpu", precision = pr))
      b <- suppressWarnings(gpu_dist(d, m, backend = "gpu", precision = pr, BPPARAM = bp))
      attr(a, "call") <- attr(b, "call") <- NULL
      chk(a, b, paste(pr, "dist", m, anyNA(d)))
    }
}
# output with BPPARAM: the windowed file sink of GPU panels
if (gpucor:::.hdf5_ok()) for (pr in c("double", "single")) {
  f <- tempfile(fileext = ".h5")
  r <- gpu_cor(x, backend = "gpu", precision = pr, BPPARAM = bp, output = gpu_hdf5(f, "c"))
  chk(as.matrix(r), gpu_cor(x, backend = "gpu", precision = pr), paste(pr, "cor to file"))
  r <- gpu_dist(t(x), backend = "gpu", precision = pr, BPPARAM = bp, output = gpu_hdf5(f, "d"))
  chk(as.matrix(r), unname(as.matrix(gpu_dist(t(x), backend = "gpu", precision = pr))),
      paste(pr, "dist to file"))
  unlink(c(f, Sys.glob(paste0(f, ".*"))))
}
cat(if (ok) "bp smoke: all identical\n" else "bp smoke: FAILED\n")
