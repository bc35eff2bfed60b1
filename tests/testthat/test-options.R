# Issue 15, parts 2 and 5: stats' argument order, and options validated
# once with an error naming the option.

test_that("positional arguments mean what they mean for stats::cor and stats::dist", {
  expect_identical(names(formals(gpucor::gpu_cor))[1:4], names(formals(stats::cor)))
  expect_identical(names(formals(gpucor::gpu_dist))[1:5], names(formals(stats::dist)))
  info <- new_seed()
  x <- matrix(rnorm(60), 12)
  x[2, 3] <- NA
  for (b in test_backends()) {
    expect_equal(gpucor::gpu_cor(x, NULL, "pairwise.complete.obs", "spearman", backend = b),
                 stats::cor(x, NULL, "pairwise.complete.obs", "spearman"),
                 tolerance = 1e-12, info = paste(b, info))
    expect_equal(gpucor::gpu_cor(x, x[, 1:2], "complete.obs", "kendall", backend = b),
                 stats::cor(x, x[, 1:2], "complete.obs", "kendall"),
                 tolerance = 1e-12, info = paste(b, info))
    d <- gpucor::gpu_dist(x, "manhattan", TRUE, TRUE, backend = b)
    s <- stats::dist(x, "manhattan", TRUE, TRUE)
    expect_identical(attr(d, "Diag"), TRUE)
    expect_identical(attr(d, "Upper"), TRUE)
    expect_equal(c(d), c(s), tolerance = 1e-12, info = paste(b, info))
    expect_equal(c(gpucor::gpu_dist(x, "minkowski", FALSE, FALSE, 3, backend = b)),
                 c(stats::dist(x, "minkowski", FALSE, FALSE, 3)),
                 tolerance = 1e-12, info = paste(b, info))
  }
  # stats' errors for 'use' given where 'method' was before
  expect_error(gpucor::gpu_cor(x, NULL, "spearman"), "invalid 'use' argument")
})

test_that("sizes are read with their units", {
  ps <- gpucor:::.parse_size
  expect_identical(ps(1e9), 1e9)
  expect_identical(ps("8GB"), 8e9)
  expect_identical(ps("8 gb"), 8e9)
  expect_identical(ps("512 MiB"), 512 * 2^20)
  expect_identical(ps("1.5GiB"), 1.5 * 2^30)
  expect_identical(ps("2e9"), 2e9)
  expect_identical(ps("0"), 0)
  for (bad in list("8 parsecs", "-1GB", "GB", "", NA_character_, c("1GB", "2GB"), -1, Inf, TRUE))
    expect_null(ps(bad), label = deparse(bad))
})

test_that("every option is validated, with an error naming it and what it accepts", {
  x <- matrix(rnorm(40), 10)
  bad <- list(gpucor.backend = "fast", gpucor.threads = 0, gpucor.threads = 1.5,
              gpucor.gpu_memory = "8 parsecs", gpucor.gpu_memory = -1,
              gpucor.gpu_memory = "8,GB", gpucor.gpu_min_work = "many",
              gpucor.gpu_slab = -3, gpucor.cpu_tile = 2.5, gpucor.progress = "yes",
              gpucor.profile = NA, gpucor.memory_guard = c(TRUE, FALSE))
  for (k in seq_along(bad)) {
    o <- bad[k]
    old <- options(o)
    # the backend option is the default of the argument; the others are
    # read by every call ("auto" for the one only "auto" reads)
    b <- switch(names(o), gpucor.backend = getOption("gpucor.backend"),
                gpucor.gpu_min_work = "auto", "cpu")
    expect_error(gpucor::gpu_cor(x, backend = b), paste0("option '", names(o), "' must be"),
                 fixed = TRUE, label = paste(names(o), deparse(o[[1]])))
    expect_error(gpucor::gpu_dist(x, backend = b), paste0("option '", names(o), "' must be"),
                 fixed = TRUE, label = paste(names(o), deparse(o[[1]])))
    options(old)
  }
  # good values: no warning, no error, the same result
  good <- list(gpucor.gpu_memory = "8GB", gpucor.gpu_memory = 2e9, gpucor.threads = 1,
               gpucor.cpu_tile = 3, gpucor.progress = FALSE, gpucor.memory_guard = FALSE,
               gpucor.gpu_min_work = 0, gpucor.backend = "cpu")
  want <- stats::cor(x)
  for (k in seq_along(good)) {
    old <- options(good[k])
    expect_no_warning(r <- gpucor::gpu_cor(x, backend = "cpu"))
    expect_equal(r, want, tolerance = 1e-14)
    options(old)
  }
})
