# Issue 15, part 1: the containers users hold.  Bioconductor's
# features-in-rows objects give correlations and distances between
# features; sparse, on-disk and big.matrix inputs give what their dense
# copy gives; other objects stop with their class named.

inputs_data <- function() {
  m <- matrix(rpois(30 * 12, 3), 30, 12,
              dimnames = list(paste0("g", 1:30), paste0("s", 1:12)))
  m[4, 2] <- 0
  m
}

test_that("SummarizedExperiment: features (rows) are the variables of gpu_cor and the items of gpu_dist", {
  skip_if_not_installed("SummarizedExperiment")
  info <- new_seed()
  m <- inputs_data()
  lg <- log1p(m)
  se <- SummarizedExperiment::SummarizedExperiment(assays = list(counts = m, logc = lg))
  for (b in test_backends()) {
    expect_equal(gpucor::gpu_cor(se, backend = b), stats::cor(t(m)), tolerance = 1e-12,
                 info = paste(b, info))
    expect_equal(gpucor::gpu_cor(se, method = "spearman", assay = "logc", backend = b),
                 stats::cor(t(lg), method = "spearman"), tolerance = 1e-12, info = paste(b, info))
    expect_equal(gpucor::gpu_cor(se, use = "pairwise", assay = 2, backend = b),
                 stats::cor(t(lg), use = "pairwise"), tolerance = 1e-12, info = paste(b, info))
    d <- gpucor::gpu_dist(se, backend = b)
    expect_equal(c(d), c(stats::dist(m)), tolerance = 1e-12, info = paste(b, info))
    expect_identical(attr(d, "Labels"), rownames(m))
    expect_equal(c(gpucor::gpu_dist(se, "correlation", assay = "logc", backend = b)),
                 c(stats::as.dist(1 - stats::cor(t(lg)))), tolerance = 1e-12, info = paste(b, info))
  }
  # y as well: genes of one object against genes of another, same samples
  se2 <- se[1:5, ]
  expect_equal(gpucor::gpu_cor(se, se2, backend = "cpu"), stats::cor(t(m), t(m[1:5, ])),
               tolerance = 1e-12)
  expect_error(gpucor::gpu_cor(se, assay = "nope", backend = "cpu"))
})

test_that("ExpressionSet: exprs(), features as variables", {
  skip_if_not_installed("Biobase")
  m <- inputs_data() + 0.5
  es <- Biobase::ExpressionSet(assayData = m)
  expect_equal(gpucor::gpu_cor(es, backend = "cpu"), stats::cor(t(m)), tolerance = 1e-12)
  expect_equal(c(gpucor::gpu_dist(es, "manhattan", backend = "cpu")),
               c(stats::dist(m, "manhattan")), tolerance = 1e-12)
})

test_that("Matrix, DelayedArray, HDF5Array and big.matrix give what their dense copy gives", {
  info <- new_seed()
  m <- inputs_data()
  objs <- list()
  if (requireNamespace("Matrix", quietly = TRUE)) {
    objs$dgCMatrix <- Matrix::Matrix(m, sparse = TRUE)
    objs$dgeMatrix <- Matrix::Matrix(m + 0.5, sparse = FALSE)
  }
  if (requireNamespace("DelayedArray", quietly = TRUE))
    objs$DelayedMatrix <- DelayedArray::DelayedArray(m)
  if (requireNamespace("HDF5Array", quietly = TRUE)) {
    f <- tempfile(fileext = ".h5")
    on.exit(unlink(f), add = TRUE)
    objs$HDF5Matrix <- HDF5Array::writeHDF5Array(m, f, "m")
  }
  if (requireNamespace("bigmemory", quietly = TRUE))
    objs$big.matrix <- bigmemory::as.big.matrix(m)
  if (!length(objs)) skip("none of Matrix, DelayedArray, HDF5Array, bigmemory is installed")
  for (k in names(objs)) {
    o <- objs[[k]]
    dense <- if (k == "big.matrix") o[, ] else as.matrix(o)
    for (b in test_backends()) {
      what <- paste(k, b, info)
      expect_equal(unname(gpucor::gpu_cor(o, backend = b)), unname(stats::cor(dense)),
                   tolerance = 1e-12, info = what)
      expect_equal(unname(gpucor::gpu_cor(o, o[, 1:3], method = "kendall", backend = b)),
                   unname(stats::cor(dense, dense[, 1:3], method = "kendall")),
                   tolerance = 1e-12, info = what)
      expect_equal(c(gpucor::gpu_dist(o, "canberra", backend = b)),
                   c(stats::dist(dense, "canberra")), tolerance = 1e-12, info = what)
    }
  }
})

test_that("other objects stop with their class named", {
  setClass("gpucorTestThing", representation(v = "numeric"), where = globalenv())
  on.exit(removeClass("gpucorTestThing", where = globalenv()))
  thing <- methods::new("gpucorTestThing", v = 1:3)
  expect_error(gpucor::gpu_cor(thing, backend = "cpu"), "class \"gpucorTestThing\"", fixed = TRUE)
  expect_error(gpucor::gpu_dist(thing, backend = "cpu"), "class \"gpucorTestThing\"", fixed = TRUE)
  expect_error(gpucor::gpu_cor(matrix(1:4, 2), thing, backend = "cpu"), "'y' is an object", fixed = TRUE)
  # S3 objects and lists keep stats' own errors
  expect_error(gpucor::gpu_cor(list(1, 2), backend = "cpu"),
               "supply both 'x' and 'y' or a matrix-like 'x'", fixed = TRUE)
})
