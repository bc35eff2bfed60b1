# A result that cannot fit in memory stops early with advice (issue 8).

test_that("a result larger than the available memory stops with sizes and advice", {
  avail <- gpucor:::.mem_available()
  skip_if(is.na(avail), "no /proc/meminfo here: the guard does not check")
  skip_if(avail > 250 * 2^30, "more than 250 GiB available")
  x <- matrix(0, 10, 2e5)                     # a 298 GiB result
  e <- expect_error(gpucor::gpu_cor(x, backend = "cpu"), "memory_guard")
  msg <- conditionMessage(e)
  expect_match(msg, "200000 x 200000 result needs 298.0 GiB", fixed = TRUE)
  expect_match(msg, "available")
  expect_match(msg, "gpu_dist", fixed = TRUE)   # the advice: a dist is half
  expect_error(gpucor::gpu_cor(x, x, backend = "cpu"), "blocks of columns of 'y'")
  expect_error(gpucor::gpu_dist(matrix(0, 3e5, 2), backend = "cpu"),
               "'dist' of 300000 rows needs 335")
  expect_error(gpucor::gpu_dist(matrix(0, 3e5, 2), "correlation", backend = "auto"),
               "needs")
  # small results pass, with the guard on and off
  s <- rmat(10, 20)
  expect_no_error(gpucor::gpu_cor(s, backend = "cpu"))
  expect_no_error(with_options(list(gpucor.memory_guard = FALSE),
                               gpucor::gpu_cor(s, backend = "cpu")))
})

test_that("the guard reads MemAvailable and formats sizes", {
  skip_if(is.na(gpucor:::.mem_available()), "no /proc/meminfo here")
  expect_gt(gpucor:::.mem_available(), 0)
  expect_identical(gpucor:::.fmt_bytes(512), "512 bytes")
  expect_identical(gpucor:::.fmt_bytes(1536), "1.5 KiB")
  expect_identical(gpucor:::.fmt_bytes(8 * 2e5^2), "298.0 GiB")
  expect_silent(with_options(list(gpucor.memory_guard = FALSE),
                             gpucor:::.memory_guard(1e30, "x", "y")))
  expect_error(gpucor:::.memory_guard(1e30, "the thing", "Do less."),
               "the thing needs .* Do less")
})
