# Issue 37: the package's own on-disk n x n results (gpu_dist(output =
# gpu_hdf5(...)), gpu_cor(output = ...)) are inputs of the next step:
# gpu_hclust(d) reads their lower triangle in blocks of columns and clusters
# as it does the in-memory dist.

nocall_hc <- function(h) { h$call <- NULL; h }

test_that("gpu_hclust(d) of an HDF5 n x n result is gpu_hclust() of the dist in memory", {
  skip_if_not(gpucor:::.hdf5_ok(), "gpucor built without HDF5, or no HDF5Array")
  info <- new_seed()
  n <- 23
  x <- rmat(n, 4, dimnames = list(paste0("r", 1:n), NULL))
  bs <- DelayedArray::getAutoBlockSize()
  on.exit(suppressMessages(DelayedArray::setAutoBlockSize(bs)))
  h5 <- gpu_dist(x, output = gpu_hdf5(tempfile(fileext = ".h5"), "d"), backend = "cpu")
  d <- gpu_dist(x, backend = "cpu")
  r <- gpu_cor(t(x), output = gpu_hdf5(tempfile(fileext = ".h5"), "r"), backend = "cpu")
  for (cols in c(n, 5, 1)) {
    # blocks of 'cols' columns of the n x n matrix
    suppressMessages(DelayedArray::setAutoBlockSize(8 * n * cols))
    for (m in c("average", "complete", "ward.D2", "centroid")) {
      lab <- sprintf("%s, blocks of %d columns, %s", m, cols, info)
      got <- gpu_hclust(h5, m, backend = "cpu")
      # the same matrix in memory (as.dist() of it: no dist.method), and
      # the merges and heights of the dist gpu_dist() makes in memory
      want <- gpu_hclust(as.matrix(h5), m, backend = "cpu")
      expect_identical(nocall_hc(got), nocall_hc(want), info = lab)
      expect_identical(got$labels, rownames(x), info = lab)
      mem <- gpu_hclust(d, m, backend = "cpu")
      expect_identical(got$merge, mem$merge, info = lab)
      expect_identical(got$height, mem$height, info = lab)
    }
    # a lazy DelayedArray of a result (1 - r): the same as 1 - r in memory
    got <- gpu_hclust(1 - r, "average", backend = "cpu")
    want <- gpu_hclust(stats::as.dist(1 - as.matrix(r)), "average", backend = "cpu")
    expect_identical(nocall_hc(got), nocall_hc(want), info = paste(cols, info))
  }
  expect_error(gpu_hclust(h5[1:5, ], backend = "cpu"), "must be a \"dist\" or a square", fixed = TRUE)
  expect_error(gpu_hclust(h5[1, 1, drop = FALSE], backend = "cpu"), "n >= 2", fixed = TRUE)
})
