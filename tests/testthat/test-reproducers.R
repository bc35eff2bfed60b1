# Defects found by randomized adversarial comparison with stats (issue 8):
# each reproducer as it was reported, then its family on fresh random data.
# Every check runs on the CPU engine and, where a GPU is usable, on the GPU
# engine too (backend = "gpu" explicitly: these inputs are far below the
# size at which "auto" would choose it).

# 1. Pairwise Pearson carries stats' pairwise mean ------------------------

# The CPU engine follows stats' pairwise arithmetic (its long-double mean of
# the shared rows) and is compared with stats on the data as given.  The
# GPU computes each pair two-pass from a shift by its first shared value,
# which is exact where stats' own mean rounds (a spread 1e-15 of the
# offset, an odd number of shared rows: stats is off by ~1e-8 there), so it
# is compared with the exact answer: stats on the data minus the offset,
# which is exact in double (correlations do not change under a shift).
expect_pairwise_exact <- function(x, y, off, info) {
  for (b in test_backends()) {
    if (b == "cpu") {
      expect_same_as_stats_cor(x, y, "pearson", "pairwise.complete.obs",
                               backend = "cpu", info = info)
      next
    }
    want <- capture_conditions(stats::cor(x - off, if (!is.null(y)) y + off,
                                          use = "pairwise.complete.obs"))
    got <- capture_conditions(gpucor::gpu_cor(x, y, use = "pairwise.complete.obs",
                                              backend = "gpu"))
    what <- "gpu_cor(use = \"pairwise.complete.obs\", backend = \"gpu\") against the shifted data"
    expect_abs_equal(got$value, want$value, 1e-10, what, info)
    expect_identical(dimnames(got$value), dimnames(want$value), info = info)
    expect_same_warnings(got, want, what, info)
  }
}

test_that("pairwise Pearson of complete columns is as exact as stats' pairwise code", {
  set.seed(2); x <- matrix(1e12 + rnorm(200), 20); x[3, 2] <- NA
  expect_pairwise_exact(x, NULL, 1e12, "reproducer 1e12")
  set.seed(4); x <- matrix(1e6 + rnorm(84) * 1e-9, 4); x[1, 1] <- NA
  expect_pairwise_exact(x, NULL, 1e6, "reproducer 1e6 + 1e-9 noise")
  info <- new_seed()
  for (off in c(1e4, 1e8, 1e12)) for (sc in c(1, 1e-3)) for (n in c(8, 16, 21)) {
    x <- matrix(off + sc * rnorm(n * 9), n)
    y <- matrix(-off + sc * rnorm(n * 4), n)
    for (na in c(0, 1, 4)) {
      xn <- x; if (na) xn[sample.int(length(xn), na)] <- NA
      what <- sprintf("offset %g, scale %g, %d rows, %d NA; %s", off, sc, n, na, info)
      expect_pairwise_exact(xn, NULL, off, what)
      expect_pairwise_exact(xn, y, off, what)
    }
  }
  # the correlation distances of data with NA are the same pairwise code
  set.seed(2); x <- matrix(1e12 + rnorm(200), 20); x[3, 2] <- NA
  for (m in c("correlation", "abscorrelation")) expect_cor_dist(t(x), m, backend = test_backends())
})

# 2. The zero-sd rule for tiny spreads: variance without y, sd with y -----

test_that("with y, a tiny column is correlated as stats does (its sd fits a double)", {
  b <- test_backends()
  set.seed(1); x <- matrix(rnorm(20), 10); y <- rnorm(10) * 1e-300
  expect_same_as_stats_cor(x, y, backend = b, info = "reproducer")
  got <- gpucor::gpu_cor(x, y, backend = "cpu")
  expect_false(anyNA(got))
  info <- new_seed()
  for (e in c(-530, -997, -1013)) {
    s <- 2^e
    x <- rmat(12, 3)
    y <- rmat(12, 2) * s
    what <- sprintf("scale 2^%d; %s", e, info)
    for (u in c("everything", "complete.obs", "all.obs")) {
      expect_same_as_stats_cor(x, y, "pearson", u, backend = b, info = what)
      expect_same_as_stats_cor(y, x, "pearson", u, backend = b, info = what)
      if (2 * e < -1080) {
        # without y the variance underflows a double: stats' NA and warning
        expect_same_as_stats_cor(cbind(x, y), NULL, "pearson", u, backend = b, info = what)
      } else {
        # a subnormal variance: stats' sd keeps a few bits only; the exact
        # answer is stats' on the rescaled columns (correlations do not
        # change when a column is scaled)
        for (bk in b)
          expect_abs_equal(gpucor::gpu_cor(cbind(x, y), use = u, backend = bk),
                           stats::cor(cbind(x, y / s), use = u), 1e-12,
                           paste("subnormal variance,", bk), what)
      }
    }
  }
})

# 3. The cosine distance of one-coordinate data ---------------------------

test_that("the cosine distance of one-column data is 1 - sign(x) sign(y)", {
  for (b in test_backends()) {
    expect_equal(c(gpucor::gpu_dist(c(1, -2, 3), "cosine", backend = b)), c(2, 0, 2))
    expect_warning(d <- gpucor::gpu_dist(c(1, 0, 3), "cosine", backend = b),
                   "the standard deviation is zero")
    expect_identical(is.na(c(d)), c(TRUE, FALSE, TRUE))
    expect_equal(c(d)[2], 0)
  }
  info <- new_seed()
  for (k in 1:5) {
    v <- sample(c(-3, -1, 0, 0.5, 2, NA), 9, replace = TRUE)
    expect_cor_dist(matrix(v, ncol = 1), "cosine", backend = test_backends(),
                    info = paste(toString(v), info))
  }
})

# 4. Correlation distances of subnormal rows keep their digits -------------

test_that("correlation distances of subnormal rows equal those of the rescaled rows", {
  for (b in test_backends()) {
    d <- gpucor::gpu_dist(rbind(c(127, 222), c(-753, -882)) * 2^-1074, "correlation",
                          backend = b)
    expect_identical(c(d), 2)
  }
  info <- new_seed()
  for (k in 1:4) {
    z <- matrix(round(rnorm(6 * 5) * 200), 6)     # deep subnormal integers
    for (m in c("correlation", "abscorrelation", "cosine")) {
      for (b in test_backends()) {
        got <- c(gpucor::gpu_dist(z * 2^-1074, m, backend = b))
        want <- c(gpucor::gpu_dist(z, m, backend = "cpu"))
        expect_abs_equal(got, want, 1e-14, sprintf("%s, %s", m, b), info)
      }
    }
    # stats on the rescaled data is the reference (REFERENCES.md)
    expect_abs_equal(c(gpucor::gpu_dist(z * 2^-1074, "correlation", backend = "cpu")),
                     c(stats::as.dist(1 - stats::cor(t(z)))), 1e-14, "stats rescaled", info)
    # and gpu_cor with y, where stats' own mean of subnormals rounds
    x <- z * 2^-1074
    y <- matrix(round(rnorm(6 * 2) * 200), 6)
    for (b in test_backends())
      expect_abs_equal(gpucor::gpu_cor(x, y * 2^-1074, backend = b), stats::cor(z, y), 1e-13,
                       paste("gpu_cor of subnormal columns with y,", b), info)
  }
})

# 5. The zero-sd warning of correlation distances with NA ------------------

test_that("a constant row warns in correlation distances of data with NA", {
  for (b in test_backends()) {
    expect_warning(d <- gpucor::gpu_dist(rbind(c(1, 1, 1), c(NA, NA, 2)), "correlation",
                                         backend = b), "the standard deviation is zero")
    expect_true(is.na(c(d)))
  }
  info <- new_seed()
  for (k in 1:3) {
    x <- rmat(7, 6)
    x[sample.int(length(x), 8)] <- NA
    r <- sample.int(7, 1)
    x[r, ] <- c(NA, NA, rep(4, 4))[sample.int(6)]     # constant on its observed values
    for (m in c(cor_dist_methods, "cosine")) {
      xm <- x; if (m == "cosine") xm[r, !is.na(xm[r, ])] <- 0
      expect_cor_dist(xm, m, backend = test_backends(), info = paste("row", r, info))
    }
  }
})

# 6. One-row input to rank methods loses its names, as stats' row() --------

test_that("rank methods on one row (also after complete cases) drop dimnames like stats", {
  b <- test_backends()
  x <- matrix(c(0.5, -1, 2, 3), 1, dimnames = list("r", letters[1:4]))
  y <- matrix(c(1, 2), 1, dimnames = list("r", c("p", "q")))
  x3 <- rbind(x, c(NA, 1, 2, 3), c(1, NA, 0, 0))
  y3 <- rbind(y, c(5, 6), c(7, NA))
  for (m in cor_methods) for (u in cor_uses) {
    expect_same_as_stats_cor(x, NULL, m, u, backend = b)
    expect_same_as_stats_cor(x, y, m, u, backend = b)
    expect_same_as_stats_cor(x, 3, m, u, backend = b)
    expect_same_as_stats_cor(x3, NULL, m, u, backend = b)   # one complete row
    expect_same_as_stats_cor(x3, y3, m, u, backend = b)
  }
})

# 7. Empty inputs where stats returns a value ------------------------------

test_that("empty x or y: stats' value or stats' error, by method and use", {
  b <- test_backends()
  info <- new_seed()
  x <- rmat(5, 2, dimnames = list(NULL, c("a", "b")))
  for (m in cor_methods) for (u in cor_uses) {
    expect_same_as_stats_cor(x, x[, 0], m, u, backend = b, info = info)
    expect_same_as_stats_cor(x[, 0], x, m, u, backend = b, info = info)
    expect_same_as_stats_cor(x[0, ], NULL, m, u, backend = b, info = info)
    expect_same_as_stats_cor(x[0, ], x[0, ], m, u, backend = b, info = info)
    expect_same_as_stats_cor(x[, 0], NULL, m, u, backend = b, info = info)
  }
  expect_identical(dim(gpucor::gpu_cor(x, x[, 0], use = "complete.obs")), c(2L, 0L))
  r <- gpucor::gpu_cor(x[0, ], method = "kendall", use = "pairwise")
  expect_identical(dim(r), c(2L, 2L))
  expect_true(all(is.na(r)))
})

# 8. Single-precision distances never overflow where double does not -------

test_that("single-precision distances keep values double can hold", {
  skip_if_no_gpu()
  info <- new_seed()
  near4 <- matrix(4 + runif(3 * 5), 3)
  big <- rbind(c(1, 1), c(2, 3), c(4, 1))
  cases <- list(
    list(near4, "minkowski", 64), list(big, "minkowski", 0.001),
    list(near4 * 1e20, "euclidean", 2), list(near4 * 1e-30, "euclidean", 2),
    list(rbind(c(3e38, 1), c(-3e38, 2)), "maximum", 2),
    list(rbind(c(3e38, 3e38), c(-3e38, -3e38)), "manhattan", 2),
    list(rbind(c(1e300, 1), c(-1e300, 2), c(3, 4)), "canberra", 2),   # beyond float
    list(rbind(c(1e300, 1), c(-1e300, 2), c(3, 4)), "manhattan", 2),
    list(matrix(rnorm(40 * 7), 40) * 1e-42, "minkowski", 3))
  for (cs in cases) {
    x <- cs[[1]]; m <- cs[[2]]; p <- cs[[3]]
    want <- c(stats::dist(x, m, p = p))
    got <- c(gpucor::gpu_dist(x, m, p = p, backend = "gpu", precision = "single"))
    what <- sprintf("%s p = %g on values near %g", m, p, max(abs(x)))
    expect_true(all(is.finite(got)) && all(got > 0), info = paste(what, info))
    # float's rounding, amplified by 1/p for p < 1
    tol <- if (p < 1) 1e-3 else 1e-5
    expect_equal(got, want, tolerance = tol, info = paste(what, info))
  }
})

test_that("single-precision Canberra drops the terms stats drops (DBL_MIN of the data as given)", {
  skip_if_no_gpu()
  info <- new_seed()
  # Deep subnormal data (all of it below DBL_MIN): stats drops every term
  # and gives NA, as double does; and data spanning 2^-1031 .. 2^-800,
  # which float holds once scaled, where the second coordinate's terms are
  # below DBL_MIN and dropped by stats: the pair (1, 2) is 0, not 1/3.
  sub <- matrix(round(rnorm(40 * 3) * 200) * 2^-1074, 40)
  span <- rbind(c(2^-800, 2^-1030), c(2^-800, 2^-1031), c(2^-801, 0),
                c(-2^-800, 2^-1022))
  for (x in list(sub, span, sub * 2^100, span * 2^900)) {
    want <- c(suppressWarnings(stats::dist(x, "canberra")))
    for (pr in c("double", "single")) {
      got <- c(gpucor::gpu_dist(x, "canberra", backend = "gpu", precision = pr))
      what <- sprintf("canberra, %s, values up to %g", pr, max(abs(x)))
      expect_identical(is.na(got), is.na(want), info = paste(what, info))
      expect_equal(got[!is.na(got)], want[!is.na(want)], tolerance = 1e-6,
                   info = paste(what, info))
    }
  }
})

# 9. Issue 32: what a pair sees depends on its shared rows only ------------
# The GPU's pairwise Pearson once centred each column (an item, for the
# correlation distances) by its mean over all its values before the pairs
# were formed: the small values of a column that also holds large ones
# (a constant -1e8 coordinate, scales from 1e-15 to 1e15, subnormal values
# beside values 1e15 times larger) were rounded against the large ones, and
# the pairs that did not share those came out wrong or constant (NA with
# the zero-sd warning).  In single precision the column with an Inf was not
# centred at all, and float could not hold 1e8 + noise.  The property test
# drew each content class alone and so never met these.

test_that("correlation distances with NA beside a constant -1e8 coordinate (issue 32)", {
  b <- test_backends()
  info <- new_seed()
  for (k in 1:10) {
    x <- matrix(stats::rnorm(16 * 8), 16)
    x[, sample.int(8, sample(1:3, 1))] <- sample(c(-1e8, 1e4), 1)
    x[sample.int(128, 38)] <- NA
    for (m in c("correlation", "abscorrelation"))
      expect_cor_dist(x, m, backend = b, info = paste("draw", k, info))
  }
})

test_that("correlation distances of subnormal values beside 1e15 larger ones, NA and an NA column (issue 32)", {
  b <- test_backends()
  info <- new_seed()
  for (k in 1:3) {
    x <- matrix(stats::rnorm(257 * 7), 257) * 1e-310
    big <- sample.int(length(x), length(x) %/% 3)
    x[big] <- x[big] * 1e15
    x[sample.int(length(x), round(0.2 * length(x)))] <- NA
    x[, sample.int(7, 1)] <- NA
    # stats on the data times 2^1000 (exact) for the values: its own
    # products underflow here; the NA and warning rules are scale-free
    # under pairwise (long-double sums)
    want <- capture_conditions(cor_dist_expected(x * 2^1000, "correlation"))
    for (bk in b) {
      got <- capture_conditions(gpucor::gpu_dist(x, "correlation", backend = bk))
      what <- sprintf("gpu_dist(method = \"correlation\", backend = \"%s\")", bk)
      expect_abs_equal(as.vector(unclass(got$value)), as.vector(unclass(want$value)), 1e-10,
                       what, paste("draw", k, info))
      expect_same_warnings(got, want, what, paste("draw", k, info))
    }
  }
})

test_that("pairwise Pearson of columns on scales 1e-15 to 1e15 with Inf and constant columns (issue 32)", {
  b <- test_backends()
  info <- new_seed()
  for (k in 1:10) {
    x <- sweep(matrix(stats::rnorm(9 * 127), 9), 2, 10^sample(-15:15, 127, TRUE), "*")
    x[, sample.int(127, 3)] <- -1e8
    x[sample.int(9, 2), ] <- -1e8
    x[sample.int(length(x), 60)] <- sample(c(NA, NaN, Inf, -Inf), 60, TRUE)
    expect_same_as_stats_cor(x, NULL, "pearson", "pairwise.complete.obs", backend = b,
                             info = paste("draw", k, info))
  }
})

test_that("single-precision pairwise Pearson of near-duplicate columns near 1e8 with Inf (issue 32)", {
  skip_if_no_gpu()
  info <- new_seed()
  for (k in 1:10) {
    x <- t(1e8 + stats::rnorm(33) + matrix(stats::rnorm(33 * 9) * 1e-6, 33, 9))
    x[sample.int(length(x), 18)] <- sample(c(NA, Inf, -Inf), 18, TRUE)
    # the reference: stats on the columns shifted by a finite value of each
    # (exact; correlations do not change under a shift)
    first <- apply(x, 2, function(v) { o <- v[is.finite(v)]; if (length(o)) o[1] else 0 })
    want <- capture_conditions(stats::cor(sweep(x, 2, first), use = "pairwise.complete.obs"))
    got <- capture_conditions(gpucor::gpu_cor(x, use = "pairwise.complete.obs",
                                              backend = "gpu", precision = "single"))
    what <- "gpu_cor(use = \"pairwise.complete.obs\", precision = \"single\")"
    expect_abs_equal(got$value, want$value, 1e-4, what, paste("draw", k, info))
    expect_same_warnings(got, want, what, paste("draw", k, info))
  }
})

test_that("single-precision Minkowski with a large p: no p-th power underflows to 0 (issue 32)", {
  skip_if_no_gpu()
  info <- new_seed()
  for (k in 1:10) {
    x <- matrix(sample(-3:3, 39 * 4, replace = TRUE), 39)
    x[, sample.int(4, 1)] <- sample(c(-1e8, 1e6), 1)
    storage.mode(x) <- "integer"
    for (p in c(20, 64, 100)) {
      want <- c(stats::dist(x, "minkowski", p = p))   # no over- or underflow here
      got <- c(gpucor::gpu_dist(x, "minkowski", p = p, backend = "gpu", precision = "single"))
      expect_equal(got, want, tolerance = 1e-5, info = sprintf("p = %g, draw %d; %s", p, k, info))
    }
  }
})

# (test-property.R, case seed 659853559) A column whose one nonzero value
# is the smallest subnormal: stats keeps its mean in a double, where it
# rounds to 0, so its spread is about 0 and its sd, 2^-1074 / sqrt(3),
# rounds to 2^-1074: no "zero sd" rule with y; its variance (without y)
# does round to 0.  gpucor's values keep the exact mean; its rules follow
# stats' arithmetic.  (stats' NaN, 0/0 of two subnormal sds, is its
# arithmetic, not a rule.)
test_that("stats' zero-sd rules on a column whose one nonzero is the smallest subnormal", {
  x <- cbind(c(1, 2, 3, 4), c(3, 1, 4, 1), c(2, 2, 2, 2)) * 2^-1074
  y <- cbind(c(0, 0, -1, 0), c(1, 2, 3, 5), c(0, 7, 0, 0)) * 2^-1074
  for (b in test_backends()) {
    for (yy in list(y, NULL, x)) {
      got <- capture_conditions(gpu_cor(y, yy, backend = b))
      want <- capture_conditions(stats::cor(y, yy))
      lab <- paste(b, if (is.null(yy)) "without y" else "with y")
      expect_identical(is.na(got$value), is.na(want$value) & !is.nan(want$value), info = lab)
      expect_identical(length(got$warnings) > 0, length(want$warnings) > 0, info = lab)
    }
  }
})
