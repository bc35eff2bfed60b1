#' All-pairs shortest paths of a weighted network (blocked Floyd-Warshall)
#'
#' `gpu_shortest_paths()` computes the length of the shortest path between
#' every pair of vertices of a network given by its weight matrix, as
#' `igraph::distances()` does for the same graph, by a blocked
#' Floyd-Warshall algorithm on the GPU (or on the CPU's threads).
#' `gpu_network_metrics()` reduces the same lengths to the measures brain
#' network analyses report (characteristic path length, global and nodal
#' efficiency, eccentricity, diameter) without returning the n x n lengths.
#'
#' The values of `w` become edge lengths by `weights`:
#' * `"distance"`: the value is the length;
#' * `"inverse"`: `1 / w` (strong connections are short);
#' * `"neglog"`: `-log(w)` (for weights in (0, 1]: the length of a path is
#'   then minus the log of the product of its weights);
#' * `"one_minus"`: `1 - w` (a correlation of 1 is a zero-length edge).
#'
#' Whatever `weights` says, an `NA`/`NaN` or `0` off the diagonal, or a
#' value below `threshold`, is *no edge*; the diagonal is ignored (a vertex
#' is at length 0 from itself).  A length below zero (a value above 1 with
#' `"one_minus"` or `"neglog"`, a negative value otherwise) stops with an
#' error naming the edge: with a negative edge no path is shortest.  Pairs
#' with no path between them get `Inf`.  A zero-length edge is an edge:
#' with `"one_minus"` its two ends are at length 0.
#'
#' `w[i, j]` is the edge from `i` to `j`; with `directed = FALSE` (the
#' default) `w` must be symmetric (exactly; a `dist` always is), and with
#' `directed = TRUE` the result's `[i, j]` is the length of the shortest
#' path from `i` to `j` (igraph's `mode = "out"`).
#'
#' Exactness: the lengths are sums of edge lengths along a shortest path,
#' added in another order than a Dijkstra search adds them, so they agree
#' with igraph to a few units in the last place (1e-12 relative in the
#' tests).  `precision = "single"` (GPU) keeps the lengths in float
#' (about 1e-7 relative).
#'
#' Memory: the CPU engine works in the result itself (n x n doubles; a
#' `dist` input or `gpu_network_metrics()` needs that much more host
#' memory).  The GPU engine keeps the whole n x n length matrix on the
#' device: `8 * N^2` bytes in double, `4 * N^2` in single, with `N` the
#' number of vertices rounded up to a multiple of 64 (so about 95000
#' vertices fit in double on an 80 GB card, 135000 in single); a larger
#' problem stops with an error that says so before anything is computed.
#' The lengths go up and come down in column panels, so the host holds no
#' copy besides `w` and the result.
#'
#' **igraph graphs.**  `w` may be an `igraph` graph: its edges' weights
#' are `E(w)$weight` (every edge 1 when the graph has no `weight`
#' attribute), converted by `weights`; or `weights` may be a numeric vector
#' of the edges' lengths, one per edge in `E(w)` order, as igraph's own
#' `weights` argument (and `weights = NA` ignores `E(w)$weight`: every edge
#' 1).  `directed` is then taken from the graph (`igraph::is_directed()`),
#' the vertices' names from `V(w)$name`, and the result is the matrix of
#' `igraph::distances(w, mode = "out")`.  Self-loops are dropped;
#' multiple edges between two vertices, and edges of weight 0 (here no
#' edge, for igraph a zero-length one), stop with an error.
#'
#' @param w a square numeric matrix (or data frame, or a `Matrix` matrix)
#'   of edge weights, a `dist` (an undirected graph), or an `igraph` graph.
#'   An on-disk matrix (an `HDF5Matrix`, such as `gpu_cor(output =
#'   gpu_hdf5(...))` writes, another `DelayedMatrix` such as `abs()` of one,
#'   or a `bigmemory::big.matrix`) is read in whole chunks of the file,
#'   blocks of DelayedArray's block size, into the one double matrix the
#'   engine is given, never densified by `as.matrix()`.
#' @param weights how values become lengths: `"distance"`, `"inverse"`,
#'   `"neglog"` or `"one_minus"`; with an igraph graph also a numeric
#'   vector of edge lengths, or `NA` (see igraph graphs).
#' @param threshold `NULL`, or a number: values below it are no edge
#'   (applied to the values of `w`, before `weights` converts them).
#' @param directed `FALSE` (symmetric `w`, an undirected graph) or `TRUE`.
#' @param backend,precision,devices,verbose as for [gpu_cor()] (one GPU:
#'   the first of `devices`).
#' @return `gpu_shortest_paths()`: the n x n matrix of shortest-path
#'   lengths with the dimnames of `w`, or a `dist` when `w` was one.
#' @seealso [gpu_cor_edges()] for the network's edges, `igraph::distances()`.
#' @examples
#' w <- matrix(c(0, 1, 4, 0,
#'               1, 0, 2, 0,
#'               4, 2, 0, 0,
#'               0, 0, 0, 0), 4, 4)
#' gpu_shortest_paths(w)
#' x <- matrix(rnorm(30 * 20), 30)
#' r <- gpu_cor(x)
#' d <- gpu_shortest_paths(abs(r), weights = "one_minus", threshold = 0.2)
#' @export
gpu_shortest_paths <- function(w, weights = c("distance", "inverse", "neglog", "one_minus"),
                               threshold = NULL, directed = FALSE,
                               backend = getOption("gpucor.backend", "auto"),
                               precision = c("double", "single"),
                               devices = getOption("gpucor.devices", 0L),
                               verbose = getOption("gpucor.verbose", FALSE)) {
  g <- .graph_input(w, weights, threshold, directed, precision, verbose, devices)
  backend <- .graph_backend(backend, g$n)
  .memory_guard(8 * as.double(g$n)^2 * (if (g$dist && backend == "cpu") 2 else 1),
                "gpu_shortest_paths(): the lengths", "")
  .graph_run(g, backend, 0L, "gpu_shortest_paths")
}

#' @rdname gpu_shortest_paths
#' @param metrics which measures: any of `"char_path_length"` (the mean
#'   length over the ordered pairs of distinct vertices joined by a path),
#'   `"global_efficiency"` (the mean of `1 / length` over all ordered pairs
#'   of distinct vertices, `1 / Inf = 0`), `"nodal_efficiency"` (per vertex
#'   `i`, the mean of `1 / length(i, j)` over the other vertices),
#'   `"eccentricity"` (per vertex, the largest length to a vertex it
#'   reaches; 0 when it reaches none) and `"diameter"` (the largest length
#'   between two vertices joined by a path).  With `directed = TRUE` the
#'   per-vertex measures follow the paths *from* the vertex.  These are the
#'   definitions of the Brain Connectivity Toolbox and brainGraph
#'   (efficiency from `1 / length`, path length over the reachable pairs,
#'   as `igraph::mean_distance(unconnected = TRUE)`); a zero-length path
#'   between distinct vertices gives an infinite efficiency.
#' @param x instead of `w`: data whose columns are the vertices; the
#'   network is `gpu_cor(x, use = use, method = method)` (the correlation
#'   matrix passes through host memory once, n x n doubles), converted by
#'   `weights` and `threshold`.
#' @param method,use for `x`: as in [gpu_cor()].
#' @return `gpu_network_metrics()`: a list with the requested measures
#'   (numbers, and for the per-vertex ones vectors named by the vertices).
#' @examples
#' gpu_network_metrics(x = x, weights = "one_minus", threshold = 0.2)
#' @export
gpu_network_metrics <- function(w = NULL,
                                weights = c("distance", "inverse", "neglog", "one_minus"),
                                threshold = NULL, directed = FALSE,
                                metrics = c("char_path_length", "global_efficiency",
                                            "nodal_efficiency", "eccentricity", "diameter"),
                                x = NULL, method = c("pearson", "spearman", "kendall"),
                                use = "everything",
                                backend = getOption("gpucor.backend", "auto"),
                                precision = c("double", "single"),
                                devices = getOption("gpucor.devices", 0L),
                                verbose = getOption("gpucor.verbose", FALSE)) {
  metrics <- match.arg(metrics, several.ok = TRUE)
  if (is.null(w) == is.null(x)) stop("give one of 'w' (the network) and 'x' (data)")
  if (!is.null(x)) {
    method <- match.arg(method)
    w <- gpu_cor(x, use = use, method = method, backend = backend,
                 precision = match.arg(precision), devices = devices)
    if (!is.matrix(w)) stop("'x' must have columns: they are the vertices")
  }
  g <- .graph_input(w, weights, threshold, directed, precision, verbose, devices)
  rm(w)
  backend <- .graph_backend(backend, g$n)
  if (backend == "cpu")
    .memory_guard(8 * as.double(g$n)^2, "gpu_network_metrics(): the lengths", "")
  s <- .graph_run(g, backend, 1L, "gpu_network_metrics")
  n <- g$n
  nm <- g$labels
  out <- list()
  for (m in metrics)
    out[[m]] <- switch(m,
      char_path_length = sum(s[[2L]]) / sum(s[[3L]]),
      global_efficiency = if (n < 2) NaN else sum(s[[1L]]) / (as.double(n) * (n - 1)),
      nodal_efficiency = stats::setNames(if (n < 2) rep(NaN, n) else s[[1L]] / (n - 1), nm),
      eccentricity = stats::setNames(s[[4L]], nm),
      diameter = if (n == 0) NaN else max(s[[4L]]))
  out
}

# The graph of gpu_shortest_paths() / gpu_network_metrics(), checked.
.graph_input <- function(w, weights, threshold, directed, precision, verbose, devices) {
  if (inherits(w, "igraph")) {
    g <- .graph_of_igraph(w, weights)
    w <- g$w
    directed <- g$directed
    if (g$lengths) weights <- "distance"
  }
  weights <- match.arg(weights, c("distance", "inverse", "neglog", "one_minus"))
  .check_common()
  if (!is.logical(directed) || length(directed) != 1L || is.na(directed))
    stop("'directed' must be TRUE or FALSE")
  if (!is.null(threshold) &&
      (!is.numeric(threshold) || length(threshold) != 1L || is.na(threshold)))
    stop("'threshold' must be NULL or a single number")
  wcode <- match(weights, c("distance", "inverse", "neglog", "one_minus"))
  thr <- if (is.null(threshold)) NA_real_ else as.double(threshold)
  if (inherits(w, "dist")) {
    if (directed) stop("a 'dist' is an undirected graph: give a matrix for directed = TRUE")
    n <- attr(w, "Size")
    labels <- attr(w, "Labels")
    v <- as.vector(w)
    if (!is.numeric(v) && !is.logical(v)) stop("'w' must be numeric")
    storage.mode(v) <- "double"
    return(list(w = v, n = n, dist = TRUE, labels = labels, dimnames = NULL,
                weights = wcode, threshold = thr, directed = FALSE,
                precision = precision, verbose = verbose, devices = devices))
  }
  w <- .on_disk_matrix(w)
  if (is.data.frame(w) || isS4(w)) w <- as.matrix(w)
  if (!is.matrix(w)) stop("'w' must be a square matrix or a 'dist'")
  if (!is.numeric(w) && !is.logical(w))
    stop(sprintf("'w' must be numeric, not %s", typeof(w)))
  if (nrow(w) != ncol(w))
    stop(sprintf("'w' must be square (it is %d x %d)", nrow(w), ncol(w)))
  if (!is.double(w)) storage.mode(w) <- "double"
  dn <- dimnames(w)
  labels <- if (!is.null(dn[[2L]])) dn[[2L]] else dn[[1L]]
  list(w = w, n = nrow(w), dist = FALSE, labels = labels, dimnames = dn, weights = wcode,
       threshold = thr, directed = directed, precision = precision,
       verbose = verbose, devices = devices)
}

# "auto": the GPU from n^3 = .gpu_min_work (n about 460) on.
.graph_backend <- function(backend, n) .resolve_backend(backend, work = as.double(n)^3)

# The engine's run: what = 0L the lengths (their attributes set here, not
# by the caller: a large result passed out of this closure would be copied
# at the next attribute change), 1L the sums behind the metrics.
.graph_run <- function(g, backend, what, fun) {
  r <- .engine_call(.Call(C_gpucor_apsp, g$w, as.double(g$n), g$weights, g$threshold,
                          g$directed, what, .engine_opts(backend, g$precision, g$verbose,
                                                         g$devices)),
                    fun, backend, g$precision, g$devices, g$verbose)
  if (what == 1L) return(r)
  if (g$dist)
    return(structure(r, Size = g$n, Labels = g$labels, Diag = FALSE, Upper = FALSE,
                     method = "shortest path", class = "dist"))
  dimnames(r) <- g$dimnames
  r
}

# An igraph graph as the weight matrix of .graph_input(): w[i, j] the
# weight of the edge i -> j (both ways when undirected), 0 where there is
# none, dimnames from V(g)$name; directed as the graph is.  The weights are
# E(g)$weight (all 1 when it has none), or 'weights' when that is a
# numeric vector with one length per edge (igraph's 'weights' argument;
# NA, as in igraph, ignores E(g)$weight): then they are lengths
# (lengths = TRUE, converted as "distance").  Self-loops are dropped (a
# vertex is at length 0 from itself); multiple edges and edges of weight
# 0 stop with an error (the matrix has room for one edge per pair, and 0
# is no edge in it).
.graph_of_igraph <- function(g, weights) {
  if (!requireNamespace("igraph", quietly = TRUE))
    stop("'w' is an igraph graph: install the igraph package", call. = FALSE)
  n <- igraph::vcount(g)
  el <- igraph::as_edgelist(g, names = FALSE)
  lengths <- !is.character(weights)
  wt <- if (is.numeric(weights)) weights
        else if (length(weights) == 1L && is.na(weights)) rep(1, nrow(el))
        else igraph::E(g)$weight
  if (is.null(wt)) wt <- rep(1, nrow(el))
  if (!is.numeric(wt) || length(wt) != nrow(el))
    stop(sprintf("the graph's weights must be numbers, one per edge (%d), not %d",
                 nrow(el), length(wt)), call. = FALSE)
  keep <- el[, 1L] != el[, 2L]
  el <- el[keep, , drop = FALSE]
  wt <- as.double(wt[keep])
  if (igraph::any_multiple(g))
    stop("'w' has multiple edges between the same vertices: keep one, e.g. igraph::simplify(w, edge.attr.comb = \"min\")",
         call. = FALSE)
  if (any(wt == 0, na.rm = TRUE))
    stop("'w' has edges of weight 0, which gpu_shortest_paths() would take as no edge: delete them, or give them another weight",
         call. = FALSE)
  W <- matrix(0, n, n)
  W[el] <- wt
  directed <- igraph::is_directed(g)
  if (!directed) W[el[, 2:1, drop = FALSE]] <- wt
  nm <- igraph::V(g)$name
  if (!is.null(nm)) dimnames(W) <- list(nm, nm)
  list(w = W, directed = directed, lengths = lengths)
}
