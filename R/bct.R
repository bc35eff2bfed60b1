#' Brain network metrics as the Brain Connectivity Toolbox defines them
#'
#' `gpu_brain_metrics()` computes the weighted nodal and global measures
#' that connectivity studies report -- strength, degree, clustering,
#' local and global efficiency, characteristic path length, betweenness,
#' participation coefficient, within-module degree z-score, modularity --
#' with the definitions of the Brain Connectivity Toolbox (BCT; the MATLAB
#' release 2019-03-03, read from its source), for one weighted undirected
#' network or for many subjects' networks in one call, including the
#' preparation users do first (sign policy, proportional or absolute
#' threshold, normalisation, weight-to-length conversion).
#'
#' **Preparation**, in this order, for each subject: the diagonal is
#' cleared (set to 0: self-connections, such as a correlation matrix's 1s,
#' are ignored); the **sign policy** keeps the positive weights
#' (`"positive"`, negative ones become 0), takes absolute values
#' (`"absolute"`), or keeps the negative weights as their magnitudes
#' (`"negative"`: `-W * (W < 0)`, as BCT's `*_sign` functions split a
#' signed network); the **threshold** (optional): `threshold_type =
#' "proportional"` is BCT's `threshold_proportional(W, p)`: of the
#' n(n - 1)/2 pairs, the `round(p * n * (n - 1) / 2)` strongest nonzero
#' ones are kept (MATLAB's `round()`: halves away from zero), the others set
#' to 0.  **Ties** at the cut are kept as BCT's stable `sortrows` keeps
#' them: the pair found first in column-major order of the upper triangle
#' (the earlier column, then the earlier row) first, so the result is
#' exactly BCT's.  (bctpy's `threshold_proportional` differs: it
#' reverses an unstable sort, so it may keep other tied pairs, and its
#' `np.round` takes halves to even, so it may keep one pair fewer.)  `"absolute"` is
#' `threshold_absolute(W, thr)`: weights below `threshold` become 0.
#' Then `normalize = TRUE` divides by the largest weight
#' (`weight_conversion(W, "normalize")`).  The weights must be finite, and
#' the matrix symmetric (exactly: an undirected network) off the diagonal.
#'
#' **Lengths.**  The path measures (efficiency, path length,
#' eccentricity, radius, diameter, betweenness) run on lengths made from
#' the prepared weights by `weights` (as in [gpu_shortest_paths()]):
#' `"inverse"` (the default, BCT's `weight_conversion(W, "lengths")`,
#' `1 / w`, which `efficiency_wei` always uses), `"distance"` (the weight
#' is the length), `"neglog"` (`-log(w)`) or `"one_minus"` (`1 - w`).
#' Zero weights are no edge; a length that is not above 0 (a weight of 1
#' with `"one_minus"` or `"neglog"`) stops with an error naming the edge
#' (BCT would silently drop such an edge).  With `"inverse"` every value is
#' BCT's.
#'
#' **Metrics** (`metrics`, any of these; nodal ones are per node, global
#' ones per subject), each following the BCT function named:
#' * `"strength"`: `strengths_und`; `"degree"`: `degrees_und` (nonzero
#'   weights after the preparation).
#' * `"clustering"`: `clustering_coef_wu`, Onnela et al.'s weighted
#'   clustering, the cube roots of the weights; `"transitivity"` (global):
#'   `transitivity_wu`.  BCT expects weights in \[0, 1\]: correlations are;
#'   otherwise set `normalize = TRUE` (the formula is applied to the
#'   weights as given, as BCT does).
#' * `"local_efficiency"`: `efficiency_wei(W, 2)`, the modified weighted
#'   local efficiency of Wang et al. (2016) that BCT recommends since 2017
#'   (shortest paths among a node's neighbours on the cube roots of the
#'   lengths); `"local_efficiency_original"`: `efficiency_wei(W, 1)`, the
#'   original version of Rubinov and Sporns (2010), which is what bctpy's
#'   `efficiency_wei(W, local = True)` computes.  The lengths are those of
#'   `weights` (BCT's: `"inverse"`).
#' * `"global_efficiency"` (global): `efficiency_wei(W)`, the mean of
#'   `1 / d` over the n(n - 1) ordered pairs (`1 / Inf = 0`).
#' * `"char_path_length"`, `"radius"`, `"diameter"` (global) and
#'   `"eccentricity"` (nodal): `charpath(D, 0, include_infinite)` on the
#'   distance matrix `distance_wei(L)`, the diagonal left out.  With
#'   `include_infinite = TRUE` (BCT's default since 2016) a disconnected
#'   network has an infinite path length, and a node that does not reach
#'   every other one an infinite eccentricity; with `FALSE` the infinite
#'   distances are left out (the mean over the connected pairs, as
#'   [gpu_network_metrics()]), and a node that reaches none has eccentricity
#'   `NaN` (MATLAB's `nanmax` of nothing).  Radius and diameter are the
#'   smallest and largest eccentricity, skipping `NaN`.  (charpath's own
#'   efficiency output is the global efficiency with `include_infinite =
#'   TRUE`; it is not given separately.)
#' * `"betweenness"`: `betweenness_wei(L)` (Brandes), on the lengths,
#'   counting ordered pairs as BCT does (twice
#'   `igraph::betweenness(directed = FALSE)`); `"betweenness_norm"`: the
#'   same divided by `(n - 1)(n - 2)`, the normalisation BCT's help gives.
#' * With a `partition`: `"participation"`: `participation_coef(W, Ci)`;
#'   `"module_degree_z"`: `module_degree_zscore(W, Ci)` (a module of one
#'   node, or whose nodes have the same within-module strength, gives 0;
#'   MATLAB's arithmetic may leave rounding noise there, which BCT then
#'   divides by); `"modularity"` (global): the Q of the given partition as
#'   `community_louvain` and `modularity_und` compute it (gamma = 1):
#'   `sum((W - k k' / s)[same module]) / s`, `s = sum(W)`.  Every distinct
#'   label is a module (BCT's loops skip a label 0).
#'
#' * `"sigma"` and `"omega"` (global; only when asked for: they cost
#'   `n_random` times the path measures): small-worldness against random
#'   networks made as BCT's `randmio_und(W, rewire)` makes them
#'   (Maslov-Sneppen swaps of two edges' ends, keeping every node's degree
#'   and moving the weights with the edges) and lattices made as
#'   `latmio_und(W, rewire)` (the same swaps, kept only where they move
#'   weight nearer the diagonal of a random order of the nodes).  With C the
#'   mean of `clustering_coef_wu` and L charpath's lambda (as
#'   `include_infinite` says), averaged over `n_random` random networks
#'   (C_r, L_r) and `n_random` lattices (C_l): sigma = (C / C_r) / (L / L_r)
#'   (Humphries et al. 2008), omega = L_r / L - C / C_l (Telesford et al.
#'   2011).  The random numbers are this package's own (not MATLAB's): each
#'   subject's k-th network has its own stream from `seed`, so the values do
#'   not depend on the threads or on the other subjects, and the same `seed`
#'   gives the same values.  Where no two edges have four distinct ends (a
#'   star, a triangle) the rewiring stops (BCT's would loop for ever).
#'
#' Values that BCT gives as 0/0 (the transitivity of a network without
#' paths of two edges, the global efficiency of one node) are `NaN` here
#' too.
#'
#' **Many subjects.**  `x` may be a regions x regions x subjects array, or
#' a list of square matrices of one size; the subjects run in parallel on
#' the CPU's threads (or, with fewer subjects than threads, each subject's
#' searches do).  The results are the same as one call per subject.
#'
#' @param x a square numeric matrix (one network), a regions x regions x
#'   subjects array, or a list of square matrices of one size; or an
#'   undirected `igraph` graph (or a list of them), its weights
#'   `E(x)$weight` (1 without them), as in [gpu_shortest_paths()].
#' @param metrics which measures (see Metrics); `NULL` (the default): all
#'   but sigma and omega, the module ones only with a `partition`.
#' @param partition `NULL`, or module labels: a vector with one label per
#'   region (the same modules for every subject), or a regions x subjects
#'   matrix (or a list of vectors), one column per subject.  Labels may be
#'   numbers, strings or a factor; `NA` is an error.
#' @param threshold `NULL` (none), or the proportion of pairs to keep, in
#'   (0, 1] (`threshold_type = "proportional"`), or the weight below which
#'   pairs are dropped (`"absolute"`).
#' @param threshold_type `"proportional"` or `"absolute"`.
#' @param sign `"positive"`, `"absolute"` or `"negative"`: which weights
#'   make the network (see Preparation).
#' @param weights how weights become lengths for the path measures:
#'   `"inverse"`, `"distance"`, `"neglog"` or `"one_minus"`.
#' @param normalize `TRUE`: divide each subject's prepared weights by their
#'   maximum.
#' @param include_infinite charpath's `infinite_dist`: keep infinite
#'   distances in the path length and eccentricities (BCT's default).
#' @param series `TRUE`: `x` holds time series, regions x time (x
#'   subjects), or a list of regions x time matrices; each subject's
#'   network is first `gpu_cor(t(x_s), method = method)` (its correlation
#'   matrix), then prepared as above.
#' @param method with `series = TRUE`: the correlation, as in [gpu_cor()].
#' @param n_random,rewire small-worldness: how many random networks (and
#'   lattices) per subject, and the rewirings per edge (BCT's `ITER`).
#' @param seed small-worldness: the random networks' seed, a whole number;
#'   `NULL`: drawn from R's generator (so [set.seed()] fixes it).
#' @param backend `"auto"` or `"cpu"` (the GPU engine of this function is
#'   not built yet).
#' @param verbose `TRUE`: say which engine ran and how long it took.
#' @return A list: `nodal`, a data frame with columns `subject`, `node`
#'   and one per nodal metric (one row per node of each subject); and
#'   `global`, a data frame with `subject` and one column per global
#'   metric.  `subject` is the list's or array's names (`dimnames(x)[[3]]`)
#'   or the subjects' numbers; `node` the matrices' dimnames or numbers.
#' @seealso [gpu_network_metrics()] for path measures of one large network;
#'   [gpu_shortest_paths()].
#' @references Rubinov M, Sporns O (2010) Complex network measures of
#'   brain connectivity: uses and interpretations.  NeuroImage 52:1059-69.
#' @examples
#' set.seed(1)
#' subjects <- replicate(3, {
#'   ts <- matrix(rnorm(100 * 20), 100)
#'   cor(ts)
#' }, simplify = FALSE)
#' modules <- rep(1:4, each = 5)
#' m <- gpu_brain_metrics(subjects, partition = modules, threshold = 0.2)
#' head(m$nodal)
#' m$global
#' @export
gpu_brain_metrics <- function(x, metrics = NULL, partition = NULL, threshold = NULL,
                              threshold_type = c("proportional", "absolute"),
                              sign = c("positive", "absolute", "negative"),
                              weights = c("inverse", "distance", "neglog", "one_minus"),
                              normalize = FALSE, include_infinite = TRUE,
                              series = FALSE, method = c("pearson", "spearman", "kendall"),
                              n_random = 10L, rewire = 10L, seed = NULL,
                              backend = getOption("gpucor.backend", "auto"),
                              verbose = getOption("gpucor.verbose", FALSE)) {
  threshold_type <- match.arg(threshold_type)
  .check_flag(series, "series")
  # "auto" keeps the metrics on the CPU (their GPU engine is not built yet)
  if (.resolve_backend(backend, work = 0) == "gpu")
    stop("gpu_brain_metrics() has no GPU engine yet: use backend = \"cpu\"", call. = FALSE)
  if (series) x <- .brain_series(x, match.arg(method), backend)
  backend <- "cpu"
  sign <- match.arg(sign)
  weights <- match.arg(weights)
  .check_flag(normalize, "normalize")
  .check_flag(include_infinite, "include_infinite")
  net <- .brain_input(x)
  n <- net$n
  ns <- net$nsub
  thr_code <- 0L
  thr <- NA_real_
  if (!is.null(threshold)) {
    if (!is.numeric(threshold) || length(threshold) != 1L || !is.finite(threshold))
      stop("'threshold' must be NULL or a single finite number")
    if (threshold_type == "proportional" && !(threshold > 0 && threshold <= 1))
      stop("a proportional 'threshold' must be in (0, 1]: the proportion of pairs to keep")
    thr_code <- match(threshold_type, c("proportional", "absolute"))
    thr <- as.double(threshold)
  }
  part <- .brain_partition(partition, n, ns)
  all_nodal <- .bct_nodal
  all_global <- setdiff(.bct_global, c("sigma", "omega"))   # on request only
  if (is.null(part)) {
    all_nodal <- setdiff(all_nodal, c("participation", "module_degree_z"))
    all_global <- setdiff(all_global, "modularity")
  }
  if (is.null(metrics)) {
    metrics <- c(all_nodal, all_global)
  } else {
    if (!is.character(metrics) || anyNA(metrics) || !length(metrics))
      stop("'metrics' must be NULL or names of metrics")
    bad <- setdiff(metrics, c(.bct_nodal, .bct_global))
    if (length(bad))
      stop(sprintf("unknown metric%s %s; the metrics are %s", if (length(bad) > 1) "s" else "",
                   paste0("\"", bad, "\"", collapse = ", "),
                   paste0("\"", c(.bct_nodal, .bct_global), "\"", collapse = ", ")))
    need <- intersect(metrics, c("participation", "module_degree_z", "modularity"))
    if (length(need) && is.null(part))
      stop(sprintf("%s need%s a 'partition'", paste0("\"", need, "\"", collapse = ", "),
                   if (length(need) > 1) "" else "s"))
    metrics <- unique(metrics)
  }
  nodal <- intersect(.bct_nodal, metrics)
  global <- intersect(.bct_global, metrics)
  if (!is.numeric(n_random) || length(n_random) != 1L || !is.finite(n_random) || n_random < 1 ||
      n_random != round(n_random))
    stop("'n_random' must be a positive whole number")
  if (!is.numeric(rewire) || length(rewire) != 1L || !is.finite(rewire) || rewire < 0 ||
      rewire != round(rewire) || rewire > 1e6)
    stop("'rewire' must be a whole number >= 0")
  if (is.null(seed)) {
    # drawn from R's generator only when the random graphs are made, so
    # that set.seed() makes them reproducible and other calls leave R's
    # stream alone
    seed <- if (any(c("sigma", "omega") %in% global)) sample.int(.Machine$integer.max, 1L) else 0
  } else if (!is.numeric(seed) || length(seed) != 1L || !is.finite(seed) || seed < 0 ||
             seed != round(seed) || seed >= 2^53) {
    stop("'seed' must be NULL or a whole number >= 0")
  }
  # the workspaces of src/algo/bct.c: per thread (or, with fewer subjects
  # than threads, one subject's and each thread's searches) about 52 n^2 bytes
  .memory_guard(52 * as.double(n)^2 * min(.threads(), ns) + 16 * as.double(n)^2 * .threads(),
                "gpu_brain_metrics(): the workspaces",
                "Fewer threads (options(gpucor.threads = ...)) need less.")
  spec <- list(sign = match(sign, c("positive", "absolute", "negative")) - 1L,
               thr_type = thr_code, thr = thr, normalize = normalize,
               weights = match(weights, c("distance", "inverse", "neglog", "one_minus")) - 1L,
               include_infinite = include_infinite,
               nmod = if (is.null(part)) 0L else part$nmod,
               nrand = as.integer(n_random), rewire = as.integer(rewire), seed = as.double(seed),
               nodal = match(nodal, .bct_nodal) - 1L,
               global = match(global, .bct_global) - 1L)
  r <- .engine_call(.Call(C_gpucor_bct, net$x, part$labels, spec,
                          .engine_opts(backend, "double", verbose)),
                    "gpu_brain_metrics", backend, "double", 0L, verbose)
  node <- if (is.null(net$labels)) seq_len(n) else net$labels
  nd <- data.frame(subject = rep(net$subjects, each = n), node = rep(node, ns),
                   stringsAsFactors = FALSE)
  for (k in seq_along(nodal)) nd[[nodal[k]]] <- r[[1L]][, k]
  if ("degree" %in% nodal) nd$degree <- as.integer(nd$degree)
  gl <- data.frame(subject = net$subjects, stringsAsFactors = FALSE)
  for (k in seq_along(global)) gl[[global[k]]] <- r[[2L]][, k]
  list(nodal = nd, global = gl)
}

# The metric names, in the order of the enums of src/algo/bct.h (nodal:
# BCT_STRENGTH ..., global: BCT_TRANSITIVITY ...).
.bct_nodal <- c("strength", "degree", "clustering", "local_efficiency",
                "local_efficiency_original", "betweenness", "betweenness_norm",
                "eccentricity", "participation", "module_degree_z")
.bct_global <- c("transitivity", "global_efficiency", "char_path_length", "radius",
                 "diameter", "modularity", "sigma", "omega")

.check_flag <- function(v, name) {
  if (!is.logical(v) || length(v) != 1L || is.na(v)) stop(sprintf("'%s' must be TRUE or FALSE", name))
}

# x as an n x n x subjects double array, with the subjects' names and the
# regions' labels.
.brain_input <- function(x) {
  subjects <- NULL
  if (inherits(x, "igraph")) x <- list(x)
  if (is.list(x) && !is.data.frame(x)) {
    if (!length(x)) stop("'x' is an empty list: give at least one network")
    mats <- lapply(seq_along(x), function(s) {
      m <- x[[s]]
      if (inherits(m, "igraph")) {
        g <- .graph_of_igraph(m, "weights")
        if (g$directed)
          stop(sprintf("'x[[%d]]' is a directed graph: gpu_brain_metrics() takes undirected networks", s))
        m <- g$w
      }
      if (is.data.frame(m) || isS4(m)) m <- as.matrix(m)
      if (!is.matrix(m) || !(is.numeric(m) || is.logical(m)))
        stop(sprintf("'x[[%d]]' must be a numeric matrix", s))
      if (nrow(m) != ncol(m))
        stop(sprintf("'x[[%d]]' must be square (it is %d x %d)", s, nrow(m), ncol(m)))
      m
    })
    n <- nrow(mats[[1L]])
    sizes <- vapply(mats, nrow, 1L)
    if (any(sizes != n)) {
      s <- which(sizes != n)[1L]
      stop(sprintf("the subjects' networks must have one size: 'x[[1]]' is %d x %d but 'x[[%d]]' is %d x %d",
                   n, n, s, sizes[s], sizes[s]))
    }
    dn <- dimnames(mats[[1L]])
    subjects <- names(x)
    a <- array(0, c(n, n, length(mats)))
    for (s in seq_along(mats)) a[, , s] <- mats[[s]]
    x <- a
  } else {
    if (is.data.frame(x) || (isS4(x) && length(dim(x)) == 2L)) x <- as.matrix(x)
    d <- dim(x)
    if (!(is.numeric(x) || is.logical(x)) || !(length(d) %in% 2:3))
      stop("'x' must be a square numeric matrix, a regions x regions x subjects array, or a list of square matrices")
    if (d[1L] != d[2L])
      stop(sprintf("'x' must be square (it is %d x %d%s)", d[1L], d[2L],
                   if (length(d) == 3L) " x subjects" else ""))
    dn <- dimnames(x)
    if (length(d) == 3L) subjects <- dn[[3L]]
    n <- d[1L]
  }
  if (!is.double(x)) storage.mode(x) <- "double"
  d <- dim(x)
  nsub <- if (length(d) == 3L) d[3L] else 1L
  if (n < 1L || nsub < 1L) stop("'x' has no regions or no subjects")
  if (length(d) == 2L) dim(x) <- c(n, n, 1L)
  labels <- if (!is.null(dn[[2L]])) dn[[2L]] else dn[[1L]]
  list(x = x, n = n, nsub = nsub, labels = labels,
       subjects = if (is.null(subjects)) seq_len(nsub) else subjects)
}

# Time series (regions x time, or regions x time x subjects, or a list of
# regions x time matrices) as a list of the subjects' correlation matrices.
.brain_series <- function(x, method, backend) {
  if (is.data.frame(x)) x <- as.matrix(x)
  if (is.list(x)) {
    if (!length(x)) stop("'x' is an empty list: give at least one subject's time series")
    subjects <- names(x)
  } else {
    d <- dim(x)
    if (!(is.numeric(x) || is.logical(x)) || !(length(d) %in% 2:3))
      stop("with series = TRUE, 'x' must be regions x time (x subjects), or a list of regions x time matrices")
    subjects <- if (length(d) == 3L) dimnames(x)[[3L]]
    x <- if (length(d) == 2L) list(x) else lapply(seq_len(d[3L]), function(s) {
      m <- x[, , s]
      dim(m) <- d[1:2]
      dimnames(m) <- dimnames(x)[1:2]
      m
    })
  }
  n <- NULL
  out <- lapply(seq_along(x), function(s) {
    m <- x[[s]]
    if (is.data.frame(m)) m <- as.matrix(m)
    if (!is.matrix(m) || !(is.numeric(m) || is.logical(m)))
      stop(sprintf("'x[[%d]]' must be a numeric regions x time matrix", s))
    if (is.null(n)) n <<- nrow(m)
    if (nrow(m) != n)
      stop(sprintf("the subjects must have the same regions: 'x[[1]]' has %d, 'x[[%d]]' %d",
                   n, s, nrow(m)))
    gpu_cor(t(m), method = method, backend = backend)
  })
  names(out) <- subjects
  out
}

# The partition as 0-based integer labels (n, or n * nsub) and the number
# of modules; NULL for none.
.brain_partition <- function(partition, n, nsub) {
  if (is.null(partition)) return(NULL)
  if (is.list(partition)) {
    if (length(partition) != nsub)
      stop(sprintf("a list 'partition' must have one vector per subject (%d), not %d",
                   nsub, length(partition)))
    partition <- do.call(cbind, lapply(partition, as.vector))
  }
  if (is.factor(partition)) partition <- as.character(partition)
  if (is.matrix(partition)) {
    if (nrow(partition) != n || ncol(partition) != nsub)
      stop(sprintf("a matrix 'partition' must be regions x subjects (%d x %d), not %d x %d",
                   n, nsub, nrow(partition), ncol(partition)))
  } else if (length(partition) != n) {
    stop(sprintf("'partition' must have one label per region (%d), not %d", n, length(partition)))
  }
  v <- as.vector(partition)
  if (anyNA(v)) stop("'partition' must not have NA labels")
  u <- unique(v)
  list(labels = match(v, u) - 1L, nmod = length(u))
}
