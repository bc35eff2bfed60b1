# gpu_cor_shrink() / gpu_pcor_shrink() against corpcor's cor.shrink() /
# pcor.shrink(): values to 1e-10, attributes (class, lambda,
# lambda.estimated, spv, dimnames) identical, warnings and verbose lines as
# corpcor's, on both engines, with small CPU tiles and GPU panels forced.

skip_if_not_installed("corpcor")

# got and want: the same attributes (numeric ones to 'tol'), values to tol.
expect_shrink_equal <- function(got, want, tol = 1e-10, info = "") {
  expect_identical(class(got), class(want), info = info)
  ag <- attributes(got); aw <- attributes(want)
  expect_identical(names(ag), names(aw), info = info)
  for (a in setdiff(names(aw), c("lambda", "spv")))
    expect_identical(ag[[a]], aw[[a]], info = paste(info, a))
  # lambda to 1e-12 (with a looser tol, as loose: corpcor's one-pass moments)
  expect_lte(abs(ag$lambda - aw$lambda), if (tol > 1e-10) tol else 1e-12)
  if (!is.null(aw$spv)) {
    expect_identical(names(ag$spv), names(aw$spv), info = info)
    expect_lte(max(abs(ag$spv / aw$spv - 1)), tol)
  }
  expect_lte(max(abs(unclass(got) - unclass(want))), tol)
}

shrink_pair <- function(x, ..., backend, info) {
  args <- list(...)
  want <- suppressWarnings(do.call(corpcor::cor.shrink, c(list(x, verbose = FALSE), args)))
  got <- suppressWarnings(do.call(gpu_cor_shrink, c(list(x, verbose = FALSE,
                                                         backend = backend), args)))
  expect_shrink_equal(got, want, info = paste(info, "cor.shrink"))
  want <- suppressWarnings(do.call(corpcor::pcor.shrink, c(list(x, verbose = FALSE), args)))
  got <- suppressWarnings(do.call(gpu_pcor_shrink, c(list(x, verbose = FALSE,
                                                          backend = backend), args)))
  expect_shrink_equal(got, want, info = paste(info, "pcor.shrink"))
}

test_that("random data, n < p and n > p, estimated and given lambda, weights", {
  info <- new_seed()
  for (b in test_backends()) for (tiles in c(FALSE, TRUE)) {
    opts <- if (tiles) list(gpucor.cpu_tile = 3L, gpucor.gpu_slab = 4L) else list()
    with_options(opts, {
      for (d in list(c(10, 30), c(40, 12), c(25, 25), c(3, 7), c(60, 2))) {
        n <- d[1]; p <- d[2]
        x <- matrix(rnorm(n * p), n, p)
        x[, 2] <- x[, 1] + rnorm(n, sd = 0.3)
        i <- paste(info, b, tiles, n, p)
        shrink_pair(x, backend = b, info = i)
        shrink_pair(x, lambda = 0.3, backend = b, info = i)
        shrink_pair(x, lambda = 2, backend = b, info = i)      # clamped to 1
        shrink_pair(x, lambda = -1, backend = b, info = i)     # clamped to 0
        shrink_pair(x, w = runif(n), backend = b, info = i)
        colnames(x) <- paste0("v", seq_len(p))
        shrink_pair(as.data.frame(x), backend = b, info = i)
      }
    })
  }
})

test_that("constant columns, integers, offsets and scales", {
  info <- new_seed()
  for (b in test_backends()) {
    x <- matrix(rnorm(20 * 15), 20, 15)
    x[, 4] <- 3
    expect_warning(gpu_pcor_shrink(x, verbose = FALSE, backend = b),
                   "1 instances of variables with zero scale detected!", fixed = TRUE)
    shrink_pair(x, backend = b, info = paste(info, b, "constant"))
    shrink_pair(x, lambda = 0.5, backend = b, info = paste(info, b, "constant"))
    xi <- matrix(sample(1:5, 30 * 8, TRUE), 30, 8)
    shrink_pair(xi, backend = b, info = paste(info, b, "integer"))
    # a 1e8 offset: corpcor's one-pass moments lose the digits; gpucor's
    # values are corpcor's on the centred data
    x <- matrix(rnorm(20 * 12), 20, 12)
    xc <- sweep(x, 2, colMeans(x))
    for (f in c("cor", "pcor")) {
      got <- get(paste0("gpu_", f, "_shrink"))(x + 1e8, verbose = FALSE, backend = b)
      want <- get(paste0(f, ".shrink"), asNamespace("corpcor"))(xc, verbose = FALSE)
      expect_shrink_equal(got, want, tol = 1e-8, info = paste(info, b, "offset", f))
    }
    # columns on scales from 1e-6 to 1e8 (below about 1e-8 both call the
    # column constant: corpcor's variance < .Machine$double.eps rule)
    x <- sweep(matrix(rnorm(25 * 10), 25, 10), 2, 10^seq(-6, 8, length.out = 10), "*")
    shrink_pair(x, backend = b, info = paste(info, b, "scales"))
    x[, 1] <- x[, 1] * 1e-4
    shrink_pair(x, backend = b, info = paste(info, b, "zero scale"))
  }
})

test_that("lambda = 0: corpcor's pseudoinverse", {
  info <- new_seed()
  x <- matrix(rnorm(40 * 6), 40, 6)
  shrink_pair(x, lambda = 0, backend = "cpu", info = info)
  x <- matrix(rnorm(8 * 12), 8, 12)
  expect_warning(gpu_pcor_shrink(x, lambda = 0, verbose = FALSE),
                 "doesn't have full rank", fixed = TRUE)
  want <- suppressWarnings(corpcor::pcor.shrink(x, lambda = 0, verbose = FALSE))
  got <- suppressWarnings(gpu_pcor_shrink(x, lambda = 0, verbose = FALSE))
  expect_shrink_equal(got, want, tol = 1e-8, info = info)
})

test_that("verbose prints corpcor's lines", {
  x <- matrix(rnorm(20 * 10), 20, 10)
  for (f in c("cor", "pcor")) {
    g <- get(paste0("gpu_", f, "_shrink")); r <- get(paste0(f, ".shrink"), asNamespace("corpcor"))
    # corpcor's lines on stdout and nothing else, as corpcor's default;
    # with verbose = 2 a message names the engine too
    expect_no_message(got <- capture.output(invisible(g(x))))
    expect_identical(got, capture.output(invisible(r(x))))
    expect_message(got <- capture.output(invisible(g(x, lambda = 0.25, verbose = 2))),
                   "CPU engine|GPU engine")
    expect_identical(got, capture.output(invisible(r(x, lambda = 0.25))))
  }
})

test_that("one variable, few samples, bad input", {
  x <- matrix(rnorm(10), 10, 1)
  shrink_pair(x, backend = "cpu", info = "p = 1")
  expect_error(gpu_cor_shrink(matrix(rnorm(4), 2, 2), verbose = FALSE), "Sample size too small!")
  expect_error(gpu_pcor_shrink(matrix(c(1, NA, 3, 4, 5, 6), 3)), "missing values")
  expect_error(gpu_cor_shrink(matrix(letters[1:6], 3)), "'x' must be numeric")
  expect_error(gpu_cor_shrink(matrix(rnorm(12), 4), w = 1:3), "incompatible length")
  expect_error(gpu_cor_shrink(matrix(rnorm(12), 4), lambda = NA), "'lambda' must be")
})

test_that("gpu_cor_edges(method = 'pcor.shrink' / 'cor.shrink') selects from corpcor's matrix", {
  info <- new_seed()
  x <- matrix(rnorm(25 * 60), 25, 60)
  # six related columns: lambda below 1 whatever the seed (with one pair
  # only, about one seed in 40 estimated lambda = 1, the identity, which has
  # no edges to select)
  x[, 2:6] <- x[, 1] + matrix(rnorm(25 * 5, sd = 0.5), 25)
  for (b in test_backends()) for (m in c("pcor.shrink", "cor.shrink")) {
    want <- get(m, asNamespace("corpcor"))(x, verbose = FALSE)
    lam <- attr(want, "lambda")
    want <- unclass(want)[seq_len(60), seq_len(60)]
    e <- with_options(list(gpucor.cpu_tile = 7L, gpucor.gpu_slab = 8L),
                      gpu_cor_edges(x, method = m, top_k = 3, backend = b))
    expect_lt(lam, 1)
    expect_lte(abs(attr(e, "lambda") - lam), 1e-12)
    expect_lte(max(abs(e$cor - want[cbind(e$row, e$col)])), 1e-10)
    # each variable's three strongest partners
    diag(want) <- 0
    for (i in c(1, 2, 30)) {
      top <- order(-abs(want[i, ]))[1:3]
      got <- c(e$col[e$row == i], e$row[e$col == i])
      expect_true(all(top %in% got), info = paste(info, b, m, i))
    }
    thr <- sort(abs(want[lower.tri(want)]), decreasing = TRUE)[20]
    e <- gpu_cor_edges(x, method = m, threshold = thr - 1e-9, backend = b)
    expect_identical(nrow(e), 20L, info = paste(info, b, m))
  }
  expect_error(gpu_cor_edges(x, method = "pcor.shrink", fdr = 0.1), "no p-values")
  # with y: the pairs across of the estimate for cbind(x, y)
  for (b in test_backends()) {
    e <- gpu_cor_edges(x[, 1:20], x[, 21:60], method = "pcor.shrink", threshold = 0.02,
                       backend = b)
    w <- unclass(corpcor::pcor.shrink(x, verbose = FALSE))[1:20, 21:60]
    expect_identical(nrow(e), sum(abs(w) >= 0.02), info = paste(info, b))
    expect_lte(max(abs(e$cor - w[cbind(e$row, e$col)])), 1e-10)
  }
})

test_that("y =: the block of the estimate for cbind(x, y); BPPARAM: the call without it", {
  info <- new_seed()
  x <- matrix(rnorm(30 * 14), 30, 14, dimnames = list(NULL, paste0("x", 1:14)))
  y <- matrix(rnorm(30 * 6), 30, 6, dimnames = list(NULL, paste0("y", 1:6)))
  y[, 2] <- x[, 1] + rnorm(30, sd = 0.2)
  y[, 5] <- 1                                    # zero scale: a row of 0
  strip <- function(r) { r <- unclass(r); attributes(r) <- attributes(r)[c("dim", "dimnames")]; r }
  for (b in test_backends()) for (f in c("cor", "pcor")) for (lam in list(NULL, 0.4, 1)) {
    ours <- get(paste0("gpu_", f, "_shrink"))
    ref <- get(paste0(f, ".shrink"), asNamespace("corpcor"))
    args <- c(list(verbose = FALSE), if (!is.null(lam)) list(lambda = lam))
    want <- suppressWarnings(do.call(ref, c(list(cbind(x, y)), args)))
    got <- with_options(list(gpucor.cpu_tile = 3L, gpucor.gpu_slab = 4L), suppressWarnings(
      do.call(ours, c(list(x, y = y, backend = b), args))))
    i <- paste(info, b, f, format(lam))
    expect_identical(class(got), "shrinkage", info = i)
    expect_identical(dim(got), c(14L, 6L), info = i)
    expect_identical(dimnames(got), list(colnames(x), colnames(y)), info = i)
    expect_lte(max(abs(strip(got) - unclass(want)[1:14, 15:20])), 1e-10)
    expect_lte(abs(attr(got, "lambda") - attr(want, "lambda")), 1e-12)
    if (f == "pcor") expect_identical(names(attr(got, "spv")), c(colnames(x), colnames(y)))
  }
  expect_error(gpu_pcor_shrink(x, y = y[-1, ], verbose = FALSE), "same number of rows")
  expect_error(gpu_pcor_shrink(x, y = y + NA, verbose = FALSE), "missing values in 'y'")
  skip_if_not_installed("BiocParallel")
  ps <- list(BiocParallel::SerialParam())
  if (.Platform$OS.type != "windows") ps <- c(ps, BiocParallel::MulticoreParam(2))
  for (bp in ps) for (f in c(gpu_cor_shrink, gpu_pcor_shrink)) {
    for (yy in list(NULL, y)) {
      want <- suppressWarnings(f(x, y = yy, verbose = FALSE, backend = "cpu"))
      got <- suppressWarnings(f(x, y = yy, verbose = FALSE, backend = "cpu", BPPARAM = bp))
      expect_identical(got, want, info = paste(info, class(bp)))
    }
  }
  skip_if_no_gpu()
  for (f in c(gpu_cor_shrink, gpu_pcor_shrink)) {
    want <- suppressWarnings(f(x, verbose = FALSE, backend = "cpu"))
    got <- suppressWarnings(f(x, verbose = FALSE, backend = "gpu",
                              BPPARAM = BiocParallel::SerialParam()))
    expect_lte(max(abs(strip(got) - strip(want))), 1e-12)
  }
})

test_that("the GPU engine gives the CPU's shrinkage estimates", {
  skip_if_no_gpu()
  x <- matrix(rnorm(30 * 200), 30, 200)
  for (f in c(gpu_cor_shrink, gpu_pcor_shrink)) {
    a <- f(x, verbose = FALSE, backend = "cpu")
    g <- f(x, verbose = FALSE, backend = "gpu")
    expect_lte(max(abs(unclass(a) - unclass(g))), 1e-12)
    s <- f(x, verbose = FALSE, backend = "gpu", precision = "single")
    expect_lte(max(abs(unclass(a) - unclass(s))), 1e-5)
  }
})

test_that("output = gpu_hdf5(): the matrix written to a file", {
  skip_if_not(gpucor:::.hdf5_ok(), "gpucor built without HDF5, or no HDF5Array")
  x <- matrix(rnorm(20 * 30), 20, 30, dimnames = list(NULL, paste0("v", 1:30)))
  f <- tempfile(fileext = ".h5")
  on.exit(unlink(f))
  for (b in test_backends()) for (partial in c(FALSE, TRUE)) {
    fn <- if (partial) gpu_pcor_shrink else gpu_cor_shrink
    want <- fn(x, verbose = FALSE, backend = b)
    nm <- paste0("m", b, partial)
    got <- with_options(list(gpucor.cpu_tile = 7L, gpucor.gpu_slab = 8L),
                        fn(x, verbose = FALSE, backend = b, output = gpu_hdf5(f, nm)))
    expect_s4_class(got, "HDF5Array")
    expect_identical(as.matrix(got), unclass(want)[seq_len(30), seq_len(30)])
    expect_identical(attr(got, "lambda"), attr(want, "lambda"))
    if (partial) expect_identical(attr(got, "spv"), attr(want, "spv"))
    # lambda 1: the identity
    got <- fn(x, lambda = 1, verbose = FALSE, backend = b, output = gpu_hdf5(f, paste0(nm, "i")))
    expect_identical(unname(as.matrix(got)), diag(30))
  }
  expect_error(suppressWarnings(gpu_pcor_shrink(x, lambda = 0, verbose = FALSE,
                                                output = gpu_hdf5(f, "z"))), "lambda = 0")
})
