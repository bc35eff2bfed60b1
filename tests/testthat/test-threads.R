# Threads follow R's conventions, and a forked child never hangs (issue 8).

# Evaluates expr in a forked child and returns its value, or NULL when it
# does not finish within `timeout` seconds (the child is then killed): a
# regression fails the test instead of hanging the check.
in_fork <- function(expr, timeout) {
  job <- parallel::mcparallel(expr)
  got <- parallel::mccollect(job, wait = FALSE, timeout = timeout)
  if (is.null(got)) {
    tools::pskill(job$pid, tools::SIGKILL)
    parallel::mccollect(job, wait = FALSE)
    return(NULL)
  }
  got[[1]]
}

test_that("a forked child of a multi-threaded session finishes (no OpenMP deadlock)", {
  skip_on_os("windows")
  info <- new_seed()
  x <- rmat(300, 400)
  want <- sum(with_options(list(gpucor.threads = 2), gpucor::gpu_cor(x, backend = "cpu")))
  # the parent has now run a parallel region; before the fix the child's
  # next one waited forever for the parent's pool threads
  for (what in c("cor", "dist")) {
    res <- in_fork(with_options(list(gpucor.threads = 2), {
      r <- if (what == "cor") gpucor::gpu_cor(x, backend = "cpu")
           else gpucor::gpu_dist(t(x[, 1:100]), "correlation", backend = "cpu")
      c(sum(r), gpucor:::.threads())
    }), timeout = 30)
    expect_false(is.null(res), info = paste(what, "in a forked child did not finish in 30 s", info))
    if (is.null(res)) next
    expect_false(inherits(res, "try-error"), info = paste(what, format(res)))
    if (what == "cor") expect_equal(res[[1]], want, tolerance = 1e-12, info = info)
    expect_equal(res[[2]], 1)   # one thread in the child
  }
  # and mclapply, as users call it (itself in a child, to bound its time)
  s <- in_fork(parallel::mclapply(1:2, function(i) sum(gpucor::gpu_cor(x, backend = "cpu")),
                                  mc.cores = 2), timeout = 30)
  expect_false(is.null(s), info = "mclapply did not finish in 30 s")
  if (!is.null(s)) expect_equal(unlist(s), c(want, want), tolerance = 1e-12)
})

# The team size the CPU engine actually ran with (option gpucor.profile).
threads_used <- function(x) {
  r <- with_options(list(gpucor.profile = TRUE), gpucor::gpu_cor(x, backend = "cpu"))
  attr(r, "threads")
}

test_that("OMP_NUM_THREADS = 1 gives one thread; the option and limits, in R's order", {
  x <- rmat(200, 300)
  cores <- .Call(gpucor:::C_gpucor_max_threads)
  unset <- c(OMP_NUM_THREADS = NA, OMP_THREAD_LIMIT = NA, "_R_CHECK_LIMIT_CORES_" = NA)
  with_envvars(unset, with_options(list(gpucor.threads = NULL), {
    with_envvars(c(OMP_NUM_THREADS = "1"), {
      expect_identical(gpucor:::.threads(), 1L)
      expect_identical(threads_used(x), 1L)
      # the option comes first
      if (cores >= 2) {
        expect_identical(with_options(list(gpucor.threads = 2), gpucor:::.threads()), 2L)
        expect_identical(with_options(list(gpucor.threads = 2), threads_used(x)), 2L)
      }
    })
    with_envvars(c(OMP_NUM_THREADS = "3,2"), expect_identical(gpucor:::.threads(), min(3L, cores)))
    with_envvars(c(OMP_NUM_THREADS = "junk"), expect_identical(gpucor:::.threads(), cores))
    # OMP_THREAD_LIMIT caps both
    with_envvars(c(OMP_THREAD_LIMIT = "1"), {
      expect_identical(gpucor:::.threads(), 1L)
      expect_identical(with_options(list(gpucor.threads = 2), threads_used(x)), 1L)
    })
    # R CMD check's limit: at most 2, whatever is asked
    with_envvars(c("_R_CHECK_LIMIT_CORES_" = "TRUE"), {
      expect_lte(with_options(list(gpucor.threads = 64), gpucor:::.threads()), 2L)
      expect_lte(threads_used(x), 2L)
    })
    with_envvars(c("_R_CHECK_LIMIT_CORES_" = "false"),
                 expect_identical(gpucor:::.threads(), cores))
    expect_identical(gpucor:::.threads(), cores)      # nothing set: every core
  }))
})

test_that("results do not depend on the thread count", {
  info <- new_seed()
  x <- rmat(150, 140, na = 0.01)
  run <- function(t) with_options(list(gpucor.threads = t), list(
    gpucor::gpu_cor(x, use = "pairwise.complete.obs", backend = "cpu"),
    gpucor::gpu_dist(x, "canberra", backend = "cpu")))
  with_envvars(c("_R_CHECK_LIMIT_CORES_" = NA), expect_identical(run(1), run(2), info = info))
})

test_that("BiocParallel's MulticoreParam (forked workers) runs gpucor after the parent did", {
  skip_on_os("windows")
  skip_if_not_installed("BiocParallel")
  x <- rmat(200, 300)
  want <- sum(with_options(list(gpucor.threads = 2), gpucor::gpu_cor(x, backend = "cpu")))
  got <- in_fork(BiocParallel::bplapply(1:2, function(i) sum(gpucor::gpu_cor(x, backend = "cpu")),
                                        BPPARAM = BiocParallel::MulticoreParam(2)),
                 timeout = 60)
  expect_false(is.null(got), info = "bplapply with MulticoreParam did not finish in 60 s")
  if (!is.null(got)) expect_equal(unlist(got), c(want, want), tolerance = 1e-12)
})
