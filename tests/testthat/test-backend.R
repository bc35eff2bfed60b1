# gpu_available(), gpu_info(), the backend and precision arguments, and the
# gpucor.backend / gpucor.threads options.

test_that("gpu_available() is TRUE or FALSE, with a reason when FALSE", {
  ok <- gpucor::gpu_available()
  expect_type(ok, "logical")
  expect_length(ok, 1L)
  expect_false(is.na(ok))
  if (!isTRUE(as.vector(ok))) {
    reason <- attr(ok, "reason")
    expect_type(reason, "character")
    expect_length(reason, 1L)
    expect_true(nzchar(reason))
  }
})

test_that("gpu_info() is a list that agrees with gpu_available()", {
  info <- gpucor::gpu_info()
  expect_type(info, "list")
  expect_true(all(c("built_with_cuda", "available") %in% names(info)))
  expect_type(info$built_with_cuda, "logical")
  expect_length(info$built_with_cuda, 1L)
  expect_false(is.na(info$built_with_cuda))
  expect_type(info$available, "logical")
  expect_length(info$available, 1L)
  expect_identical(as.vector(info$available), as.vector(gpucor::gpu_available()))
  # A GPU cannot be usable from a build without CUDA.
  if (!info$built_with_cuda) expect_false(as.vector(info$available))
})

test_that("with no NVIDIA driver on the machine, no GPU is available", {
  skip_if(file.exists("/dev/nvidiactl") || nzchar(Sys.which("nvidia-smi")),
          "an NVIDIA driver is present")
  ok <- gpucor::gpu_available()
  expect_false(as.vector(ok))
  expect_true(nzchar(attr(ok, "reason")))
  expect_false(gpucor::gpu_info()$available)
})

test_that("option gpucor.backend sets the default backend", {
  info <- new_seed()
  x <- rmat(20, 4, na = 0.05)
  r <- with_options(list(gpucor.backend = "cpu"),
                    gpucor::gpu_cor(x, use = "pairwise.complete.obs"))
  expect_abs_equal(r, stats::cor(x, use = "pairwise.complete.obs"), 1e-10,
                   "gpu_cor with gpucor.backend = \"cpu\"", info)
  d <- with_options(list(gpucor.backend = "cpu"), gpucor::gpu_dist(x))
  expect_equal(as.vector(d), as.vector(stats::dist(x)), tolerance = 1e-12, info = info)
  skip_if(isTRUE(as.vector(gpucor::gpu_available())), "a GPU is available")
  expect_error(with_options(list(gpucor.backend = "gpu"), gpucor::gpu_cor(x)), "GPU|CUDA")
  expect_error(with_options(list(gpucor.backend = "gpu"), gpucor::gpu_dist(x)), "GPU|CUDA")
  # An explicit argument wins over the option.
  expect_no_error(with_options(list(gpucor.backend = "gpu"), gpucor::gpu_cor(x, backend = "cpu")))
})

test_that("'auto' is the default and runs silently without a GPU", {
  skip_if(isTRUE(as.vector(gpucor::gpu_available())), "a GPU is available")
  info <- new_seed()
  x <- rmat(20, 4)
  expect_silent(r <- with_options(list(gpucor.backend = NULL), gpucor::gpu_cor(x)))
  expect_abs_equal(r, stats::cor(x), 1e-10, "gpu_cor with the default backend", info)
  expect_silent(d <- with_options(list(gpucor.backend = NULL), gpucor::gpu_dist(x)))
  expect_equal(as.vector(d), as.vector(stats::dist(x)), tolerance = 1e-12)
})

test_that("invalid backend or precision errors", {
  x <- matrix(stats::rnorm(12), 4)
  expect_error(gpucor::gpu_cor(x, backend = "tpu"))
  expect_error(gpucor::gpu_cor(x, backend = "cpu", precision = "half"))
  expect_error(gpucor::gpu_dist(x, backend = "tpu"))
  expect_error(gpucor::gpu_dist(x, backend = "cpu", precision = "half"))
})

test_that("gpu_cor results are identical with 1 and 2 threads", {
  info <- new_seed()
  x <- rmat(300, 70, na = 0.01)
  xs <- rmat(80, 20, na = 0.05)
  run <- function(threads, x, m, u) {
    with_options(list(gpucor.threads = threads),
                 gpucor::gpu_cor(x, method = m, use = u, backend = "cpu"))
  }
  for (u in c("everything", "pairwise.complete.obs")) {
    expect_identical(run(1, x, "pearson", u), run(2, x, "pearson", u), info = paste(u, info))
  }
  for (m in cor_methods) for (u in c("everything", "complete.obs", "pairwise.complete.obs")) {
    expect_identical(suppressWarnings(run(1, xs, m, u)), suppressWarnings(run(2, xs, m, u)),
                     info = paste(m, u, info))
  }
})
