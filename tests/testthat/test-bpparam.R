# Issue 14, part 2 (in progress): BPPARAM on gpu_cor() and gpu_cov().  The
# tiles of the result run on BiocParallel's workers and are put together
# in the main process; on the CPU engine the values are those of the call
# without BPPARAM, bit for bit, with the same warnings and errors.

bp_params <- function() {
  ps <- list(serial = BiocParallel::SerialParam())
  snow <- BiocParallel::SnowParam(2)
  BiocParallel::bpstart(snow)
  ps$snow <- snow
  if (.Platform$OS.type != "windows") ps$multicore <- BiocParallel::MulticoreParam(2)
  ps
}

same_call <- function(f, bp, lab) {
  want <- capture_conditions(f(NULL))
  got <- capture_conditions(f(bp))
  expect_identical(got$error, want$error, label = lab)
  expect_identical(got$warnings, want$warnings, label = lab)
  expect_identical(got$value, want$value, label = lab)
}

test_that("gpu_cor(BPPARAM =) gives the values, names, warnings and errors of gpu_cor()", {
  skip_if_not_installed("BiocParallel")
  info <- new_seed()
  ps <- bp_params()
  on.exit(BiocParallel::bpstop(ps$snow))
  x <- rmat(40, 17, dimnames = list(NULL, paste0("v", 1:17)))
  x[, 3] <- round(x[, 3])                  # ties
  x[, 6] <- 2                              # zero sd
  x[, 9] <- 1e8 + x[, 9]                   # a large offset
  xn <- x
  xn[sample(length(xn), 30)] <- NA
  y <- rmat(40, 5)
  y[2, 4] <- NA
  for (bpn in names(ps)) for (method in c("pearson", "spearman", "kendall"))
    for (use in c("everything", "all.obs", "complete.obs", "pairwise.complete.obs"))
      for (d in list(x, xn)) for (yy in list(NULL, y)) {
        lab <- sprintf("%s, %s, %s, NA %s, y %s, %s", bpn, method, use, anyNA(d),
                       !is.null(yy), info)
        same_call(function(bp) gpucor::gpu_cor(d, yy, use, method, backend = "cpu",
                                               BPPARAM = bp), ps[[bpn]], lab)
      }
  # the same through gpu_cov, a data frame, and blocks of a DelayedArray
  for (bpn in names(ps)) {
    same_call(function(bp) gpucor::gpu_cov(xn, NULL, "pairwise.complete.obs", backend = "cpu",
                                           BPPARAM = bp), ps[[bpn]], paste("cov", bpn))
    same_call(function(bp) gpucor::gpu_cov(x, y, "everything", "kendall", backend = "cpu",
                                           BPPARAM = bp), ps[[bpn]], paste("cov kendall", bpn))
    same_call(function(bp) gpucor::gpu_cor(as.data.frame(x), backend = "cpu", BPPARAM = bp),
              ps[[bpn]], paste("data frame", bpn))
  }
  if (requireNamespace("DelayedArray", quietly = TRUE))
    for (bpn in names(ps))
      expect_identical(suppressWarnings(gpucor::gpu_cor(DelayedArray::DelayedArray(xn),
                                                        use = "pairwise", backend = "cpu",
                                                        BPPARAM = ps[[bpn]])),
                       suppressWarnings(gpucor::gpu_cor(xn, use = "pairwise", backend = "cpu")),
                       label = paste("DelayedArray", bpn))
  # one complete row, a rank method: stats' rule for the names of that case
  x1 <- x
  x1[-7, 1] <- NA
  for (bpn in names(ps))
    same_call(function(bp) gpucor::gpu_cor(x1, use = "complete.obs", method = "spearman",
                                           backend = "cpu", BPPARAM = bp), ps[[bpn]],
              paste("one complete row", bpn))
  # vectors go on without BPPARAM; a bad BPPARAM is an error
  expect_identical(gpucor::gpu_cor(x[, 1], x[, 2], BPPARAM = ps$serial),
                   gpucor::gpu_cor(x[, 1], x[, 2]))
  expect_error(gpucor::gpu_cor(x, BPPARAM = 2), "'BPPARAM' must be NULL or a", fixed = TRUE)
  expect_message(suppressWarnings(gpucor::gpu_cor(x, backend = "cpu", BPPARAM = ps$serial,
                                                  verbose = TRUE)),
                 "tiles on 1 BiocParallel workers (CPU engine)", fixed = TRUE)
})

test_that("a worker's tiles: its share of the threads only while it runs", {
  skip_if_not_installed("BiocParallel")
  x <- rmat(30, 8)
  x[, 2] <- 5
  old <- options(gpucor.threads = 2L)
  on.exit(options(old))
  job <- list(tiles = rbind(c(1L, 2L), c(1L, 1L)), device = 0L)
  got <- gpucor:::.bp_tiles(job, x, NULL, list(1:4, 5:8), list(1:4, 5:8), NULL, "everything",
                            "pearson", "cpu", "double", FALSE, threads = 1L)
  expect_identical(got[[1]]$val,
                   suppressWarnings(gpucor::gpu_cor(x[, 1:4], x[, 5:8], backend = "cpu")))
  expect_true(got[[1]]$sd0)                # column 2 against y: the sd rule
  expect_null(got[[1]]$zero_var)
  expect_identical(got[[2]]$zero_var, c(FALSE, TRUE, FALSE, FALSE))
  expect_identical(getOption("gpucor.threads"), 2L)
})
