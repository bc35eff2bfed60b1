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
  # CUDA does not survive a fork: GPU work on forked workers is refused
  if (grepl("gpu,", lab, fixed = TRUE) && inherits(bp, "MulticoreParam")) {
    expect_match(got$error, "MulticoreParam forks this process", fixed = TRUE, label = lab)
    return(invisible())
  }
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

test_that("tiles (BPPARAM, DelayedArray blocks): stats' zero-sd warning of the whole x, randomized", {
  skip_if_not_installed("BiocParallel")
  info <- new_seed()
  snow <- BiocParallel::SnowParam(3)
  BiocParallel::bpstart(snow)
  on.exit(BiocParallel::bpstop(snow))
  outcome <- function(e) tryCatch(list(value = e, warning = "none"),
                                  warning = function(w) list(warning = conditionMessage(w)),
                                  error = function(e) list(error = conditionMessage(e)))
  # stats warns for an NA-free column of zero spread anywhere but first, or
  # one that an NA-free column follows: constant columns (and subnormal
  # ones, whose variance underflows) among columns with and without NA
  for (it in 1:25) {
    p <- sample(1:8, 1)
    n <- sample(3:10, 1)
    x <- matrix(stats::rnorm(n * p), n, p)
    for (j in seq_len(p)) {
      r <- stats::runif(1)
      if (r < 0.3) x[, j] <- 2 else if (r < 0.4) x[, j] <- 1e-170 * x[, j]
    }
    if (stats::runif(1) < 0.7) x[sample(n * p, sample(1:(p + 2), 1))] <- NA
    for (m in c("pearson", "spearman", "kendall"))
      for (u in c("everything", "complete.obs", "pairwise.complete.obs")) {
        lab <- sprintf("case %d, %s, %s, %s", it, m, u, info)
        want <- outcome(gpucor::gpu_cor(x, use = u, method = m, backend = "cpu"))
        for (bp in list(BiocParallel::SerialParam(), snow))
          expect_identical(outcome(gpucor::gpu_cor(x, use = u, method = m, backend = "cpu",
                                                   BPPARAM = bp)),
                           want, label = paste(class(bp), lab))
        if (requireNamespace("DelayedArray", quietly = TRUE)) {
          old <- DelayedArray::getAutoBlockSize()
          suppressMessages(DelayedArray::setAutoBlockSize(8 * n * 2))
          # 2 columns a block
          got <- with_options(list(gpucor.block_memory = 2 * 8 * n * 2),
                              outcome(gpucor::gpu_cor(DelayedArray::DelayedArray(x), use = u,
                                                      method = m, backend = "cpu")))
          suppressMessages(DelayedArray::setAutoBlockSize(old))
          expect_identical(got, want, label = paste("DelayedArray blocks", lab))
        }
      }
  }
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

# ---- gpu_cor_edges() and gpu_knn() with BPPARAM: each worker runs the
# engine on its share of the result's columns (the engine option 'cols'),
# and the main process adds the shares up; the selection's decisions are
# the one-process driver's, so the results are identical.

# An input with the adversarial cases: ties, a constant column, a large
# offset, near-duplicate columns, and (na > 0) NA.
bp_input <- function(n, p, na = 0) {
  x <- rmat(n, p, na = na, dimnames = list(NULL, sprintf("g%03d", seq_len(p))))
  if (p >= 6) {
    x[, 2] <- x[, 1] + stats::rnorm(n, sd = 0.2)          # a strong pair
    x[, 3] <- round(x[, 3])                                  # ties
    x[, 4] <- 1e8 + x[, 4]                                   # an offset
    x[, 5] <- 3                                              # zero sd
    x[, 6] <- x[, 2] * (1 + 1e-12)                           # a near duplicate
  }
  x
}

test_that("gpu_cor_edges(BPPARAM =): the edges, p-values and FDR of the call without it", {
  skip_if_not_installed("BiocParallel")
  info <- new_seed()
  ps <- bp_params()
  on.exit(BiocParallel::bpstop(ps$snow))
  crits <- list(list(threshold = 0.3), list(top_k = 3), list(top_k = 40),
                list(threshold = 0.2, top_k = 2), list(density = 0.02),
                list(fdr = 0.2, p_value = TRUE), list(fdr = 1),
                list(fdr = 0.3, top_k = 2), list(threshold = -0.1, absolute = FALSE))
  for (b in test_backends()) for (k in 1:3) {
    n <- sample(c(3, 12, 40), 1)
    p <- sample(c(7, 23, 61), 1)
    x <- bp_input(n, p, na = if (k == 3) 0.1 else 0)
    y <- if (k == 2) bp_input(n, 9) else NULL
    use <- if (k == 3) "pairwise.complete.obs" else "everything"
    # every case through SerialParam (the same passes and merges); the
    # processes' transport on a share of them
    for (method in c("pearson", "spearman", "kendall", if (k != 3) "bicor"))
      for (cr in crits) for (bpn in names(ps)) {
        if (bpn != "serial" && !(method %in% c("pearson", "kendall") &&
                                 names(cr)[1] %in% c("top_k", "fdr")))
          next
        lab <- sprintf("%s, %s, n %d, p %d, y %s, %s, %s, %s", b, method, n, p,
                       !is.null(y), use, paste(names(cr), cr, collapse = " "), bpn)
        f <- function(bp) do.call(gpucor::gpu_cor_edges,
                                  c(list(x, y, method = method, use = use, backend = b,
                                         BPPARAM = bp), cr))
        same_call(f, ps[[bpn]], paste(lab, info))
      }
  }
})

test_that("BPPARAM shares: many CPU tiles and GPU panels, more workers than columns, refined cuts", {
  skip_if_not_installed("BiocParallel")
  info <- new_seed()
  snow <- local_snow(3)
  x <- bp_input(30, 50)
  for (b in test_backends()) {
    # small tiles and panels: shares cut through many of them
    old <- options(gpucor.cpu_tile = 3L, gpucor.gpu_slab = 4L)
    for (cr in list(list(fdr = 0.5), list(top_k = 4), list(density = 0.1)))
      same_call(function(bp) do.call(gpucor::gpu_cor_edges,
                                     c(list(x, backend = b, BPPARAM = bp), cr)),
                snow, paste(b, names(cr), "small tiles", info))
    same_call(function(bp) gpucor::gpu_knn(x, 4, backend = b, BPPARAM = bp), snow,
              paste(b, "knn small tiles", info))
    options(old)
    # the histogram refined inside a bin (GPUCOR_TEST_BIN_LIMIT: the
    # driver runs in the main process)
    with_envvars(c(GPUCOR_TEST_BIN_LIMIT = "3"),
                 same_call(function(bp) gpucor::gpu_cor_edges(x, fdr = 0.5, density = 0.3,
                                                              backend = b, BPPARAM = bp),
                           snow, paste(b, "refined", info)))
    # fewer columns than shares, one column, no pair
    for (pp in 1:3)
      same_call(function(bp) gpucor::gpu_cor_edges(x[, seq_len(pp), drop = FALSE], top_k = 1,
                                                   backend = b, BPPARAM = bp),
                snow, paste(b, "p =", pp, info))
    same_call(function(bp) gpucor::gpu_knn(x[1:2, ], 1, backend = b, BPPARAM = bp), snow,
              paste(b, "knn of 2 rows", info))
  }
})

test_that("gpu_knn(BPPARAM =): the neighbours of the call without it", {
  skip_if_not_installed("BiocParallel")
  info <- new_seed()
  ps <- bp_params()
  on.exit(BiocParallel::bpstop(ps$snow))
  x <- bp_input(57, 6)
  x[10, ] <- x[11, ]                      # a tie at distance 0
  x[20:25, ] <- x[20, ]                   # many equidistant neighbours
  rownames(x) <- paste0("r", seq_len(nrow(x)))
  xn <- x
  xn[sample(length(xn), 25)] <- NA
  for (b in test_backends()) for (bpn in names(ps))
    for (method in c("euclidean", "manhattan", "maximum", "canberra", "minkowski",
                     "correlation", "abscorrelation", "spearman", "cosine", "binary"))
      for (d in list(x, xn)) for (k in c(1L, 5L, 40L)) {
        lab <- sprintf("%s, %s, %s, NA %s, k %d, %s", b, bpn, method, anyNA(d), k, info)
        same_call(function(bp) gpucor::gpu_knn(d, k, method = method, p = 3, backend = b,
                                               BPPARAM = bp), ps[[bpn]], lab)
      }
  expect_error(gpucor::gpu_knn(x, 2, BPPARAM = "x"), "'BPPARAM' must be NULL or a",
               fixed = TRUE)
  expect_error(gpucor::gpu_cor_edges(x, top_k = 2, BPPARAM = 1), "'BPPARAM' must be NULL or a",
               fixed = TRUE)
})

test_that("a worker that fails: a clear error from the main process, nothing kept", {
  skip_if_not_installed("BiocParallel")
  x <- bp_input(20, 10)
  # an engine option the workers refuse: their error reaches the caller
  bad <- function(...) stop("the worker's own failure")
  if (isTRUE(as.vector(gpucor::gpu_available())))
    expect_error(gpucor::gpu_knn(x, 2, backend = "gpu",
                                 BPPARAM = BiocParallel::MulticoreParam(2)),
                 "MulticoreParam forks this process", fixed = TRUE)
  expect_error(gpucor:::.bp_share_run(gpucor:::.bp_shares(10, BiocParallel::SerialParam(), 0L),
                                      bad, BiocParallel::SerialParam()),
               "the worker's own failure")
  crit2 <- list(threshold = NA_real_, top_k = 2, density = NA_real_, fdr = NA_real_,
                absolute = TRUE, p_value = FALSE)
  steps <- function(run_pass)
    gpucor:::.edges_steps(x, NULL, "pearson", "everything", NULL,
                          gpucor:::.engine_opts("cpu", "double"), crit2, run_pass)
  expect_error(steps(function(spec) stop("no pass today")), "no pass today", fixed = TRUE)
  expect_error(steps(function(spec) list(list(counts = 1))),
               "a worker's pass is malformed", fixed = TRUE)
  expect_error(steps(function(spec) "no list"), "the workers' passes returned no list",
               fixed = TRUE)
  # the driver's state: freed once finished or failed, refused after
  st <- .Call(gpucor:::C_gpucor_edges_begin, x, NULL, "pearson", "everything", NULL,
              gpucor:::.engine_opts("cpu", "double"), crit2)
  .Call(gpucor:::C_gpucor_edges_end, st)
  expect_error(.Call(gpucor:::C_gpucor_edges_next, st), "no gpu_cor_edges() driver",
               fixed = TRUE)
})

test_that("the engine's shares cover the result once: counts add up to every pair", {
  x <- bp_input(25, 41)
  crit <- list(threshold = NA_real_, top_k = NA_real_, density = NA_real_, fdr = 0.5,
               absolute = TRUE, p_value = FALSE)
  opts <- function(cols) gpucor:::.engine_opts("cpu", "double", cols = cols)
  # a histogram pass of |r|
  spec <- list(mode = 1L, prefix = c(0, 0), bits = 0L, lower = c(0, 0), k = 0,
               has_thr = FALSE, thr = 0, strength = 0L, key = 1L)
  for (tile in c(1L, 4L, 16L)) {
    old <- options(gpucor.cpu_tile = tile)
    # ranges in any order, several in one call
    cuts <- c(0, 5, 17, 18, 41)
    parts <- list(.Call(gpucor:::C_gpucor_edges_pass, x, NULL, "pearson", "everything", NULL,
                        opts(c(17, 18, 0, 5)), crit, spec),
                  .Call(gpucor:::C_gpucor_edges_pass, x, NULL, "pearson", "everything", NULL,
                        opts(c(5, 17)), crit, spec),
                  .Call(gpucor:::C_gpucor_edges_pass, x, NULL, "pearson", "everything", NULL,
                        opts(c(18, 41)), crit, spec))
    whole <- .Call(gpucor:::C_gpucor_edges_pass, x, NULL, "pearson", "everything", NULL, opts(NULL), crit, spec)
    options(old)
    # every pair but the zero-sd column's, once
    expect_equal(sum(vapply(parts, function(r) r$counts[2], 0)), 40 * 39 / 2)
    expect_equal(whole$counts[2], 40 * 39 / 2)
    expect_identical(Reduce(`+`, lapply(parts, `[[`, "hist")), whole$hist)
  }
})

test_that("a worker's shares: its share of the threads only while it runs; shares cover the columns", {
  skip_if_not_installed("BiocParallel")
  old <- options(gpucor.threads = 2L)
  on.exit(options(old))
  got <- gpucor:::.bp_share_job(list(ranges = list(c(0, 3), c(7, 9)), device = 1L),
                                function(r, d, z) c(r, d, getOption("gpucor.threads"), z),
                                1L, list(z = 5))
  expect_identical(got, c(0, 3, 7, 9, 1, 1, 5))
  expect_identical(getOption("gpucor.threads"), 2L)
  for (nc in c(1, 2, 3, 10, 101)) for (nw in 1:4) {
    jobs <- gpucor:::.bp_shares(nc, BiocParallel::SnowParam(nw), c(0L, 1L))
    r <- do.call(rbind, unlist(lapply(jobs, `[[`, "ranges"), recursive = FALSE))
    r <- r[order(r[, 1]), , drop = FALSE]
    expect_identical(c(r[1, 1], r[-1, 1]), c(0, r[-nrow(r), 2]), label = paste(nc, nw))
    expect_identical(r[nrow(r), 2], nc)
    expect_true(all(r[, 2] > r[, 1]))
    expect_lte(length(jobs), nw)
    expect_identical(vapply(jobs, `[[`, 0L, "device"), rep(c(0L, 1L), length.out = length(jobs)))
  }
  # devices = "all" (-1L after the argument's check): each worker one
  # visible GPU in turn, not every GPU in every worker
  nd <- max(1L, gpucor::gpu_info()$device_count)
  jobs <- gpucor:::.bp_shares(40, BiocParallel::SnowParam(3), gpucor:::.check_devices("all"))
  expect_identical(vapply(jobs, `[[`, 0L, "device"), (0:2) %% nd)
})

# gpu_dist(BPPARAM =): each worker returns the packed columns of its ranges
# (made from the tiles or panels that meet them), put together in order.
test_that("gpu_dist(BPPARAM =): the 'dist' of the call without it", {
  skip_if_not_installed("BiocParallel")
  info <- new_seed()
  ps <- bp_params()
  on.exit(BiocParallel::bpstop(ps$snow))
  x <- t(bp_input(9, 45))                 # rows: ties, offset, constant, near duplicates
  rownames(x) <- paste0("r", seq_len(nrow(x)))
  x[10, ] <- x[11, ]
  xn <- x
  xn[sample(length(xn), 30)] <- NA
  xn[7, 2] <- Inf
  no_call <- function(f) function(bp) {
    d <- f(bp)
    attr(d, "call") <- NULL
    d
  }
  for (b in test_backends()) for (bpn in names(ps))
    for (method in c("euclidean", "maximum", "manhattan", "canberra", "binary", "minkowski",
                     "correlation", "abscorrelation", "spearman", "kendall", "cosine"))
      for (d in list(x, xn)) for (prec in if (b == "gpu") c("double", "single") else "double") {
        lab <- sprintf("%s, %s, %s, %s, NA %s, %s", b, bpn, method, prec, anyNA(d), info)
        same_call(no_call(function(bp) gpucor::gpu_dist(d, method, p = 3, backend = b,
                                                        precision = prec, BPPARAM = bp)),
                  ps[[bpn]], lab)
      }
  # small tiles and panels, more workers than items, 2 and 3 rows, no column
  snow3 <- local_snow(3)
  for (b in test_backends()) {
    old <- options(gpucor.cpu_tile = 3L, gpucor.gpu_slab = 4L)
    for (method in c("euclidean", "correlation", "kendall"))
      for (d in list(x, xn))
        same_call(no_call(function(bp) gpucor::gpu_dist(d, method, backend = b, BPPARAM = bp)),
                  snow3, paste(b, method, "small tiles", anyNA(d), info))
    options(old)
    for (nr in 1:3)
      same_call(no_call(function(bp) gpucor::gpu_dist(x[seq_len(nr), , drop = FALSE],
                                                      backend = b, BPPARAM = bp)),
                snow3, paste(b, "rows", nr, info))
    same_call(no_call(function(bp) gpucor::gpu_dist(x[, 0], backend = b, BPPARAM = bp)),
              snow3, paste(b, "no column", info))
  }
  expect_error(gpucor::gpu_dist(x, BPPARAM = "x"), "'BPPARAM' must be NULL or a", fixed = TRUE)
  # with output: test-hdf5.R
})

test_that("a 'dist' share: the columns of any ranges, whatever the tiles, put together", {
  x <- t(bp_input(6, 41))
  opts <- function(cols) gpucor:::.engine_opts("cpu", "double", cols = cols)
  for (tile in c(1L, 4L, 7L, 64L)) for (m in c("euclidean", "correlation", "kendall")) {
    old <- options(gpucor.cpu_tile = tile)
    whole <- suppressWarnings(.Call(gpucor:::C_gpucor_dist, x, m, 2, opts(NULL), NULL))
    # ranges in any order, cut inside tiles, an empty last column, one past n
    parts <- suppressWarnings(.Call(gpucor:::C_gpucor_dist, x, m, 2,
                                    opts(c(17, 18, 0, 5, 5, 17, 18, 40, 40, 45)), NULL))
    options(old)
    expect_identical(lengths(parts), c(23L, 190L, 354L, 253L, 0L), label = paste(tile, m))
    attributes(whole) <- NULL
    expect_identical(unlist(parts[c(2, 3, 1, 4, 5)]), whole, label = paste(tile, m))
  }
  # parts that are not the shares': an error
  jobs <- gpucor:::.bp_shares(41, BiocParallel::SerialParam(), 0L)
  parts <- lapply(jobs, function(j) .Call(gpucor:::C_gpucor_dist, x, "euclidean", 2,
                                          opts(unlist(j$ranges)), NULL))
  whole <- .Call(gpucor:::C_gpucor_dist, x, "euclidean", 2, opts(NULL), NULL)
  expect_identical(gpucor:::.bp_dist_join(parts, jobs, 41), whole)
  for (bad in list(list(1), list(list(1, 2)), list(list(as.integer(parts[[1]][[1]]), 1)),
                   list(lapply(parts[[1]], `[`, -1))))
    expect_error(gpucor:::.bp_dist_join(bad, jobs, 41), "returned a malformed part",
                 fixed = TRUE)
})

# ---- large inputs reach local workers through a file (.bp_ship()) ------
test_that("inputs shipped through a file: the values of the call without BPPARAM, no file left", {
  skip_if_not_installed("BiocParallel")
  info <- new_seed()
  left <- function() list.files(tempdir(), "^gpucor-(input|parts)-")
  before <- left()
  old <- options(gpucor.bp_file_bytes = 0)   # every double matrix through a file
  on.exit(options(old))
  ps <- bp_params()
  on.exit(BiocParallel::bpstop(ps$snow), add = TRUE)
  # count the files the main process removes (each one written and read)
  cnt <- new.env()
  cnt$n <- 0
  ns <- asNamespace("gpucor")
  trace(".bp_unlink", where = ns, print = FALSE, tracer = bquote(
    assign("n", get("n", envir = .(cnt)) +
             sum(vapply(args, inherits, NA, "gpucor_shipped")), envir = .(cnt))))
  on.exit(untrace(".bp_unlink", where = ns), add = TRUE)
  # and the workers' results that come back through files
  cnt$back <- 0
  trace(".bp_unstash", where = ns, print = FALSE, tracer = bquote(
    if (inherits(v, "gpucor_stashed"))
      assign("back", get("back", envir = .(cnt)) + 1, envir = .(cnt))))
  on.exit(untrace(".bp_unstash", where = ns), add = TRUE)
  x <- bp_input(30, 23, na = 0.05)
  y <- bp_input(30, 7)
  for (bpn in c("snow", "multicore")) {
    bp <- ps[[bpn]]
    if (is.null(bp)) next
    lab <- paste(bpn, info)
    same_call(function(bp) gpucor::gpu_cor(x, y, "pairwise.complete.obs", backend = "cpu",
                                           BPPARAM = bp), bp, paste("cor", lab))
    same_call(function(bp) gpucor::gpu_dist(t(x), "canberra", backend = "cpu", BPPARAM = bp),
              bp, paste("dist", lab))
    # several passes (histograms, then the collecting pass) over one file
    same_call(function(bp) gpucor::gpu_cor_edges(x, fdr = 0.5, backend = "cpu", BPPARAM = bp),
              bp, paste("edges", lab))
    same_call(function(bp) gpucor::gpu_knn(t(x), 4, backend = "cpu", BPPARAM = bp),
              bp, paste("knn", lab))
    expect_identical(left(), before, label = lab)
  }
  # x and y (cor), x (dist, edges' passes together, knn): 5 a param
  expect_identical(cnt$n, 5 * sum(c("snow", "multicore") %in% names(ps)))
  expect_gt(cnt$back, 0)
})

test_that(".bp_stash() writes a worker's large vectors, at any depth, and .bp_unstash() reads them back", {
  skip_if_not_installed("BiocParallel")
  dir <- tempfile("gpucor-parts-")
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE))
  big <- matrix(stats::rnorm(600), 30, dimnames = list(paste0("r", 1:30), NULL))
  v <- structure(list(d = big, i = matrix(c(NA, 2:600), 30), l = c(NA, rep(TRUE, 599)),
                      small = 1:3, none = NULL, s = "text",
                      deep = list(list(structure(as.double(1:1000), sd0 = TRUE)), NULL),
                      f = factor(rep(letters, 40))),
                 sd0 = TRUE, threads = 2L)
  st <- gpucor:::.bp_stash(v, dir, 1000)
  stashed <- c("d", "i", "l")
  for (nm in stashed) expect_s3_class(st[[nm]], "gpucor_stashed")
  expect_s3_class(st$deep[[1]][[1]], "gpucor_stashed")
  expect_identical(st[c("small", "none", "s", "f")], v[c("small", "none", "s", "f")])
  expect_identical(attributes(st), attributes(v))
  expect_length(list.files(dir), 4)
  expect_identical(file.size(st$d$path), 8 * 600)
  expect_identical(gpucor:::.bp_unstash(st), v)
  expect_length(list.files(dir), 0)           # each file removed once read
  # no directory (workers elsewhere), or a file that cannot be written: as it was
  expect_identical(gpucor:::.bp_stash(v, NULL, 0), v)
  expect_identical(gpucor:::.bp_stash(v, file.path(dir, "no", "such"), 0), v)
  # a zero-length vector, and every vector at min = 0
  st0 <- gpucor:::.bp_stash(list(double(), v), dir, 0)
  expect_s3_class(st0[[1]], "gpucor_stashed")
  expect_identical(gpucor:::.bp_unstash(st0), list(double(), v))
  # a file gone or cut short: a clear error
  st <- gpucor:::.bp_stash(big, dir, 0)
  writeBin(1, st$path)
  expect_error(gpucor:::.bp_unstash(st), "not the one another process of this call wrote")
  unlink(st$path)
  expect_error(gpucor:::.bp_unstash(st), "are the BiocParallel workers on another machine")
})

test_that("a vector in pieces, one file and one thread each: written, read back, errors", {
  dir <- tempfile("gpucor-parts-")
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE))
  # one piece a 16 MiB, at most one a thread
  expect_length(gpucor:::.ship_paths("a", dir, 2^26, 8), 4)
  expect_length(gpucor:::.ship_paths("a", dir, 10, 8), 1)
  expect_length(gpucor:::.ship_paths("a", dir, 2^30, 3), 3)
  expect_length(gpucor:::.ship_paths("a", dir, 2^30, 0), 1)
  write <- function(v, np, th) {
    paths <- tempfile(rep("p", np), tmpdir = dir)
    list(ok = .Call(gpucor:::C_gpucor_ship_write, v, paths, th), paths = paths)
  }
  read <- function(w, v, th)
    .Call(gpucor:::C_gpucor_ship_gather, list(list(path = w$paths, length = length(v))),
          typeof(v), th)
  for (v in list(stats::rnorm(1000), c(NA, 1:10), c(TRUE, NA, FALSE), double(), 3))
    for (np in c(1, 2, 7)) for (th in c(1L, 3L)) {
      w <- write(v, np, th)
      expect_true(w$ok)
      expect_identical(sum(file.size(w$paths)), (if (is.double(v)) 8 else 4) * length(v))
      expect_identical(read(w, v, th), v)
      unlink(w$paths)
    }
  # a piece that cannot be written: FALSE, and no piece left
  paths <- c(tempfile("p", tmpdir = dir), file.path(dir, "no", "such"), tempfile("p", tmpdir = dir))
  expect_false(.Call(gpucor:::C_gpucor_ship_write, stats::rnorm(99), paths, 2L))
  expect_false(any(file.exists(paths)))
  # a piece gone, or longer than written: a clear error
  v <- stats::rnorm(100)
  w <- write(v, 3, 2L)
  cat("x", file = w$paths[2], append = TRUE)
  expect_error(read(w, v, 2L), "is not the one another process of this call wrote")
  w <- write(v, 3, 2L)
  unlink(w$paths[3])
  expect_error(read(w, v, 2L), "are the BiocParallel workers on another machine")
  expect_error(.Call(gpucor:::C_gpucor_ship_write, "a", paths, 1L), "only double, integer and logical")
})

test_that("parts joined in place: vectors and records of files in any mix, randomized, and errors", {
  info <- new_seed()
  dir <- tempfile("gpucor-parts-")
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE))
  gather <- function(parts, type = "double", th = 3L)
    .Call(gpucor:::C_gpucor_ship_gather, parts, type, th)
  for (rep in 1:20) {
    type <- sample(c("double", "integer", "logical"), 1)
    make <- switch(type, double = stats::rnorm, integer = function(k) sample(c(NA, 1:9), k, TRUE),
                   logical = function(k) sample(c(NA, TRUE, FALSE), k, TRUE))
    vs <- lapply(sample(c(0:3, 50:200), sample(1:6, 1), TRUE), make)
    # each part in memory, or in 1 to 4 pieces of files
    parts <- lapply(vs, function(v) {
      if (runif(1) < 0.4) return(v)
      gpucor:::.ship_write(v, tempfile(rep("p", sample(1:4, 1)), tmpdir = dir), 2L,
                           "gpucor_stashed")
    })
    got <- gather(parts, type, sample(1:4, 1))
    expect_identical(got, do.call(c, vs), label = paste(type, rep, info))
  }
  expect_identical(gather(list()), double())
  # a piece gone or cut short, a part of another type: a clear error
  v <- stats::rnorm(100)
  rec <- gpucor:::.ship_write(v, tempfile(rep("p", 3), tmpdir = dir), 2L, "gpucor_stashed")
  cat("x", file = rec$path[2], append = TRUE)
  expect_error(gather(list(1, rec)), "is not the one another process of this call wrote")
  rec <- gpucor:::.ship_write(v, tempfile(rep("p", 3), tmpdir = dir), 2L, "gpucor_stashed")
  unlink(rec$path[3])
  expect_error(gather(list(rec, 2)), "are the BiocParallel workers on another machine")
  expect_error(gather(list(1, 2L)), "a part of another type")
})

test_that(".bp_ship() writes large double matrices of local workers only, and reads them back", {
  skip_if_not_installed("BiocParallel")
  x <- matrix(stats::rnorm(600), 30, dimnames = list(paste0("r", 1:30), NULL))
  args <- list(x = x, m = 3L, y = NULL, i = matrix(1:600, 30), s = x[1:2, 1:2])
  old <- options(gpucor.bp_file_bytes = 4000)
  on.exit(options(old))
  snow <- BiocParallel::SnowParam(2)
  sh <- gpucor:::.bp_ship(args, snow)
  on.exit(gpucor:::.bp_unlink(sh), add = TRUE)
  expect_s3_class(sh$x, "gpucor_shipped")
  expect_identical(sh[-1], args[-1])        # small, or not doubles: as they were
  expect_identical(file.size(sh$x$path), 8 * 600)
  expect_identical(gpucor:::.bp_unship(sh), args)
  # not local, or serial: nothing is written
  for (bp in list(BiocParallel::SerialParam(), BiocParallel::SnowParam(workers = "elsewhere.example")))
    expect_identical(gpucor:::.bp_ship(args, bp), args)
  expect_true(gpucor:::.bp_local(snow))
  expect_true(gpucor:::.bp_local(BiocParallel::MulticoreParam(2)))
  cl <- parallel::makePSOCKcluster(1)        # a running cluster: its nodes' hosts
  expect_true(gpucor:::.bp_local(as(cl, "SnowParam")))
  parallel::stopCluster(cl)
  # .call_with(): named arguments only, none of its own names
  f <- function(a, b, x, y) c(a, b, x, y)
  expect_identical(gpucor:::.call_with(f, list(1, 2), list(y = 4, x = 3)), c(1, 2, 3, 4))
  expect_error(gpucor:::.call_with(f, list(1, 2), list(3, 4)), "named arguments only")
  expect_error(gpucor:::.call_with(f, list(1), list(..gpucor_f.. = 3)), "named arguments only")
  expect_false(gpucor:::.bp_local(BiocParallel::SnowParam(workers = "elsewhere.example")))
  options(gpucor.bp_file_bytes = Inf)
  expect_identical(gpucor:::.bp_ship(args, snow), args)
  options(gpucor.bp_file_bytes = "x")
  expect_error(gpucor:::.bp_ship(args, snow), "option 'gpucor.bp_file_bytes' must be")
  # a file the worker cannot read, or not the one written: a clear error
  gone <- sh$x
  gone$path <- file.path(tempdir(), "gpucor-no-such-file.bin")
  expect_error(gpucor:::.bp_unship(list(x = gone)), "are the BiocParallel workers on another machine")
  short <- tempfile()
  writeBin(as.double(1:5), short)
  on.exit(unlink(short), add = TRUE)
  cut <- sh$x
  cut$path <- short
  expect_error(gpucor:::.bp_unship(list(x = cut)), "not the one another process of this call wrote")
  gpucor:::.bp_unlink(sh)
  expect_false(file.exists(sh$x$path))
})

test_that("BatchtoolsParam(cluster = \"socket\"): the result of the call without BPPARAM", {
  skip_if_not_installed("BiocParallel")
  skip_if_not_installed("batchtools")
  info <- new_seed()
  x <- bp_input(30, 40, na = 0.03)
  bp <- BiocParallel::BatchtoolsParam(workers = 2, cluster = "socket", progressbar = FALSE)
  expect_true(gpucor:::.bp_local(bp))
  # (each call starts its batchtools workers: one setting, the input
  # through a file)
  old <- options(gpucor.bp_file_bytes = 0)
  on.exit(options(old))
  same_call(function(bp) gpucor::gpu_knn(t(x), 3, method = "spearman", backend = "cpu",
                                         BPPARAM = bp), bp, paste("knn", info))
  same_call(function(bp) gpucor::gpu_cor(x, use = "pairwise.complete.obs", backend = "cpu",
                                         BPPARAM = bp), bp, paste("cor", info))
  expect_identical(list.files(tempdir(), "^gpucor-input-"), character())
})

test_that("gpu_knn's merge: a part held whole is copied, several are merged, a malformed one is an error", {
  set.seed(5)
  x <- matrix(stats::rnorm(60 * 4), 60)
  opts <- function(cols) gpucor:::.engine_opts("cpu", "double", cols = cols)
  knn <- function(parts, cols = NULL) .Call(gpucor:::C_gpucor_knn, x, NULL, "euclidean", 2, 3, FALSE,
                                            opts(cols), parts)
  old <- options(gpucor.cpu_tile = 8L)   # tiles across the shares' borders
  on.exit(options(old))
  whole <- knn(NULL)
  one <- list(knn(NULL, c(0, 60)))                       # every row in one part
  two <- list(knn(NULL, c(0, 20, 40, 60)), knn(NULL, c(20, 40)))
  expect_true(any(duplicated(c(two[[1]][[3]], two[[2]][[3]]))))   # rows in both
  expect_identical(knn(one)[1:2], whole[1:2])
  expect_identical(knn(two)[1:2], whole[1:2])
  bad <- list(one, one, one)
  bad[[1]][[1]][[1]][1] <- 61L                          # a neighbour past n
  bad[[2]][[1]][[3]][1] <- 0L                           # a row before 1
  bad[[3]][[1]][[2]] <- bad[[3]][[1]][[2]][-1]          # a short distance matrix
  for (b in bad) expect_error(knn(b), "a worker's neighbours are malformed")
})
