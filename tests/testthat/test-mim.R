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
