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

# A sparse matrix stays sparse (src/cpu/sparse.c): the covariances are
# G - n m m' from the stored values; checked against stats on its dense copy.
test_that("gpu_cor() of a dgCMatrix agrees with stats::cor of its dense copy", {
  skip_if_not_installed("Matrix")
  info <- new_seed()
  for (rep in 1:12) {
    n <- sample(c(2:5, 40, 300), 1)
    p <- sample(c(1:3, 17, 60), 1)
    dens <- sample(c(0.01, 0.07, 0.3, 0.9, 1), 1)
    m <- Matrix::rsparsematrix(n, p, dens, rand.x = switch(sample(4, 1),
      function(k) stats::rnorm(k), function(k) stats::rpois(k, 2) + 1,
      function(k) round(stats::rnorm(k)) * 3,            # ties, explicit zeros
      function(k) 1e8 + stats::rnorm(k)))                # large values
    if (p > 2 && rep %% 3 == 0) m[, 2] <- 0              # an all-zero column
    if (p > 3 && rep %% 4 == 0) m[, 3] <- 5              # a constant non-zero column
    m <- methods::as(m, "CsparseMatrix")
    if (rep %% 2) colnames(m) <- paste0("g", seq_len(p))
    d <- as.matrix(m)
    for (method in c("pearson", "spearman")) {
      lab <- sprintf("%d x %d, density %g, %s, %s", n, p, dens, method, info)
      want <- tryCatch(stats::cor(d, method = method), warning = function(w) w)
      got <- tryCatch(gpucor::gpu_cor(m, method = method, backend = "cpu"),
                      warning = function(w) w)
      expect_identical(inherits(got, "warning"), inherits(want, "warning"), label = lab)
      if (inherits(want, "warning")) {
        expect_identical(conditionMessage(got), conditionMessage(want), label = lab)
        want <- suppressWarnings(stats::cor(d, method = method))
        got <- suppressWarnings(gpucor::gpu_cor(m, method = method, backend = "cpu"))
      }
      expect_identical(dimnames(got), dimnames(want), label = lab)
      expect_identical(is.na(got), is.na(want), label = lab)
      expect_lte(max(abs(got - want), 0, na.rm = TRUE), 1e-12)
    }
  }
})

test_that("dgCMatrix: Kendall, NA and a named GPU backend use the dense columns", {
  skip_if_not_installed("Matrix")
  set.seed(3)
  m <- Matrix::rsparsematrix(50, 6, 0.3)
  expect_equal(gpucor::gpu_cor(m, method = "kendall", backend = "cpu"),
               stats::cor(as.matrix(m), method = "kendall"), tolerance = 1e-14)
  mn <- m
  mn[3, 2] <- NA
  for (use in c("everything", "pairwise.complete.obs", "complete.obs"))
    expect_equal(gpucor::gpu_cor(mn, use = use, backend = "cpu"),
                 stats::cor(as.matrix(mn), use = use), tolerance = 1e-14, label = use)
  expect_error(gpucor::gpu_cor(m, use = "every", backend = "cpu"), NA)
  expect_error(gpucor::gpu_cor(m, use = "bogus", backend = "cpu"), "invalid 'use' argument")
  # verbose says which route ran
  expect_message(gpucor::gpu_cor(m, backend = "cpu", verbose = TRUE), "sparse columns")
  # a SummarizedExperiment with a sparse assay: features (rows) are the variables
  skip_if_not_installed("SummarizedExperiment")
  se <- SummarizedExperiment::SummarizedExperiment(list(counts = Matrix::t(m)))
  expect_equal(gpucor::gpu_cor(se, backend = "cpu"), stats::cor(as.matrix(m)), tolerance = 1e-12)
})

# Inputs larger than the memory budget (option gpucor.block_memory) are read
# in blocks of whole columns (R/blocks.R); a tiny budget forces several
# blocks here (and a tiny block size makes the reads small).
test_that("DelayedArray, HDF5Array and big.matrix larger than a block: blocks agree with stats", {
  have <- c(DelayedArray = requireNamespace("DelayedArray", quietly = TRUE),
            HDF5Array = requireNamespace("HDF5Array", quietly = TRUE),
            bigmemory = requireNamespace("bigmemory", quietly = TRUE))
  if (!any(have)) skip("none of DelayedArray, HDF5Array, bigmemory is installed")
  info <- new_seed()
  n <- 37
  m <- rmat(n, 11, dimnames = list(NULL, paste0("v", 1:11)))
  m[, 2] <- round(m[, 2])                  # ties
  m[, 5] <- 2                              # zero sd
  m[, 7] <- 1e-170 * m[, 7]                # a variance a double cannot hold
  m[, 9] <- 1e8 + m[, 9]
  mn <- m
  mn[sample(length(mn), 15)] <- NA
  bs <- if (have[["DelayedArray"]]) DelayedArray::getAutoBlockSize() else NULL
  # 3 columns a block (two blocks in the budget)
  old <- options(gpucor.memory_guard = TRUE, gpucor.block_memory = 2 * 8 * n * 3)
  on.exit({
    options(old)
    if (!is.null(bs)) suppressMessages(DelayedArray::setAutoBlockSize(bs))
  })
  if (have[["DelayedArray"]]) suppressMessages(DelayedArray::setAutoBlockSize(8 * n * 3))
  wrap <- list()
  for (d in list(m, mn)) {
    k <- length(wrap)
    if (have[["DelayedArray"]]) wrap[[paste0("DelayedMatrix", k)]] <- list(DelayedArray::DelayedArray(d), d)
    if (have[["HDF5Array"]]) wrap[[paste0("HDF5Matrix", k)]] <- list(
      HDF5Array::writeHDF5Array(d, tempfile(fileext = ".h5"), "m", with.dimnames = TRUE), d)
    if (have[["bigmemory"]] && have[["DelayedArray"]])
      wrap[[paste0("big.matrix", k)]] <- list(bigmemory::as.big.matrix(d), d)
  }
  # the value (or error) and whether stats' zero-sd warning came; other
  # warnings (a finalizer's, run by a collection inside the call) are not
  # the call's
  run <- function(f) {
    w <- FALSE
    val <- tryCatch(withCallingHandlers(f(), warning = function(c)
      if (identical(conditionMessage(c), "the standard deviation is zero")) {
        w <<- TRUE
        invokeRestart("muffleWarning")
      }), error = function(e) e)
    list(val = val, sd0 = w)
  }
  for (nm in names(wrap)) for (method in c("pearson", "spearman", "kendall"))
    for (use in c("everything", "all.obs", "complete.obs", "na.or.complete", "pairwise.complete.obs")) {
      obj <- wrap[[nm]][[1]]
      d <- wrap[[nm]][[2]]
      lab <- sprintf("%s, %s, %s, %s", nm, method, use, info)
      want <- run(function() stats::cor(d, use = use, method = method))
      # stats' Kendall warning with an NA column is random (helper-gpucor.R)
      if (kendall_warning_is_random(d, NULL, method, use))
        want$sd0 <- run(function() stats::cor(d, use = use, method = "spearman"))$sd0
      got <- run(function() gpucor::gpu_cor(obj, use = use, method = method, backend = "cpu"))
      expect_identical(got$sd0, want$sd0, label = lab)
      if (inherits(want$val, "error")) {
        expect_s3_class(got$val, "error")
        expect_identical(conditionMessage(got$val), conditionMessage(want$val), label = lab)
        next
      }
      expect_identical(dimnames(got$val), dimnames(want$val), label = lab)
      expect_identical(is.na(got$val), is.na(want$val), label = lab)
      expect_lte(max(abs(got$val - want$val), 0, na.rm = TRUE), 1e-10)
    }
  # with y: blocks of x against blocks of y (a DelayedArray, or a matrix)
  if (have[["DelayedArray"]]) {
    yy <- rmat(n, 7, dimnames = list(NULL, paste0("y", 1:7)))
    yy[, 4] <- -1
    yy[sample(length(yy), 6)] <- NA
    for (xs in list(m, mn)) for (method in c("pearson", "spearman", "kendall"))
      for (use in c("everything", "complete.obs", "pairwise.complete.obs"))
        for (yo in list(DelayedArray::DelayedArray(yy), yy)) {
          lab <- sprintf("y = %s, %s, %s, %s", class(yo)[1], method, use, info)
          want <- run(function() stats::cor(xs, yy, use = use, method = method))
          got <- run(function() gpucor::gpu_cor(DelayedArray::DelayedArray(xs), yo, use = use,
                                                method = method, backend = "cpu"))
          expect_identical(got$sd0, want$sd0, label = lab)
          expect_identical(dimnames(got$val), dimnames(want$val), label = lab)
          expect_identical(is.na(got$val), is.na(want$val), label = lab)
          expect_lte(max(abs(got$val - want$val), 0, na.rm = TRUE), 1e-10)
        }
  }
  if (have[["DelayedArray"]])
    expect_message(suppressWarnings(gpucor::gpu_cor(wrap[[1]][[1]], backend = "cpu",
                                                    verbose = TRUE)),
                   "4 x 4 blocks of up to 3 columns")
  # a SummarizedExperiment holding a DelayedArray: features (rows) are the variables
  if (have[["DelayedArray"]] && requireNamespace("SummarizedExperiment", quietly = TRUE)) {
    se <- SummarizedExperiment::SummarizedExperiment(list(a = DelayedArray::DelayedArray(t(m))))
    expect_equal(suppressWarnings(gpucor::gpu_cor(se, backend = "cpu")),
                 suppressWarnings(stats::cor(m)), tolerance = 1e-12)
  }
})

test_that("gpu_dist() of a DelayedArray, HDF5Array, big.matrix or SummarizedExperiment larger than a block: blocks of rows agree with the whole", {
  have <- c(DelayedArray = requireNamespace("DelayedArray", quietly = TRUE),
            HDF5Array = requireNamespace("HDF5Array", quietly = TRUE),
            bigmemory = requireNamespace("bigmemory", quietly = TRUE),
            SummarizedExperiment = requireNamespace("SummarizedExperiment", quietly = TRUE))
  if (!have[["DelayedArray"]]) skip("DelayedArray is not installed")
  info <- new_seed()
  n <- 17
  k <- 6
  d <- rmat(n, k, dimnames = list(paste0("r", 1:n), NULL))
  d[2, ] <- 3                             # a constant row
  d[5, ] <- round(d[5, ])                 # ties
  d[6, ] <- d[4, ] + 1e-9                 # near-duplicate rows
  d[8, ] <- 1e8 + d[8, ]                  # a large offset
  d[sample(length(d), 9)] <- NA
  d[11, 3] <- Inf
  d[12, 1:5] <- NA                        # one coordinate left
  bs <- DelayedArray::getAutoBlockSize()
  old <- options(gpucor.block_memory = NULL)
  on.exit({
    options(old)
    suppressMessages(DelayedArray::setAutoBlockSize(bs))
  })
  methods <- c("euclidean", "maximum", "manhattan", "canberra", "binary", "minkowski",
               "correlation", "abscorrelation", "spearman", "kendall", "cosine")
  backends <- c("cpu", if (isTRUE(as.vector(gpucor::gpu_available()))) "gpu")
  strip <- function(a) { a$call <- NULL; a }
  for (rows in c(1, 2, 3, 5)) {
    suppressMessages(DelayedArray::setAutoBlockSize(8 * k * rows))
    options(gpucor.block_memory = 2 * 8 * k * rows)
    objs <- list(DelayedMatrix = DelayedArray::DelayedArray(d))
    if (have[["HDF5Array"]]) objs$HDF5Matrix <-
      HDF5Array::writeHDF5Array(d, tempfile(fileext = ".h5"), "m", with.dimnames = TRUE)
    if (have[["bigmemory"]]) objs$big.matrix <- bigmemory::as.big.matrix(d)
    if (have[["SummarizedExperiment"]]) objs$SummarizedExperiment <-
      SummarizedExperiment::SummarizedExperiment(list(a = DelayedArray::DelayedArray(d)))
    for (nm in names(objs)) for (method in methods) for (backend in backends) {
      lab <- sprintf("%s, %d rows a block, %s, %s, %s", nm, rows, method, backend, info)
      whole <- capture_conditions(gpucor::gpu_dist(d, method, p = 3, backend = backend))
      got <- capture_conditions(gpucor::gpu_dist(objs[[nm]], method, p = 3, backend = backend))
      expect_identical(got$warnings, whole$warnings, label = lab)
      expect_identical(strip(attributes(got$value)), strip(attributes(whole$value)),
                       label = lab)
      expect_identical(is.na(c(got$value)), is.na(c(whole$value)), label = lab)
      expect_lte(max(abs(c(got$value) - c(whole$value)), 0, na.rm = TRUE), 1e-14)
      if (method %in% methods[1:6] && backend == "cpu") {
        want <- suppressWarnings(stats::dist(d, method, p = 3))
        expect_equal(c(got$value), c(want), tolerance = 1e-12, label = lab)
      }
    }
  }
  expect_message(gpucor::gpu_dist(DelayedArray::DelayedArray(d), backend = "cpu", verbose = TRUE),
                 "4 blocks of up to 5 rows (6 pairs of blocks;", fixed = TRUE)
})

test_that("gpu_cov() of a DelayedArray or big.matrix larger than a block: blocks agree with stats::cov", {
  have_bm <- requireNamespace("bigmemory", quietly = TRUE)
  if (!requireNamespace("DelayedArray", quietly = TRUE)) skip("DelayedArray is not installed")
  info <- new_seed()
  n <- 29
  m <- rmat(n, 10, dimnames = list(NULL, paste0("v", 1:10)))
  m[, 2] <- round(m[, 2])
  m[, 5] <- 0.1                            # zero sd: covariances 0 (or tiny)
  m[, 8] <- 1e8 + m[, 8]
  mn <- m
  mn[sample(length(mn), 12)] <- NA
  yy <- rmat(n, 4, dimnames = list(NULL, paste0("y", 1:4)))
  bs <- DelayedArray::getAutoBlockSize()
  old <- options(gpucor.block_memory = 2 * 8 * n * 3)            # 3 columns a block
  on.exit({
    options(old)
    suppressMessages(DelayedArray::setAutoBlockSize(bs))
  })
  suppressMessages(DelayedArray::setAutoBlockSize(8 * n * 3))
  for (d in list(m, mn)) for (method in c("pearson", "spearman", "kendall"))
    for (use in c("everything", "complete.obs", "pairwise.complete.obs")) {
      objs <- list(DelayedArray::DelayedArray(d))
      if (have_bm) objs <- c(objs, bigmemory::as.big.matrix(d))
      for (obj in objs) for (y in list(NULL, DelayedArray::DelayedArray(yy))) {
        lab <- sprintf("%s, %s, %s, y = %s, %s", class(obj)[1], method, use, !is.null(y), info)
        want <- tryCatch(stats::cov(d, if (is.null(y)) NULL else yy, use, method),
                         error = function(e) e)
        got <- tryCatch(gpucor::gpu_cov(obj, y, use, method, backend = "cpu"),
                        error = function(e) e)
        if (inherits(want, "error")) {
          expect_identical(conditionMessage(got), conditionMessage(want), label = lab)
          next
        }
        expect_identical(dimnames(got), dimnames(want), label = lab)
        expect_identical(is.na(got), is.na(want), label = lab)
        expect_equal(got, want, tolerance = 1e-12, label = lab)
      }
    }
  expect_message(gpucor::gpu_cov(DelayedArray::DelayedArray(m), backend = "cpu", verbose = TRUE),
                 "gpu_cov: 4 x 4 blocks of up to 3 columns", fixed = TRUE)
})
