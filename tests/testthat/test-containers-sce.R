# Issue 37: a SingleCellExperiment gives the neighbours and distances of its
# CELLS (columns), from reducedDim(x, use.dimred) or t(assay(x, assay)), as
# scater's runUMAP() and bluster take them; its correlations stay between
# features, and a plain SummarizedExperiment keeps its features as items.

# a dist's or hclust's value without its 'call' (which names the input)
nocall <- function(v) {
  if (is.list(v)) v$call <- NULL else attr(v, "call") <- NULL
  v
}

sce_data <- function() {
  counts <- matrix(stats::rpois(40 * 30, 4), 40, 30,
                   dimnames = list(paste0("g", 1:40), paste0("c", 1:30)))
  logc <- log1p(counts)
  pca <- stats::prcomp(t(logc), rank. = 5)$x
  tsne <- matrix(stats::rnorm(30 * 2), 30, 2, dimnames = list(colnames(counts), NULL))
  sce <- SingleCellExperiment::SingleCellExperiment(
    assays = list(counts = counts, logcounts = logc),
    reducedDims = list(PCA = pca, TSNE = tsne))
  list(sce = sce, counts = counts, logc = logc, pca = pca, tsne = tsne)
}

test_that("gpu_knn(), gpu_range() and gpu_dist() of a SingleCellExperiment measure its cells", {
  skip_if_not_installed("SingleCellExperiment")
  info <- new_seed()
  s <- sce_data()
  sce <- s$sce
  for (b in test_backends()) {
    lab <- paste(b, info)
    # a reducedDim, by name and by number, used as it is (cells x dims)
    want <- gpu_knn(s$pca, k = 4, backend = b)
    expect_identical(gpu_knn(sce, k = 4, use.dimred = "PCA", backend = b), want, info = lab)
    expect_identical(gpu_knn(sce, 4, use.dimred = 1, backend = b), want, info = lab)
    expect_identical(rownames(want$index), colnames(sce))
    expect_identical(gpu_knn(sce, k = 3, use.dimred = "TSNE", backend = b),
                     gpu_knn(s$tsne, k = 3, backend = b), info = lab)
    # else the assay, transposed: the first by default, or by name or number
    expect_identical(gpu_knn(sce, k = 4, backend = b),
                     gpu_knn(t(s$counts), k = 4, backend = b), info = lab)
    expect_identical(gpu_knn(sce, k = 4, method = "correlation", assay = "logcounts", backend = b),
                     gpu_knn(t(s$logc), k = 4, method = "correlation", backend = b), info = lab)
    expect_identical(gpu_knn(sce, k = 4, assay = 2, backend = b),
                     gpu_knn(t(s$logc), k = 4, backend = b), info = lab)
    expect_identical(gpu_range(sce, 3, use.dimred = "PCA", backend = b),
                     gpu_range(s$pca, 3, backend = b), info = lab)
    expect_identical(gpu_range(sce, 12, assay = "logcounts", backend = b),
                     gpu_range(t(s$logc), 12, backend = b), info = lab)
    expect_identical(nocall(gpu_dist(sce, use.dimred = "PCA", backend = b)),
                     nocall(gpu_dist(s$pca, backend = b)), info = lab)
    expect_identical(nocall(gpu_dist(sce, "manhattan", backend = b)),
                     nocall(gpu_dist(t(s$counts), "manhattan", backend = b)), info = lab)
    # gpu_hclust(x = ) clusters the cells too
    expect_identical(nocall(gpu_hclust(x = sce, method = "average", use.dimred = "PCA", backend = b)),
                     nocall(gpu_hclust(x = s$pca, method = "average", backend = b)), info = lab)
  }
  # a query: a SingleCellExperiment is read as x is, a matrix as it is
  q <- sce[, 1:6]
  expect_identical(gpu_knn(sce, k = 3, query = q, use.dimred = "PCA", backend = "cpu"),
                   gpu_knn(s$pca, k = 3, query = s$pca[1:6, ], backend = "cpu"), info = info)
  expect_identical(gpu_knn(sce, k = 3, query = s$pca[1:6, ] + 0.1, use.dimred = "PCA",
                           backend = "cpu"),
                   gpu_knn(s$pca, k = 3, query = s$pca[1:6, ] + 0.1, backend = "cpu"), info = info)
  expect_identical(gpu_range(sce, 12, query = q, assay = "logcounts", backend = "cpu"),
                   gpu_range(t(s$logc), 12, query = t(s$logc[, 1:6]), backend = "cpu"),
                   info = info)
})

test_that("a SingleCellExperiment's correlations stay between features; a SummarizedExperiment keeps its features as items", {
  skip_if_not_installed("SingleCellExperiment")
  info <- new_seed()
  s <- sce_data()
  # gpu_cor(): features are the variables in every container
  expect_identical(gpu_cor(s$sce, backend = "cpu"), gpu_cor(t(s$counts), backend = "cpu"))
  se <- SummarizedExperiment::SummarizedExperiment(list(counts = s$counts))
  expect_identical(gpu_knn(se, k = 3, backend = "cpu"), gpu_knn(s$counts, k = 3, backend = "cpu"),
                   info = info)
  expect_identical(nocall(gpu_dist(se, backend = "cpu")), nocall(gpu_dist(s$counts, backend = "cpu")),
                   info = info)
  expect_identical(rownames(gpu_knn(se, k = 3, backend = "cpu")$index), rownames(s$counts))
})

test_that("a DelayedArray assay of a SingleCellExperiment gives the cells, also in blocks", {
  skip_if_not_installed("SingleCellExperiment")
  skip_if_not_installed("DelayedArray")
  info <- new_seed()
  s <- sce_data()
  sce <- SingleCellExperiment::SingleCellExperiment(
    assays = list(logcounts = DelayedArray::DelayedArray(s$logc)))
  want <- gpu_dist(t(s$logc), backend = "cpu")
  expect_identical(gpu_knn(sce, k = 5, backend = "cpu"), gpu_knn(t(s$logc), k = 5, backend = "cpu"),
                   info = info)
  expect_identical(nocall(gpu_dist(sce, backend = "cpu")), nocall(want), info = info)
  # blocks of 7 cells: gpu_dist() reads the transposed assay in row blocks
  bs <- DelayedArray::getAutoBlockSize()
  old <- options(gpucor.block_memory = 2 * 8 * 40 * 7)
  on.exit({
    options(old)
    suppressMessages(DelayedArray::setAutoBlockSize(bs))
  })
  suppressMessages(DelayedArray::setAutoBlockSize(8 * 40 * 7))
  expect_message(got <- gpu_dist(sce, backend = "cpu", verbose = TRUE), "blocks of up to 7 rows")
  expect_identical(attributes(nocall(got)), attributes(nocall(want)))
  expect_lte(max(abs(c(got) - c(want))), 1e-14)
})

test_that("use.dimred: clear errors for a wrong name or number, or an input that is no SingleCellExperiment", {
  skip_if_not_installed("SingleCellExperiment")
  s <- sce_data()
  expect_error(gpu_knn(s$sce, k = 3, use.dimred = "UMAP", backend = "cpu"),
               "'use.dimred' = \"UMAP\" is not among reducedDimNames(x): \"PCA\", \"TSNE\"",
               fixed = TRUE)
  expect_error(gpu_range(s$sce, 1, use.dimred = 3, backend = "cpu"),
               "'use.dimred' = 3 is not a number of reducedDims(x), which has 2", fixed = TRUE)
  expect_error(gpu_dist(s$sce, use.dimred = c("PCA", "TSNE"), backend = "cpu"),
               "'use.dimred' must be one name or number of reducedDims(x)", fixed = TRUE)
  expect_error(gpu_knn(s$pca, k = 3, use.dimred = "PCA", backend = "cpu"),
               "'use.dimred' needs a SingleCellExperiment as 'x', not an object of class \"matrix\"",
               fixed = TRUE)
  se <- SummarizedExperiment::SummarizedExperiment(list(counts = s$counts))
  expect_error(gpu_dist(se, use.dimred = "PCA", backend = "cpu"),
               "not an object of class \"SummarizedExperiment\"", fixed = TRUE)
  expect_error(gpu_hclust(x = s$pca, use.dimred = "PCA", backend = "cpu"),
               "'use.dimred' needs a SingleCellExperiment", fixed = TRUE)
  expect_error(gpu_hclust(dist(s$pca), use.dimred = "PCA"),
               "go with 'x', not with 'd'", fixed = TRUE)
  # none of reducedDims: the message says so
  bare <- SingleCellExperiment::SingleCellExperiment(list(counts = s$counts))
  expect_error(gpu_knn(bare, k = 3, use.dimred = "PCA", backend = "cpu"),
               "is not among reducedDimNames(x): none", fixed = TRUE)
})
