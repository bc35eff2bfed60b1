# gpu_cov() against stats::cov(): every method and use mode, vectors and
# matrices, x and y, NA, ties, constant and tiny-spread columns, offsets.

cov_cases <- function() {
  x <- rmat(40, 6)
  x[, 2] <- round(x[, 2])                 # ties
  xn <- x
  xn[sample(length(xn), 12)] <- NA
  xc <- x
  xc[, 3] <- 0.1                          # zero sd: covariance 0
  xt <- x
  xt[, 4] <- 1e-300 * xt[, 4]             # a spread stats' cor() calls zero
  xo <- 1e8 + x                           # a large offset
  y <- rmat(40, 3)
  list(x = x, xn = xn, xc = xc, xt = xt, xo = xo, y = y)
}

test_that("gpu_cov() agrees with stats::cov (CPU engine)", {
  info <- new_seed()
  cs <- cov_cases()
  for (nm in c("x", "xn", "xc", "xt", "xo")) for (method in c("pearson", "spearman", "kendall"))
    for (use in c("everything", "all.obs", "complete.obs", "na.or.complete",
                  "pairwise.complete.obs")) for (with_y in c(FALSE, TRUE)) {
      x <- cs[[nm]]
      y <- if (with_y) cs$y else NULL
      lab <- sprintf("%s, %s, %s, y = %s, %s", nm, method, use, with_y, info)
      want <- tryCatch(stats::cov(x, y, use, method), error = function(e) e)
      got <- tryCatch(gpucor::gpu_cov(x, y, use, method, backend = "cpu"),
                      error = function(e) e)
      if (inherits(want, "error")) {
        expect_s3_class(got, "error")
        expect_identical(conditionMessage(got), conditionMessage(want), label = lab)
        next
      }
      expect_identical(dimnames(got), dimnames(want), label = lab)
      expect_identical(is.na(got), is.na(want), label = lab)
      if (method == "kendall") {
        expect_identical(got, want, label = lab)
      } else {
        # to ~1e-15 of s_i s_j
        colsd <- function(v) apply(v, 2L, function(c) {
          m <- max(abs(c), na.rm = TRUE)    # scaled: sd of 1e-300 * x is not 0
          if (!is.finite(m) || m == 0) 0 else stats::sd(c / m, na.rm = TRUE) * m
        })
        rk <- function(v) if (method == "spearman") apply(v, 2L, rank, na.last = "keep") else v
        scale <- outer(colsd(rk(x)), colsd(rk(if (with_y) y else x)))
        expect_lte(max(abs(got - want) / pmax(scale, .Machine$double.xmin), 0, na.rm = TRUE),
                   1e-12, label = lab)
      }
    }
})

test_that("gpu_cov() of vectors, data frames, names, and no warning for zero sd", {
  set.seed(5)
  a <- stats::rnorm(30); b <- stats::rnorm(30)
  expect_equal(gpucor::gpu_cov(a, b, backend = "cpu"), stats::cov(a, b), tolerance = 1e-14)
  expect_null(dim(gpucor::gpu_cov(a, b, backend = "cpu")))
  df <- data.frame(u = a, v = b, w = 2)
  expect_no_warning(got <- gpucor::gpu_cov(df, backend = "cpu"))
  expect_equal(got, stats::cov(df), tolerance = 1e-14)
  expect_identical(dimnames(got), list(c("u", "v", "w"), c("u", "v", "w")))
  expect_identical(got[3, ], c(u = 0, v = 0, w = 0))
  expect_error(gpucor::gpu_cov(a), "supply both 'x' and 'y' or a matrix-like 'x'", fixed = TRUE)
  expect_error(gpucor::gpu_cov(df, use = "bad"), "invalid 'use' argument", fixed = TRUE)
  # stats' positional order: cov(x, y, use, method)
  m <- cbind(a, b)
  m[2, 1] <- NA
  expect_equal(gpucor::gpu_cov(m, NULL, "pairwise.complete.obs", "pearson", backend = "cpu"),
               stats::cov(m, NULL, "pairwise.complete.obs", "pearson"), tolerance = 1e-14)
  expect_equal(gpucor::gpu_cov(m, NULL, "complete.obs", "spearman", backend = "cpu"),
               stats::cov(m, NULL, "complete.obs", "spearman"), tolerance = 1e-14)
  expect_error(gpucor::gpu_cov(m, NULL, "pairwise.complete.obs", "kendall"),
               "cannot handle 'pairwise.complete.obs'", fixed = TRUE)
  expect_identical(names(formals(gpucor::gpu_cov))[1:4], names(formals(stats::cov))[1:4])
})

test_that("GPU: gpu_cov() agrees with stats::cov", {
  skip_if_no_gpu()
  info <- new_seed()
  cs <- cov_cases()
  for (nm in c("x", "xn", "xc", "xo")) for (method in c("pearson", "spearman", "kendall"))
    for (use in c("everything", "complete.obs", "pairwise.complete.obs")) {
      x <- cs[[nm]]
      lab <- sprintf("%s, %s, %s, %s", nm, method, use, info)
      if (method != "pearson" && use == "pairwise.complete.obs") {
        expect_error(gpucor::gpu_cov(x, cs$y, use, method, backend = "gpu"),
                     "cannot handle 'pairwise.complete.obs'", fixed = TRUE)
        next
      }
      want <- stats::cov(x, cs$y, use, method)
      got <- gpucor::gpu_cov(x, cs$y, use, method, backend = "gpu")
      expect_identical(is.na(got), is.na(want), label = lab)
      expect_equal(got, want, tolerance = 1e-12, label = lab)
    }
})

test_that("pairwise covariances with NA: the pairs that meet an NA are stats' to the bit", {
  info <- new_seed()
  for (rep in 1:25) {
    n <- sample(c(1:4, 9, 40), 1)
    p <- sample(1:9, 1)
    x <- matrix(stats::rnorm(n * p), n, p)
    if (rep %% 3 == 0) x <- 1e8 + x                     # a large offset
    if (p >= 2) x[, 2] <- round(x[, 2])                 # ties
    if (p >= 3) x[, 3] <- 0.1                           # constant, complete
    if (p >= 4) { x[, 4] <- 7; x[1, 4] <- NA }          # constant, with NA
    if (p >= 5) x[-1, 5] <- NA                          # one observation
    x[sample(length(x), length(x) %/% 6)] <- NA
    if (p >= 6) x[, 6] <- stats::rnorm(n)               # complete
    y <- if (rep %% 2 == 0) matrix(stats::rnorm(n * 2), n, 2) else NULL
    if (!is.null(y)) y[sample(length(y), 1)] <- NA
    tile <- sample(c(0L, 1L, 2L, 3L), 1)
    lab <- sprintf("rep %d, n = %d, p = %d, y = %s, tile %d, %s", rep, n, p,
                   !is.null(y), tile, info)
    want <- stats::cov(x, y, use = "pairwise.complete.obs")
    old <- options(gpucor.cpu_tile = tile)
    got <- gpucor::gpu_cov(x, y, use = "pairwise.complete.obs")
    options(old)
    expect_identical(is.na(got), is.na(want), label = lab)
    yo <- if (is.null(y)) x else y
    meets_na <- outer(apply(is.na(x), 2L, any), apply(is.na(yo), 2L, any), "|")
    expect_identical(got[meets_na], want[meets_na], label = lab)
    # the pairs of complete columns: r s_i s_j, to ~1e-15 of s_i s_j
    s <- outer(apply(x, 2L, stats::sd), apply(yo, 2L, stats::sd))
    d <- abs(got - want)[!meets_na]
    expect_true(all(d <= 1e-12 * pmax(s[!meets_na], 1e-300) | d == 0, na.rm = TRUE), label = lab)
  }
})

test_that("gpu_cov(): columns without a correlation anywhere, taken from stats (issue 32's covariances in place)", {
  info <- new_seed()
  b <- c("cpu", if (isTRUE(as.vector(gpucor::gpu_available()))) "gpu")
  x <- rmat(12, 5)
  cases <- list(first = replace(x, cbind(1:12, 1), 3),        # a constant first column
                all = matrix(2, 12, 4),                       # every column constant
                lone = x[, 2, drop = FALSE],                  # one column
                lone_const = matrix(7, 12, 1),
                ties = round(x))
  for (nm in names(cases)) for (method in c("pearson", "spearman", "kendall"))
    for (with_y in c(FALSE, TRUE)) for (be in b) {
      a <- cases[[nm]]
      y <- if (with_y) cbind(x[, 4], 1) else NULL
      want <- stats::cov(a, y, method = method)
      got <- gpucor::gpu_cov(a, y, method = method, backend = be)
      lab <- sprintf("%s, %s, y = %s, %s; %s", nm, method, with_y, be, info)
      expect_identical(dim(got), dim(want), label = lab)
      expect_identical(is.na(got), is.na(want), label = lab)
      expect_equal(got, want, tolerance = 1e-13, label = lab)
      if (!with_y) expect_identical(got, t(got), label = paste(lab, "(exactly symmetric)"))
    }
})

test_that("gpu_cov's diagonal is stats' variance to the bit, whatever the blocks", {
  # r s_i s_i (r_ii s_i s_i in pairwise mode) missed stats' variance by an
  # ulp for about 4% of such matrices, and gpu_cov(BPPARAM =), whose lone
  # columns take stats' values, then differed from gpu_cov()
  for (s in c(25L, 79L, 132L, 1001L, 1002L)) {
    set.seed(s)
    x <- matrix(stats::rnorm(40 * 17), 40, 17)
    x[, 3] <- round(x[, 3]); x[, 6] <- 2; x[, 9] <- 1e8 + x[, 9]
    x[, 10] <- x[, 10] * 1e-3 + 1e6
    xn <- x
    xn[sample(length(xn), 30)] <- NA
    for (u in c("everything", "complete.obs", "pairwise.complete.obs"))
      for (d in list(x, xn)) {
        want <- suppressWarnings(stats::cov(d, use = u))
        got <- suppressWarnings(gpucor::gpu_cov(d, use = u, backend = "cpu"))
        expect_identical(diag(got), diag(want), label = paste("seed", s, u, anyNA(d)))
      }
    if (requireNamespace("BiocParallel", quietly = TRUE))
      expect_identical(
        suppressWarnings(gpucor::gpu_cov(xn, use = "pairwise.complete.obs", backend = "cpu",
                                         BPPARAM = BiocParallel::SerialParam())),
        suppressWarnings(gpucor::gpu_cov(xn, use = "pairwise.complete.obs", backend = "cpu")),
        label = paste("BPPARAM, seed", s))
  }
})
