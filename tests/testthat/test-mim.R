# gpu_build_mim() against minet's build.mim for its correlation estimators.
# minet is not in Debian: the reference is its three lines of R
# (build.mim's "pearson"/"spearman"/"kendall" branch), over stats::cor.

minet_mim <- function(dataset, estimator) {
  mim <- cor(dataset, method = estimator, use = "complete.obs")^2
  diag(mim) <- 0
  maxi <- 0.999999
  mim[which(mim > maxi)] <- maxi
  mim <- -0.5 * log(1 - mim)
  mim[mim < 0] <- 0
  mim
}

test_that("the Gaussian MI of each correlation estimator, both engines", {
  info <- new_seed()
  x <- matrix(rnorm(40 * 25), 40, 25, dimnames = list(NULL, paste0("g", 1:25)))
  x[, 2] <- x[, 1]                          # r = 1: the cap
  x[, 3] <- -x[, 4] + rnorm(40, sd = 1e-4)  # r close to -1
  x[sample(length(x), 10)] <- NA            # complete observations only
  x[, 7] <- round(x[, 7])                   # ties
  for (b in test_backends()) for (e in c("pearson", "spearman", "kendall")) {
    for (tiles in c(FALSE, TRUE)) {
      got <- with_options(if (tiles) list(gpucor.cpu_tile = 3L, gpucor.gpu_slab = 4L) else list(),
                          gpu_build_mim(x, e, backend = b))
      want <- minet_mim(x, e)
      expect_identical(dimnames(got), dimnames(want))
      expect_identical(unname(diag(got)), rep(0, 25))
      expect_true(isSymmetric(got))
      expect_lte(max(abs(got - want)), 1e-12)
    }
    got <- gpu_build_mim(as.data.frame(x), e, backend = b, precision = "single")
    expect_lte(max(abs(got - minet_mim(x, e))), 1e-4)
  }
})

test_that("constant columns, bad estimators", {
  x <- matrix(rnorm(30 * 4), 30, 4)
  x[, 3] <- 1
  expect_warning(r <- gpu_build_mim(x, "pearson", backend = "cpu"), "standard deviation is zero")
  w <- suppressWarnings(minet_mim(x, "pearson"))
  expect_identical(is.na(r), is.na(w))
  expect_error(gpu_build_mim(x, "mi.empirical"), "gpu_knnmi")
  expect_error(gpu_build_mim(matrix(letters, 13)), "must be numeric")
})

# minet has no y: its formula on cor(x, y) over the rows complete in both
minet_mim_xy <- function(x, y, estimator) {
  ok <- complete.cases(x, y)
  m <- cor(x[ok, , drop = FALSE], y[ok, , drop = FALSE], method = estimator)^2
  m[which(m > 0.999999)] <- 0.999999
  -0.5 * log(1 - m)
}

test_that("y =: the block between two sets of columns, both engines", {
  info <- new_seed()
  x <- rmat(35, 9, na = 0.03, dimnames = list(NULL, paste0("x", 1:9)))
  y <- rmat(35, 4, dimnames = list(NULL, paste0("y", 1:4)))
  y[, 2] <- x[, 1]                        # identical columns: the cap, not 0
  y[, 3] <- round(y[, 3])
  for (b in test_backends()) for (e in c("pearson", "spearman", "kendall")) {
    for (tiles in c(FALSE, TRUE)) {
      got <- with_options(if (tiles) list(gpucor.cpu_tile = 2L, gpucor.gpu_slab = 4L) else list(),
                          gpu_build_mim(x, e, backend = b, y = y))
      want <- minet_mim_xy(x, y, e)
      expect_identical(dimnames(got), dimnames(want), info = info)
      expect_lte(max(abs(got - want)), 1e-12)
    }
    expect_equal(unname(gpu_build_mim(x, e, backend = b, y = y)[1, 2]), -0.5 * log(1 - 0.999999),
                 tolerance = 1e-12, info = info)
  }
  expect_error(gpu_build_mim(x, "pearson", y = y[-1, ]), "incompatible dimensions")
})

test_that("output = gpu_hdf5(): the matrix in a file, its diagonal 0", {
  skip_if_not(gpucor:::.hdf5_ok(), "gpucor built without HDF5, or no HDF5Array")
  info <- new_seed()
  x <- rmat(30, 13, na = 0.02, dimnames = list(NULL, paste0("g", 1:13)))
  x[, 4] <- x[, 3]
  for (b in test_backends()) for (e in c("pearson", "kendall")) {
    f <- tempfile(fileext = ".h5")
    for (tiles in c(FALSE, TRUE)) {
      opts <- if (tiles) list(gpucor.cpu_tile = 3L, gpucor.gpu_slab = 4L) else list()
      nm <- paste0(e, tiles)
      want <- with_options(opts, gpu_build_mim(x, e, backend = b))
      got <- with_options(opts, gpu_build_mim(x, e, backend = b, output = gpu_hdf5(f, nm)))
      expect_s4_class(got, "HDF5Array")
      expect_identical(as.matrix(got), want, info = info)
      got <- with_options(opts, gpu_build_mim(x[, 1:5], e, backend = b, y = x[, 3:13],
                                              output = gpu_hdf5(f, paste0(nm, "y"))))
      expect_identical(as.matrix(got), gpu_build_mim(x[, 1:5], e, backend = b, y = x[, 3:13]),
                       info = info)
    }
    unlink(f)
  }
})

test_that("BPPARAM =: the values of the call without it, bit for bit on the CPU", {
  skip_if_not_installed("BiocParallel")
  info <- new_seed()
  x <- rmat(25, 17, na = 0.02, dimnames = list(NULL, paste0("g", 1:17)))
  x[, 9] <- 2                                  # constant: NA and the warning
  ps <- list(BiocParallel::SerialParam())
  if (.Platform$OS.type != "windows") ps <- c(ps, BiocParallel::MulticoreParam(2))
  for (bp in ps) for (e in c("pearson", "spearman", "kendall")) {
    want <- capture_conditions(gpu_build_mim(x, e, backend = "cpu"))
    got <- capture_conditions(gpu_build_mim(x, e, backend = "cpu", BPPARAM = bp))
    expect_identical(got, want, info = paste(info, e, class(bp)))
    want <- capture_conditions(gpu_build_mim(x, e, backend = "cpu", y = x[, 2:5]))
    got <- capture_conditions(gpu_build_mim(x, e, backend = "cpu", y = x[, 2:5], BPPARAM = bp))
    expect_identical(got, want, info = info)
  }
  skip_if_no_gpu()
  for (e in c("pearson", "kendall")) {
    got <- suppressWarnings(gpu_build_mim(x, e, backend = "gpu",
                                          BPPARAM = BiocParallel::SerialParam()))
    expect_lte(max(abs(got - suppressWarnings(gpu_build_mim(x, e, backend = "cpu"))),
                   na.rm = TRUE), 1e-12)
  }
})

test_that("gpu_cor_edges(method = \"mim.*\"): the pairs of gpu_build_mim()", {
  info <- new_seed()
  x <- rmat(40, 30, dimnames = list(NULL, paste0("g", 1:30)))
  x[, 2] <- x[, 1] + rnorm(40, sd = 0.1)
  for (b in test_backends()) for (e in c("pearson", "spearman", "kendall")) {
    m <- gpu_build_mim(x, e, backend = "cpu")
    ut <- which(upper.tri(m), arr.ind = TRUE)
    v <- m[ut]
    for (tiles in c(FALSE, TRUE)) {
      opts <- if (tiles) list(gpucor.cpu_tile = 4L, gpucor.gpu_slab = 4L) else list()
      got <- with_options(opts, gpu_cor_edges(x, method = paste0("mim.", e), threshold = 0.05,
                                              backend = b))
      keep <- v >= 0.05
      expect_identical(nrow(got), sum(keep), info = info)
      expect_equal(got$cor, v[keep][order(ut[keep, 1], ut[keep, 2])], tolerance = 1e-12)
      got <- with_options(opts, gpu_cor_edges(x, method = paste0("mim.", e), density = 0.1,
                                              backend = b))
      expect_identical(nrow(got), as.integer(round(0.1 * length(v))), info = info)
      # the strongest (ties at the cut: any of them)
      expect_equal(sort(got$cor, decreasing = TRUE), sort(v, decreasing = TRUE)[seq_len(nrow(got))],
                   tolerance = 1e-12, info = info)
    }
    # above 1: the strongest pair only
    got <- gpu_cor_edges(x, method = paste0("mim.", e), threshold = max(v) - 1e-9, backend = b)
    expect_identical(nrow(got), 1L)
  }
  expect_error(gpu_cor_edges(x, method = "mim.pearson", fdr = 0.1), "no p-values")
  expect_error(gpu_cor_edges(x, method = "mim.pearson", threshold = -0.1), "at least 0")
})
