#' Mutual information between rows by k nearest neighbours, as parmigene
#'
#' `gpu_knnmi()` estimates the mutual information between every pair of
#' rows of `x` (variables in rows, samples in columns) with Kraskov's second
#' k-nearest-neighbour estimator, as [parmigene::knnmi.all()] computes it,
#' on the CPU engine or the GPU.  With `noise = 0` the values are
#' parmigene's (to about 1e-12: its sum over the samples runs in another
#' order) wherever no two samples tie at a k-th neighbour distance (see
#' below).
#'
#' Each row is normalised as parmigene does it: `(x - mean(x)) / sd(x)`
#' (divisor n - 1), then its minimum subtracted (a constant row is left as
#' it is).  For a pair of rows `(X, Y)` and each sample `i`, the `k`
#' nearest other samples are found in the maximum norm,
#' `max(|x_i - x_j|, |y_i - y_j|)`; `e_x(i)` and `e_y(i)` are the largest
#' `|x_i - x_j|` and `|y_i - y_j|` over those `k`, and `n_x(i)` counts the
#' samples `j != i` with `|x_i - x_j| <= e_x(i)` (`n_y(i)` alike).  The
#' estimate, in nats (it can be negative), is
#' `psi(k) + psi(n) - 1/k - mean(psi(n_x) + psi(n_y))` with `n` samples
#' and `psi` the digamma function (parmigene's table: `psi(1)` is minus
#' Euler's constant, `psi(j + 1) = psi(j) + 1/j`).  The result is exactly
#' symmetric with a zero diagonal.
#'
#' **Ties.** Where several samples are at the k-th smallest distance from a
#' sample, the neighbours are those of smaller sample index (column of
#' `x`).  parmigene's choice there follows its search grid instead, so on
#' data with ties (integer data, repeated values) the two may differ; where
#' the tied samples have the same `|x_i - x_j|` and `|y_i - y_j|`
#' (duplicated samples) the choice does not matter.  The counts `n_x`,
#' `n_y` include every sample at exactly `e_x`, `e_y`, as parmigene's do.
#'
#' **Differences from parmigene.** `noise` adds uniform jitter on
#' `[0, noise)` to each normalised value, where parmigene adds its
#' own, but drawn from R's generator ([stats::runif()], one draw per entry
#' of `x` in column-major order), so `set.seed()` makes it reproducible;
#' parmigene's jitter comes from a generator seeded by the data and shared
#' between its threads, which differs from call to call.  The default is
#' `noise = 0` (parmigene's is `1e-12`).  Missing and non-finite values are
#' an error (parmigene cannot handle them), and so is a `k` that is not a
#' whole number; a row whose mean or standard deviation overflows gives
#' `NaN` against every other, as in parmigene.  A matrix of fewer than two
#' rows gives its zero diagonal (parmigene stops).
#'
#' **Between `x` and `y`.** With `y`, the result is the `nrow(x)` x `nrow(y)`
#' matrix of the estimates between each row of `x` and each row of `y`: the
#' block `gpu_knnmi(rbind(x, y))[1:nx, nx + 1:ny]` (with `nx <- nrow(x)`,
#' `ny <- nrow(y)`), bit for bit with `noise = 0` (each row is normalised on
#' its own, and each pair is computed as in `rbind(x, y)`), without the
#' pairs within `x` or within `y`.  Only the symmetric result has a zero
#' diagonal: a row of `y` equal to a row of `x` gets its estimate.  With
#' `noise > 0` the jitter of `x` is drawn first, then that of `y` (one
#' [stats::runif()] draw per entry of each, in column-major order).
#'
#' **Output and workers.** With `output = gpu_hdf5()` the matrix is written
#' to an HDF5 file as [gpu_cor()] writes its result (symmetric with its zero
#' diagonal without `y`), and never held whole in memory.  With `BPPARAM`
#' the pairs are shared by BiocParallel's workers, with the values of the
#' call without it, bit for bit: without `y` each worker makes the pairs
#' of its ranges of columns (as [gpu_dist()] does), with `y` each makes the
#' result's columns of its ranges of `y`'s rows; with `output` as well, each
#' worker writes its columns to part files (see [gpu_hdf5()]).
#'
#' @param x a numeric matrix or data frame, variables in rows and samples in
#'   columns (as [parmigene::knnmi.all()]); integer and logical values are
#'   coerced to double.
#' @param k the number of neighbours: a whole number, at least 2 and less
#'   than the number of samples (columns).
#' @param noise the width of uniform jitter added to each normalised value
#'   (0, the default: none); see Details.
#' @param backend `"auto"` (default: the GPU for large inputs when one is
#'   usable), `"cpu"` or `"gpu"`; as in [gpu_cor()].
#' @param devices,verbose as in [gpu_cor()]; the computation is in double
#'   precision on both engines.
#' @param y `NULL` (default), or a numeric matrix or data frame of variables
#'   in rows with the same samples (columns) as `x`: then the mutual
#'   informations between the rows of `x` and those of `y` (see Details).
#' @param output `NULL` (default), or [gpu_hdf5()]: the matrix is written
#'   to that HDF5 dataset, and an `HDF5Array` of it is returned.
#' @param BPPARAM `NULL` (default), or a `BiocParallel::BiocParallelParam`:
#'   the pairs are computed by its workers (with the GPU engine,
#'   `SnowParam()` workers, one GPU of `devices` each in turn).
#' @return The `nrow(x)` x `nrow(x)` matrix of mutual informations, with
#'   `rownames(x)` as both dimnames; with `y` the `nrow(x)` x `nrow(y)`
#'   matrix, dimnames `rownames(x)` and `rownames(y)`; with `output` the
#'   `HDF5Array` of that matrix.
#' @seealso [parmigene::knnmi.all()], [gpu_dist()], [gpu_hdf5()]
#' @references Kraskov, A., Stoegbauer, H. and Grassberger, P. (2004)
#'   Estimating mutual information.  *Physical Review E* 69, 066138.
#' @examples
#' x <- matrix(rnorm(5 * 100), 5, 100)
#' mi <- gpu_knnmi(x, k = 3)
#' if (requireNamespace("parmigene", quietly = TRUE))
#'   all.equal(mi, parmigene::knnmi.all(x, k = 3, noise = 0))
#' # two rows of x against three others
#' y <- matrix(rnorm(3 * 100), 3, 100)
#' identical(gpu_knnmi(x[1:2, ], y = y), gpu_knnmi(rbind(x[1:2, ], y))[1:2, 3:5])
#' @export
gpu_knnmi <- function(x, k = 3, noise = 0,
                      backend = getOption("gpucor.backend", "auto"),
                      devices = getOption("gpucor.devices", 0L),
                      verbose = getOption("gpucor.verbose", FALSE),
                      y = NULL, output = NULL, BPPARAM = NULL) {
  .check_common()
  x <- .knnmi_input(x, "x")
  if (!is.null(y)) {
    y <- .knnmi_input(y, "y")
    if (ncol(y) != ncol(x))
      stop("'x' and 'y' must have the same number of columns (samples)")
  }
  .knnmi_args(x, k, noise)
  output <- .check_output(output)
  if (!is.null(BPPARAM)) .bp_check(BPPARAM)
  n <- nrow(x)
  sym <- is.null(y)
  q <- if (sym) n else nrow(y)
  # x's jitter, then y's
  jitter <- if (noise > 0) noise * array(stats::runif(length(x)), dim(x))
  jitter_y <- if (noise > 0 && !sym) noise * array(stats::runif(length(y)), dim(y))
  pairs <- as.double(n) * (if (sym) n / 2 else q)
  backend <- .resolve_backend(backend, work = pairs * ncol(x) *
                                .cpu_cost("knnmi", FALSE, "rows"))
  # the result in memory, half a matrix more where the GPU's pairs land in
  # a 'dist' first (src/knnmi.c) or BiocParallel's workers' parts are put
  # together, and the prepared variables
  bp <- !is.null(BPPARAM)
  extra <- if (!is.null(output)) 0 else if (sym) 0.5 * (backend == "gpu" || bp) + 0.5 * bp
           else bp
  .memory_guard(8 * (as.double(n) * q * (is.null(output) + extra) +
                       5 * (as.double(n) + if (sym) 0 else q) * ncol(x)),
                sprintf("gpu_knnmi(): the mutual information of %d x %d rows", n, q),
                paste0("Compute it between blocks of rows (with 'y')",
                       if (is.null(output)) ", or write it to a file (output = gpu_hdf5())."
                       else "."))
  if (bp) .bp_gpu_check(BPPARAM, backend)
  # the dimnames: x's row names, and y's (NULL: none on either side)
  dn <- list(rownames(x), if (sym) rownames(x) else rownames(y))
  if (all(vapply(dn, is.null, NA))) dn <- NULL
  report <- function(jobs)
    function(s, th) .bp_report("gpu_knnmi", 1L, jobs, backend, BPPARAM, s)
  if (!is.null(output)) {
    parts <- NULL
    if (bp && n > 0L && q > 0L) {
      # each worker writes its columns to files of its own (R/hdf5.R)
      jobs <- .bp_shares(q, BPPARAM, devices)
      flags <- .engine_call(
        .bp_hdf5(output, n, q, jobs, BPPARAM, .bp_knnmi_file_part, x = x, y = y,
                 k = as.integer(k), jitter = jitter, jitter_y = jitter_y, backend = backend),
        "gpu_knnmi", backend, verbose = verbose, report = report(jobs))
      parts <- attr(flags, "parts")
    } else {
      .engine_call(.Call(C_gpucor_knnmi, x, y, "knnmi", as.integer(k), jitter, jitter_y,
                         .engine_opts(backend, "double", verbose, devices),
                         .hdf5_spec(output, n, q)),
                   "gpu_knnmi", backend, "double", devices, verbose)
    }
    return(.hdf5_result(output, dn, parts))
  }
  if (bp && (if (sym) n >= 2L else n > 0L && q > 0L)) {
    r <- if (sym) .bp_knnmi(x, k, jitter, backend, devices, verbose, BPPARAM, report)
         else .bp_knnmi_y(x, y, k, jitter, jitter_y, backend, devices, verbose, BPPARAM,
                          report)
    if (!is.null(dn)) dimnames(r) <- dn
    return(r)
  }
  r <- .engine_call(.Call(C_gpucor_knnmi, x, y, "knnmi", as.integer(k), jitter, jitter_y,
                          .engine_opts(backend, "double", verbose, devices), NULL),
                    "gpu_knnmi", backend, "double", devices, verbose)
  timing <- attr(r, "timing")          # these two only with option gpucor.profile
  threads <- attr(r, "threads")
  attributes(r) <- list(dim = c(n, q))
  if (!is.null(dn)) dimnames(r) <- dn
  if (.opt("gpucor.profile")) {
    if (!is.null(timing)) attr(r, "timing") <- timing
    if (!is.null(threads)) attr(r, "threads") <- threads
  }
  r
}

# gpu_knnmi(BPPARAM =) without y: the workers' shares of the columns of
# the 'dist' of x's rows (packed, as gpu_dist's: .bp_dist_part()), put
# together and spread over the symmetric matrix.  Each pair is computed
# as without BPPARAM (the larger index as X), whichever tile or panel
# makes it, so the values are the same bit for bit.
.bp_knnmi <- function(x, k, jitter, backend, devices, verbose, BPPARAM, report) {
  n <- nrow(x)
  jobs <- .bp_shares(n, BPPARAM, devices)
  d <- .engine_call(.bp_share_run(jobs, .bp_knnmi_part, BPPARAM, x = x, k = as.integer(k),
                                  jitter = jitter, backend = backend,
                                  .join = function(parts)
                                    .bp_dist_join(parts, jobs, n, "gpu_knnmi")),
                    "gpu_knnmi", backend, verbose = verbose, report = report(jobs))
  .Call(C_gpucor_knnmi_full, d, n, .threads())
}

# One worker's columns of the 'dist' of x's rows: a packed vector a range.
.bp_knnmi_part <- function(ranges, device, x, k, jitter, backend)
  .Call(C_gpucor_knnmi, x, NULL, "knnmi", k, jitter, NULL,
        .engine_opts(backend, "double", FALSE, device, cols = ranges), NULL)

# gpu_knnmi(y =, BPPARAM =): each worker the result's columns of its ranges
# of y's rows, x against those rows (each variable is normalised on its
# own, and a pair of x and y has y's variable as X whatever its index
# among y's rows: the values of the whole call, bit for bit), bound by
# columns in order.
.bp_knnmi_y <- function(x, y, k, jitter, jitter_y, backend, devices, verbose, BPPARAM,
                        report) {
  jobs <- .bp_shares(nrow(y), BPPARAM, devices)
  parts <- .engine_call(.bp_share_run(jobs, .bp_knnmi_y_part, BPPARAM, x = x, y = y,
                                      k = as.integer(k), jitter = jitter,
                                      jitter_y = jitter_y, backend = backend),
                        "gpu_knnmi", backend, verbose = verbose, report = report(jobs))
  from <- unlist(lapply(jobs, function(j) vapply(j$ranges, `[`, 0, 1L)))
  blocks <- do.call(c, lapply(unname(parts), unclass))
  if (length(parts) != length(jobs) || length(blocks) != length(from) ||
      !all(vapply(blocks, is.matrix, NA)) || sum(vapply(blocks, ncol, 0L)) != nrow(y))
    stop("gpu_knnmi: a BiocParallel worker returned a malformed part", call. = FALSE)
  r <- do.call(cbind, blocks[order(from)])
  attributes(r) <- list(dim = c(nrow(x), nrow(y)))
  r
}

# One worker's blocks of columns: x against each of its ranges of y's rows.
.bp_knnmi_y_part <- function(ranges, device, x, y, k, jitter, jitter_y, backend) {
  opts <- .engine_opts(backend, "double", FALSE, device)
  lapply(seq(1L, length(ranges), by = 2L), function(a) {
    rows <- seq.int(ranges[a] + 1, ranges[a + 1L])
    r <- .Call(C_gpucor_knnmi, x, y[rows, , drop = FALSE], "knnmi", k, jitter,
               if (!is.null(jitter_y)) jitter_y[rows, , drop = FALSE], opts, NULL)
    attributes(r) <- list(dim = dim(r))
    r
  })
}

# One worker's ranges of gpu_knnmi(output =, BPPARAM =), each to its part file.
.bp_knnmi_file_part <- function(ranges, device, specs, x, y, k, jitter, jitter_y, backend)
  .bp_file_ranges(ranges, specs, function(spec)
    .Call(C_gpucor_knnmi, x, y, "knnmi", k, jitter, jitter_y,
          .engine_opts(backend, "double", FALSE, device), spec))

# gpu_knnmi()'s x (or y: 'what') as a double matrix without missing or
# non-finite values, variables in rows.
.knnmi_input <- function(x, what = "x") {
  if (is.data.frame(x)) {
    if (!all(vapply(x, function(v) is.numeric(v) || is.logical(v), NA)))
      stop(sprintf("'%s' must be numeric", what))
    rn <- rownames(x)   # as parmigene: automatic row names too
    x <- as.matrix(x)
    rownames(x) <- rn
  }
  if (!is.matrix(x) || !(is.numeric(x) || is.logical(x)))
    stop(sprintf("'%s' must be a numeric matrix or data frame", what))
  x <- .as_double_matrix(x)
  if (anyNA(x)) stop(sprintf("missing values in '%s': gpu_knnmi() cannot handle NA", what))
  if (any(is.infinite(x))) stop(sprintf("non-finite values in '%s'", what))
  x
}

# gpu_knnmi()'s k and noise for x (variables in rows), checked: also for
# the pruning functions' x = (R/prune.R).
.knnmi_args <- function(x, k, noise) {
  if (!is.numeric(k) || length(k) != 1L || !is.finite(k) || k != floor(k))
    stop("'k' must be a whole number", call. = FALSE)
  if (k < 2) stop("'k' must be at least 2", call. = FALSE)
  if (k >= ncol(x))
    stop(sprintf("'x' has too few columns (samples) for k = %d: it needs more than k", k),
         call. = FALSE)
  if (!is.numeric(noise) || length(noise) != 1L || !is.finite(noise) || noise < 0)
    stop("'noise' must be a non-negative number", call. = FALSE)
  invisible()
}
