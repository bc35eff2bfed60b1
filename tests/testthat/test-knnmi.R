# gpu_knnmi(): parmigene::knnmi.all(x, k, noise = 0) on data without ties,
# and an R transcription of the estimator with gpu_knnmi()'s tie rule (the
# k nearest by distance, then by sample index) on data with ties, where
# parmigene's pick follows its search grid.

# parmigene's normalize() in double arithmetic (R's sum() accumulates in long
# double): mean, sd with divisor n - 1, (v - mean) / sd, minus the minimum.
knnmi_normalize <- function(v) {
  m <- 0
  for (a in v) m <- m + a
  m <- m / length(v)
  s <- 0
  for (a in v) s <- s + (a - m) * (a - m)
  s <- sqrt(s / (length(v) - 1))
  if (s > 0) {
    v <- (v - m) / s
    v <- v - min(v)
  }
  v
}

# The estimate for every pair of rows of x, brute force; jitter (a matrix
# like x) is added after the normalisation.
knnmi_reference <- function(x, k, jitter = NULL) {
  n <- ncol(x)
  z <- t(apply(x, 1L, knnmi_normalize))
  if (!is.null(jitter)) z <- z + jitter
  psi <- numeric(n)
  psi[1L] <- -0.5772156649015328606065
  for (j in seq_len(n - 1L)) psi[j + 1L] <- psi[j] + 1 / j
  pair <- function(X, Y) {
    acc <- 0
    for (i in seq_len(n)) {
      dx <- abs(X[i] - X)
      dy <- abs(Y[i] - Y)
      d <- pmax(dx, dy)
      o <- setdiff(order(d, seq_len(n)), i)[seq_len(k)]
      nx <- sum(dx[-i] <= max(dx[o]))
      ny <- sum(dy[-i] <= max(dy[o]))
      acc <- acc + (psi[nx] + psi[ny])
    }
    psi[k] + psi[n] - 1 / k - acc / n
  }
  p <- nrow(x)
  r <- matrix(0, p, p)
  if (!is.null(rownames(x))) dimnames(r) <- list(rownames(x), rownames(x))
  for (j in seq_len(p)) for (i in seq_len(p)) if (i > j) r[i, j] <- r[j, i] <- pair(z[i, ], z[j, ])
  r
}

test_that("gpu_knnmi() is parmigene's knnmi.all(noise = 0) on data without ties", {
  skip_if_not_installed("parmigene")
  info <- new_seed()
  x <- matrix(rnorm(9 * 60), 9, 60, dimnames = list(paste0("g", 1:9), NULL))
  for (k in c(2, 3, 10, 59)) {
    want <- parmigene::knnmi.all(x, k = k, noise = 0)
    for (tile in c(0, 2)) {
      got <- with_options(list(gpucor.cpu_tile = tile), gpu_knnmi(x, k = k, backend = "cpu"))
      expect_equal(got, want, tolerance = 1e-10, info = paste(info, "k", k, "tile", tile))
      expect_identical(dimnames(got), list(rownames(x), rownames(x)))
      expect_identical(got, t(got))
      expect_identical(unname(diag(got)), rep(0, 9))
    }
  }
  # another shape: more samples, a tile that does not divide the rows
  x <- matrix(rexp(7 * 150), 7, 150)
  got <- with_options(list(gpucor.cpu_tile = 3), gpu_knnmi(x, backend = "cpu"))
  expect_equal(got, parmigene::knnmi.all(x, noise = 0), tolerance = 1e-10, info = info)
  expect_null(dimnames(got))
})

test_that("data frames, integers and logicals are coerced; dimnames as parmigene's", {
  skip_if_not_installed("parmigene")
  info <- new_seed()
  x <- matrix(rnorm(5 * 40), 5, 40)
  df <- as.data.frame(x)
  got <- gpu_knnmi(df, k = 4, backend = "cpu")
  expect_equal(got, parmigene::knnmi.all(df, k = 4, noise = 0), tolerance = 1e-10, info = info)
  expect_identical(dimnames(got), list(as.character(1:5), as.character(1:5)))
  rownames(df) <- letters[1:5]
  expect_identical(dimnames(gpu_knnmi(df, backend = "cpu")), list(letters[1:5], letters[1:5]))
  # integers without ties in a row (a permutation each)
  xi <- t(replicate(4, sample.int(1000L, 30L)))
  expect_true(is.integer(xi))
  got <- gpu_knnmi(xi, k = 3, backend = "cpu")
  expect_identical(got, gpu_knnmi(xi + 0, k = 3, backend = "cpu"))
  expect_equal(got, knnmi_reference(xi, 3), tolerance = 1e-12, info = info)
  xl <- matrix(runif(3 * 20) > 0.5, 3, 20)
  expect_identical(gpu_knnmi(xl, k = 2, backend = "cpu"),
                   gpu_knnmi(xl + 0, k = 2, backend = "cpu"))
})

test_that("ties at the k-th distance go to the smaller sample index", {
  info <- new_seed()
  # few distinct values: many samples at the same distance
  x <- matrix(sample(1:4, 5 * 25, replace = TRUE), 5, 25)
  x[2, ] <- x[1, ]          # identical rows
  x[3, 1:5] <- x[3, 6:10]   # duplicated samples
  for (k in c(2, 3, 7)) {
    got <- with_options(list(gpucor.cpu_tile = 2), gpu_knnmi(x, k = k, backend = "cpu"))
    expect_equal(got, knnmi_reference(x, k), tolerance = 1e-12, info = paste(info, "k", k))
    expect_identical(got, t(got))
  }
})

test_that("noise is R's uniform jitter after the normalisation, reproducible by the seed", {
  info <- new_seed()
  x <- matrix(sample(1:5, 4 * 30, replace = TRUE), 4, 30)
  set.seed(11)
  a <- gpu_knnmi(x, k = 3, noise = 1e-3, backend = "cpu")
  set.seed(11)
  b <- gpu_knnmi(x, k = 3, noise = 1e-3, backend = "cpu")
  expect_identical(a, b)
  set.seed(11)
  jit <- 1e-3 * array(runif(length(x)), dim(x))
  expect_equal(a, knnmi_reference(x, 3, jit), tolerance = 1e-12, info = info)
  expect_false(isTRUE(all.equal(a, gpu_knnmi(x, k = 3, backend = "cpu"))))
})

test_that("a row whose mean overflows is NaN against the others, as in parmigene", {
  skip_if_not_installed("parmigene")
  x <- matrix(rnorm(3 * 20), 3, 20)
  x[2, ] <- 1.5e308 + x[2, ] * 1e300
  got <- gpu_knnmi(x, k = 3, backend = "cpu")
  want <- parmigene::knnmi.all(x, k = 3, noise = 0)
  expect_identical(is.nan(got), is.nan(want))
  expect_equal(got[!is.nan(got)], want[!is.nan(want)], tolerance = 1e-10)
  expect_identical(sum(is.nan(got)), 4L)
})

test_that("fewer than two rows give the zero diagonal", {
  expect_identical(gpu_knnmi(matrix(rnorm(10), 1, 10), backend = "cpu"), matrix(0, 1, 1))
  expect_identical(gpu_knnmi(matrix(0, 0, 10), backend = "cpu"), matrix(0, 0, 0))
})

test_that("invalid arguments are errors", {
  x <- matrix(rnorm(40), 4, 10)
  expect_error(gpu_knnmi(x, k = 1), "'k' must be at least 2", fixed = TRUE)
  expect_error(gpu_knnmi(x, k = 10), "too few columns", fixed = TRUE)
  expect_error(gpu_knnmi(x, k = 11), "too few columns", fixed = TRUE)
  expect_error(gpu_knnmi(x, k = 2.5), "'k' must be a whole number", fixed = TRUE)
  expect_error(gpu_knnmi(x, k = NA), "'k' must be a whole number", fixed = TRUE)
  expect_error(gpu_knnmi(x, noise = -1), "'noise' must be", fixed = TRUE)
  y <- x
  y[2, 3] <- NA
  expect_error(gpu_knnmi(y), "missing values in 'x'", fixed = TRUE)
  y[2, 3] <- Inf
  expect_error(gpu_knnmi(y), "non-finite values in 'x'", fixed = TRUE)
  expect_error(gpu_knnmi(matrix(letters[1:20], 2)), "'x' must be a numeric matrix", fixed = TRUE)
  expect_error(gpu_knnmi(data.frame(a = 1:3, b = letters[1:3])), "'x' must be numeric",
               fixed = TRUE)
  expect_error(gpu_knnmi(list(1, 2)), "'x' must be a numeric matrix", fixed = TRUE)
  # the engine checks k too
  o <- gpucor:::.engine_opts("cpu", "double")
  expect_error(.Call(gpucor:::C_gpucor_knnmi, x, "knnmi", 10L, NULL, o), "'k' must be")
  expect_error(.Call(gpucor:::C_gpucor_knnmi, x, "euclidean", 3L, NULL, o), "not knnmi")
})

test_that("the GPU engine gives the CPU engine's values", {
  skip_if_no_gpu()
  info <- new_seed()
  x <- matrix(rnorm(9 * 60), 9, 60, dimnames = list(paste0("g", 1:9), NULL))
  for (k in c(2, 3, 10, 59)) {
    cpu <- gpu_knnmi(x, k = k, backend = "cpu")
    for (slab in c(0, 2)) {
      got <- with_options(list(gpucor.gpu_slab = slab), gpu_knnmi(x, k = k, backend = "gpu"))
      expect_equal(got, cpu, tolerance = 1e-12, info = paste(info, "k", k, "slab", slab))
      expect_identical(got, t(got))
      expect_identical(dimnames(got), dimnames(cpu))
    }
  }
  # 1000 samples: past the shared-memory block kernel, the thread-per-pair one
  xl <- matrix(rnorm(4 * 1000), 4, 1000)
  expect_equal(gpu_knnmi(xl, k = 3, backend = "gpu"), gpu_knnmi(xl, k = 3, backend = "cpu"),
               tolerance = 1e-12, info = info)
  xt <- matrix(sample(1:4, 5 * 25, replace = TRUE), 5, 25)
  expect_equal(gpu_knnmi(xt, k = 3, backend = "gpu"), gpu_knnmi(xt, k = 3, backend = "cpu"),
               tolerance = 1e-12, info = info)
  skip_if_not_installed("parmigene")
  expect_equal(gpu_knnmi(x, backend = "gpu"), parmigene::knnmi.all(x, noise = 0),
               tolerance = 1e-10, info = info)
})

test_that("gpu_cor_edges(method = 'knnmi') selects from gpu_knnmi()'s matrix", {
  info <- new_seed()
  x <- matrix(rnorm(40 * 30), 40, 30)          # 40 samples, 30 variables (columns)
  x[, 2] <- x[, 1] + rnorm(40, sd = 0.3)
  for (b in test_backends()) {
    full <- gpu_knnmi(t(x), k = 4, backend = "cpu")
    e <- with_options(list(gpucor.cpu_tile = 7L, gpucor.gpu_slab = 8L),
                      gpu_cor_edges(x, method = "knnmi", k = 4, top_k = 3, absolute = FALSE,
                                    backend = b))
    expect_identical(e$cor, full[cbind(e$row, e$col)], info = paste(info, b))
    diag(full) <- -Inf
    for (i in c(1, 2, 17)) {
      top <- order(-full[i, ])[1:3]
      expect_true(all(top %in% c(e$col[e$row == i], e$row[e$col == i])), info = paste(info, b, i))
    }
    v <- full[lower.tri(full)]
    thr <- sort(v, decreasing = TRUE)[12]
    e <- gpu_cor_edges(x, method = "knnmi", k = 4, threshold = thr, absolute = FALSE, backend = b)
    expect_identical(nrow(e), sum(v >= thr), info = paste(info, b))
  }
  expect_error(gpu_cor_edges(x, method = "knnmi", k = 1, top_k = 2), "'k' must be")
  expect_error(gpu_cor_edges(x, method = "knnmi", fdr = 0.1), "no p-values")
  xn <- x; xn[1, 1] <- NA
  expect_error(gpu_cor_edges(xn, method = "knnmi", top_k = 2), "without NA")
})
