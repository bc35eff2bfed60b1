# gpu_cor() against stats::cor(): every method x use x CPU backend on random
# data, then edge cases by name, then GPU against CPU where a GPU exists.

# Random data ------------------------------------------------------------

test_that("gpu_cor matches stats::cor on random data without NA (37 x 13)", {
  info <- new_seed()
  x <- rmat(37, 13)
  for (m in cor_methods) for (u in cor_uses) {
    expect_same_as_stats_cor(x, NULL, m, u, info = info)
  }
})

test_that("gpu_cor matches stats::cor on random data with NA (37 x 13)", {
  info <- new_seed()
  x <- rmat(37, 13, na = 0.05)
  for (m in cor_methods) for (u in cor_uses) {
    expect_same_as_stats_cor(x, NULL, m, u, info = info)
  }
})

test_that("gpu_cor matches stats::cor with a matrix y", {
  info <- new_seed()
  x <- rmat(37, 13)
  y <- rmat(37, 7)
  for (m in cor_methods) for (u in cor_uses) {
    expect_same_as_stats_cor(x, y, m, u, info = info)
  }
  x <- rmat(37, 13, na = 0.04)
  y <- rmat(37, 7, na = 0.04)
  for (m in cor_methods) for (u in cor_uses) {
    expect_same_as_stats_cor(x, y, m, u, info = info)
  }
})

test_that("gpu_cor matches stats::cor with a vector y and with two vectors", {
  info <- new_seed()
  x <- rmat(41, 9, na = 0.05)
  v <- stats::rnorm(41)
  w <- stats::rnorm(41)
  v[c(3, 17)] <- NA
  for (m in cor_methods) for (u in cor_uses) {
    expect_same_as_stats_cor(x, v, m, u, info = info)          # 9 x 1 matrix
    expect_same_as_stats_cor(v, x, m, u, info = info)          # 1 x 9 matrix
    expect_same_as_stats_cor(v, w, m, u, info = info)          # scalar
    expect_same_as_stats_cor(w, stats::rnorm(41), m, u, info = info)
  }
  expect_null(dim(gpucor::gpu_cor(w, 2 * w + 1, backend = "cpu")))
  expect_length(gpucor::gpu_cor(w, 2 * w + 1, backend = "cpu"), 1L)
})

test_that("gpu_cor matches stats::cor on a 300 x 70 matrix (several tiles)", {
  info <- new_seed()
  x <- rmat(300, 70)
  for (m in c("pearson", "spearman")) for (u in c("everything", "complete.obs")) {
    expect_same_as_stats_cor(x, NULL, m, u, info = info)
  }
  # stats' Kendall is O(n^2) per pair: once is enough at this size.
  expect_same_as_stats_cor(x, NULL, "kendall", "everything", info = info)
  xn <- rmat(300, 70, na = 0.002)
  for (m in c("pearson", "spearman")) {
    for (u in c("everything", "complete.obs", "na.or.complete")) {
      expect_same_as_stats_cor(xn, NULL, m, u, info = info)
    }
  }
  expect_same_as_stats_cor(xn, NULL, "pearson", "pairwise.complete.obs", info = info)
  expect_same_as_stats_cor(xn, rmat(300, 67, na = 0.01), "pearson", "pairwise.complete.obs",
                           info = info)
  # stats ranks every pair in an R loop: keep the rank methods smaller.
  xs <- rmat(100, 30, na = 0.05)
  for (m in c("spearman", "kendall")) {
    expect_same_as_stats_cor(xs, NULL, m, "pairwise.complete.obs", info = info)
  }
})

test_that("precision = 'single' still computes in double on the CPU", {
  info <- new_seed()
  x <- rmat(37, 13, na = 0.03)
  for (m in cor_methods) {
    expect_same_as_stats_cor(x, NULL, m, "pairwise.complete.obs", backend = "cpu",
                             precision = "single", info = info)
  }
  skip_if(isTRUE(as.vector(gpucor::gpu_available())), "auto would pick the GPU here")
  expect_same_as_stats_cor(x, NULL, "pearson", "everything", backend = "auto",
                           precision = "single", info = info)
})

# Edge cases, by name ------------------------------------------------------

test_that("Spearman uses mid-ranks for ties", {
  info <- new_seed()
  x <- matrix(sample(1:4, 40 * 6, replace = TRUE), 40)
  storage.mode(x) <- "double"
  for (u in c("everything", "complete.obs", "pairwise.complete.obs")) {
    expect_same_as_stats_cor(x, NULL, "spearman", u, info = info)
  }
  x[sample.int(length(x), 20)] <- NA
  for (u in c("everything", "complete.obs", "pairwise.complete.obs")) {
    expect_same_as_stats_cor(x, NULL, "spearman", u, info = info)
  }
})

test_that("Kendall is tau-b on heavily tied data", {
  info <- new_seed()
  x <- matrix(sample(1:3, 50 * 8, replace = TRUE), 50)
  for (u in c("everything", "complete.obs", "pairwise.complete.obs")) {
    expect_same_as_stats_cor(x, NULL, "kendall", u, info = info)
  }
  x[sample.int(length(x), 30)] <- NA
  for (u in c("everything", "na.or.complete", "pairwise.complete.obs")) {
    expect_same_as_stats_cor(x, NULL, "kendall", u, info = info)
  }
  expect_same_as_stats_cor(x[, 1:5], x[, 6:8], "kendall", "pairwise.complete.obs", info = info)
})

test_that("an all-NA column", {
  info <- new_seed()
  x <- rmat(20, 5)
  x[, 3] <- NA
  for (m in cor_methods) for (u in cor_uses) {
    expect_same_as_stats_cor(x, NULL, m, u, info = info)
  }
  expect_error(gpucor::gpu_cor(x, use = "complete.obs", backend = "cpu"),
               "no complete element pairs")
  r <- gpucor::gpu_cor(x, use = "pairwise.complete.obs", backend = "cpu")
  expect_true(all(is.na(r[3, ])))
  expect_false(anyNA(r[-3, -3]))
})

test_that("a single row (1 x 5 matrix)", {
  x <- matrix(c(0.5, -1, 2, 3, 7), 1)
  for (m in cor_methods) for (u in cor_uses) {
    expect_same_as_stats_cor(x, NULL, m, u)
  }
})

test_that("a single row with NA: stats ranks it as all 1s, so all.obs runs", {
  # stats::cor's Rank() of a one-row matrix is row(x), NA included, so for
  # Spearman and Kendall use = "all.obs" finds no NA and returns NA values.
  # A vector is ranked with rank(na.last = "keep") and still errors.
  x <- matrix(c(0.5, NA, 2, 3), 1)
  for (m in cor_methods) for (u in cor_uses) {
    expect_same_as_stats_cor(x, NULL, m, u)
    expect_same_as_stats_cor(matrix(1:2, 1), x, m, u)
    expect_same_as_stats_cor(x, 1, m, u)
    expect_same_as_stats_cor(1, NA_real_, m, u)
  }
})

test_that("a single column gives a 1 x 1 matrix", {
  info <- new_seed()
  x <- rmat(15, 1, dimnames = list(NULL, "a"))
  for (m in cor_methods) for (u in cor_uses) {
    # stats' own R loop for rank methods under pairwise.complete.obs ends in
    # `r + t(r) - diag(diag(r))`, and diag() of a 1-vector holding
    # 0.9999999999999998 is a 0 x 0 matrix: stats errors "non-conformable
    # arrays" by chance. Compare with the two-vector form there instead.
    if (m != "pearson" && u == "pairwise.complete.obs") next
    expect_same_as_stats_cor(x, NULL, m, u, info = info)
  }
  for (m in c("spearman", "kendall")) {
    want <- matrix(stats::cor(x[, 1], x[, 1], method = m, use = "pairwise.complete.obs"),
                   1, 1, dimnames = list("a", "a"))
    expect_abs_equal(gpucor::gpu_cor(x, method = m, use = "pairwise.complete.obs",
                                     backend = "cpu"),
                     want, 1e-10, paste("single column,", m, "pairwise"), info)
    expect_identical(dimnames(gpucor::gpu_cor(x, method = m, use = "pairwise", backend = "cpu")),
                     list("a", "a"))
  }
  expect_identical(dim(gpucor::gpu_cor(x, backend = "cpu")), c(1L, 1L))
})

test_that("a constant column gives NA and the standard-deviation warning", {
  info <- new_seed()
  x <- rmat(25, 6)
  x[, 2] <- 3
  for (m in cor_methods) for (u in cor_uses) {
    expect_same_as_stats_cor(x, NULL, m, u, info = info)
  }
  expect_warning(r <- gpucor::gpu_cor(x, backend = "cpu"), "the standard deviation is zero")
  expect_true(all(is.na(r[2, -2])))
  expect_same_as_stats_cor(x[, -2], x[, 2], "pearson", "everything", info = info)
  # No warning when nothing is constant.
  expect_no_warning(gpucor::gpu_cor(x[, -2], backend = "cpu"))
})

test_that("a constant column beside a column with NA (everything)", {
  info <- new_seed()
  v <- stats::rnorm(10)
  na_col <- replace(stats::rnorm(10), 4, NA)
  # stats warns when the constant column comes after the NA one, not before.
  for (m in cor_methods) for (u in cor_uses) {
    expect_same_as_stats_cor(cbind(na_col, 2, v), NULL, m, u, info = info)
    expect_same_as_stats_cor(cbind(2, na_col), NULL, m, u, info = info)
    expect_same_as_stats_cor(cbind(v, na_col), cbind(2, v), m, u, info = info)
  }
})

test_that("columns constant only within the co-observed rows (pairwise)", {
  info <- new_seed()
  a <- c(rep(5, 6), stats::rnorm(6))      # varies, but not where b is observed
  b <- c(stats::rnorm(6), rep(NA, 6))
  c <- stats::rnorm(12)
  x <- cbind(a = a, b = b, c = c)
  for (m in cor_methods) for (u in cor_uses) {
    expect_same_as_stats_cor(x, NULL, m, u, info = info)
  }
  expect_warning(r <- gpucor::gpu_cor(x, use = "pairwise.complete.obs", backend = "cpu"),
                 "the standard deviation is zero")
  expect_true(is.na(r["a", "b"]))
  expect_false(is.na(r["a", "c"]))
})

test_that("Inf and -Inf", {
  info <- new_seed()
  x <- rmat(20, 5)
  x[1, 1] <- Inf
  x[2, 2] <- -Inf
  x[3, 3] <- Inf
  x[4, 3] <- -Inf
  for (m in cor_methods) for (u in cor_uses) {
    expect_same_as_stats_cor(x, NULL, m, u, info = info)
  }
  # stats gives NaN, not NA, for Pearson with an infinite value.
  expect_true(is.nan(gpucor::gpu_cor(x, backend = "cpu")[1, 4]))
})

test_that("NaN and NA", {
  info <- new_seed()
  x <- rmat(20, 5)
  x[1, 1] <- NaN
  x[2, 2] <- NA
  x[5, 3] <- NaN
  x[5, 4] <- NA
  for (m in cor_methods) for (u in cor_uses) {
    expect_same_as_stats_cor(x, NULL, m, u, info = info)
  }
})

test_that("a 1e8 offset does not cost accuracy", {
  info <- new_seed()
  x <- rmat(40, 6, offset = 1e8)
  y <- rmat(40, 3, offset = -1e8)
  for (u in c("everything", "complete.obs", "pairwise.complete.obs")) {
    expect_same_as_stats_cor(x, NULL, "pearson", u, info = info)
    expect_same_as_stats_cor(x, y, "pearson", u, info = info)
  }
  xn <- x
  xn[sample.int(length(xn), 10)] <- NA
  expect_same_as_stats_cor(xn, NULL, "pearson", "pairwise.complete.obs", info = info)
  expect_same_as_stats_cor(x, NULL, "spearman", "everything", info = info)
})

test_that("extreme magnitudes: values near 1e154 and 1e-160", {
  info <- new_seed()
  z <- rmat(100, 4)
  # Each square fits in a double but their sum over 100 rows does not:
  # stats accumulates in long double and stays exact.
  big <- 5e153 * z
  for (u in c("everything", "complete.obs", "pairwise.complete.obs")) {
    expect_lt(max(abs(stats::cor(big, use = u) - stats::cor(z, use = u))), 1e-12)  # premise
    for (m in cor_methods) expect_same_as_stats_cor(big, NULL, m, u, info = info)
  }
  # Squares are subnormal here; stats' pairwise path (long double) is exact.
  tiny <- 1e-160 * z[1:30, ]
  expect_lt(max(abs(stats::cor(tiny, use = "pairwise") - stats::cor(z[1:30, ]))), 1e-12)
  for (m in cor_methods) {
    expect_same_as_stats_cor(tiny, NULL, m, "pairwise.complete.obs", info = info)
  }
})

test_that("near-duplicate columns stay within [-1, 1]", {
  info <- new_seed()
  a <- stats::rnorm(50)
  x <- cbind(a, a, a + 1e-9 * stats::rnorm(50), -a, 2 * a + 3, a + 1e-12, stats::rnorm(50))
  for (m in cor_methods) for (u in c("everything", "pairwise.complete.obs")) {
    expect_same_as_stats_cor(x, NULL, m, u, info = info)
  }
  x1 <- 1e8 + x
  expect_same_as_stats_cor(x1, NULL, "pearson", "everything", info = info)
})

test_that("data frames: numeric works, a factor or character column errors", {
  info <- new_seed()
  df <- data.frame(a = stats::rnorm(20), b = 1:20, c = stats::rnorm(20) > 0)
  for (m in cor_methods) {
    expect_same_as_stats_cor(df, NULL, m, "everything", info = info)
  }
  expect_same_as_stats_cor(df[, 1:2], df[, 3, drop = FALSE], "pearson", "everything", info = info)
  dff <- data.frame(a = stats::rnorm(6), f = factor(c("u", "v", "u", "v", "w", "u")))
  expect_error(stats::cor(dff), "numeric")        # the contract being copied
  expect_error(gpucor::gpu_cor(dff, backend = "cpu"), "numeric")
  expect_error(gpucor::gpu_cor(dff, backend = "auto"), "numeric")
  dfc <- data.frame(a = stats::rnorm(3), s = c("x", "y", "z"))
  expect_error(gpucor::gpu_cor(dfc, backend = "cpu"), "numeric")
  expect_error(gpucor::gpu_cor(df$a, dff, backend = "cpu"), "numeric")
})

test_that("non-numeric input errors like stats", {
  expect_error(gpucor::gpu_cor(c("a", "b", "c"), 1:3, backend = "cpu"), "'x'.*numeric")
  expect_error(gpucor::gpu_cor(1:3, c("a", "b", "c"), backend = "cpu"), "'y'.*numeric")
  expect_error(gpucor::gpu_cor(matrix(letters[1:6], 3), backend = "cpu"), "numeric")
  expect_error(gpucor::gpu_cor(matrix(1i, 3, 2), backend = "cpu"), "numeric")
})

test_that("integer and logical input are coerced", {
  info <- new_seed()
  xi <- matrix(sample(-50:50, 30 * 6, replace = TRUE), 30)
  xl <- matrix(stats::runif(30 * 6) > 0.5, 30)
  xi[3, 2] <- NA
  xl[4, 5] <- NA
  for (m in cor_methods) for (u in c("everything", "complete.obs", "pairwise.complete.obs")) {
    expect_same_as_stats_cor(xi, NULL, m, u, info = info)
    expect_same_as_stats_cor(xl, NULL, m, u, info = info)
    expect_same_as_stats_cor(xi, xl, m, u, info = info)
  }
  expect_same_as_stats_cor(1:10, c(1L, 3L, 2L, 5L, 4L, 7L, 6L, 9L, 8L, 10L))
})

test_that("dimnames follow stats: colnames only, rownames only, both", {
  info <- new_seed()
  cn <- paste0("c", 1:6)
  rn <- paste0("r", 1:20)
  x_c <- rmat(20, 6, dimnames = list(NULL, cn))
  x_r <- rmat(20, 6, dimnames = list(rn, NULL))
  x_b <- rmat(20, 6, dimnames = list(rn, cn))
  y_c <- rmat(20, 2, dimnames = list(NULL, c("y1", "y2")))
  v <- stats::setNames(stats::rnorm(20), rn)
  for (m in cor_methods) for (u in c("everything", "pairwise.complete.obs")) {
    expect_same_as_stats_cor(x_c, NULL, m, u, info = info)
    expect_same_as_stats_cor(x_r, NULL, m, u, info = info)
    expect_same_as_stats_cor(x_b, NULL, m, u, info = info)
    expect_same_as_stats_cor(x_b, y_c, m, u, info = info)
    expect_same_as_stats_cor(x_r, y_c, m, u, info = info)
    expect_same_as_stats_cor(v, y_c, m, u, info = info)
    expect_same_as_stats_cor(x_c, v, m, u, info = info)
  }
  expect_identical(dimnames(gpucor::gpu_cor(x_b, backend = "cpu")), list(cn, cn))
})

test_that("pairwise: pairs with 0, 1 and 2 co-observed rows", {
  x <- cbind(
    a = c(1, 2, 3, NA, NA, NA),
    b = c(NA, NA, NA, 4, 5, 6),    # 0 rows with a
    c = c(NA, NA, 7, 1, NA, NA),   # 1 row with a, 1 with b
    d = c(2, 1, NA, 8, 3, NA)      # 2 rows with a, 2 with b, 1 with c
  )
  for (m in cor_methods) for (u in cor_uses) {
    expect_same_as_stats_cor(x, NULL, m, u)
  }
  r <- suppressWarnings(gpucor::gpu_cor(x, use = "pairwise.complete.obs", backend = "cpu"))
  expect_true(is.na(r["a", "b"]))
  expect_true(is.na(r["a", "c"]))
  expect_equal(abs(r["a", "d"]), 1)
})

test_that("complete.obs with no complete case errors; na.or.complete gives NA", {
  x <- cbind(c(1, NA, 3, 4), c(NA, 1, 2, NA), c(5, 6, NA, 1))   # every row has an NA
  for (m in cor_methods) {
    expect_error(gpucor::gpu_cor(x, method = m, use = "complete.obs", backend = "cpu"),
                 "no complete element pairs")
    r <- gpucor::gpu_cor(x, method = m, use = "na.or.complete", backend = "cpu")
    expect_true(all(is.na(r)))
    expect_identical(dim(r), c(3L, 3L))
    expect_same_as_stats_cor(x, NULL, m, "na.or.complete")
    expect_same_as_stats_cor(x[, 1], x[, 2], m, "complete.obs")
  }
})

test_that("all.obs with NA errors", {
  x <- cbind(c(1, NA, 3, 4), 1:4)
  for (m in cor_methods) {
    expect_error(gpucor::gpu_cor(x, method = m, use = "all.obs", backend = "cpu"),
                 "missing observations in cov/cor")
    expect_error(gpucor::gpu_cor(x[, 2], x[, 1], method = m, use = "all.obs", backend = "cpu"),
                 "missing observations in cov/cor")
  }
  # NaN counts as missing too.
  x[2, 1] <- NaN
  expect_error(gpucor::gpu_cor(x, use = "all.obs", backend = "cpu"),
               "missing observations in cov/cor")
})

test_that("argument errors use stats' wording", {
  expect_error(gpucor::gpu_cor(1:5, backend = "cpu"),
               "supply both 'x' and 'y' or a matrix-like 'x'", fixed = TRUE)
  expect_error(gpucor::gpu_cor(1:5, 1:6, backend = "cpu"), "incompatible dimensions")
  expect_error(gpucor::gpu_cor(matrix(1:6, 3), matrix(1:8, 4), backend = "cpu"),
               "incompatible dimensions")
  expect_error(gpucor::gpu_cor(matrix(1:6, 3), 1:4, backend = "cpu"), "incompatible dimensions")
  expect_error(gpucor::gpu_cor(matrix(1:6, 3), use = "foo", backend = "cpu"),
               "invalid 'use' argument", fixed = TRUE)
  expect_error(gpucor::gpu_cor(matrix(1:6, 3), method = "foo", backend = "cpu"))
})

test_that("'use' and 'method' are partially matched like stats", {
  info <- new_seed()
  x <- rmat(30, 5, na = 0.05)
  for (u in c("pair", "complete", "na.or", "every", "all")) {
    expect_same_as_stats_cor(x, NULL, "pearson", u, info = info)
  }
  for (m in c("s", "k", "p")) {
    expect_same_as_stats_cor(x, NULL, m, "pairwise", info = info)
  }
  expect_identical(gpucor::gpu_cor(x, use = "pair", backend = "cpu"),
                   gpucor::gpu_cor(x, use = "pairwise.complete.obs", backend = "cpu"))
})

test_that("rank methods re-rank each pair when NA patterns differ (pairwise)", {
  info <- new_seed()
  x <- rmat(40, 8)
  for (j in 1:8) x[sample.int(40, 2 * j), j] <- NA   # a different pattern per column
  y <- rmat(40, 3, na = 0.15)
  for (m in c("spearman", "kendall")) {
    expect_same_as_stats_cor(x, NULL, m, "pairwise.complete.obs", info = info)
    expect_same_as_stats_cor(x, y, m, "pairwise.complete.obs", info = info)
    expect_same_as_stats_cor(y[, 1], x, m, "pairwise.complete.obs", info = info)
  }
  # Ranking once over each whole column would not give the same answer.
  r_once <- stats::cor(apply(x, 2, rank, na.last = "keep"), use = "pairwise.complete.obs")
  expect_gt(max(abs(r_once - stats::cor(x, method = "spearman", use = "pairwise")),
                na.rm = TRUE), 1e-6)
})

# GPU ---------------------------------------------------------------------

test_that("without a GPU, backend = 'gpu' errors and 'auto' runs silently", {
  skip_if(isTRUE(as.vector(gpucor::gpu_available())), "a GPU is available")
  x <- rmat(10, 3)
  expect_error(gpucor::gpu_cor(x, backend = "gpu"), "GPU|CUDA")
  expect_error(gpucor::gpu_cor(x, backend = "gpu", precision = "single"), "GPU|CUDA")
  expect_silent(r <- gpucor::gpu_cor(x, backend = "auto"))
  expect_lt(max(abs(r - stats::cor(x))), 1e-10)
})

test_that("GPU (double) matches stats::cor for every method and use", {
  skip_if_no_gpu()
  info <- new_seed()
  x <- rmat(37, 13)
  xn <- rmat(37, 13, na = 0.05)
  y <- rmat(37, 4, na = 0.05)
  for (m in cor_methods) for (u in cor_uses) {
    expect_same_as_stats_cor(x, NULL, m, u, backend = "gpu", info = info)
    expect_same_as_stats_cor(xn, NULL, m, u, backend = "gpu", info = info)
    expect_same_as_stats_cor(xn, y, m, u, backend = "gpu", info = info)
  }
  xl <- rmat(300, 70, na = 0.002)
  for (m in cor_methods) for (u in c("everything", "complete.obs", "pairwise.complete.obs")) {
    expect_same_as_stats_cor(xl, NULL, m, u, backend = "gpu", info = info)
  }
  expect_same_as_stats_cor(1e8 + x, NULL, "pearson", "everything", backend = "gpu", info = info)
})

test_that("GPU edge cases match stats::cor", {
  skip_if_no_gpu()
  info <- new_seed()
  x <- rmat(20, 6)
  x[, 2] <- 3
  x[1, 4] <- Inf
  x[2, 5] <- NaN
  x[3, 6] <- NA
  ties <- matrix(sample(1:3, 60 * 5, replace = TRUE), 60)
  for (m in cor_methods) for (u in cor_uses) {
    expect_same_as_stats_cor(x, NULL, m, u, backend = "gpu", info = info)
    expect_same_as_stats_cor(ties, NULL, m, u, backend = "gpu", info = info)
    expect_same_as_stats_cor(matrix(1:5, 1), NULL, m, u, backend = "gpu", info = info)
  }
})

test_that("GPU single precision is within 1e-5 of the CPU", {
  skip_if_no_gpu()
  info <- new_seed()
  x <- rmat(300, 70)
  xn <- rmat(120, 25, na = 0.05)
  cases <- list(list(x, "everything"), list(xn, "everything"), list(xn, "complete.obs"),
                list(xn, "pairwise.complete.obs"))
  for (m in cor_methods) for (cs in cases) {
    cpu <- gpucor::gpu_cor(cs[[1]], method = m, use = cs[[2]], backend = "cpu")
    gpu <- gpucor::gpu_cor(cs[[1]], method = m, use = cs[[2]], backend = "gpu",
                           precision = "single")
    expect_abs_equal(gpu, cpu, 1e-5,
                     sprintf("single-precision GPU, method = %s, use = %s", m, cs[[2]]), info)
    expect_identical(dimnames(gpu), dimnames(cpu))
  }
})
