# The GPU engine on data with missing values: every method x use against
# stats::cor() in double precision, against the CPU engine in single
# precision, and the correlation distances of data with NA against the CPU
# engine (which test-cor.R and test-dist.R check against stats).
#
# GPUCOR_TEST_BACKEND=cpu runs these tests on the CPU engine instead, to check
# the tests themselves on a machine without a GPU; the comparisons with the
# CPU engine then compare it with itself and cannot fail.

gpu_backend <- Sys.getenv("GPUCOR_TEST_BACKEND", "gpu")

# skip_if_no_gpu(), unless GPUCOR_TEST_BACKEND names another backend.
skip_unless_backend <- function() {
  if (identical(gpu_backend, "gpu")) skip_if_no_gpu()
  invisible(TRUE)
}

# Data sets -----------------------------------------------------------------

# n x p with columns observed only in `rows[[j]]` (all rows when NULL).
observed_in <- function(rows, n) {
  x <- matrix(NA_real_, n, length(rows))
  for (j in seq_along(rows)) {
    r <- if (is.null(rows[[j]])) seq_len(n) else rows[[j]]
    x[r, j] <- stats::rnorm(length(r))
  }
  x
}

# Columns whose pairs share exactly 0, 1 or 2 rows, next to pairs sharing
# many: "a" & "b" share none, "a" & "c" one, "a" & "d" two, "c" & "d" five,
# "e" is complete, "f" shares one row with "a", "b", "c" and two with "e",
# and "g" has two rows, equal, so that every pair with it is constant.
coobserved_matrix <- function() {
  x <- observed_in(list(1:10, 11:20, 10:20, c(9:14), NULL, c(1, 20), 1:2), 20)
  x[1:2, 7] <- 5
  colnames(x) <- letters[1:7]
  x
}

# Column "k" is constant on the rows it shares with "a" (rows 1:10) but not
# overall; "z" shares no row with "a", so no row is complete.
constant_on_shared_rows <- function() {
  x <- observed_in(list(1:10, NULL, 11:20, 6:20), 20)
  x[1:10, 2] <- 7
  colnames(x) <- c("a", "k", "z", "w")
  x
}

# The named inputs (x, and y or NULL) every method x use is tried on. Kept
# small: stats' pairwise Spearman loops in R and its Kendall is O(n^2).
na_cases <- function() {
  x5 <- rmat(40, 12, na = 0.05, dimnames = list(NULL, paste0("x", 1:12)))
  x50 <- rmat(50, 10, na = 0.5)
  whole <- rmat(30, 8, na = 0.1)
  whole[, c(3, 7)] <- NA
  single <- rmat(30, 6, na = 0.1)
  single[, 2] <- NA
  single[5, 2] <- 1.3
  ties <- matrix(as.double(sample(1:4, 45 * 9, replace = TRUE)), 45)
  ties[sample(length(ties), 40)] <- NA
  inf <- rmat(30, 6, na = 0.1)
  inf[2, 1] <- Inf
  inf[5, 3] <- -Inf
  inf[7, 3] <- Inf
  inf[9, 5] <- NaN
  y <- rmat(40, 4, na = 0.1, dimnames = list(NULL, paste0("y", 1:4)))
  co <- coobserved_matrix()
  list(
    "5% NA" = list(x5, NULL),
    "50% NA" = list(x50, NULL),
    "whole-NA columns" = list(whole, NULL),
    "a column with one observed value" = list(single, NULL),
    "pairs sharing 0, 1, 2 and more rows" = list(co, NULL),
    "a column constant on the rows shared" = list(constant_on_shared_rows(), NULL),
    "ties with NA" = list(ties, NULL),
    "Inf, -Inf and NaN with NA" = list(inf, NULL),
    "1e8 offset with NA" = list(rmat(40, 10, na = 0.1, offset = 1e8), NULL),
    "y a matrix" = list(x5, y),
    "y a vector" = list(x5, y[, 2]),
    "x a vector, y a matrix" = list(y[, 3], x5),
    "x and y vectors" = list(x5[, 1], y[, 1]),
    "x and y columns sharing 0, 1, 2 and more rows" = list(co[, 1:3], co[, 3:7]),
    "1 row" = list(matrix(c(1, NA, 3, 4), 1), NULL),
    "2 rows" = list(matrix(c(1, 2, NA, 4, 5, 6, 7, 7, 9, NA), 2), NULL),
    "2 rows, y" = list(matrix(c(1, 2, NA, 4, 5, 6), 2), matrix(c(3, 1, 8, NA), 2))
  )
}

# gpu_cor() in single precision against the CPU engine: the same error or
# none, values within `tol` absolute with the same NA/NaN positions, the same
# dimnames and warnings, and correlations within [-1, 1].
expect_single_like_cpu <- function(x, y, method, use, info, tol = 1e-5) {
  what <- sprintf("gpu_cor(method = \"%s\", use = \"%s\", backend = \"%s\", %s)%s",
                  method, use, gpu_backend, "precision = \"single\"",
                  if (is.null(y)) "" else " with y")
  want <- capture_conditions(
    gpucor::gpu_cor(x, y, method = method, use = use, backend = "cpu"))
  got <- capture_conditions(
    gpucor::gpu_cor(x, y, method = method, use = use, backend = gpu_backend,
                    precision = "single"))
  if (!expect_same_error(got, want, what, info)) return(invisible(NULL))
  expect_abs_equal(got$value, want$value, tol, what, info)
  expect(identical(dimnames(got$value), dimnames(want$value)),
         sprintf("%s: dimnames differ from the CPU's. %s", what, info))
  expect(all(abs(got$value) <= 1, na.rm = TRUE),
         sprintf("%s: a correlation lies outside [-1, 1]. %s", what, info))
  expect_same_warnings(got, want, what, info)
  invisible(NULL)
}

# gpu_dist() on gpu_backend against the CPU engine: the same error or none,
# dist attributes, values within `tol` absolute with the same NA/NaN
# positions, and the same warnings.
expect_dist_like_cpu <- function(x, method, info, precision = "double", tol = 1e-10) {
  what <- sprintf("gpu_dist(method = \"%s\", backend = \"%s\", precision = \"%s\")",
                  method, gpu_backend, precision)
  want <- capture_conditions(gpucor::gpu_dist(x, method, backend = "cpu"))
  got <- capture_conditions(
    gpucor::gpu_dist(x, method, backend = gpu_backend, precision = precision))
  if (!expect_same_error(got, want, what, info)) return(invisible(NULL))
  expect_s3_class(got$value, "dist")
  for (a in dist_attrs) {
    expect(identical(attr(got$value, a), attr(want$value, a)),
           sprintf("%s: attribute %s differs from the CPU's. %s", what, a, info))
  }
  expect_abs_equal(as.vector(unclass(got$value)), as.vector(unclass(want$value)),
                   tol, what, info)
  expect_same_warnings(got, want, what, info)
  invisible(NULL)
}

# Rows with NA for the correlation distances: random NA, a row with nothing
# observed, one with a single value, rows sharing 0, 1 and 2 coordinates, a
# row constant on the coordinates it shares with another, ties and Inf.
dist_na_matrix <- function() {
  x <- rmat(24, 30, na = 0.1, dimnames = list(paste0("r", 1:24), NULL))
  x[2, ] <- NA
  x[3, ] <- NA
  x[3, 7] <- 0.5
  x[4:7, ] <- NA
  x[4, 1:10] <- stats::rnorm(10)
  x[5, 11:20] <- stats::rnorm(10)    # row 5 shares nothing with row 4
  x[6, 10:20] <- stats::rnorm(11)    # one coordinate with row 4
  x[7, c(9, 10, 21:30)] <- stats::rnorm(12)   # two with row 4
  x[8, ] <- c(rep(2, 10), stats::rnorm(20))   # constant where row 4 is observed
  x[9, ] <- as.double(sample(1:3, 30, replace = TRUE))
  x[10, ] <- 3                       # constant: NA and a warning
  x[11, 5] <- Inf
  x
}

# Double precision against stats ---------------------------------------------

# expect_same_as_stats_cor() on gpu_backend.
expect_gpu_like_stats <- function(x, y, method, use, info, tol = 1e-10) {
  expect_same_as_stats_cor(x, y, method, use, backend = gpu_backend, info = info, tol = tol)
}

test_that("GPU matches stats::cor on data with NA for every method and use", {
  skip_unless_backend()
  info <- new_seed()
  cases <- na_cases()
  for (nm in names(cases)) for (m in cor_methods) for (u in cor_uses) {
    expect_gpu_like_stats(cases[[nm]][[1]], cases[[nm]][[2]], m, u, paste(nm, info))
  }
})

test_that("GPU matches stats::cor on fresh random NA patterns", {
  skip_unless_backend()
  info <- new_seed()
  for (draw in 1:3) {
    na <- c(0.02, 0.2, 0.6)[draw]
    x <- rmat(35, 9, na = na)
    x[, sample(9, 1)] <- NA
    y <- rmat(35, 3, na = na)
    what <- sprintf("draw %d (%g NA) %s", draw, na, info)
    for (m in cor_methods) for (u in cor_uses) {
      expect_gpu_like_stats(x, NULL, m, u, what)
      expect_gpu_like_stats(x, y, m, u, what)
    }
  }
})

test_that("pairwise Pearson keeps its digits with a 1e8 offset", {
  skip_unless_backend()
  info <- new_seed()
  x <- rmat(60, 8, na = 0.15, offset = 1e8)
  y <- rmat(60, 3, na = 0.15, offset = -1e8)
  expect_gpu_like_stats(x, NULL, "pearson", "pairwise.complete.obs", info)
  expect_gpu_like_stats(x, y, "pearson", "pairwise.complete.obs", info)
  # Small spread on a large offset: one-pass sums would lose every digit.
  # (expect_gpu_like_stats() compares to 1e-10 absolute.)
  xs <- 1e8 + rmat(60, 6, na = 0.15) * 1e-3
  expect_gpu_like_stats(xs, NULL, "pearson", "pairwise.complete.obs", info)
})

test_that("Kendall on 1, 2 and 3 rows, and on 300 rows", {
  skip_unless_backend()
  info <- new_seed()
  for (n in 1:3) {
    x <- rmat(n, 4)
    xn <- x
    xn[n, 2] <- NA
    xt <- matrix(c(1, 1, 1, 2, 1, 3)[seq_len(2 * n)], n)
    for (u in cor_uses) {
      what <- sprintf("n = %d %s", n, info)
      expect_gpu_like_stats(x, NULL, "kendall", u, what)
      expect_gpu_like_stats(xn, NULL, "kendall", u, what)
      expect_gpu_like_stats(xt, NULL, "kendall", u, what)
      expect_gpu_like_stats(x, xn[, 1:2, drop = FALSE], "kendall", u, what)
    }
  }
  # Several chunks of the Kendall kernel, with and without NA and ties.
  x <- rmat(300, 40, na = 0.01)
  x[, 3] <- round(x[, 3])
  for (u in c("everything", "complete.obs", "pairwise.complete.obs")) {
    expect_gpu_like_stats(x, NULL, "kendall", u, info)
  }
  expect_gpu_like_stats(x[, 1:30], x[, 31:40], "kendall", "pairwise.complete.obs", info)
})

test_that("GPU matches stats::cor across several slabs (gpucor.gpu_slab = 7)", {
  skip_unless_backend()
  info <- new_seed()
  old <- options(gpucor.gpu_slab = 7)
  on.exit(options(old))
  x <- rmat(40, 50, na = 0.1, dimnames = list(NULL, paste0("v", 1:50)))
  x[, 9] <- NA
  x[, 23] <- 1
  x[1:20, 30] <- NA
  x[21:40, 44] <- NA                 # columns 30 and 44 share no row
  y <- rmat(40, 9, na = 0.1)
  for (m in cor_methods) for (u in cor_uses) {
    expect_gpu_like_stats(x, NULL, m, u, info)
    expect_gpu_like_stats(x, y, m, u, info)
  }
  for (u in cor_uses) expect_single_like_cpu(x, y, "kendall", u, info)
  xd <- rmat(50, 12, na = 0.1)
  xd[7, ] <- NA
  xd[8, ] <- 2
  for (m in c(cor_dist_methods, "cosine")) {
    expect_dist_like_cpu(xd, m, info)
    expect_dist_like_cpu(xd, m, info, precision = "single", tol = 1e-5)
  }
})

test_that("Kendall in several chunks of row pairs, pairwise Spearman on many rows", {
  skip_unless_backend()
  info <- new_seed()
  # a 30 MB memory cap cuts Kendall's 2e6 row pairs into several chunks
  # (3 without NA, 9 pairwise), each summed into the same accumulators
  old <- options(gpucor.gpu_memory = 3e7)
  on.exit(options(old))
  x <- rmat(2000, 40)
  x[, 5] <- round(x[, 5])               # ties
  xn <- x
  xn[sample(length(xn), 4000)] <- NA
  y <- rmat(2000, 3, na = 0.05)
  for (a in list(list(x, NULL, "everything"), list(xn, NULL, "pairwise.complete.obs"),
                 list(xn, y, "pairwise.complete.obs"))) {
    cpu <- gpucor::gpu_cor(a[[1]], a[[2]], method = "kendall", use = a[[3]], backend = "cpu")
    got <- gpucor::gpu_cor(a[[1]], a[[2]], method = "kendall", use = a[[3]],
                           backend = gpu_backend)
    expect_abs_equal(got, cpu, 1e-12,
                     sprintf("kendall, use = %s, chunked row pairs", a[[3]]), info)
  }
  options(old)
  # more rows than the re-ranking keeps in shared memory (6143): the
  # per-block scratch in device memory
  xs <- rmat(7000, 4, na = 0.05)
  xs[, 2] <- round(xs[, 2] * 3)
  expect_gpu_like_stats(xs, NULL, "spearman", "pairwise.complete.obs", info)
  expect_gpu_like_stats(xs, xs[, 3:4] + 1, "spearman", "pairwise.complete.obs", info)
})

# Single precision against the CPU engine ---------------------------------

test_that("GPU single precision is within 1e-5 of the CPU on data with NA", {
  skip_unless_backend()
  info <- new_seed()
  cases <- na_cases()
  cases[["1e8 offset with NA"]] <- NULL  # float keeps no digit of x in 1e8 + x
  for (nm in names(cases)) for (m in cor_methods) for (u in cor_uses) {
    expect_single_like_cpu(cases[[nm]][[1]], cases[[nm]][[2]], m, u, paste(nm, info))
  }
  # enough rows and columns for float's error to show
  x <- rmat(200, 30, na = 0.05)
  for (m in cor_methods) for (u in cor_uses) expect_single_like_cpu(x, NULL, m, u, info)
})

# Correlation distances of data with NA -----------------------------------

test_that("GPU correlation distances of data with NA match the CPU", {
  skip_unless_backend()
  info <- new_seed()
  x <- dist_na_matrix()
  for (m in c(cor_dist_methods, "cosine")) {
    expect_dist_like_cpu(x, m, info)
    expect_dist_like_cpu(x, m, info, precision = "single", tol = 1e-5)
    expect_dist_like_cpu(x[c(1, 4:7), ], m, info)
    expect_dist_like_cpu(x[2:3, ], m, info)
  }
  # many rows of few coordinates: pairs sharing 0, 1, 2 or more of them
  xs <- rmat(60, 6, na = 0.4)
  for (m in c(cor_dist_methods, "cosine")) expect_dist_like_cpu(xs, m, info)
})
