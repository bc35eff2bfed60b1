#' Correlation networks without the n x n matrix: edges, top-k partners, FDR
#'
#' `gpu_cor_edges()` computes the correlations between the columns of `x`
#' (and `y`) exactly as [gpu_cor()] does, every `use` mode included, but
#' keeps only the pairs a criterion selects: the correlation matrix is
#' never stored, neither in host memory nor whole on the GPU.  The engine
#' makes the result panel by panel and a selecting stage keeps what is
#' asked for; criteria that depend on all pairs (a density, an FDR) take a
#' histogram pass first, then a collecting pass, then an exact decision on
#' the collected pairs.
#'
#' Criteria (at least one; they combine):
#' * `threshold = t`: pairs with \eqn{|r| \ge t} (\eqn{r \ge t} when
#'   `absolute = FALSE`).
#' * `fdr = q`: pairs whose Benjamini-Hochberg adjusted p-value is at most
#'   `q`, the adjustment over all tests exactly as
#'   `p.adjust(p_all, "BH")` makes it (`p_all` the p-values of every pair,
#'   `NA` ones left out as `p.adjust` leaves them out).  Not approximated:
#'   a histogram pass over all pairs bounds where the step-up cut can lie,
#'   the pairs beyond that bound are collected and their exact p-values
#'   decide.
#' * `density = d`: the `round(d * M)` strongest pairs, `M` the number of
#'   pairs (`ncol(x) * (ncol(x) - 1) / 2`, or `ncol(x) * ncol(y)`); ties
#'   broken by position (smaller `row`, then smaller `col`).
#' * `top_k = k`: each variable's `k` strongest partners (ties: the
#'   smaller index).  A pair is kept when it is among the top `k` of either
#'   of its two variables (so a variable may have more than `k` edges: the
#'   union, as a kNN graph that is not mutual); with `y`, the variables of
#'   `x` and of `y` each choose their `k` partners on the other side.
#'
#' `threshold` and `fdr` decide first; `density` and `top_k` then rank the
#' pairs that passed them (so `fdr = 0.05, top_k = 10` keeps each
#' variable's 10 strongest significant partners).  Strength is `|r|`, or
#' `r` when `absolute = FALSE`; the p-values are two-sided whatever
#' `absolute` says.  `NA` correlations (a constant column, `NA` under
#' `use = "everything"`) are never kept, and their pairs are no tests for
#' the FDR.
#'
#' p-values equal `cor.test(x[, i], y[, j], method = method, exact = FALSE)$p.value`
#' on the pair's complete observations (in pairwise mode, each pair's own
#' number `n`): Pearson's t test, Spearman's t approximation, Kendall's
#' normal approximation with the tie-corrected variance.  Where
#' `cor.test()` stops for too few observations (Pearson below 3, the others
#' below 2) the p-value is `NA` and the pair is no test.
#'
#' @param x a numeric matrix or data frame (or what [gpu_cor()] takes:
#'   a `SummarizedExperiment`'s features are the variables; see
#'   "Orientation" in [gpucor]).  An on-disk `DelayedMatrix`/`HDF5Matrix`
#'   or `big.matrix` is read once, in whole chunks of its file, into one
#'   double matrix (after the memory check), whatever its size.
#' @param y `NULL` or a matrix with the rows of `x`: pairs (column of `x`,
#'   column of `y`).
#' @param method `"pearson"`, `"spearman"`, `"kendall"` or `"bicor"` (WGCNA's
#'   biweight midcorrelation with its defaults, as [gpu_bicor()]; data
#'   without `NA`; p-values from Student's t as for Pearson, as
#'   `WGCNA::corPvalueStudent()` gives them), or corpcor's shrinkage
#'   estimates with their estimated lambda: `"cor.shrink"` (as
#'   [gpu_cor_shrink()]) and `"pcor.shrink"` (partial correlations, as
#'   [gpu_pcor_shrink()]; no p x p matrix is made); these two take
#'   complete data (with `y`, the pairs across of the estimate for
#'   `cbind(x, y)`) and have no p-values (no `fdr`); the result carries
#'   the `lambda` used; or `"knnmi"`, Kraskov's k-nearest-neighbour mutual
#'   information between the columns, as [gpu_knnmi()] computes it between
#'   rows (`k` neighbours; complete data; no p-values; an MI estimate
#'   can be negative, so `absolute = FALSE` ranks by the value itself);
#'   or `"mim.pearson"`, `"mim.spearman"`, `"mim.kendall"`, minet's
#'   Gaussian mutual information of that correlation, as
#'   [gpu_build_mim()] computes it (under `use`; no p-values).
#' @param use as in [stats::cor()] (the third argument, as in [gpu_cor()]).
#' @param threshold a number in \[0, 1\] (in \[-1, 1\] when
#'   `absolute = FALSE`); for the mutual informations, any number from 0
#'   (-1).
#' @param k `method = "knnmi"`'s number of neighbours (2 up to the number
#'   of rows less one).
#' @param top_k a whole number of partners, from 1 (more than there are
#'   partners keeps them all).
#' @param density a fraction in (0, 1\] of all pairs.
#' @param fdr a false discovery rate in (0, 1\].
#' @param absolute rank and threshold by `|r|` (default) or by `r`.
#' @param p_value add the pairs' p-values (always with `fdr`).
#' @param format `"data.frame"` or `"sparse"`.
#' @param backend,precision,devices,verbose as for [gpu_cor()].
#' @param assay for a `SummarizedExperiment`, which assay.
#' @param BPPARAM `NULL` (default), or a `BiocParallel::BiocParallelParam`
#'   (for several GPUs or machines: on one machine's CPU the call without
#'   it is faster, see [gpucor] "Threads and forks"):
#'   the result's columns are shared among its workers (2 ranges each, so
#'   that a triangle's long and short columns balance); each worker runs
#'   the engine on the tiles or panels whose first column is in its ranges,
#'   with the GPU `devices[(i - 1) %% length(devices) + 1]` (`devices = "all"`:
#'   every visible one in turn) or its share of the CPU threads.  Each pass
#'   of the selection (the FDR's and the density's histograms, the
#'   collecting pass, the heaps of `top_k`) is made by the workers and
#'   added up in the main process, which takes every decision as without
#'   `BPPARAM`: the same edges, p-values and adjusted p-values.  The input is
#'   sent to the workers once per pass (workers on this machine read it
#'   from one file written once: option `gpucor.bp_file_bytes` in
#'   [gpucor_options]).
#' @return With `format = "data.frame"`: one row per kept pair, sorted by
#'   `row` then `col`, with columns `from`, `to` (the names of the two
#'   columns, of `x` and of `y`, or their indices where the columns have no
#'   names: the two ends first, so that
#'   `igraph::graph_from_data_frame(e, directed = FALSE)` names the
#'   vertices by them and takes the other columns as edge attributes),
#'   `row`, `col` (column indices of `x` and of `y`, or of `x` with
#'   `row < col`), `cor`, then `n` (the pair's observations, under
#'   `use = "pairwise.complete.obs"`), `p.value` (with `p_value` or
#'   `fdr`) and `fdr` (the BH-adjusted p-value, with `fdr`).  (Earlier
#'   versions put the names last, as `row_name` and `col_name`.)  With
#'   `format = "sparse"`: a `Matrix` sparse matrix of the kept
#'   correlations (a symmetric `dsCMatrix` without `y`, else a
#'   `dgCMatrix`), dimnames kept.
#' @seealso [gpu_knn()], [gpu_cor()], [stats::cor.test()], [stats::p.adjust()]
#' @examples
#' x <- matrix(rnorm(50 * 40), 50, 40)
#' x[, 2] <- x[, 1] + rnorm(50, sd = 0.3)
#' gpu_cor_edges(x, threshold = 0.5)
#' gpu_cor_edges(x, fdr = 0.05)
#' head(gpu_cor_edges(x, top_k = 2, p_value = TRUE))
#' @export
gpu_cor_edges <- function(x, y = NULL, use = "everything",
                          method = c("pearson", "spearman", "kendall", "bicor",
                                     "cor.shrink", "pcor.shrink", "knnmi", "mim.pearson",
                                     "mim.spearman", "mim.kendall"),
                          threshold = NULL, top_k = NULL,
                          density = NULL, fdr = NULL, absolute = TRUE,
                          p_value = FALSE, format = c("data.frame", "sparse"),
                          backend = getOption("gpucor.backend", "auto"),
                          precision = c("double", "single"),
                          devices = getOption("gpucor.devices", 0L),
                          verbose = getOption("gpucor.verbose", FALSE), assay = 1L,
                          BPPARAM = NULL, k = 3L) {
  .check_common()
  method <- match.arg(method)
  format <- match.arg(format)
  if (!is.logical(absolute) || length(absolute) != 1L || is.na(absolute))
    stop("'absolute' must be TRUE or FALSE")
  if (!is.logical(p_value) || length(p_value) != 1L || is.na(p_value))
    stop("'p_value' must be TRUE or FALSE")
  # mutual information is not bounded by 1
  mi <- method == "knnmi" || startsWith(method, "mim.")
  crit <- .edge_criteria(threshold, top_k, density, fdr, absolute, if (mi) Inf else 1)
  if (isS4(x) && is.null(y)) {
    sp <- .sparse_of(x, assay, TRUE)
    if (!is.null(sp)) x <- sp
  }
  bicor <- method == "bicor"
  shrink <- method %in% c("cor.shrink", "pcor.shrink")
  knnmi <- method == "knnmi"
  inp <- .cor_input(x, y, use, if (bicor || shrink || knnmi) "pearson" else method, assay)
  x <- inp$x; y <- inp$y
  if ((shrink || mi) && (p_value || !is.null(fdr)))
    stop(sprintf("method = \"%s\" has no p-values: use 'threshold', 'top_k' or 'density'",
                 method), call. = FALSE)
  if (knnmi) {
    # Kraskov's MI between the columns, as gpu_knnmi() between rows
    if (anyNA(x) || any(is.infinite(x)) || anyNA(y) || any(is.infinite(y)))
      stop("method = \"knnmi\" takes data without NA or Inf", call. = FALSE)
    if (!is.numeric(k) || length(k) != 1L || is.na(k) || k != round(k) || k < 2 ||
        k >= nrow(x))
      stop("'k' must be a whole number, at least 2 and less than the number of rows (samples)",
           call. = FALSE)
    crit$k <- as.integer(k)
    inp$use <- "everything"
    inp$rows <- NULL
  }
  if (shrink) {
    # corpcor's estimate with its estimated lambda: the columns whose
    # products it is (R/shrink.R); the identity (lambda 1) has no edges
    # (with y, the estimate of cbind(x, y): its pairs across, as
    # gpu_pcor_shrink(x, y = y))
    px <- ncol(x)
    prep <- .shrink_prepare(.shrink_input(if (is.null(y)) x else cbind(x, y)), NULL, NULL,
                            FALSE, method == "pcor.shrink")
    if (!is.null(prep$dense))
      stop("the estimated lambda is 0: the pseudoinverse's partial correlations come from gpu_pcor_shrink(x)",
           call. = FALSE)
    v <- if (is.null(prep$v)) matrix(0, 1L, px + NCOL(y)) else prep$v
    if (!is.null(y)) y <- v[, px + seq_len(ncol(y)), drop = FALSE]
    x <- v[, seq_len(px), drop = FALSE]
    inp$use <- "everything"
    inp$rows <- NULL
    inp$nobs <- nrow(x)
  }
  if (bicor) {
    # WGCNA's bicor: the prepared columns' products; its pairwise NA rule
    # recomputes pairs one by one, which gpu_bicor() does
    if (anyNA(x) || anyNA(y))
      stop("method = \"bicor\" takes data without NA here: gpu_bicor(x, use = \"pairwise.complete.obs\") computes WGCNA's pairwise bicor",
           call. = FALSE)
    o1 <- .engine_opts("cpu", precision)
    bp <- .bicor_params(.bicor_opts(1, 0, "individual"), FALSE)   # WGCNA's defaults
    x <- .Call(C_gpucor_bicor_prep, x, bp, o1)[[1L]]
    if (!is.null(y)) y <- .Call(C_gpucor_bicor_prep, y, bp, o1)[[1L]]
    inp$use <- "everything"
    inp$rows <- NULL
  }
  if (!inp$matrix_result) stop("'x' (or 'y') must be a matrix: edges are between columns")
  q <- if (is.null(y)) ncol(x) else ncol(y)
  .memory_guard(8 * as.double(inp$nobs) * (ncol(x) + (if (is.null(y)) 0 else q)) * 2,
                "gpu_cor_edges(): the engine's copy of the input", "")
  pairwise_na <- inp$use == "pairwise.complete.obs" && (anyNA(x) || anyNA(y))
  backend <- .resolve_backend(
    backend, work = as.double(ncol(x)) * (if (is.null(y)) ncol(x) / 2 else q) *
      inp$nobs * .cpu_cost(method, pairwise_na))
  crit$p_value <- p_value
  opts <- .engine_opts(backend, precision, verbose, devices)
  npass <- 0L
  r <- .engine_call(if (is.null(BPPARAM)) {
    .Call(C_gpucor_edges, x, y, method, inp$use, inp$rows, opts, crit)
  } else {
    # each of the driver's passes is made by the workers, each over its
    # share of the columns (network.c)
    .bp_gpu_check(BPPARAM, backend)
    jobs <- .bp_shares(q, BPPARAM, devices)
    # the input's file (workers on this machine) once for every pass
    sent <- .bp_ship(list(x = x, y = y), BPPARAM)
    on.exit(.bp_unlink(sent), add = TRUE)
    .edges_steps(x, y, method, inp$use, inp$rows, opts, crit, function(spec) {
      npass <<- npass + 1L
      .bp_share_run(jobs, .bp_edges_part, BPPARAM, x = sent$x, y = sent$y, method = method,
                    use = inp$use, rows = inp$rows, backend = backend,
                    precision = precision, crit = crit, spec = spec)
    })
  }, "gpu_cor_edges", backend, precision, devices, verbose,
  report = if (!is.null(BPPARAM))
    function(s, th) .bp_report("gpu_cor_edges", npass, jobs, backend, BPPARAM, s))
  if (isTRUE(attr(r, "sd0"))) warning("the standard deviation is zero")
  out <- .edges_result(r, inp$cx, inp$cy, is.null(y), ncol(x), q, format)
  if (shrink) attr(out, "lambda") <- prep$lambda
  if (.opt("gpucor.profile")) {
    attr(out, "timing") <- attr(r, "timing")
    attr(out, "stages") <- stats::setNames(
      attr(r, "stages"), c("cut", "collect", "gather", "p.value", "decide", "result",
                           "hist_passes", "candidates"))
  }
  out
}

# The edges driver's steps (network.c), each pass made by run_pass(spec),
# which returns the parts of the workers that made it.
.edges_steps <- function(x, y, method, use, rows, opts, crit, run_pass) {
  st <- .Call(C_gpucor_edges_begin, x, y, method, use, rows, opts, crit)
  on.exit(.Call(C_gpucor_edges_end, st))
  while (!is.null(spec <- .Call(C_gpucor_edges_next, st)))
    .Call(C_gpucor_edges_absorb, st, run_pass(spec))
  .Call(C_gpucor_edges_finish, st)
}

# One pass (spec: gpucor_edges_next's list) over a worker's ranges of columns.
.bp_edges_part <- function(ranges, device, x, y, method, use, rows, backend, precision,
                           crit, spec)
  .Call(C_gpucor_edges_pass, x, y, method, use, rows,
        .engine_opts(backend, precision, FALSE, device, cols = ranges), crit, spec)

# The criteria as c(threshold, top_k, density, fdr), NA where absent, after
# the range checks.
.edge_criteria <- function(threshold, top_k, density, fdr, absolute, hi = 1) {
  one <- function(v, name) {
    if (is.null(v)) return(NA_real_)
    if (!is.numeric(v) || length(v) != 1L || is.na(v))
      stop(sprintf("'%s' must be a single number", name))
    as.double(v)
  }
  thr <- one(threshold, "threshold"); k <- one(top_k, "top_k")
  d <- one(density, "density"); f <- one(fdr, "fdr")
  if (all(is.na(c(thr, k, d, f))))
    stop("give at least one of 'threshold', 'top_k', 'density' and 'fdr'")
  lo <- if (absolute) 0 else -1
  if (!is.na(thr) && (thr < lo || thr > hi))
    stop(if (is.finite(hi)) sprintf("'threshold' must be in [%d, %g]", lo, hi)
         else sprintf("'threshold' must be at least %d", lo))
  if (!is.na(k) && (k < 1 || k != floor(k) || k > .Machine$integer.max))
    stop("'top_k' must be a whole number >= 1")
  if (!is.na(d) && (d <= 0 || d > 1)) stop("'density' must be in (0, 1]")
  if (!is.na(f) && (f <= 0 || f > 1)) stop("'fdr' must be in (0, 1]")
  list(threshold = thr, top_k = k, density = d, fdr = f, absolute = absolute)
}

.edges_result <- function(r, cx, cy, symmetric, p, q, format) {
  row <- r[[1L]]; col <- r[[2L]]; val <- r[[3L]]
  if (format == "sparse") {
    if (!requireNamespace("Matrix", quietly = TRUE))
      stop("format = \"sparse\" needs the Matrix package")
    dn <- if (!is.null(cx) || !is.null(cy)) list(cx, cy)
    if (symmetric)
      return(Matrix::sparseMatrix(i = row, j = col, x = val, dims = c(p, p),
                                  dimnames = dn, symmetric = TRUE))
    return(Matrix::sparseMatrix(i = row, j = col, x = val, dims = c(p, q),
                                dimnames = dn))
  }
  # the two ends first, by name where the columns have names (else their
  # numbers), so that igraph::graph_from_data_frame() names the vertices
  out <- data.frame(from = if (is.null(cx)) row else cx[row],
                    to = if (is.null(cy)) col else cy[col], row = row, col = col, cor = val)
  if (!is.null(r[[4L]])) out$n <- r[[4L]]
  if (!is.null(r[[5L]])) out$p.value <- r[[5L]]
  if (!is.null(r[[6L]])) out$fdr <- r[[6L]]
  out
}

#' Exact k nearest neighbours, as gpu_dist() measures them
#'
#' `gpu_knn()` finds the `k` nearest rows of each row of `x` by any
#' [gpu_dist()] metric, without the `dist`: the engine makes the distances
#' panel by panel and each row keeps its `k` nearest in a bounded heap.
#' Exact in double precision (the distances are `gpu_dist()`'s); a row is
#' not its own neighbour; ties are broken by the smaller row index.  `NA`
#' distances (rows with no coordinate in common) are no neighbours; a row
#' with fewer than `k` neighbours gets `NA` in the remaining places.
#'
#' With a `query`, each row of `query` gets its `k` nearest rows of `x`
#' (a search of new points among reference points, as
#' `BiocNeighbors::queryKNN()` makes it): the distances between the two
#' sets only (never those within `x` or within `query`), no row left out
#' (a query row equal to a row of `x` has it as its nearest, at distance
#' 0), `k` from 1 to `nrow(x)`, and neither matrix may hold `NA`.  The
#' metrics that are correlations (`"correlation"`, `"abscorrelation"`,
#' `"spearman"`, `"cosine"`, `"kendall"`) run on the CPU engine with a
#' query; the others on the GPU too.  [gpu_range()] finds every neighbour
#' within a distance instead of the `k` nearest.
#'
#' On the CPU, the `"euclidean"` and `"manhattan"` searches of finite data
#' (without `BPPARAM`) may skip most distances: the rows of `x` are grouped
#' into k-means clusters (about `sqrt(nrow(x))`, from a fixed-seed sample:
#' R's random numbers are not used) and bounds from the triangle inequality
#' leave out the clusters and rows that cannot be among the `k` nearest.
#' The answer is the exhaustive search's, distances bit for bit and ties
#' in index order; the pruned search runs where a first sample of the rows
#' shows that it pays (clustered data, such as cells' principal
#' components), the exhaustive one elsewhere (Gaussian noise in many
#' dimensions, few rows, `k` large against `nrow(x)`).  `verbose = TRUE`
#' says which ran.
#'
#' @param x a numeric matrix (rows are the items), or what [gpu_dist()]
#'   takes (an on-disk one is read once, in whole chunks of its file, into
#'   one double matrix, whatever its size).  A `SingleCellExperiment` gives the neighbours of its *cells*:
#'   `reducedDim(x, use.dimred)`, else `t(assay(x, assay))` (see
#'   "Orientation" in [gpucor] for every container).
#' @param k the number of neighbours, from 1 to `nrow(x) - 1` (to
#'   `nrow(x)` with a `query`).
#' @param method any [gpu_dist()] method: `"euclidean"`, `"manhattan"`,
#'   `"maximum"`, `"canberra"`, `"minkowski"` (with `p`), `"correlation"`,
#'   `"abscorrelation"`, `"spearman"`, `"cosine"`, ...  (`"cosine"` is
#'   \eqn{1 - \cos}{1 - cos}, not BiocNeighbors' \eqn{\sqrt{2 (1 - \cos)}}{sqrt(2 (1 - cos))}:
#'   the same neighbours, other distances; see [gpu_dist()].)
#' @param p the power of the Minkowski distance.
#' @param query `NULL` (each row of `x` among the others), or a numeric
#'   matrix with the columns of `x`, whose rows are searched for among the
#'   rows of `x`.
#' @param backend,precision,devices,verbose as for [gpu_dist()].
#' @param assay for a `SummarizedExperiment` or `SingleCellExperiment`,
#'   which assay (a name or number; default the first).
#' @param use.dimred `NULL` (default), or for a `SingleCellExperiment` `x`
#'   the name or number of one of its `reducedDims()` (cells x dimensions,
#'   such as `"PCA"`), whose rows are then the items, as in scater's
#'   `runUMAP()` and bluster's `clusterRows()`; an error with any other `x`
#'   or a name not among `reducedDimNames(x)`.  A `SingleCellExperiment`
#'   `query` is read the same way; any other `query` as it is.
#' @param BPPARAM `NULL` (default), or a `BiocParallel::BiocParallelParam`:
#'   the rows (of `query`, when given) are shared among its workers as
#'   [gpu_cor_edges()] shares its columns; each worker finds every row's
#'   nearest among the rows of its share, and the main process merges them
#'   (ties again to the smaller index): the same neighbours as without
#'   `BPPARAM`.  Every worker needs the whole of `x`: workers on this
#'   machine read it from one file the main process writes once (option
#'   `gpucor.bp_file_bytes` in [gpucor_options]), workers elsewhere receive
#'   it in their job.
#' @return `list(index, distance)`: `nrow(x) x k` matrices (`nrow(query) x
#'   k` with a query), nearest first (the shape of
#'   `BiocNeighbors::findKNN()`), with the row names of `x` (of `query`) as
#'   row names; `index` holds row numbers of `x`.
#' @seealso [gpu_range()], [GpucorParam()], [gpu_dist()], [gpu_cor_edges()]
#' @examples
#' x <- matrix(rnorm(200 * 5), 200, 5)
#' nn <- gpu_knn(x, k = 3)
#' head(nn$index)
#' # the 3 nearest rows of x to each of 10 new points
#' q <- matrix(rnorm(10 * 5), 10, 5)
#' gpu_knn(x, k = 3, query = q)$index
#' @export
gpu_knn <- function(x, k, method = c("euclidean", "manhattan", "maximum", "canberra",
                                     "minkowski", "correlation", "abscorrelation",
                                     "spearman", "cosine", "binary", "kendall"),
                    p = 2, query = NULL, backend = getOption("gpucor.backend", "auto"),
                    precision = c("double", "single"),
                    devices = getOption("gpucor.devices", 0L),
                    verbose = getOption("gpucor.verbose", FALSE), assay = 1L,
                    BPPARAM = NULL, use.dimred = NULL) {
  .check_common()
  method <- match.arg(method)
  m <- .dist_method(method, p)
  x <- .knn_input(x, "x", assay, use.dimred)
  if (!is.null(query)) query <- .knn_query(query, x, assay, use.dimred)
  nref <- nrow(x) - is.null(query)
  if (missing(k) || !is.numeric(k) || length(k) != 1L || is.na(k) || k < 1 ||
      k != floor(k))
    stop("'k' must be a whole number >= 1")
  if (k > nref)
    stop(if (is.null(query)) sprintf("'k' must be at most nrow(x) - 1 = %d", nref)
         else sprintf("'k' must be at most nrow(x) = %d", nref))
  nq <- if (is.null(query)) nrow(x) else nrow(query)
  .memory_guard(8 * 2 * (as.double(nrow(x)) * (ncol(x) + 4) + as.double(nq) * (ncol(x) + 2 * k)),
                "gpu_knn(): the engine's copy of the input and the neighbours", "")
  backend <- .dist_backend(backend, x, m, n = sqrt(2 * as.double(nrow(x)) * nq / (1 + is.null(query))),
                           has_na = is.null(query) && anyNA(x))
  anyna <- is.null(query) && !m %in% .stats_dist_methods && anyNA(x)
  # with BPPARAM the workers find each row's nearest among their shares of
  # the columns (the query's rows), and these are merged here
  bp <- !is.null(BPPARAM) && nq > is.null(query) && ncol(x) > 0L
  if (bp) {
    .bp_gpu_check(BPPARAM, backend)
    jobs <- .bp_shares(nq, BPPARAM, devices)
  }
  # the CPU engine's pruned search (src/cpu/knn_prune.c): NA lets its rule
  # decide, TRUE forces it where the data allow, FALSE runs the brute force
  # (an internal option, for tests and benchmarks)
  prune <- getOption("gpucor.knn_prune", NA)
  if (!is.logical(prune) || length(prune) != 1L)
    stop("option 'gpucor.knn_prune' must be TRUE, FALSE or NA")
  opts <- .knn_opts(backend, precision, verbose, devices)
  opts$knn_prune <- prune
  path <- NULL   # which search ran, for verbose
  r <- .engine_call({
    parts <- if (bp)
      .bp_share_run(jobs, .bp_knn_part, BPPARAM, x = x, query = query, m = m,
                    p = as.double(p), k = as.double(k), anyna = anyna, backend = backend,
                    precision = precision)
    v <- .Call(C_gpucor_knn, x, query, m, as.double(p), as.double(k), anyna, opts, parts)
    path <- attr(v, "knn_path")
    v
  }, "gpu_knn", backend, precision, devices, verbose,
  report = if (bp) function(s, th) .bp_report("gpu_knn", 1L, jobs, backend, BPPARAM, s)
           else function(s, th) .engine_report("gpu_knn", th, precision, s, devices,
                                               cpu_note = path))
  if (isTRUE(attr(r, "nonfinite"))) warning("treating non-finite values as NA")
  if (isTRUE(attr(r, "sd0"))) warning("the standard deviation is zero")
  out <- list(index = r[[1L]], distance = r[[2L]])
  if (.opt("gpucor.profile")) attr(out, "timing") <- attr(r, "timing")
  rn <- rownames(if (is.null(query)) x else query)
  if (!is.null(rn)) rownames(out$index) <- rownames(out$distance) <- rn
  out
}

# The engine's options of a search, with the handle of an x kept on the
# GPUs between searches (GpucorParam's index sets the internal option
# gpucor.knn_resident around its calls; the engine uses it only for that
# very x: src/cuda/distance.cu).
.knn_opts <- function(backend, precision, verbose, devices) {
  opts <- .engine_opts(backend, precision, verbose, devices)
  opts$resident <- getOption("gpucor.knn_resident")
  opts
}

# One worker's nearest neighbours among its ranges of columns.
.bp_knn_part <- function(ranges, device, x, query, m, p, k, anyna, backend, precision)
  .Call(C_gpucor_knn, x, query, m, p, k, anyna,
        .engine_opts(backend, precision, FALSE, device, cols = ranges), NULL)

# gpu_knn()'s and gpu_range()'s x: a double matrix whose rows are the items
# (a SingleCellExperiment's cells: .cells_as_rows()).
.knn_input <- function(x, what, assay, use.dimred = NULL) {
  x <- .cells_as_rows(x, what, assay, use.dimred)
  x <- .as_input(x, what, assay, FALSE)
  x <- as.matrix(x)
  if (!(is.numeric(x) || is.logical(x)) || !is.atomic(x))
    stop(sprintf("'%s' must be numeric", what))
  .as_double_matrix(x)
}

# A query as a double matrix with the columns of x; neither may hold NA
# (a search between two sets has no stats rule to follow for them).  A
# SingleCellExperiment query gives its cells as x's does (the same
# 'use.dimred' or 'assay'); any other query is taken as it is, also when x's
# cells come from a reducedDim.
.knn_query <- function(query, x, assay, use.dimred = NULL) {
  query <- .knn_input(query, "query", assay,
                      if (inherits(query, "SingleCellExperiment")) use.dimred)
  if (ncol(query) != ncol(x))
    stop(sprintf("'query' must have the %d columns of 'x', not %d", ncol(x), ncol(query)))
  if (anyNA(x)) stop("'x' has NA or NaN values: a search with a 'query' takes none")
  if (anyNA(query)) stop("'query' has NA or NaN values")
  query
}

#' Every neighbour within a distance, as gpu_dist() measures it
#'
#' `gpu_range()` finds, for each row of `x` (or of `query`), every row of
#' `x` at a distance of at most `threshold`, by any [gpu_dist()] metric:
#' the engine makes the distances panel by panel and keeps only the pairs
#' within the threshold, so no `dist` is stored.  Exact in double precision
#' (the distances are `gpu_dist()`'s, differences of coordinates); a row is
#' not its own neighbour (without a `query`), and `NA` distances are no
#' neighbours.  This is the range search of `BiocNeighbors::findNeighbors()`
#' and `queryNeighbors()` (their exhaustive `rangeFindExhaustive()` and
#' `rangeQueryExhaustive()`), and its value has their shape.
#'
#' A function of its own rather than a `threshold` argument of
#' [gpu_knn()], as BiocNeighbors separates `findKNN()` from
#' `findNeighbors()`: the value is another shape (lists of varying length,
#' not matrices) and `k` has no meaning here.
#'
#' `findNeighbors()` counts each row among its own neighbours (at distance
#' 0); `gpu_range()` does not, so its lists are one shorter.
#'
#' @section On the CPU:
#' The CPU engine computes every distance (no pruning, unlike [gpu_knn()]'s
#' search), so its time grows with the square of the rows, while
#' BiocNeighbors' KMKNN range search prunes clustered, low-dimensional data.
#' On the 2-core machine (`bench/incumbents.R`, 2026-11-28), 10000 points in
#' 20 clusters in 30 dimensions took 2.18 s against `findNeighbors(BNPARAM =
#' KmknnParam(), BPPARAM = MulticoreParam(2))`'s 4.80 s, but in a trial run
#' at 20000 points 7.70 s against KMKNN's 6.44 s.  For tens of thousands
#' of such rows on a small CPU machine keep `findNeighbors()`; the GPU
#' computes every distance far faster.
#'
#' @inheritParams gpu_knn
#' @param threshold the largest distance of a neighbour (`<=`), a number.
#' @param query `NULL` (each row of `x` among the others), or a numeric
#'   matrix with the columns of `x`, whose rows are searched for among the
#'   rows of `x` (neither may hold `NA`); with a query, the correlation
#'   metrics run on the CPU engine.
#' @return `list(index, distance)`: two lists with an element per row of
#'   `x` (of `query`), named by its row names: the row numbers of `x`
#'   within `threshold`, ascending, and their distances.
#' @seealso [gpu_knn()], [GpucorParam()]
#' @examples
#' x <- matrix(rnorm(200 * 5), 200, 5)
#' nb <- gpu_range(x, threshold = 1)
#' lengths(nb$index)[1:10]
#' gpu_range(x, 1.5, query = x[1:3, ] + 0.1)$index
#' @export
gpu_range <- function(x, threshold, method = c("euclidean", "manhattan", "maximum", "canberra",
                                               "minkowski", "correlation", "abscorrelation",
                                               "spearman", "cosine", "binary", "kendall"),
                      p = 2, query = NULL, backend = getOption("gpucor.backend", "auto"),
                      precision = c("double", "single"),
                      devices = getOption("gpucor.devices", 0L),
                      verbose = getOption("gpucor.verbose", FALSE), assay = 1L,
                      use.dimred = NULL) {
  .check_common()
  method <- match.arg(method)
  .range_search(x, threshold, method, p, query, backend, precision, devices, verbose, assay,
                self = FALSE, use.dimred = use.dimred)
}

# gpu_range(); self: each row of x (without a query) its own neighbour
# (GpucorParam's findNeighbors(), as BiocNeighbors counts it).
.range_search <- function(x, threshold, method, p, query, backend, precision, devices,
                          verbose, assay, self, use.dimred = NULL) {
  m <- .dist_method(method, p)
  x <- .knn_input(x, "x", assay, use.dimred)
  if (!is.null(query)) query <- .knn_query(query, x, assay, use.dimred)
  if (missing(threshold) || !is.numeric(threshold) || length(threshold) != 1L ||
      is.na(threshold))
    stop("'threshold' must be a single number")
  nq <- if (is.null(query)) nrow(x) else nrow(query)
  .memory_guard(8 * 2 * (as.double(nrow(x)) + nq) * (ncol(x) + 4),
                "gpu_range(): the engine's copy of the input", "")
  backend <- .dist_backend(backend, x, m, n = sqrt(2 * as.double(nrow(x)) * nq / (1 + is.null(query))),
                           has_na = is.null(query) && anyNA(x))
  anyna <- is.null(query) && !m %in% .stats_dist_methods && anyNA(x)
  r <- .engine_call(
    .Call(C_gpucor_range, x, query, m, as.double(p), as.double(threshold), anyna,
          .knn_opts(backend, precision, verbose, devices), self),
    "gpu_range", backend, precision, devices, verbose)
  if (isTRUE(attr(r, "nonfinite"))) warning("treating non-finite values as NA")
  if (isTRUE(attr(r, "sd0"))) warning("the standard deviation is zero")
  out <- list(index = r[[1L]], distance = r[[2L]])
  if (.opt("gpucor.profile")) attr(out, "timing") <- attr(r, "timing")
  rn <- rownames(if (is.null(query)) x else query)
  if (!is.null(rn)) names(out$index) <- names(out$distance) <- rn
  out
}
