# gpu_dist() against stats::dist() for the six stats metrics, and against
# 1 - cor(t(x)) or a direct R computation for the correlation and cosine
# distances.

# The six stats metrics ---------------------------------------------------

test_that("the six stats metrics match stats::dist on random data", {
  info <- new_seed()
  x <- rmat(23, 7, dimnames = list(paste0("r", 1:23), NULL))
  for (m in stats_dist_methods) expect_same_as_stats_dist(x, m, info = info)
  # Enough rows for several tiles of the pairwise engine.
  xl <- rmat(301, 11)
  for (m in stats_dist_methods) expect_same_as_stats_dist(xl, m, p = 3, info = info)
})

test_that("NA: coordinates skipped, the sum rescaled, NA when nothing is left", {
  info <- new_seed()
  x <- rmat(30, 8, na = 0.15)
  x[5, ] <- NA                         # a row with nothing observed
  x[6, ] <- c(1, 2, 3, 4, NA, NA, NA, NA)
  x[7, ] <- c(NA, NA, NA, NA, 5, 6, 7, 8)   # nothing in common with row 6
  x[8, ] <- c(0, 0, NA, NA, 0, 1, NA, 0)
  for (m in stats_dist_methods) expect_same_as_stats_dist(x, m, p = 1.5, info = info)
  d <- as.matrix(gpucor::gpu_dist(x, backend = "cpu"))
  expect_true(is.na(d[6, 7]))
  expect_true(all(is.na(d[5, -5])))
})

test_that("Inf, -Inf and NaN", {
  info <- new_seed()
  x <- rmat(12, 5)
  x[1, 1] <- Inf
  x[2, 1] <- Inf                       # Inf - Inf: stats skips the coordinate
  x[3, 2] <- -Inf
  x[4, 3] <- NaN
  x[5, 4] <- Inf
  x[5, 5] <- -Inf
  for (m in setdiff(stats_dist_methods, "binary")) {
    expect_same_as_stats_dist(x, m, info = info)
  }
  expect_same_as_stats_dist(x, "minkowski", p = 0.5, info = info)
})

test_that("canberra with zeros, negative values and opposite signs", {
  info <- new_seed()
  x <- rmat(15, 6)
  x[sample.int(length(x), 25)] <- 0    # 0/0 terms are dropped and the sum rescaled
  x[1, ] <- 0
  x[2, ] <- 0                          # two all-zero rows: every term is 0/0
  x[3, ] <- -x[4, ]                    # |x + y| = 0 with x != y
  x[9, 2] <- NA
  x[10, 3] <- Inf
  x[11, 3] <- Inf
  expect_same_as_stats_dist(x, "canberra", info = info)
  xi <- matrix(sample(-3:3, 20 * 5, replace = TRUE), 20)
  expect_same_as_stats_dist(xi, "canberra", info = info)
})

test_that("binary on 0/1 data, on general data and with non-finite values", {
  info <- new_seed()
  x01 <- matrix(as.double(stats::runif(25 * 9) > 0.6), 25)
  x01[1, ] <- 0                        # all "off": distance 0 to another all-off row
  x01[2, ] <- 0
  x01[3, 4] <- NA
  expect_same_as_stats_dist(x01, "binary", info = info)
  xg <- rmat(20, 6)
  xg[sample.int(length(xg), 40)] <- 0
  expect_same_as_stats_dist(xg, "binary", info = info)
  xnf <- x01
  xnf[4, 1] <- Inf
  xnf[5, 2] <- -Inf
  xnf[6, 3] <- NaN
  expect_warning(gpucor::gpu_dist(xnf, "binary", backend = "cpu"),
                 "treating non-finite values as NA")
  expect_same_as_stats_dist(xnf, "binary", info = info)
  expect_same_as_stats_dist(x01 > 0, "binary", info = info)   # logical input
})

test_that("minkowski with p = 1, 3, 0.5 (and p is an attribute)", {
  info <- new_seed()
  x <- rmat(21, 6, na = 0.05)
  for (p in c(1, 3, 0.5, 2, 1.7)) {
    expect_same_as_stats_dist(x, "minkowski", p = p, info = info)
  }
  expect_identical(attr(gpucor::gpu_dist(x, "minkowski", p = 3, backend = "cpu"), "p"), 3)
  expect_null(attr(gpucor::gpu_dist(x, "euclidean", backend = "cpu"), "p"))
})

test_that("near-duplicate rows with a 1e8 offset keep full accuracy", {
  info <- new_seed()
  base <- 1e8 + stats::rnorm(9)
  x <- t(replicate(12, base + 1e-3 * stats::rnorm(9)))
  x <- rbind(x, x[1, ], x[2, ] + 1e-6)   # an exact duplicate and a nearer one
  for (m in setdiff(stats_dist_methods, "binary")) expect_same_as_stats_dist(x, m, info = info)
  d <- as.matrix(gpucor::gpu_dist(x, backend = "cpu"))
  expect_identical(d[13, 1], 0)          # identical rows are at distance exactly 0
})

test_that("zero columns: nothing observed, so NA like stats", {
  x0 <- matrix(numeric(0), 4, 0, dimnames = list(letters[1:4], NULL))
  for (m in stats_dist_methods) expect_same_as_stats_dist(x0, m)
})

test_that("integer input is coerced", {
  info <- new_seed()
  x <- matrix(sample(-20:20, 18 * 5, replace = TRUE), 18)
  x[2, 2] <- NA
  for (m in stats_dist_methods) expect_same_as_stats_dist(x, m, info = info)
})

test_that("a single row gives Size 1 and length 0; two rows give length 1", {
  x1 <- matrix(c(1, 2, 3), 1)
  for (m in stats_dist_methods) expect_same_as_stats_dist(x1, m)
  d <- gpucor::gpu_dist(x1, backend = "cpu")
  expect_identical(attr(d, "Size"), 1L)
  expect_length(d, 0L)
  x2 <- rbind(a = c(1, 2, 3), b = c(4, 0, 3))
  for (m in stats_dist_methods) expect_same_as_stats_dist(x2, m)
  expect_length(gpucor::gpu_dist(x2, backend = "cpu"), 1L)
  for (m in c(cor_dist_methods, "cosine")) {
    d1 <- gpucor::gpu_dist(x1, m, backend = "cpu")
    expect_identical(attr(d1, "Size"), 1L)
    expect_length(d1, 0L)
    expect_cor_dist(x2, m)
  }
})

test_that("rownames become Labels; no rownames, no Labels", {
  info <- new_seed()
  x <- rmat(6, 3)
  expect_null(attr(gpucor::gpu_dist(x, backend = "cpu"), "Labels"))
  rownames(x) <- letters[1:6]
  expect_identical(attr(gpucor::gpu_dist(x, backend = "cpu"), "Labels"), letters[1:6])
  expect_identical(attr(gpucor::gpu_dist(x, "kendall", backend = "cpu"), "Labels"),
                   letters[1:6])
  expect_same_as_stats_dist(x, "euclidean", info = info)
  colnames(x) <- c("u", "v", "w")      # column names play no part
  expect_same_as_stats_dist(x, "manhattan", info = info)
})

test_that("diag and upper are recorded and printed like stats", {
  x <- matrix(sample(0:9, 5 * 4, replace = TRUE), 5, dimnames = list(letters[1:5], NULL))
  for (dg in c(FALSE, TRUE)) for (up in c(FALSE, TRUE)) {
    expect_same_as_stats_dist(x, "manhattan", diag = dg, upper = up)
    g <- gpucor::gpu_dist(x, "manhattan", diag = dg, upper = up, backend = "cpu")
    w <- stats::dist(x, "manhattan", diag = dg, upper = up)
    # Integer data: manhattan distances are exact, so the printout is too.
    expect_identical(utils::capture.output(print(g)), utils::capture.output(print(w)))
  }
  for (m in c(cor_dist_methods, "cosine")) {
    g <- gpucor::gpu_dist(x + 1, m, diag = TRUE, upper = TRUE, backend = "cpu")
    expect_true(attr(g, "Diag"))
    expect_true(attr(g, "Upper"))
  }
})

test_that("hclust, cutree and as.matrix give what they give on stats::dist", {
  info <- new_seed()
  x <- rmat(40, 6, dimnames = list(paste0("g", 1:40), NULL))
  for (m in c("euclidean", "manhattan", "canberra")) {
    g <- gpucor::gpu_dist(x, m, backend = "cpu")
    w <- stats::dist(x, m)
    expect_equal(as.matrix(g), as.matrix(w), tolerance = 1e-12, info = info)
    expect_identical(dimnames(as.matrix(g)), dimnames(as.matrix(w)))
    for (link in c("complete", "average", "single", "ward.D2")) {
      hg <- stats::hclust(g, link)
      hw <- stats::hclust(w, link)
      expect_identical(hg$merge, hw$merge, info = paste(m, link, info))
      expect_equal(hg$height, hw$height, tolerance = 1e-12, info = paste(m, link, info))
      expect_identical(hg$order, hw$order, info = paste(m, link, info))
      expect_identical(hg$labels, hw$labels)
      expect_identical(hg$dist.method, hw$dist.method)
      expect_identical(stats::cutree(hg, k = 4), stats::cutree(hw, k = 4))
    }
  }
  hc <- stats::hclust(gpucor::gpu_dist(x, "correlation", backend = "cpu"), "average")
  expect_identical(hc$dist.method, "correlation")
  expect_length(stats::cutree(hc, k = 3), 40L)
})

test_that("fastcluster::hclust works on gpu_dist", {
  skip_if_not_installed("fastcluster")
  info <- new_seed()
  x <- rmat(50, 5)
  g <- gpucor::gpu_dist(x, backend = "cpu")
  w <- stats::dist(x)
  hg <- fastcluster::hclust(g, "average")
  hw <- fastcluster::hclust(w, "average")
  expect_identical(hg$merge, hw$merge, info = info)
  expect_equal(hg$height, hw$height, tolerance = 1e-12, info = info)
  expect_identical(stats::cutree(hg, k = 5), stats::cutree(hw, k = 5))
})

# Correlation and cosine distances ----------------------------------------

test_that("correlation distances equal 1 - cor(t(x)) without NA", {
  info <- new_seed()
  x <- rmat(25, 12, dimnames = list(paste0("s", 1:25), NULL))
  for (m in cor_dist_methods) expect_cor_dist(x, m, info = info)
  xt <- matrix(sample(1:3, 20 * 15, replace = TRUE), 20)   # ties: Spearman mid-ranks, tau-b
  for (m in cor_dist_methods) expect_cor_dist(xt, m, info = info)
  # Rows, not columns: a wide matrix.
  xw <- rmat(6, 40)
  for (m in cor_dist_methods) expect_cor_dist(xw, m, info = info)
})

test_that("correlation distances handle NA pairwise", {
  info <- new_seed()
  x <- rmat(20, 14)
  for (i in 1:20) x[i, sample.int(14, i %% 5)] <- NA   # a different pattern per row
  for (m in cor_dist_methods) expect_cor_dist(x, m, info = info)
  xt <- matrix(sample(1:4, 15 * 12, replace = TRUE), 15)
  xt[sample.int(length(xt), 20)] <- NA
  for (m in cor_dist_methods) expect_cor_dist(xt, m, info = info)
})

test_that("a constant row gives NA and the standard-deviation warning", {
  info <- new_seed()
  x <- rmat(8, 10)
  x[3, ] <- 2
  x[5, c(1, 2)] <- NA
  x[5, -c(1, 2)] <- 7                  # constant where observed
  for (m in cor_dist_methods) {
    expect_warning(d <- gpucor::gpu_dist(x, m, backend = "cpu"), "the standard deviation is zero")
    dm <- as.matrix(d)
    expect_true(all(is.na(dm[3, -3])))
    expect_false(is.nan(dm[3, 1]))
    expect_false(anyNA(dm[-c(3, 5), -c(3, 5)]))
    expect_cor_dist(x, m, info = info)
  }
})

test_that("larger correlation distances (several tiles)", {
  info <- new_seed()
  x <- rmat(150, 30)
  for (m in c("correlation", "abscorrelation")) expect_cor_dist(x, m, info = info)
  x[sample.int(length(x), 60)] <- NA
  expect_cor_dist(x, "correlation", info = info)
  expect_cor_dist(x[1:30, ], "spearman", info = info)
  expect_cor_dist(x[1:30, ], "kendall", info = info)
})

test_that("cosine distance equals 1 - x.y / (|x| |y|)", {
  info <- new_seed()
  x <- rmat(17, 9, offset = 0.5)
  expect_cor_dist(x, "cosine", info = info)
  x[4, ] <- 3 * x[2, ]                 # parallel rows: distance 0
  x[6, ] <- -x[1, ]                    # opposite rows: distance 2
  expect_cor_dist(x, "cosine", info = info)
  xn <- x
  xn[sample.int(length(xn), 12)] <- NA
  expect_cor_dist(xn, "cosine", info = info)
  xl <- rmat(200, 33)
  expect_cor_dist(xl, "cosine", info = info)
})

test_that("correlation and cosine distances at extreme magnitudes", {
  info <- new_seed()
  z <- rmat(12, 100)
  # All are scale invariant. 5e153: each square fits in a double, the sum of
  # 100 does not; 1e-160: the squares are subnormal.
  for (s in c(5e153, 1e-160)) {
    for (m in c("correlation", "abscorrelation")) {
      d <- gpucor::gpu_dist(s * z, m, backend = "cpu")
      expect_abs_equal(as.vector(d), as.vector(cor_dist_expected(z, m)), 1e-10,
                       sprintf("gpu_dist(%g * z, \"%s\")", s, m), info)
      # stats' pairwise Pearson accumulates in long double: the same answer.
      expect_lt(max(abs(cor_dist_expected(s * z, m) - cor_dist_expected(z, m))), 1e-12)
    }
    d <- gpucor::gpu_dist(s * z, "cosine", backend = "cpu")
    expect_abs_equal(as.vector(d), cosine_expected(z)$value, 1e-10,
                     sprintf("gpu_dist(%g * z, \"cosine\")", s), info)
  }
})

# Options, errors, threads ------------------------------------------------

test_that("results are identical with 1 and 2 threads", {
  info <- new_seed()
  x <- rmat(220, 13, na = 0.02)
  for (m in c(stats_dist_methods, "correlation", "abscorrelation", "cosine")) {
    d1 <- with_options(list(gpucor.threads = 1), gpucor::gpu_dist(x, m, p = 3, backend = "cpu"))
    d2 <- with_options(list(gpucor.threads = 2), gpucor::gpu_dist(x, m, p = 3, backend = "cpu"))
    expect_identical(as.vector(d1), as.vector(d2), info = paste(m, info))
  }
  xs <- x[1:40, ]
  for (m in c("spearman", "kendall")) {
    d1 <- with_options(list(gpucor.threads = 1), gpucor::gpu_dist(xs, m, backend = "cpu"))
    d2 <- with_options(list(gpucor.threads = 2), gpucor::gpu_dist(xs, m, backend = "cpu"))
    expect_identical(as.vector(d1), as.vector(d2), info = paste(m, info))
  }
})

test_that("invalid method, p and input error", {
  x <- matrix(1:6, 3)
  expect_error(gpucor::gpu_dist(x, "foo", backend = "cpu"))
  expect_error(gpucor::gpu_dist(x, "minkowski", p = 0, backend = "cpu"), "\\bp\\b|'p'")
  expect_error(gpucor::gpu_dist(x, "minkowski", p = -1, backend = "cpu"), "\\bp\\b|'p'")
  expect_error(gpucor::gpu_dist(matrix(letters[1:6], 3), backend = "cpu"), "numeric")
  expect_error(gpucor::gpu_dist(matrix(1i, 3, 2), backend = "cpu"), "numeric")
  expect_error(gpucor::gpu_dist(data.frame(a = 1:3, f = factor(c("u", "v", "u"))),
                                backend = "cpu"), "numeric")
})

# GPU ---------------------------------------------------------------------

test_that("without a GPU, backend = 'gpu' errors and 'auto' runs silently", {
  skip_if(isTRUE(as.vector(gpucor::gpu_available())), "a GPU is available")
  x <- rmat(10, 3)
  expect_error(gpucor::gpu_dist(x, backend = "gpu"), "GPU|CUDA")
  expect_error(gpucor::gpu_dist(x, "correlation", backend = "gpu"), "GPU|CUDA")
  expect_silent(d <- gpucor::gpu_dist(x, backend = "auto"))
  expect_equal(as.vector(d), as.vector(stats::dist(x)), tolerance = 1e-12)
})

test_that("GPU (double) matches stats::dist and the correlation distances", {
  skip_if_no_gpu()
  info <- new_seed()
  x <- rmat(301, 11, na = 0.02)
  x[1, 1] <- Inf
  x[2, 2] <- 0
  for (m in setdiff(stats_dist_methods, "binary")) {
    expect_same_as_stats_dist(x, m, p = 3, backend = "gpu", info = info)
  }
  x01 <- matrix(as.double(stats::runif(100 * 9) > 0.5), 100)
  expect_same_as_stats_dist(x01, "binary", backend = "gpu", info = info)
  xd <- 1e8 + t(replicate(50, stats::rnorm(7, sd = 1e-3)))
  expect_same_as_stats_dist(xd, "euclidean", backend = "gpu", info = info)
  xc <- rmat(40, 20)
  for (m in c(cor_dist_methods, "cosine"))
    expect_cor_dist(xc, m, backend = c("cpu", "gpu"), info = info)
  # with NA: each pair over the coordinates both rows observe
  xc[sample(length(xc), 80)] <- NA
  xc[3, ] <- NA
  xc[4, -(1:2)] <- NA                  # two coordinates, shared with few rows
  xc[5, 1:10] <- 1                     # constant where row 6 is observed
  xc[6, 11:20] <- NA
  xc[7, 1:10] <- 0                     # zero norm where row 6 is observed (cosine)
  for (m in c(cor_dist_methods, "cosine"))
    expect_cor_dist(xc, m, backend = c("cpu", "gpu"), info = info)
})

test_that("GPU single precision is within 1e-5 (relative) of the CPU", {
  skip_if_no_gpu()
  info <- new_seed()
  x <- rmat(300, 20)
  for (m in c(stats_dist_methods, cor_dist_methods, "cosine")) {
    cpu <- gpucor::gpu_dist(x, m, p = 3, backend = "cpu")
    gpu <- gpucor::gpu_dist(x, m, p = 3, backend = "gpu", precision = "single")
    expect_equal(as.vector(gpu), as.vector(cpu), tolerance = 1e-5, info = paste(m, info))
    for (a in dist_attrs) expect_identical(attr(gpu, a), attr(cpu, a))
  }
})

test_that("review cases: canberra overflow, named vectors, stats' abbreviations", {
  # |x| + |y| beyond DBL_MAX in an all-finite row pair: Inf/Inf counts as 1
  x <- rbind(c(1e308, 1), c(-1.5e308, 2), c(1, 1))
  expect_equal(c(gpucor::gpu_dist(x, "canberra", backend = "cpu")),
               c(stats::dist(x, "canberra")), tolerance = 1e-12)
  v <- c(a = 1, b = 2, c = 4)
  expect_identical(attr(gpucor::gpu_dist(v, backend = "cpu"), "Labels"),
                   attr(stats::dist(v), "Labels"))
  y <- rmat(6, 4)
  expect_identical(attr(gpucor::gpu_dist(y, "c", backend = "cpu"), "method"), "canberra")
  expect_identical(attr(gpucor::gpu_dist(y, "cor", backend = "cpu"), "method"), "correlation")
  expect_error(gpucor::gpu_dist(y, "co", backend = "cpu"), "ambiguous distance method")
  expect_error(gpucor::gpu_dist(y, "abs", backend = "cpu"), NA)
})

test_that("absurd thread counts are capped, not passed to OpenMP", {
  old <- options(gpucor.threads = 3e9)
  on.exit(options(old))
  x <- rmat(10, 4)
  expect_equal(gpucor::gpu_cor(x, backend = "cpu"), stats::cor(x), tolerance = 1e-12)
  options(gpucor.threads = 1.5)
  expect_error(gpucor::gpu_cor(x, backend = "cpu"), "positive whole number")
})
