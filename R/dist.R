# The measures between rows, as src/engine/measure.c's table has them (R
# passes the name; tests/testthat/test-measures.R compares the two): the
# first six are stats::dist()'s, in its order, the others correlation
# distances.
.gpucor_dist_methods <- c("euclidean", "maximum", "manhattan", "canberra",
                          "binary", "minkowski", "correlation",
                          "abscorrelation", "spearman", "kendall", "cosine")
.stats_dist_methods <- .gpucor_dist_methods[1:6]

#' Distance matrices between rows, as stats::dist computes them
#'
#' `gpu_dist()` returns the distances between the rows of `x` as a `"dist"`
#' object with every attribute [stats::dist()] sets, so [stats::hclust()],
#' `as.matrix()`, [stats::cutree()] and `fastcluster::hclust()` accept it.
#'
#' The six metrics of [stats::dist()] give its values (to about 1e-12
#' relative) with its rule for missing values: a coordinate where either row
#' is `NA` (or where the difference is `NaN`, as for `Inf - Inf`) is skipped,
#' the sum over the remaining coordinates is scaled up by
#' `ncol(x) / (coordinates used)`, and the distance is `NA` when none is
#' left.  Canberra drops terms where both values are zero (and rescales) and
#' counts `Inf` against `Inf` of the same sign as 1, as stats does; binary
#' treats non-finite values as `NA` with a warning.  Differences are taken
#' coordinate by coordinate, so near-duplicate rows with large offsets keep
#' every digit.
#'
#' The correlation distances use the rows as variables:
#' \describe{
#'   \item{`correlation`}{\eqn{1 - r}, with \eqn{r} Pearson's correlation of
#'     the two rows;}
#'   \item{`abscorrelation`}{\eqn{1 - |r|};}
#'   \item{`spearman`}{\eqn{1 - \rho}, Spearman's correlation (Pearson's on
#'     mid-ranks of each row);}
#'   \item{`kendall`}{\eqn{1 - \tau_b}, Kendall's tau-b;}
#'   \item{`cosine`}{\eqn{1 - \sum x_k y_k / \sqrt{\sum x_k^2 \sum y_k^2}}
#'     (not centred), that is \eqn{1 - \cos}{1 - cos}, in \[0, 2\].}
#' }
#' **Cosine here and in BiocNeighbors.**  gpucor's `"cosine"` (of
#' `gpu_dist()`, [gpu_knn()], [gpu_range()], [gpu_hclust()]) is
#' \eqn{1 - \cos}{1 - cos}; BiocNeighbors' `"Cosine"` (and [GpucorParam()]'s,
#' which follows it) is the Euclidean distance between the rows scaled to
#' unit length, \eqn{\sqrt{2 (1 - \cos)}}{sqrt(2 (1 - cos))}.  The two give
#' the same neighbours in the same order (one is an increasing function of
#' the other), but not the same distances nor the same range search:
#' BiocNeighbors' threshold `t` is gpucor's `t^2 / 2`, and
#' `sqrt(2 * d)` turns gpucor's distance `d` into BiocNeighbors'.
#' When `x` has missing values each pair uses the columns both rows observe
#' (re-ranked, for Spearman and Kendall), exactly as
#' `1 - gpu_cor(t(x), use = "pairwise.complete.obs")` would.  A pair
#' involving a constant row (zero-norm row, for cosine) is `NA`, with the
#' warning "the standard deviation is zero"; with missing values a row that
#' is constant on its own observed coordinates gives that warning too (as
#' the diagonal of the pairwise correlation matrix does), even where it
#' shares too few coordinates with every other row for a distance.  The
#' cosine distance needs one shared coordinate, the others two.
#'
#' @param x a numeric matrix or data frame (or a vector, taken as one
#'   column); integer and logical values are coerced to double.  A
#'   `SummarizedExperiment` or `ExpressionSet` gives the distances between
#'   its features (rows): `gpu_dist(se)` is `gpu_dist(assay(se))`; a
#'   `SingleCellExperiment` those between its *cells* (columns):
#'   `reducedDim(x, use.dimred)` or `t(assay(x, assay))` (see
#'   "Orientation" in [gpucor] for every container).  A
#'   `Matrix` is read into a dense matrix first (after the memory check).
#'   A `DelayedArray`/`HDF5Array` or `bigmemory::big.matrix` (or such an
#'   assay; `t()` of one for its columns) is read in whole chunks of its
#'   file, each chunk once, into one double matrix when it fits the memory
#'   budget (option `gpucor.block_memory`; see [gpu_cor()]); a larger one is
#'   read in blocks of whole rows of half the budget, and the distances are
#'   made block pair by block pair from the rows of two blocks at a time
#'   (the pairs within the two blocks are computed too, so this costs about
#'   twice the arithmetic; the values are those of the whole input).
#' @param method the distance, one of `"euclidean"` (default), `"maximum"`,
#'   `"manhattan"`, `"canberra"`, `"binary"`, `"minkowski"`,
#'   `"correlation"`, `"abscorrelation"`, `"spearman"`, `"kendall"`,
#'   `"cosine"`; may be abbreviated.
#' @param diag,upper whether `print()` shows the diagonal and upper
#'   triangle; stored as attributes, as in [stats::dist()].
#' @param p the power of the Minkowski distance (a positive number).  The
#'   first five arguments are [stats::dist()]'s, in its order, so positional
#'   calls mean the same.
#' @inheritParams gpu_cor
#' @param output `NULL` (default: a `dist` in memory), or [gpu_hdf5()]: the
#'   full n x n matrix (diagonal 0) is written to an HDF5 file as it is
#'   made, never whole in memory, and returned as an `HDF5Array` with the
#'   row names as dimnames.  The GPU engine makes whole columns for the
#'   file: its Pearson-based correlation distances (`"correlation"`,
#'   `"abscorrelation"`, `"spearman"`, `"cosine"` without `NA`) may then
#'   differ from the `dist` in memory in the last bits (another shape of
#'   product), as they may between GPU and CPU; the matrix is exactly
#'   symmetric.
#' @param BPPARAM `NULL` (default), or a `BiocParallel::BiocParallelParam`
#'   (for several GPUs or machines: on one machine's CPU the call without
#'   it is faster, see [gpucor] "Threads and forks"):
#'   the columns of the `dist` (its lower triangle) are shared among
#'   BiocParallel's workers, as in [gpu_cor_edges()]: each worker (worker
#'   g on the GPU `devices[(g - 1) %% length(devices) + 1]`, `"all"`: every
#'   visible GPU in turn, or the CPU engine with its share of the threads)
#'   makes the tiles or panels that meet its columns and returns those
#'   columns' distances, which are put together here; the values are those
#'   of the call without `BPPARAM`, bit for bit.  The input is sent to
#'   every worker whole (read into memory first, whatever it is; through a
#'   file to workers on this machine, option `gpucor.bp_file_bytes`); the
#'   workers' parts and the result are both in memory for a moment (twice
#'   the result's size).  GPU workers need `SnowParam` (not
#'   `MulticoreParam`).  With `output`, each worker writes its columns to
#'   files of its own, which the dataset reads (see [gpu_hdf5()]).
#' @param use.dimred `NULL` (default), or for a `SingleCellExperiment` `x`
#'   the name or number of one of its `reducedDims()` (cells x dimensions,
#'   such as `"PCA"`): the distances between its rows; an error with any
#'   other `x` or a name not among `reducedDimNames(x)`.
#' @return An object of class `"dist"`: the lower triangle of the distance
#'   matrix by columns, with attributes `Size`, `Labels` (the row names, if
#'   any), `Diag`, `Upper`, `method`, `p` (Minkowski only) and `call`; with
#'   `output`, an `HDF5Array`.
#' @seealso [stats::dist()], [gpu_cor()], [stats::hclust()]
#' @examples
#' x <- matrix(rnorm(100), 10, 10)
#' all.equal(c(gpu_dist(x)), c(dist(x)))
#' hc <- hclust(gpu_dist(x, method = "correlation"), method = "average")
#' cutree(hc, k = 3)
#' @export
gpu_dist <- function(x, method = c("euclidean", "maximum", "manhattan",
                                   "canberra", "binary", "minkowski",
                                   "correlation", "abscorrelation", "spearman",
                                   "kendall", "cosine"),
                     diag = FALSE, upper = FALSE, p = 2,
                     backend = getOption("gpucor.backend", "auto"),
                     precision = c("double", "single"),
                     devices = getOption("gpucor.devices", 0L),
                     verbose = getOption("gpucor.verbose", FALSE), assay = 1L,
                     output = NULL, BPPARAM = NULL, use.dimred = NULL) {
  .check_common()
  m <- .dist_method(method, p)
  # a SingleCellExperiment's cells are the items (a lazy transpose of a
  # DelayedArray assay, which the block reader below still reads in blocks)
  x <- .cells_as_rows(x, "x", assay, use.dimred)
  if (!is.null(output)) {
    x <- .dist_input(x, assay)
    return(.dist_output(x, m, p, backend, precision, devices, verbose, output, BPPARAM))
  }
  # an input larger than a block is read in blocks of rows (R/blocks.R)
  src <- if (isS4(x) && is.null(BPPARAM)) .block_source(x, assay, FALSE)
  d <- if (!is.null(src)) .blocked_dist(src, m, p, backend, precision, devices, verbose)
  if (!is.null(d)) {
    size <- as.integer(nrow(src))
    labels <- rownames(src)
  } else {
    x <- .dist_input(x, assay)
    n <- as.double(nrow(x))
    # the result (with BPPARAM the workers' parts too), and the engine's
    # copy of the input (transposed or padded)
    .memory_guard(8 * ((1 + !is.null(BPPARAM)) * n * (n - 1) / 2 + 2 * n * (ncol(x) + 4)),
                  sprintf("gpu_dist(): the 'dist' of %d rows", nrow(x)),
                  paste("Cluster a subset of the rows, or compute the distances",
                        "between blocks of rows."))
    backend <- .dist_backend(backend, x, m)
    d <- if (!is.null(BPPARAM) && nrow(x) > 1L && ncol(x) > 0L)
      .bp_dist(x, m, p, backend, precision, devices, verbose, BPPARAM)
    else .dist_run(x, m, p, backend, precision, devices, verbose)
    size <- nrow(x)
    labels <- dimnames(x)[[1L]]
  }
  sd0 <- isTRUE(attr(d, "sd0"))
  nonfinite <- isTRUE(attr(d, "nonfinite"))
  timing <- attr(d, "timing")          # these two only with option gpucor.profile
  threads <- attr(d, "threads")
  attributes(d) <- NULL
  attr(d, "Size") <- size
  attr(d, "Labels") <- labels
  attr(d, "Diag") <- diag
  attr(d, "Upper") <- upper
  attr(d, "method") <- m
  if (m == "minkowski") attr(d, "p") <- p
  attr(d, "call") <- match.call()
  class(d) <- "dist"
  if (.opt("gpucor.profile")) {
    if (!is.null(timing)) attr(d, "timing") <- timing
    if (!is.null(threads)) attr(d, "threads") <- threads
  }
  if (nonfinite) warning("treating non-finite values as NA")
  if (sd0) warning("the standard deviation is zero")
  d
}

# The engine's packed distances between the rows of the double matrix x
# (with its attributes "sd0", "nonfinite", and under profiling "timing" and
# "threads"), on the backend chosen; with 'file' (.hdf5_spec()) the full
# matrix goes there instead, and TRUE with those attributes comes back.
.dist_run <- function(x, m, p, backend, precision, devices, verbose, file = NULL) {
  .engine_call(.Call(C_gpucor_dist, x, m, as.double(p),
                     .engine_opts(backend, precision, verbose, devices), file),
               "gpu_dist", backend, precision, devices, verbose)
}

# gpu_dist(BPPARAM =): the 'dist' of x (a double matrix of at least two
# rows and one column) from the workers' shares of its columns (each
# worker's part: one packed vector a range, .bp_shares()' order), with the
# attributes "sd0" and "nonfinite" of any part.
.bp_dist <- function(x, m, p, backend, precision, devices, verbose, BPPARAM) {
  .bp_gpu_check(BPPARAM, backend)
  jobs <- .bp_shares(nrow(x), BPPARAM, devices)
  .engine_call(.bp_share_run(jobs, .bp_dist_part, BPPARAM, x = x, m = m, p = as.double(p),
                             backend = backend, precision = precision,
                             .join = function(parts) .bp_dist_join(parts, jobs, nrow(x))),
               "gpu_dist", backend, verbose = verbose,
               report = function(s, th) .bp_report("gpu_dist", 1L, jobs, backend, BPPARAM, s))
}

# The workers' parts (.bp_dist_part(), for jobs) put together: the packed
# 'dist' of n items, with the attributes "sd0" and "nonfinite" of any part
# (fun: the call that errors name; gpu_knnmi's shares are 'dist's too).
# A part's vectors may still be in files (.bp_apply(.join =)): they are
# read straight into their place (shipfile.c, gpucor_ship_gather).
.bp_dist_join <- function(parts, jobs, n, fun = "gpu_dist") {
  from <- unlist(lapply(jobs, function(j) vapply(j$ranges, `[`, 0, 1L)))
  ok <- length(parts) == length(jobs) && all(vapply(parts, is.list, NA))
  chunks <- if (ok) do.call(c, lapply(unname(parts), unclass))
  stashed <- vapply(chunks, inherits, NA, "gpucor_stashed")
  dbl <- vapply(chunks, is.double, NA)
  dbl[stashed] <- vapply(chunks[stashed], function(r) identical(r$type, "double"), NA)
  len <- as.double(lengths(chunks))
  len[stashed] <- vapply(chunks[stashed], function(r) as.double(r$length), 0)
  n <- as.double(n)
  if (!ok || length(chunks) != length(from) || !all(dbl) || sum(len) != n * (n - 1) / 2)
    stop(fun, ": a BiocParallel worker returned a malformed part", call. = FALSE)
  f <- .engine_flags(parts)
  d <- .Call(C_gpucor_ship_gather, chunks[order(from)], "double", .threads())
  if (f[["sd0"]]) attr(d, "sd0") <- TRUE
  if (f[["nonfinite"]]) attr(d, "nonfinite") <- TRUE
  d
}

# One worker's columns of the 'dist': a packed vector for each of its ranges.
.bp_dist_part <- function(ranges, device, x, m, p, backend, precision)
  .Call(C_gpucor_dist, x, m, p, .engine_opts(backend, precision, FALSE, device, cols = ranges),
        NULL)

# gpu_dist(output =): the full matrix of the distances between the rows of
# the double matrix x, written by the engine (whole columns on the GPU).
.dist_output <- function(x, m, p, backend, precision, devices, verbose, output,
                         BPPARAM = NULL) {
  backend <- .dist_backend(backend, x, m)
  n <- nrow(x)
  if (!is.null(BPPARAM) && n > 0L) {
    # each worker writes its columns to files of its own (R/hdf5.R)
    .bp_gpu_check(BPPARAM, backend)
    jobs <- .bp_shares(n, BPPARAM, devices)
    flags <- .engine_call(
      .bp_hdf5(output, n, n, jobs, BPPARAM, .bp_dist_file_part, x = x, m = m,
               p = as.double(p), backend = backend, precision = precision),
      "gpu_dist", backend, verbose = verbose,
      report = function(s, th) .bp_report("gpu_dist", 1L, jobs, backend, BPPARAM, s))
    parts <- attr(flags, "parts")
  } else {
    d <- .dist_run(x, m, p, backend, precision, devices, verbose,
                   .hdf5_spec(output, n, n))
    flags <- .engine_flags(list(d))
    parts <- NULL
  }
  labels <- rownames(x)
  r <- .hdf5_result(output, if (!is.null(labels)) list(labels, labels), parts)
  if (flags[["nonfinite"]]) warning("treating non-finite values as NA")
  if (flags[["sd0"]]) warning("the standard deviation is zero")
  r
}

# One worker's ranges of gpu_dist(output =, BPPARAM =), each to its part file.
.bp_dist_file_part <- function(ranges, device, specs, x, m, p, backend, precision)
  .bp_file_ranges(ranges, specs, function(spec)
    .Call(C_gpucor_dist, x, m, p, .engine_opts(backend, precision, FALSE, device), spec))

# The full name of a method as gpu_dist() takes it (and a check of
# Minkowski's p).
.dist_method <- function(method, p) {
  if (identical(method, .gpucor_dist_methods)) method <- "euclidean"
  if (!is.character(method) || length(method) != 1L || is.na(method))
    stop("invalid distance method")
  if (!is.na(pmatch(method, "euclidian"))) method <- "euclidean"
  # stats::dist()'s six names are matched first, so its abbreviations keep
  # their meaning ("c" is canberra there, not correlation or cosine)
  m <- pmatch(method, .stats_dist_methods)
  if (is.na(m)) m <- pmatch(method, .gpucor_dist_methods)
  if (is.na(m)) {
    if (sum(startsWith(.gpucor_dist_methods, method)) > 1L)
      stop("ambiguous distance method")
    stop("invalid distance method")
  }
  m <- .gpucor_dist_methods[m]
  if (m == "minkowski" && (!is.numeric(p) || length(p) != 1L || !is.finite(p) || p <= 0))
    stop("distance(): invalid p")
  m
}

# gpu_dist()'s x as the double matrix whose rows are the objects.
.dist_input <- function(x, assay) {
  x <- .as_input(x, "x", assay, FALSE)
  x <- as.matrix(x)   # as stats::dist: a named vector's names become Labels
  if (!(is.numeric(x) || is.logical(x)) || !is.atomic(x))
    stop("'x' must be numeric")
  .as_double_matrix(x)
}

# The backend for the pairs of rows of x under gpu_dist()'s metric m (the
# index into .gpucor_dist_methods): the work is pairs x coordinates, each
# weighted by what the metric costs the CPU engine.  Shared with gpu_knn()
# and the block reader (which gives the sizes, and no NA scan, instead of x).
.dist_backend <- function(backend, x, m, n = nrow(x), k = ncol(x), has_na = anyNA(x)) {
  .resolve_backend(backend, work = as.double(n) * n / 2 * k *
                     .cpu_cost(m, has_na, "rows"))
}
