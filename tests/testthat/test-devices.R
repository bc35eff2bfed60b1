# Which GPUs run a call: argument 'devices', option gpucor.devices, the
# workers and their coordinator (src/cuda/worker.cu).  Without a second GPU
# the multi-worker path runs as two or three workers on GPU 0 ("an ordinal
# given twice runs two workers on that GPU"); with one, also on real GPUs.

test_that("'devices' and option gpucor.devices are validated on either engine", {
  x <- matrix(stats::rnorm(40), 10)
  for (bad in list(-1, 1.5, NA, NA_integer_, "first", c(0, NA), 0:16, list(0), Inf, numeric(0)))
    expect_error(gpucor::gpu_cor(x, backend = "cpu", devices = bad), "'devices' must be",
                 fixed = TRUE, label = deparse(bad))
  expect_error(gpucor::gpu_dist(x, backend = "cpu", devices = "al"), "'devices' must be",
               fixed = TRUE)
  old <- options(gpucor.devices = "some")
  on.exit(options(old))
  expect_error(gpucor::gpu_cor(x, backend = "cpu"), "'devices' must be", fixed = TRUE)
  # good values change nothing on the CPU engine
  for (good in list("all", c(0, 0), 3L, 0:15)) {
    options(gpucor.devices = good)
    expect_equal(gpucor::gpu_cor(x, backend = "cpu"), stats::cor(x), tolerance = 1e-14)
    expect_equal(c(gpucor::gpu_dist(x, backend = "cpu", devices = good)), c(stats::dist(x)),
                 tolerance = 1e-14)
  }
})

test_that("gpu_info() lists every visible device", {
  info <- gpucor::gpu_info()
  d <- info$devices
  expect_s3_class(d, "data.frame")
  expect_named(d, c("id", "name", "memory_total", "compute_capability", "multiprocessors"))
  expect_identical(nrow(d), info$device_count)
  expect_identical(d$id, seq_len(nrow(d)) - 1L)
  if (nrow(d) > 0) {
    expect_identical(d$name[1], info$name)
    expect_identical(d$compute_capability[1], info$compute_capability)
    expect_true(all(d$memory_total > 0 & d$multiprocessors > 0))
  }
})

# every GPU producer and sink, in several panels
worker_cases <- function(x, xn) list(
  "pearson" = function(d) gpucor::gpu_cor(x, backend = "gpu", devices = d),
  "spearman x, y" = function(d) gpucor::gpu_cor(x, x[, 1:50] + 1, method = "spearman",
                                                backend = "gpu", devices = d),
  "kendall" = function(d) gpucor::gpu_cor(x, method = "kendall", backend = "gpu", devices = d),
  "pairwise pearson" = function(d) gpucor::gpu_cor(xn, use = "pairwise", backend = "gpu",
                                                   devices = d),
  "pairwise spearman" = function(d) gpucor::gpu_cor(xn, method = "spearman", use = "pairwise",
                                                    backend = "gpu", devices = d),
  "pairwise kendall" = function(d) gpucor::gpu_cor(xn, method = "kendall", use = "pairwise",
                                                   backend = "gpu", devices = d),
  "single pearson" = function(d) gpucor::gpu_cor(x, backend = "gpu", precision = "single",
                                                 devices = d),
  "euclidean dist" = function(d) gpucor::gpu_dist(t(x), backend = "gpu", devices = d),
  "single manhattan dist" = function(d) gpucor::gpu_dist(t(x), "manhattan", backend = "gpu",
                                                        precision = "single", devices = d),
  "correlation dist, NA" = function(d) gpucor::gpu_dist(t(xn), "correlation", backend = "gpu",
                                                       devices = d),
  "kendall dist" = function(d) gpucor::gpu_dist(t(x), "kendall", backend = "gpu", devices = d))

test_that("GPU: results are identical whichever workers made the panels", {
  skip_if_no_gpu()
  info <- new_seed()
  x <- rmat(120, 90)
  x[, 7] <- round(x[, 7])                      # ties
  xn <- rmat(120, 70, na = 0.05)
  old <- options(gpucor.gpu_slab = 7)
  on.exit(options(old))
  sets <- list(c(0L, 0L), c(0L, 0L, 0L))
  if (nrow(gpucor::gpu_info()$devices) > 1) sets <- c(sets, list("all", 1L, c(1L, 0L)))
  cases <- worker_cases(x, xn)
  for (nm in names(cases)) {
    one <- cases[[nm]](0L)
    for (s in sets)
      expect_identical(cases[[nm]](s), one,
                       label = sprintf("%s, devices = %s, %s", nm, deparse(s), info))
  }
  # Kendall's row pairs in several chunks: every worker counts the untied
  # pairs of every column at its own first panel, whichever panel that is
  options(gpucor.gpu_memory = 3e7, gpucor.gpu_slab = 11)
  xk <- rmat(2000, 40)
  xk[, 5] <- round(xk[, 5])
  one <- gpucor::gpu_cor(xk, method = "kendall", backend = "gpu")
  expect_equal(one, gpucor::gpu_cor(xk, method = "kendall", backend = "cpu"), tolerance = 1e-12)
  for (s in sets)
    expect_identical(gpucor::gpu_cor(xk, method = "kendall", backend = "gpu", devices = s), one,
                     label = sprintf("chunked kendall, devices = %s, %s", deparse(s), info))
  # ... and in one panel: each worker sums its share of the chunks, the
  # shares are added, one worker finishes (pairwise, with y, a zero-sd
  # column: the untied counts are summed too); a worker that fails before
  # its share arrives leaves the panel to be made whole by another
  options(gpucor.gpu_slab = NULL)
  xk[, 9] <- 4
  xkn <- xk
  xkn[sample(length(xkn), 200)] <- NA
  yk <- rmat(2000, 3)
  for (cs in list(list(x = xk, y = NULL, use = "everything"),
                  list(x = xkn, y = NULL, use = "pairwise.complete.obs"),
                  list(x = xk, y = yk, use = "everything"))) {
    run <- function(s) suppressWarnings(gpucor::gpu_cor(cs$x, cs$y, cs$use, "kendall",
                                                        backend = "gpu", devices = s))
    one <- run(0L)
    expect_equal(one, suppressWarnings(gpucor::gpu_cor(cs$x, cs$y, cs$use, "kendall",
                                                       backend = "cpu")), tolerance = 1e-12)
    for (s in sets)
      expect_identical(run(s), one, label = sprintf("kendall in one panel, %s, y = %s, devices = %s, %s",
                                                    cs$use, !is.null(cs$y), deparse(s), info))
    for (inj in c("2:0", "1:0")) {
      Sys.setenv(GPUCOR_TEST_FAIL_WORKER = inj)
      ws <- character()
      got <- withCallingHandlers(gpucor::gpu_cor(cs$x, cs$y, cs$use, "kendall", backend = "gpu",
                                                 devices = c(0L, 0L, 0L)),
                                 warning = function(w) {
                                   ws <<- c(ws, conditionMessage(w))
                                   invokeRestart("muffleWarning")
                                 })
      Sys.unsetenv("GPUCOR_TEST_FAIL_WORKER")
      expect_identical(got, one, label = sprintf("kendall in one panel, failing %s, %s", inj, info))
      expect_true(any(grepl("left out (injected failure", ws, fixed = TRUE)),
                  label = paste(inj, paste(ws, collapse = "; ")))
    }
  }
  # without a memory cap the workers' chunks differ in size (each device's
  # free memory; on one GPU the second worker sees the first's buffers):
  # the shares are ranges of row pairs, not chunk numbers
  options(gpucor.gpu_memory = NULL)
  xb <- rmat(20000, 40)
  xb[, 3] <- round(xb[, 3], 1)
  one <- gpucor::gpu_cor(xb, method = "kendall", backend = "gpu")
  for (s in sets)
    expect_identical(gpucor::gpu_cor(xb, method = "kendall", backend = "gpu", devices = s), one,
                     label = sprintf("kendall, 2e8 row pairs, devices = %s, %s", deparse(s), info))
  # the zero-sd warning comes from whichever worker made the pair
  options(gpucor.gpu_memory = NULL, gpucor.gpu_slab = 7)
  xc <- x
  xc[, 60] <- 1
  expect_warning(w1 <- gpucor::gpu_cor(xc, backend = "gpu"), "standard deviation is zero")
  expect_warning(w2 <- gpucor::gpu_cor(xc, backend = "gpu", devices = c(0, 0)),
                 "standard deviation is zero")
  expect_identical(w2, w1)
  xnc <- xn
  xnc[1:119, 3] <- 2
  xnc[120, 4] <- NA   # pair (3, 4): column 3 constant on its complete rows, whatever the seed
  expect_warning(w1 <- gpucor::gpu_cor(xnc, use = "pairwise", backend = "gpu"),
                 "standard deviation is zero")
  expect_warning(w2 <- gpucor::gpu_cor(xnc, use = "pairwise", backend = "gpu",
                                       devices = c(0, 0, 0)),
                 "standard deviation is zero")
  expect_identical(w2, w1)
})

test_that("GPU: a worker that fails is left out and the others make its panels", {
  skip_if_no_gpu()
  info <- new_seed()
  x <- rmat(150, 80)
  xn <- rmat(150, 60, na = 0.05)
  xn[1:149, 9] <- 3                            # a zero-sd pair or two
  old <- options(gpucor.gpu_slab = 5)
  on.exit({
    options(old)
    Sys.unsetenv("GPUCOR_TEST_FAIL_WORKER")
  })
  cases <- worker_cases(x, xn)
  warnings_of <- function(f) {
    ws <- character()
    got <- withCallingHandlers(f(), warning = function(w) {
      ws <<- c(ws, conditionMessage(w))
      invokeRestart("muffleWarning")
    })
    list(value = got, warnings = ws)
  }
  ref <- lapply(cases, function(f) warnings_of(function() f(0L)))
  want <- lapply(ref, `[[`, "value")
  # worker 2 fails when it takes its 4th panel: the 3 it made (committed or
  # staged) are made again by the others; worker 1 at its third, ...
  for (inj in c("2:3", "2:0", "1:2", "3:1")) {
    Sys.setenv(GPUCOR_TEST_FAIL_WORKER = inj)
    for (nm in names(cases)) {
      got <- warnings_of(function() cases[[nm]](c(0L, 0L, 0L)))
      expect_identical(got$value, want[[nm]],
                       label = sprintf("%s, failing %s, %s", nm, inj, info))
      left <- grepl("GPU 0 failed and was left out (injected failure", got$warnings,
                    fixed = TRUE)
      expect_true(any(left), label = paste(nm, inj, paste(got$warnings, collapse = "; ")))
      # the same warnings as without the failure, besides that one
      expect_identical(got$warnings[!left], ref[[nm]]$warnings, label = paste(nm, inj))
    }
  }
  # alone, the failing worker fails the call, with its message
  for (inj in c("1:0", "1:2")) {
    Sys.setenv(GPUCOR_TEST_FAIL_WORKER = inj)
    expect_error(gpucor::gpu_cor(x, backend = "gpu"), "injected failure", fixed = TRUE)
    # functions that run gpu_cor()'s entry name themselves
    expect_error(gpucor::gpu_bicor(x, backend = "gpu"), "^gpu_bicor: injected failure")
    expect_identical(suppressWarnings(gpucor::gpu_cor(x, backend = "gpu", devices = c(0, 0))),
                     want[["pearson"]])
  }
  Sys.unsetenv("GPUCOR_TEST_FAIL_WORKER")
  # and the next call builds its context afresh
  expect_identical(gpucor::gpu_cor(x, backend = "gpu"), want[["pearson"]])
})

test_that("GPU: a device that does not exist is an error naming what exists", {
  skip_if_no_gpu()
  n <- nrow(gpucor::gpu_info()$devices)
  x <- matrix(stats::rnorm(40), 10)
  expect_error(gpucor::gpu_cor(x, backend = "gpu", devices = n),
               sprintf("GPU %d does not exist: %d visible", n, n), fixed = TRUE)
  expect_error(gpucor::gpu_dist(x, backend = "gpu", devices = c(0, n)),
               sprintf("GPU %d does not exist", n), fixed = TRUE)
  expect_equal(gpucor::gpu_cor(x, backend = "gpu", devices = "all"), stats::cor(x),
               tolerance = 1e-12)
})
