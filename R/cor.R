# stats' 'use' modes: R passes the name to C (src/engine/measure.c's
# gc_use_names, which tests/testthat/test-measures.R compares).
.gpucor_uses <- c("everything", "all.obs", "complete.obs", "na.or.complete",
                  "pairwise.complete.obs")

# 'use' as stats' cor() and cov() match it (pmatch over their own order):
# the full name, or stats' error.
.stats_use <- function(use) {
  uses <- c("all.obs", "complete.obs", "pairwise.complete.obs", "everything",
            "na.or.complete")
  k <- pmatch(use, uses)
  if (length(k) != 1L || is.na(k)) stop("invalid 'use' argument")
  uses[k]
}

#' Correlation matrices, exactly as stats::cor computes them
#'
#' `gpu_cor()` computes Pearson, Spearman or Kendall (tau-b) correlations
#' between the columns of `x` (and `y`), with the contract of
#' [stats::cor()]: the same values, the same dimnames, the same `NA`/`NaN`
#' results, warnings and errors, for every `use` mode.  In double precision
#' the values agree with stats to about 1e-15 on ordinary data; the tests
#' hold every engine to 1e-10 on adversarial data too (ties, offsets of
#' 1e12, subnormal and huge scales, near-constant columns), where stats'
#' own rounding differs between its code paths.
#'
#' Pearson and Spearman are computed from centred (two-pass) and scaled
#' columns, so large offsets such as `1e8 + x` keep their digits; Spearman
#' ranks each column first, with mid-ranks for ties.  Kendall's tau-b uses
#' Knight's O(n log n) algorithm per pair on the CPU, and on the GPU the sums
#' of sign products over all pairs of rows as an exact int8 matrix product.
#' Under `use = "pairwise.complete.obs"` every pair of columns uses the rows
#' both observe (two-pass, with the pair's own means); for Spearman and
#' Kendall the pair is re-ranked on those rows, as stats does.
#'
#' @section On the CPU:
#' On the 2-core development machine (`bench/incumbents.R`, 2026-11-28,
#' shared, load average about 7) the CPU engine took 0.83 s for Pearson of
#' 500 x 2000 (`stats::cor()` 1.49 s, `WGCNA::cor()` on 2 threads 1.80 s),
#' 0.27 s for Spearman of 500 x 1000 (stats 1.30 s) and 0.06 s for Kendall
#' of 200 x 80 (stats 3.10 s).  The exception is `use =
#' "pairwise.complete.obs"` with missing values in most columns: each such
#' pair is computed as stats computes it (long-double sums over the rows
#' both columns observe), and on 2 cores that is slower than stats: 500 x
#' 1000 with 5% `NA` took 2.93 s, `stats::cor()` 2.35 s and `WGCNA::cor(use
#' = "p", nThreads = 2)` 2.45 s.  Keep `stats::cor()` for such data on a
#' small CPU machine; the gain there is on many cores and on the GPU
#' (`bench/README.md`).
#'
#' @param x a numeric vector, matrix or data frame (integer and logical
#'   values are coerced to double); or a `SummarizedExperiment` or
#'   `ExpressionSet`, whose features (rows) are then the variables:
#'   `gpu_cor(se)` is `gpu_cor(t(assay(se)))`, the correlations between
#'   genes (a `SingleCellExperiment` too: see "Orientation" in [gpucor]).
#'   A sparse `Matrix::dgCMatrix` (or such an assay) is not made
#'   dense for Pearson and Spearman without `y` when it holds no `NA`: the
#'   CPU engine sums each row's products of stored values and centres them
#'   exactly in long double (agreeing with [stats::cor()] on the dense copy to
#'   ~1e-15), ranks keeping the zeros one tie group; with `y`, Kendall, `NA`
#'   values, `backend = "gpu"`, or a column whose mean dwarfs its spread
#'   (more than 10 times the standard deviation, where the sparse formula
#'   would lose digits), its dense copy is used.  A
#'   `DelayedArray`/`HDF5Array` (or such an assay) or
#'   `bigmemory::big.matrix` (as `x` or `y`) is read in whole chunks of its
#'   file (`chunkdim()`), reads of at most DelayedArray's block size
#'   (`DelayedArray::getAutoBlockSize()`), each chunk once, into one double
#'   matrix: the whole input when it fits the memory budget (option
#'   `gpucor.block_memory`, by default a quarter of the memory available, at
#'   most 2 GiB), so the call takes about the time of reading the file once
#'   plus the call in memory; a larger one in blocks of whole columns of
#'   half the budget, the result made block pair by block pair with no more
#'   than two blocks dense at a time (each block is read once per pair it is
#'   in: a file chunked by rows is then decompressed that many times, so
#'   chunk by columns, or raise the budget).  Either way the values are
#'   those of the same matrix in memory, bit for bit on the CPU engine.
#'   Other `Matrix` classes are read into a dense matrix first, after the
#'   memory check.
#' @param y `NULL` (the default) or a vector, matrix or data frame with the
#'   same number of rows as `x` (or an object of the classes `x` takes).
#' @param use how missing values are handled, as in [stats::cor()]:
#'   `"everything"` (default), `"all.obs"`, `"complete.obs"`,
#'   `"na.or.complete"` or `"pairwise.complete.obs"`; may be abbreviated.
#' @param method `"pearson"` (default), `"kendall"` or `"spearman"`; may be
#'   abbreviated.  The first four arguments are [stats::cor()]'s, in its
#'   order, so positional calls mean the same.
#' @param backend `"auto"`, `"cpu"` or `"gpu"`; see [gpucor_options].
#' @param precision `"double"` or `"single"`, for the GPU engine; the CPU
#'   engine always computes in double precision.
#' @param devices which GPUs the GPU engine uses: CUDA ordinals as
#'   `gpu_info()$devices` lists them (from 0), or `"all"` for every visible
#'   GPU.  Default: option `gpucor.devices`, else `0`, the first GPU.  With
#'   several, each GPU makes whole panels of result columns; the values do
#'   not depend on how many GPUs made them (on GPUs of one model).  Dense
#'   results are bound by writing host memory, so more GPUs speed up the
#'   compute-bound methods (Kendall, pairwise complete observations) most.
#' @param assay for a `SummarizedExperiment` (or a `SingleCellExperiment`),
#'   which assay to use: a number or a name (default the first).
#' @param verbose `TRUE` to say, in a message, which engine ran (the GPU
#'   and its precision, or the CPU and its number of threads) and how long
#'   it took.  Default: option `gpucor.verbose`, else `FALSE`.
#' @param BPPARAM `NULL` (default), or a `BiocParallel::BiocParallelParam`
#'   (`SerialParam()`, `MulticoreParam()`, `SnowParam()`,
#'   `BatchtoolsParam()`), for several GPUs or machines (on one machine's
#'   CPU the call without it is faster: [gpucor] "Threads and forks"): the
#'   result is cut into tiles of blocks of
#'   columns (for a symmetric result the tiles of its upper triangle), dealt
#'   round-robin into one group per worker; worker g (from 0) runs the engine on
#'   its tiles with GPU `g mod n` of the `n` in `devices`
#'   (`"all"`: every visible one), or on the CPU with its share of the
#'   threads (`gpucor.threads` divided by the number of workers), and the
#'   main process puts the tiles together.  The backend is chosen once for
#'   the whole result.  Each worker needs `x` (and `y`): an ordinary matrix
#'   is sent to it (to workers on this machine through one file in
#'   [tempdir()]: option `gpucor.bp_file_bytes` in [gpucor_options]); a
#'   `DelayedArray`/`HDF5Array` is read by the worker
#'   itself, so its file must be on a file system every worker sees.  On
#'   the CPU engine the values are those of the call without `BPPARAM`, bit
#'   for bit; on the GPU to rounding (cuBLAS may choose another kernel for
#'   another shape).  A sparse matrix is read in dense blocks then.
#'   Vectors ignore it.  With `output`, the result's columns are shared
#'   instead, as in [gpu_cor_edges()] (each worker runs the tiles or
#'   panels that meet its ranges of columns, on the input read into memory
#'   and sent to it), and the values are those of the call without
#'   `BPPARAM`: bit for bit on the CPU engine, and on the GPU wherever the
#'   device's free memory does not narrow that call's panels (the workers
#'   cut their panels without looking at it).
#' @param output `NULL` (default: the result in memory), or [gpu_hdf5()]:
#'   the matrix is written to an HDF5 file as it is made, never whole in
#'   memory, and returned as an `HDF5Array`.  With `BPPARAM`, each worker
#'   writes its columns to files of its own, which the dataset reads (see
#'   [gpu_hdf5()]).
#' @return As [stats::cor()]: a matrix of correlations, or a single number
#'   when `x` and `y` are both vectors; with `output`, an `HDF5Array`.
#' @seealso [gpu_dist()], [stats::cor()]
#' @examples
#' x <- matrix(rnorm(200), 20, 10)
#' all.equal(gpu_cor(x), cor(x))
#' gpu_cor(x[, 1], x[, 2], method = "kendall")
#' x[3, 2] <- NA
#' gpu_cor(x, method = "spearman", use = "pairwise.complete.obs")[1:3, 1:3]
#' @export
gpu_cor <- function(x, y = NULL, use = "everything",
                    method = c("pearson", "kendall", "spearman"),
                    backend = getOption("gpucor.backend", "auto"),
                    precision = c("double", "single"),
                    devices = getOption("gpucor.devices", 0L),
                    verbose = getOption("gpucor.verbose", FALSE), assay = 1L,
                    BPPARAM = NULL, output = NULL) {
  .check_common()
  .cor_run(x, y, use, match.arg(method), backend, match.arg(precision), devices, verbose,
           assay, BPPARAM, output)
}

# gpu_cor()'s work for any measure between columns of the table
# (src/engine/measure.c) that is a correlation or one with an epilogue
# (gpu_build_mim()'s "mim.*"): the sparse, blocked, BiocParallel and file
# routes, then the engine.  'fun' names the user's function in messages.
.cor_run <- function(x, y, use, method, backend, precision, devices, verbose, assay,
                     BPPARAM, output, fun = "gpu_cor") {
  if (!is.null(BPPARAM) && is.null(output)) {
    r <- .bp_entry(x, y, use, method, backend, precision, devices, verbose,
                   assay, FALSE, BPPARAM)
    if (!is.null(r)) return(r)
  }
  # a sparse matrix stays sparse where it can (R/sparse.R)
  sp <- if (is.null(y) && isS4(x) && is.null(output)) .sparse_of(x, assay, TRUE)
  if (!is.null(sp)) {
    r <- if (method %in% c("pearson", "spearman")) .sparse_cor(sp, use, method, backend, verbose)
    if (!is.null(r)) return(r)
    x <- sp
  }
  # an input on disk is read once when it fits the memory budget, else in
  # blocks of columns (R/blocks.R); the other side, a container not read
  # so, as a matrix
  bx <- if (isS4(x) && is.null(sp) && is.null(output)) .block_source(x, assay)
  by <- if (isS4(y) && is.null(output)) .block_source(y, assay)
  if (!is.null(bx) || !is.null(by)) {
    xs <- if (!is.null(bx)) bx else .as_input(x, "x", assay, TRUE)
    ys <- if (!is.null(by)) by else .as_input(y, "y", assay, TRUE)
    r <- .blocked_cor(xs, ys, use, method, backend, precision, devices, verbose)
    if (!is.null(r)) return(r)
    x <- xs
    y <- ys
  }
  inp <- .cor_input(x, y, use, method, assay)
  x <- inp$x; y <- inp$y; use_name <- inp$use; rows <- inp$rows; nobs <- inp$nobs
  cx <- inp$cx; cy <- inp$cy
  matrix_result <- inp$matrix_result
  q <- if (is.null(y)) ncol(x) else ncol(y)
  if (!is.null(output) && !matrix_result)
    stop("'output' needs a matrix result: a matrix 'x' or 'y'")
  # the result (unless it goes to a file), and the engine's standardized
  # (or ranked) copy of the input
  .memory_guard(8 * (as.double(ncol(x)) * q * is.null(output) +
                     as.double(nobs) * (ncol(x) + (if (is.null(y)) 0 else q))),
                sprintf("%s(): the %d x %d result", fun, ncol(x), q),
                if (is.null(y)) paste(
                  "A 'dist' of the columns (gpu_dist(t(x), \"correlation\")) takes half",
                  "as much; blocks of columns can be computed with 'y =', as in",
                  "gpu_cor(x, x[, 1:1000]).") else
                  "Compute it in blocks of columns of 'y'.")
  pairwise_na <- use_name == "pairwise.complete.obs" && (anyNA(x) || anyNA(y))
  backend <- .cor_backend(backend, ncol(x), if (!is.null(y)) ncol(y), nobs, method,
                          pairwise_na)

  if (!is.null(output) && !is.null(BPPARAM) && q > 0L) {
    # each worker writes its columns to files of its own (R/hdf5.R)
    .bp_gpu_check(BPPARAM, backend)
    jobs <- .bp_shares(q, BPPARAM, devices)
    flags <- .engine_call(
      .bp_hdf5(output, ncol(x), q, jobs, BPPARAM, .bp_cor_file_part, x = x, y = y,
               method = method, use = use_name, rows = rows, backend = backend,
               precision = precision),
      fun, backend, verbose = verbose,
      report = function(s, th) .bp_report(fun, 1L, jobs, backend, BPPARAM, s))
    r <- .hdf5_result(output, if (!is.null(cx) || !is.null(cy)) list(cx, cy),
                      attr(flags, "parts"))
    if (flags[["sd0"]]) warning("the standard deviation is zero")
    return(r)
  }
  r <- .engine_call(
    .Call(C_gpucor_cor, x, y, method, use_name, rows,
          .engine_opts(backend, precision, verbose, devices, mul = .cov_mul$spreads,
                       fun = if (fun != "gpu_cor") fun),
          if (!is.null(output)) .hdf5_spec(output, ncol(x), q)),
    fun, backend, precision, devices, verbose)
  if (verbose && !.opt("gpucor.profile")) attr(r, "threads") <- attr(r, "timing") <- NULL
  sd0 <- isTRUE(attr(r, "sd0"))
  attr(r, "sd0") <- NULL
  if (!is.null(output)) {
    r <- .hdf5_result(output, if (!is.null(cx) || !is.null(cy)) list(cx, cy))
  } else if (matrix_result) {
    if (!is.null(cx) || !is.null(cy)) dimnames(r) <- list(cx, cy)
  } else {
    r <- as.vector(r)
  }
  if (sd0) warning("the standard deviation is zero")
  r
}

# A measure of the "mim.*" rows as the correlation it transforms (stats'
# rules of that correlation apply to it).
.cor_base <- function(method) sub("^mim[.]", "", method)

# gpu_cor()'s input checks and stats' rules before the engine, shared with
# gpu_cor_edges(): x and y as double matrices, 'use' as stats' full name, the rows
# of the complete-case modes (0-based; NULL: all), and the dimnames the
# result keeps.
.cor_input <- function(x, y, use, method, assay) {
  x <- .as_input(x, "x", assay, TRUE)
  y <- .as_input(y, "y", assay, TRUE)
  use_name <- .stats_use(use)
  if (is.data.frame(y)) y <- as.matrix(y)
  if (is.data.frame(x)) x <- as.matrix(x)
  if (!is.matrix(x) && is.null(y))
    stop("supply both 'x' and 'y' or a matrix-like 'x'")
  .check_cor_input(x, "x")
  if (!is.null(y)) .check_cor_input(y, "y")
  x_matrix <- is.matrix(x)
  y_matrix <- is.matrix(y)
  matrix_result <- x_matrix || y_matrix

  x <- .as_double_matrix(x)
  if (!is.null(y)) {
    y <- .as_double_matrix(y)
    if (nrow(y) != nrow(x)) stop("incompatible dimensions")
  }
  rank_method <- .cor_base(method) %in% c("spearman", "kendall")
  .cor_empty_check(x, y, use_name, rank_method)
  # stats ranks a one-row matrix as row(x), all 1s, for Spearman and
  # Kendall, so its NA never reach all.obs' check (the result is NA anyway)
  na_checked <- function(a, was_matrix)
    !is.null(a) && anyNA(a) && !(rank_method && was_matrix && nrow(a) == 1L)
  if (use_name == "all.obs" && (na_checked(x, x_matrix) || na_checked(y, y_matrix)))
    stop("missing observations in cov/cor")
  rows <- NULL
  if (use_name %in% c("complete.obs", "na.or.complete")) {
    ok <- if (is.null(y)) stats::complete.cases(x) else stats::complete.cases(x, y)
    if (!all(ok)) {
      if (use_name == "complete.obs" && !any(ok))
        stop("no complete element pairs")
      rows <- which(ok) - 1L
    }
  }
  nobs <- if (is.null(rows)) nrow(x) else length(rows)
  # ... and that row() has no dimnames: outside pairwise mode a rank
  # method's result loses the names of a side that is a one-row matrix once
  # its rows are chosen (complete cases)
  cx <- colnames(x)
  cy <- if (is.null(y)) cx else colnames(y)
  if (rank_method && use_name != "pairwise.complete.obs" && nobs == 1L) {
    if (x_matrix) { cx <- NULL; if (is.null(y)) cy <- NULL }
    if (y_matrix) cy <- NULL
  }
  list(x = x, y = y, use = use_name, rows = rows, nobs = nobs, cx = cx, cy = cy,
       matrix_result = matrix_result)
}

# stats' errors for empty input, which depend on the route cor() takes for
# each method and 'use' (its C code checks only x, except where its R loop
# for rank methods under pairwise.complete.obs checks both).
.cor_empty_check <- function(x, y, use_name, rank_method) {
  empty_x <- length(x) == 0L
  switch(use_name,
    all.obs = if (empty_x) stop("'x' is empty"),
    complete.obs = if (empty_x) stop("no complete element pairs"),
    pairwise.complete.obs = {
      if (!rank_method) {
        if (empty_x) stop("'x' is empty")
      } else if (is.null(y)) {
        if (ncol(x) == 0L) stop("'x' is empty")
      } else if (empty_x || length(y) == 0L) {
        stop("both 'x' and 'y' must be non-empty")
      }
    })
  invisible()
}

# One worker's ranges of gpu_cor(output =, BPPARAM =), each to its part file.
.bp_cor_file_part <- function(ranges, device, specs, x, y, method, use, rows, backend,
                              precision)
  .bp_file_ranges(ranges, specs, function(spec)
    .Call(C_gpucor_cor, x, y, method, use, rows,
          .engine_opts(backend, precision, FALSE, device), spec))
