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
  expect_error(.Call(gpucor:::C_gpucor_knnmi, x, NULL, "knnmi", 10L, NULL, NULL, o, NULL),
               "'k' must be")
  expect_error(.Call(gpucor:::C_gpucor_knnmi, x, NULL, "euclidean", 3L, NULL, NULL, o, NULL),
               "not knnmi")
  expect_error(.Call(gpucor:::C_gpucor_knnmi, x, x[, -1], "knnmi", 3L, NULL, NULL, o, NULL),
               "same number of columns")
})

# gpu_knnmi(y =): the block of rbind(x, y)'s matrix, x's rows against y's,
# bit for bit (each row normalised on its own, each pair computed as there).
knnmi_block <- function(x, y, k, noise = 0) {
  nx <- nrow(x)
  full <- gpu_knnmi(rbind(x, y), k = k, noise = noise, backend = "cpu")
  unname(full[seq_len(nx), nx + seq_len(nrow(y)), drop = FALSE])
}

test_that("y = is the block of gpu_knnmi(rbind(x, y)), bit for bit, over tiles and shapes", {
  info <- new_seed()
  for (shape in list(c(5, 4), c(1, 3), c(4, 1), c(1, 1), c(9, 7)))
    for (k in c(2, 3, 10)) {
      nx <- shape[1]
      ny <- shape[2]
      x <- matrix(rnorm(nx * 40), nx, 40)
      y <- matrix(rexp(ny * 40), ny, 40)
      if (nx > 1 && ny > 1) y[2, ] <- x[1, ]   # a row of y equal to one of x
      want <- knnmi_block(x, y, k)
      for (tile in c(0, 1, 2, 3)) {
        lab <- paste(info, "shape", nx, ny, "k", k, "tile", tile)
        got <- with_options(list(gpucor.cpu_tile = tile),
                            gpu_knnmi(x, k = k, backend = "cpu", y = y))
        expect_identical(got, want, label = lab)
      }
      if (nx > 1 && ny > 1) expect_true(got[1, 2] != 0, label = lab)  # the estimate, not 0
    }
})

test_that("y = against parmigene's knnmi.all(rbind(x, y)) block", {
  skip_if_not_installed("parmigene")
  info <- new_seed()
  x <- matrix(rnorm(6 * 70), 6, 70)
  y <- matrix(rnorm(5 * 70), 5, 70)
  y[3, ] <- x[2, ] + rnorm(70, sd = 0.1)
  for (k in c(2, 3, 8)) {
    want <- parmigene::knnmi.all(rbind(x, y), k = k, noise = 0)[1:6, 7:11]
    got <- with_options(list(gpucor.cpu_tile = 2),
                        gpu_knnmi(x, k = k, backend = "cpu", y = y))
    expect_equal(got, want, tolerance = 1e-12, info = paste(info, "k", k))
  }
})

test_that("y =: dimnames of x's and y's rows, data frames, coercion", {
  info <- new_seed()
  x <- matrix(rnorm(3 * 30), 3, 30, dimnames = list(c("a", "b", "c"), NULL))
  y <- matrix(rnorm(2 * 30), 2, 30, dimnames = list(c("u", "v"), NULL))
  got <- gpu_knnmi(x, y = y, backend = "cpu")
  expect_identical(dimnames(got), list(c("a", "b", "c"), c("u", "v")))
  expect_identical(unname(got), knnmi_block(x, y, 3))
  expect_identical(dimnames(gpu_knnmi(x, y = unname(y), backend = "cpu")),
                   list(c("a", "b", "c"), NULL))
  expect_identical(dimnames(gpu_knnmi(unname(x), y = y, backend = "cpu")),
                   list(NULL, c("u", "v")))
  expect_null(dimnames(gpu_knnmi(unname(x), y = unname(y), backend = "cpu")))
  # a data frame y: its row names (automatic ones too, as parmigene's)
  got <- gpu_knnmi(x, y = as.data.frame(unname(y)), backend = "cpu")
  expect_identical(dimnames(got), list(c("a", "b", "c"), c("1", "2")))
  expect_identical(unname(got), knnmi_block(x, y, 3))
  # integers and logicals are coerced
  yi <- t(replicate(2, sample.int(1000L, 30L)))
  expect_identical(gpu_knnmi(x, y = yi, backend = "cpu"),
                   gpu_knnmi(x, y = yi + 0, backend = "cpu"))
  yl <- matrix(runif(60) > 0.5, 2, 30)
  expect_identical(gpu_knnmi(x, y = yl, backend = "cpu"),
                   gpu_knnmi(x, y = yl + 0, backend = "cpu"))
  # an empty side: an empty result
  expect_identical(gpu_knnmi(x[0, , drop = FALSE], y = unname(y), backend = "cpu"),
                   matrix(0, 0, 2))
  expect_identical(dim(gpu_knnmi(x, y = y[0, , drop = FALSE], backend = "cpu")), c(3L, 0L))
})

test_that("y = with noise: x's jitter drawn first, then y's", {
  info <- new_seed()
  x <- matrix(sample(1:5, 3 * 30, replace = TRUE), 3, 30)
  y <- matrix(sample(1:5, 2 * 30, replace = TRUE), 2, 30)
  set.seed(7)
  got <- gpu_knnmi(x, k = 3, noise = 1e-3, backend = "cpu", y = y)
  set.seed(7)
  jx <- 1e-3 * array(runif(length(x)), dim(x))
  jy <- 1e-3 * array(runif(length(y)), dim(y))
  want <- knnmi_reference(rbind(x, y), 3, rbind(jx, jy))[1:3, 4:5]
  expect_equal(got, want, tolerance = 1e-12, info = info)
  set.seed(7)
  expect_identical(gpu_knnmi(x, k = 3, noise = 1e-3, backend = "cpu", y = y), got)
})

test_that("y =: invalid arguments are errors", {
  x <- matrix(rnorm(40), 4, 10)
  y <- matrix(rnorm(30), 3, 10)
  expect_error(gpu_knnmi(x, y = y[, -1]),
               "'x' and 'y' must have the same number of columns (samples)", fixed = TRUE)
  yn <- y
  yn[2, 3] <- NA
  expect_error(gpu_knnmi(x, y = yn), "missing values in 'y'", fixed = TRUE)
  yn[2, 3] <- -Inf
  expect_error(gpu_knnmi(x, y = yn), "non-finite values in 'y'", fixed = TRUE)
  expect_error(gpu_knnmi(x, y = matrix(letters[1:20], 2)), "'y' must be a numeric matrix",
               fixed = TRUE)
  expect_error(gpu_knnmi(x, y = data.frame(a = 1:3, b = letters[1:3])), "'y' must be numeric",
               fixed = TRUE)
  expect_error(gpu_knnmi(x, y = 1:10), "'y' must be a numeric matrix", fixed = TRUE)
  expect_error(gpu_knnmi(x, output = "f.h5"), "made by gpu_hdf5", fixed = TRUE)
  expect_error(gpu_knnmi(x, BPPARAM = "x"), "'BPPARAM' must be NULL or a", fixed = TRUE)
})

test_that("output = gpu_hdf5(): the matrix in memory, with and without y, over tiles", {
  skip_if_not(gpucor:::.hdf5_ok(), "gpucor built without HDF5, or no HDF5Array")
  info <- new_seed()
  x <- matrix(rnorm(11 * 35), 11, 35, dimnames = list(paste0("g", 1:11), NULL))
  y <- matrix(rnorm(6 * 35), 6, 35)
  y[2, ] <- x[4, ]
  for (tile in c(0, 3)) for (yy in list(NULL, y)) {
    lab <- paste(info, "tile", tile, "y", !is.null(yy))
    f <- tempfile(fileext = ".h5")
    want <- with_options(list(gpucor.cpu_tile = tile),
                         gpu_knnmi(x, k = 4, backend = "cpu", y = yy))
    got <- with_options(list(gpucor.cpu_tile = tile),
                        gpu_knnmi(x, k = 4, backend = "cpu", y = yy,
                                  output = gpu_hdf5(f, "mi")))
    expect_s4_class(got, "DelayedMatrix")
    expect_identical(as.matrix(got), want, label = lab)
    expect_identical(rhdf5::h5read(f, "mi"), unname(want), label = lab)
    unlink(f)
  }
  # one row: its zero diagonal; a row each of x and y
  f <- tempfile(fileext = ".h5")
  expect_identical(as.matrix(gpu_knnmi(x[1, , drop = FALSE], backend = "cpu",
                                       output = gpu_hdf5(f, "one"))),
                   matrix(0, 1, 1, dimnames = list("g1", "g1")))
  expect_identical(as.matrix(gpu_knnmi(x[1, , drop = FALSE], y = y[1, , drop = FALSE],
                                       backend = "cpu", output = gpu_hdf5(f, "two"))),
                   gpu_knnmi(x[1, , drop = FALSE], y = y[1, , drop = FALSE], backend = "cpu"))
  unlink(f)
})

test_that("BPPARAM: the values of the call without it, bit for bit, with and without y and output", {
  skip_if_not_installed("BiocParallel")
  info <- new_seed()
  ps <- list(serial = BiocParallel::SerialParam())
  if (.Platform$OS.type != "windows") ps$multicore <- BiocParallel::MulticoreParam(2)
  x <- matrix(rnorm(13 * 30), 13, 30, dimnames = list(paste0("g", 1:13), NULL))
  y <- matrix(rnorm(7 * 30), 7, 30, dimnames = list(paste0("h", 1:7), NULL))
  y[3, ] <- x[5, ]
  for (bpn in names(ps)) for (tile in c(0, 2, 5)) for (yy in list(NULL, y)) {
    lab <- paste(info, bpn, "tile", tile, "y", !is.null(yy))
    with_options(list(gpucor.cpu_tile = tile), {
      want <- gpu_knnmi(x, k = 3, backend = "cpu", y = yy)
      got <- gpu_knnmi(x, k = 3, backend = "cpu", y = yy, BPPARAM = ps[[bpn]])
      expect_identical(got, want, label = lab)
      set.seed(3)
      want <- gpu_knnmi(x, k = 3, noise = 1e-2, backend = "cpu", y = yy)
      set.seed(3)
      got <- gpu_knnmi(x, k = 3, noise = 1e-2, backend = "cpu", y = yy, BPPARAM = ps[[bpn]])
      expect_identical(got, want, label = paste(lab, "noise"))
    })
  }
  # few rows: one, two; more workers than columns
  for (bpn in names(ps)) {
    expect_identical(gpu_knnmi(x[1, , drop = FALSE], backend = "cpu", BPPARAM = ps[[bpn]]),
                     matrix(0, 1, 1, dimnames = list("g1", "g1")))
    expect_identical(gpu_knnmi(x[1:2, ], backend = "cpu", BPPARAM = ps[[bpn]]),
                     gpu_knnmi(x[1:2, ], backend = "cpu"))
    expect_identical(gpu_knnmi(x[1, , drop = FALSE], y = y[1, , drop = FALSE],
                               backend = "cpu", BPPARAM = ps[[bpn]]),
                     gpu_knnmi(x[1, , drop = FALSE], y = y[1, , drop = FALSE], backend = "cpu"))
  }
  # with output: each worker its part files, the whole read back
  skip_if_not(gpucor:::.hdf5_ok(), "gpucor built without HDF5, or no HDF5Array")
  for (bpn in names(ps)) for (tile in c(0, 3)) for (yy in list(NULL, y)) {
    lab <- paste(info, bpn, "output, tile", tile, "y", !is.null(yy))
    f <- tempfile(fileext = ".h5")
    with_options(list(gpucor.cpu_tile = tile), {
      want <- gpu_knnmi(x, k = 3, backend = "cpu", y = yy)
      got <- gpu_knnmi(x, k = 3, backend = "cpu", y = yy, BPPARAM = ps[[bpn]],
                       output = gpu_hdf5(f, "mi"))
    })
    expect_identical(as.matrix(got), want, label = lab)
    expect_identical(dimnames(got), dimnames(want), label = lab)
    parts <- list.files(dirname(f), pattern = paste0("^", basename(f), "\\."), full.names = TRUE)
    expect_gte(length(parts), 2L)
    unlink(c(f, parts))
  }
})

test_that("a result larger than the available memory stops early, with y too", {
  avail <- gpucor:::.mem_available()
  skip_if(is.na(avail), "no /proc/meminfo here: the guard does not check")
  skip_if(avail > 140 * 2^30, "more than 140 GiB available")
  x <- matrix(rnorm(6e5), 2e5, 3)               # a 298 GiB result
  expect_error(gpu_knnmi(x, k = 2, backend = "cpu"),
               "the mutual information of 200000 x 200000 rows needs 298.0 GiB", fixed = TRUE)
  # with y: 149 GiB, twice that with BPPARAM's parts
  expect_error(gpu_knnmi(x, k = 2, backend = "cpu", y = x[1:1e5, ]),
               "the mutual information of 200000 x 100000 rows needs 149.0 GiB", fixed = TRUE)
  skip_if_not_installed("BiocParallel")
  expect_error(gpu_knnmi(x, k = 2, backend = "cpu", y = x[1:1e5, ],
                         BPPARAM = BiocParallel::SerialParam()),
               "x 100000 rows needs 298.1 GiB", fixed = TRUE)
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

test_that("the GPU engine: y = and output = give the CPU engine's values, bit for bit", {
  skip_if_no_gpu()
  info <- new_seed()
  x <- matrix(rnorm(9 * 60), 9, 60, dimnames = list(paste0("g", 1:9), NULL))
  y <- matrix(rnorm(5 * 60), 5, 60)
  y[2, ] <- x[3, ]
  for (k in c(2, 3, 10)) {
    cpu <- gpu_knnmi(x, k = k, backend = "cpu", y = y)
    for (slab in c(0, 1, 2)) {
      lab <- paste(info, "k", k, "slab", slab)
      got <- with_options(list(gpucor.gpu_slab = slab),
                          gpu_knnmi(x, k = k, backend = "gpu", y = y))
      expect_identical(got, cpu, label = lab)
      expect_identical(with_options(list(gpucor.gpu_slab = slab),
                                    gpu_knnmi(x[1, , drop = FALSE], k = k, backend = "gpu",
                                              y = y)),
                       cpu[1, , drop = FALSE], label = lab)
    }
  }
  # 1000 samples: the thread-per-pair kernel
  xl <- matrix(rnorm(4 * 1000), 4, 1000)
  yl <- matrix(rnorm(3 * 1000), 3, 1000)
  expect_identical(gpu_knnmi(xl, backend = "gpu", y = yl),
                   gpu_knnmi(xl, backend = "cpu", y = yl), info = info)
  skip_if_not(gpucor:::.hdf5_ok(), "gpucor built without HDF5, or no HDF5Array")
  for (slab in c(0, 2)) for (yy in list(NULL, y)) {
    lab <- paste(info, "output, slab", slab, "y", !is.null(yy))
    f <- tempfile(fileext = ".h5")
    want <- gpu_knnmi(x, backend = "cpu", y = yy)
    got <- with_options(list(gpucor.gpu_slab = slab),
                        gpu_knnmi(x, backend = "gpu", y = yy, output = gpu_hdf5(f, "mi")))
    expect_identical(as.matrix(got), want, label = lab)
    unlink(f)
  }
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
  # with y: the pairs across, from gpu_knnmi(t(x), y = t(y))
  y <- matrix(rnorm(nrow(x) * 7), nrow(x))
  for (b in test_backends()) {
    m <- gpu_knnmi(t(x), y = t(y), k = 4, backend = "cpu")
    thr <- sort(m, decreasing = TRUE)[10]
    e <- with_options(list(gpucor.cpu_tile = 3L, gpucor.gpu_slab = 2L),
                      gpu_cor_edges(x, y, method = "knnmi", k = 4, threshold = thr,
                                    absolute = FALSE, backend = b))
    expect_identical(nrow(e), sum(m >= thr))
    expect_identical(e$cor, m[cbind(e$row, e$col)])
  }
  expect_error(gpu_cor_edges(x, method = "knnmi", k = 1, top_k = 2), "'k' must be")
  expect_error(gpu_cor_edges(x, method = "knnmi", fdr = 0.1), "no p-values")
  xn <- x; xn[1, 1] <- NA
  expect_error(gpu_cor_edges(xn, method = "knnmi", top_k = 2), "without NA")
})
