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

# Issue 32: under a cgroup memory limit (Slurm, Docker) or ulimit -v, a
# result that fits MemAvailable but not the limit stopped in R's "cannot
# allocate vector" or an OOM kill instead of the guard's clear error.

# A fake /proc and /sys under a temporary root, for .mem_available(root).
fake_root <- function(files) {
  root <- tempfile("memroot")
  for (f in names(files)) {
    dir.create(dirname(file.path(root, f)), recursive = TRUE, showWarnings = FALSE)
    writeLines(files[[f]], file.path(root, f))
  }
  root
}

test_that("the guard takes the smallest of MemAvailable and the cgroup limits (v1, v2)", {
  gib <- 2^30
  meminfo <- c("MemTotal:       100000000 kB", "MemAvailable:    50000000 kB")
  # v2: the job's cgroup (4 GiB, 1 GiB used of which 0.25 GiB inactive
  # cache) under a parent of 2 GiB with 0.5 GiB used: the parent's 1.5 GiB
  v2 <- fake_root(list(
    "proc/meminfo" = meminfo,
    "proc/self/cgroup" = "0::/slurm/job1",
    "sys/fs/cgroup/slurm/job1/memory.max" = as.character(4 * gib),
    "sys/fs/cgroup/slurm/job1/memory.current" = as.character(1 * gib),
    "sys/fs/cgroup/slurm/job1/memory.stat" = c("anon 1", sprintf("inactive_file %.0f", 0.25 * gib)),
    "sys/fs/cgroup/slurm/memory.max" = as.character(2 * gib),
    "sys/fs/cgroup/slurm/memory.current" = as.character(0.5 * gib),
    "sys/fs/cgroup/memory.max" = "max"))
  a <- gpucor:::.mem_available(v2)
  expect_equal(as.vector(a), 1.5 * gib)
  expect_match(attr(a, "source"), "cgroup /slurm (memory.max)", fixed = TRUE)
  # the job's own limit is the smaller one once the parent has room
  writeLines(as.character(8 * gib), file.path(v2, "sys/fs/cgroup/slurm/memory.max"))
  a <- gpucor:::.mem_available(v2)
  expect_equal(as.vector(a), 3.25 * gib)
  expect_match(attr(a, "source"), "cgroup /slurm/job1", fixed = TRUE)
  # v1 (Docker): memory.limit_in_bytes; an unlimited one (2^63) is no limit
  v1 <- fake_root(list(
    "proc/meminfo" = meminfo,
    "proc/self/cgroup" = c("5:cpu,cpuacct:/docker/abc", "4:memory:/docker/abc", "0::/"),
    "sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes" = as.character(3 * gib),
    "sys/fs/cgroup/memory/docker/abc/memory.usage_in_bytes" = as.character(1 * gib),
    "sys/fs/cgroup/memory/docker/memory.limit_in_bytes" = "9223372036854771712",
    "sys/fs/cgroup/memory/docker/memory.usage_in_bytes" = as.character(1 * gib)))
  a <- gpucor:::.mem_available(v1)
  expect_equal(as.vector(a), 2 * gib)
  expect_match(attr(a, "source"), "memory.limit_in_bytes", fixed = TRUE)
  # no limits at all: MemAvailable; nothing readable: NA (no check)
  none <- fake_root(list("proc/meminfo" = meminfo, "proc/self/cgroup" = "0::/"))
  expect_equal(as.vector(gpucor:::.mem_available(none)), 50000000 * 1024)
  expect_true(is.na(gpucor:::.mem_available(tempfile("nothing"))))
  unlink(c(v1, v2, none), recursive = TRUE)
})

test_that("under ulimit -v the guard stops a result that fits MemAvailable but not the limit", {
  skip_on_os(c("windows", "mac", "solaris"))
  skip_if(is.na(gpucor:::.mem_available()), "no /proc here")
  prlimit <- Sys.which("prlimit")
  rscript <- file.path(R.home("bin"), "Rscript")
  skip_if(!nzchar(prlimit) || !file.exists(rscript), "no prlimit or Rscript")
  avail <- as.vector(gpucor:::.mem_available())
  # a 2.98 GiB result (20000 x 20000); the child limits its address space to
  # its own plus 1.5 GiB once gpucor is loaded (a CUDA build maps about 3 GB
  # of CUDA libraries at load, so a limit set before the load stops the load)
  skip_if(avail < 4 * 2^30, "less than 4 GiB available: MemAvailable alone stops it")
  code <- tempfile(fileext = ".R")
  writeLines(c(
    "library(gpucor)",
    "vm <- grep('^VmSize', readLines('/proc/self/status'), value = TRUE)",
    "vm <- as.numeric(gsub('[^0-9]', '', vm)) * 1024",
    sprintf("st <- system2('%s', c('--pid', Sys.getpid(), sprintf('--as=%%.0f', vm + 1.5 * 2^30)))", prlimit),
    "if (st != 0) stop('prlimit failed')",
    "r <- tryCatch(gpu_cor(matrix(0, 2, 20000), backend = 'cpu'), error = function(e) conditionMessage(e))",
    "cat(if (is.character(r)) r else 'no error', '\\n')"), code)
  out <- with_envvars(c(R_LIBS = paste(.libPaths(), collapse = ":")),
    system2(rscript, code, stdout = TRUE, stderr = TRUE))
  unlink(code)
  msg <- paste(out, collapse = "\n")
  expect_match(msg, "needs 3.0 GiB of memory", fixed = TRUE)
  expect_match(msg, "address-space limit (ulimit -v)", fixed = TRUE)
})
