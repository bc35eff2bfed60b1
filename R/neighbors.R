#' A BiocNeighbors backend: exact neighbour search on gpucor's engine
#'
#' `GpucorParam()` is a `BiocNeighborParam` (BiocNeighbors 1.16, the
#' version Debian ships): give it as `BNPARAM` to
#' `BiocNeighbors::buildIndex()`, `findKNN()`, `queryKNN()`,
#' `findNeighbors()` and `queryNeighbors()`, or to any function that passes
#' `BNPARAM` on to them (`bluster::makeSNNGraph()`, `makeKNNGraph()`,
#' `clusterRows(NNGraphParam())`, `scran::buildSNNGraph()`,
#' `scater::runUMAP()`, ...), and the neighbours are found by [gpu_knn()]
#' and [gpu_range()]: exact, by the GPU when there is one (`backend`), else
#' by the CPU engine.
#'
#' The results are those of `BNPARAM = BiocNeighbors::ExhaustiveParam()`
#' (and of `rangeFindExhaustive()` and `rangeQueryExhaustive()`, which
#' `ExhaustiveParam` does not reach through `findNeighbors()` in 1.16) for
#' the same arguments: `k` (capped with BiocNeighbors' warning when it is
#' too large), `last`, `get.index`, `get.distance`, `subset`, `transposed`
#' (of a query), `threshold` (one, or one per point), `BPPARAM`.  The value
#' has the same shape: for the k-NN functions `list(index, distance)`, two
#' matrices without dimnames, nearest first; for the range functions two
#' lists (without names), each point's neighbours in ascending order of
#' their index, with the point itself in `findNeighbors()`'s lists (as
#' BiocNeighbors counts it); and only the counts when both `get.*` are
#' `FALSE`.  The distances are `"Euclidean"`, `"Manhattan"`, and
#' BiocNeighbors' `"Cosine"` (the Euclidean distance between the rows
#' scaled to unit length, `sqrt(2 - 2 * cos)`, not `1 - cos`).
#'
#' What differs from BiocNeighbors:
#' * Distances are exact: coordinate differences, never
#'   `|x|^2 + |y|^2 - 2 x.y`, so a copied point is at distance 0.
#'   Equal distances are broken by the smaller index (BiocNeighbors'
#'   exhaustive search gives the same order), and no "tied distances"
#'   warning is given (`warn.ties` is accepted and ignored): the order of
#'   ties is defined, not left to the search.
#' * `NA` or `NaN` in the data or the query is an error (BiocNeighbors
#'   returns meaningless neighbours for them); so is `k < 1`, and a query
#'   whose number of columns differs from the data's.
#' * `raw.index` is accepted and changes nothing: the index keeps the
#'   points in their own order.
#' * `BPPARAM`: with more than one worker, [gpu_knn()]'s own `BPPARAM`
#'   shares the points among them (a GPU each, or a share of the threads),
#'   except a `MulticoreParam` where the GPU may be used (`backend` not
#'   `"cpu"`: a forked process cannot use CUDA), which is left out, as it is
#'   for the range searches: those run in the calling process.  The
#'   answers are the same.
#' * The index ([BiocNeighbors::buildIndex()]'s value, of class
#'   `GpucorIndex`, a `BiocNeighborIndex`) holds the points one per row, as
#'   the engine reads them, checked once (`bndata()` gives them one per
#'   column, as BiocNeighbors' indices do, made when asked for).  A query
#'   of the index in double precision keeps its points on each GPU it uses
#'   (uploaded by the first such search there, where they fit), so the next
#'   queries upload only themselves; the copies are freed with the index
#'   (when R collects it), and at once when `findKNN()`/`queryKNN()` were
#'   given the data rather than an index.  A search of the points among
#'   themselves (`findKNN()`) uploads them each time.
#'
#' BiocNeighbors 2.x plugs backends in differently: its searches dispatch
#' on the index that `buildIndex(X, BNPARAM =)` returns, and a backend either
#' gives `defineBuilder()` an external pointer to a C++ `BiocNeighbors::Builder`
#' (knncolle's interface: gpucor's engine would then sit behind C++ builder
#' and searcher classes, compiled against BiocNeighbors' headers), or
#' defines its own `BiocNeighborIndex` subclass with methods of
#' `findKNN()`, `queryKNN()`, `findNeighbors()`, `queryNeighbors()`,
#' `findDistance()` and `queryDistance()` for it.  The second is what
#' carrying `GpucorParam` over would take, at the R level as here: the
#' `buildIndex()` method and the index class kept, the search methods
#' declared again on 2.x's signatures and arguments (the index first)
#' around the same two searches (`.gpucor_bn_knn()`, `.gpucor_bn_range()`),
#' and `findDistance()`/`queryDistance()` (the k-th distance alone) added;
#' the engine does not change.
#'
#' The class and its methods are defined when BiocNeighbors is loaded
#' (BiocNeighbors is only suggested: gpucor works without it, and
#' `GpucorParam()` then stops with a message); loading gpucor does not load
#' it, `GpucorParam()` does.
#'
#' @param distance `"Euclidean"`, `"Manhattan"` or `"Cosine"`.
#' @param backend,precision,devices as for [gpu_knn()]; kept in the
#'   object and used by every search made with it.
#' @return A `GpucorParam` object.
#' @seealso [gpu_knn()], [gpu_range()]
#' @examples
#' if (requireNamespace("BiocNeighbors", quietly = TRUE)) {
#'   x <- matrix(rnorm(500 * 10), 500, 10)
#'   nn <- BiocNeighbors::findKNN(x, k = 5, BNPARAM = GpucorParam())
#'   ex <- BiocNeighbors::findKNN(x, k = 5,
#'                                BNPARAM = BiocNeighbors::ExhaustiveParam())
#'   identical(nn$index, ex$index)
#'   idx <- BiocNeighbors::buildIndex(x, BNPARAM = GpucorParam("Manhattan"))
#'   BiocNeighbors::queryKNN(BNINDEX = idx, query = x[1:3, ] + 0.1, k = 2)
#' }
#' @aliases GpucorParam-class GpucorIndex-class
#'   show,GpucorParam-method bndata,GpucorIndex-method dim,GpucorIndex-method
#'   buildIndex,GpucorParam-method
#'   findKNN,missing,GpucorParam-method findKNN,GpucorIndex,missing-method
#'   findKNN,GpucorIndex,GpucorParam-method
#'   queryKNN,missing,GpucorParam-method queryKNN,GpucorIndex,missing-method
#'   queryKNN,GpucorIndex,GpucorParam-method
#'   findNeighbors,missing,GpucorParam-method
#'   findNeighbors,GpucorIndex,missing-method
#'   findNeighbors,GpucorIndex,GpucorParam-method
#'   queryNeighbors,missing,GpucorParam-method
#'   queryNeighbors,GpucorIndex,missing-method
#'   queryNeighbors,GpucorIndex,GpucorParam-method
#' @export
GpucorParam <- function(distance = c("Euclidean", "Manhattan", "Cosine"),
                        backend = getOption("gpucor.backend", "auto"),
                        precision = c("double", "single"),
                        devices = getOption("gpucor.devices", 0L)) {
  # loading BiocNeighbors defines the class and methods (.bn_hook())
  if (!requireNamespace("BiocNeighbors", quietly = TRUE))
    stop("GpucorParam() needs the BiocNeighbors package", call. = FALSE)
  if (!isTRUE(.gpucor_state$bn))
    stop(paste("GpucorParam's class could not be defined:",
               .gpucor_state$bn_error), call. = FALSE)
  distance <- match.arg(distance)
  precision <- match.arg(precision)
  # the backend's name is checked now; whether a GPU is there, at the search
  if (!is.character(backend) || length(backend) != 1L || is.na(backend) ||
      is.na(pmatch(backend, c("auto", "cpu", "gpu"))))
    stop("'backend' must be one of \"auto\", \"cpu\", \"gpu\"", call. = FALSE)
  backend <- match.arg(backend, c("auto", "cpu", "gpu"))
  methods::new("GpucorParam", distance = distance, backend = backend,
               precision = precision, devices = devices)
}

# ---- the class and methods, defined when BiocNeighbors loads --------------
# BiocNeighbors is a Suggests, and loading it takes a second: its classes
# and generics are reached through its namespace, and ours are defined into
# .bn_env (gpucor's namespace is sealed by then) when it is loaded -- at
# once if it already is when gpucor loads, else by a hook on its loading
# (R/zzz.R calls .bn_hook()).
.bn_env <- new.env()

.bn_hook <- function() {
  define <- function(...) {
    if (isTRUE(.gpucor_state$bn)) return(invisible())
    .gpucor_state$bn <- tryCatch(.bn_define(.bn_env), error = function(e) {
      .gpucor_state$bn_error <- conditionMessage(e)
      FALSE
    })
  }
  if ("BiocNeighbors" %in% loadedNamespaces()) define()
  else setHook(packageEvent("BiocNeighbors", "onLoad"), define)
}

# TRUE when the class and methods were defined (into 'where').
.bn_define <- function(where) {
  methods::setClass("GpucorParam", contains = "BiocNeighborParam",
                    slots = c(backend = "character", precision = "character",
                              devices = "ANY"), where = where)
  # 'points': one per row, the engine's layout ('data', BiocNeighbors' one
  # per column, is left empty: bndata() makes it when asked)
  methods::setClass("GpucorIndex", contains = "BiocNeighborIndex",
                    slots = c(points = "matrix", resident = "environment",
                              backend = "character", precision = "character",
                              devices = "ANY"),
                    where = where)
  ns <- where
  methods::setMethod("show", "GpucorParam", function(object) {
    cat(sprintf("class: %s\n", class(object)))
    cat(sprintf("distance: %s\n", object@distance))
    cat(sprintf("backend: %s, precision: %s, devices: %s\n", object@backend,
                object@precision, paste(format(object@devices), collapse = " ")))
  }, where = ns)
  bn <- asNamespace("BiocNeighbors")
  generic <- function(name) get(name, envir = bn)
  methods::setMethod(generic("bndata"), "GpucorIndex", function(x) t(x@points), where = ns)
  methods::setMethod("dim", "GpucorIndex", function(x) dim(x@points), where = ns)
  methods::setMethod(generic("buildIndex"), "GpucorParam",
                     function(X, ..., BNPARAM) .gpucor_bn_build(X, BNPARAM, ...), where = ns)
  # each search with a parameter object (the data indexed on the way), with
  # an index, and with both (the index's settings rule, as BiocNeighbors')
  # (an index made for one search gives its GPU copies back at once)
  once <- function(X, BNPARAM, search) {
    ix <- .gpucor_bn_build(X, BNPARAM)
    on.exit(.bn_resident_free(ix@resident))
    search(ix)
  }
  knn <- function(X, k, ..., BNINDEX, BNPARAM)
    once(X, BNPARAM, function(ix) .gpucor_bn_knn(ix, k, query = NULL, ...))
  knn_ix <- function(X, k, ..., BNINDEX, BNPARAM) .gpucor_bn_knn(BNINDEX, k, query = NULL, ...)
  qknn <- function(X, query, k, ..., BNINDEX, BNPARAM)
    once(X, BNPARAM, function(ix) .gpucor_bn_knn(ix, k, query = query, ...))
  qknn_ix <- function(X, query, k, ..., BNINDEX, BNPARAM)
    .gpucor_bn_knn(BNINDEX, k, query = query, ...)
  rng <- function(X, threshold, ..., BNINDEX, BNPARAM)
    once(X, BNPARAM, function(ix) .gpucor_bn_range(ix, threshold, query = NULL, ...))
  rng_ix <- function(X, threshold, ..., BNINDEX, BNPARAM)
    .gpucor_bn_range(BNINDEX, threshold, query = NULL, ...)
  qrng <- function(X, query, threshold, ..., BNINDEX, BNPARAM)
    once(X, BNPARAM, function(ix) .gpucor_bn_range(ix, threshold, query = query, ...))
  qrng_ix <- function(X, query, threshold, ..., BNINDEX, BNPARAM)
    .gpucor_bn_range(BNINDEX, threshold, query = query, ...)
  for (s in list(list("findKNN", knn, knn_ix), list("queryKNN", qknn, qknn_ix),
                 list("findNeighbors", rng, rng_ix), list("queryNeighbors", qrng, qrng_ix))) {
    f <- generic(s[[1L]])
    methods::setMethod(f, c("missing", "GpucorParam"), s[[2L]], where = ns)
    methods::setMethod(f, c("GpucorIndex", "missing"), s[[3L]], where = ns)
    methods::setMethod(f, c("GpucorIndex", "GpucorParam"), s[[3L]], where = ns)
  }
  TRUE
}

# The index: the points as BiocNeighbors keeps them (one per column),
# scaled to unit length for "Cosine" (BiocNeighbors' l2norm()), with the
# parameter's settings.  ... takes what buildIndex() and the searches pass
# on (transposed; the rest is BiocNeighbors' and ignored).
.gpucor_bn_build <- function(X, BNPARAM, transposed = FALSE, ...) {
  pts <- .bn_points(X, transposed, "X", BNPARAM@distance)
  methods::new("GpucorIndex", points = pts, data = matrix(0, 0L, 0L), NAMES = rownames(pts),
               resident = .bn_resident(pts),
               distance = BNPARAM@distance, backend = BNPARAM@backend,
               precision = BNPARAM@precision, devices = BNPARAM@devices)
}

# The handle under which the engine keeps an index's points on each GPU
# that searches them (src/knn.c): in an environment, so that copies of the
# index share it, freed with it (or by .bn_resident_free()).  At exit the
# device copies are freed with the rest of gpucor's GPU state (the exit
# finalizer of R/zzz.R: src/init.c's gpucor_gpu_release()), not here.
.bn_resident <- function(pts) {
  e <- new.env(parent = emptyenv())
  e$ptr <- .Call(C_gpucor_resident_new, pts)
  reg.finalizer(e, .bn_resident_free)
  e
}
.bn_resident_free <- function(e) {
  if (!isTRUE(.gpucor_state$unloaded) && !is.null(e$ptr))
    .Call(C_gpucor_resident_free, e$ptr)
  invisible()
}
# The GPUs holding the index's points and the copies made (tests).
.bn_resident_info <- function(index) .Call(C_gpucor_resident_info, index@resident$ptr)
# A search of the index, with its handle given to the engine.
.bn_with_resident <- function(index, code) {
  old <- options(gpucor.knn_resident = index@resident$ptr)
  on.exit(options(old))
  code
}

# Points (rows of X, or columns when transposed) as a double matrix
# without NA, scaled to unit length for "Cosine" (after the index's
# distance, when given).
.bn_points <- function(X, transposed, what, distance = NULL) {
  if (!isTRUE(transposed) && !isFALSE(transposed)) stop("'transposed' must be TRUE or FALSE")
  X <- as.matrix(X)
  if (transposed) X <- t(X)
  if (!(is.numeric(X) || is.logical(X))) stop(sprintf("'%s' must be a numeric matrix", what))
  X <- .as_double_matrix(X)
  if (anyNA(X)) stop(sprintf("'%s' has NA or NaN values", what))
  if (identical(distance, "Cosine")) X <- .bn_l2norm(X)
  X
}

.bn_l2norm <- function(X) {
  len <- sqrt(rowSums(X^2))
  if (any(len == 0)) stop("L2 norms of zero detected for distance='Cosine'")
  X / len
}

# The index's points, one per row (scaled already for "Cosine"); the
# engine's method for its distance.
.bn_data <- function(index) index@points
.bn_method <- function(index) if (index@distance == "Manhattan") "manhattan" else "euclidean"

# 'subset' (indices, names or logical) as positions among n points,
# BiocNeighbors' rule.
.bn_subset <- function(subset, n, names) {
  if (is.null(subset)) return(NULL)
  pos <- seq_len(n)
  names(pos) <- names
  out <- unname(pos[subset])
  if (anyNA(out)) stop("'subset' indices out of range of 'x'")
  out
}

# BPPARAM for gpu_knn(): none with one worker; none for a MulticoreParam
# that could reach the GPU (a fork cannot use CUDA: R/parallel.R), which
# BiocNeighbors' users often pass for its own searches.
.bn_workers <- function(BPPARAM, backend) {
  if (is.null(BPPARAM) || BiocParallel::bpnworkers(BPPARAM) < 2L ||
      (inherits(BPPARAM, "MulticoreParam") && backend != "cpu")) NULL
  else BPPARAM
}

# queryKNN()'s and queryNeighbors()' query: its points (rows), with the
# dimensions of the data x, its 'subset' only.
.bn_query <- function(query, transposed, index, x, subset) {
  q <- .bn_points(query, transposed, "query", index@distance)
  if (ncol(q) != ncol(x))
    stop(sprintf("'query' must have the %d dimensions of the data, not %d", ncol(x), ncol(q)))
  sub <- .bn_subset(subset, nrow(q), rownames(q))
  if (is.null(sub)) q else q[sub, , drop = FALSE]
}

# findKNN() (query NULL) and queryKNN().
.gpucor_bn_knn <- function(index, k, query = NULL, get.index = TRUE, get.distance = TRUE,
                           last = k, BPPARAM = NULL, subset = NULL, transposed = FALSE,
                           raw.index = FALSE, warn.ties = TRUE, ...) {
  if (!methods::is(index, "GpucorIndex")) stop("'BNINDEX' must be a GpucorIndex")
  x <- .bn_data(index)
  n <- nrow(x)
  if (missing(k) || !is.numeric(k) || length(k) != 1L || is.na(k) || k < 1 || k != floor(k))
    stop("'k' must be a whole number >= 1")
  kmax <- if (is.null(query)) n - 1L else n
  if (k > kmax) {
    k <- kmax
    warning(paste0("'k' capped at the number of observations",
                   if (is.null(query)) " minus 1" else ""))
  }
  if (!is.numeric(last) || length(last) != 1L || is.na(last) || last < 1)
    stop("'last' must be a whole number >= 1")
  last <- min(last, k)
  bp <- .bn_workers(BPPARAM, index@backend)
  run <- function(q, kk) {
    if (kk < 1) return(list(index = matrix(0L, NROW(q), 0L), distance = matrix(0, NROW(q), 0L)))
    .bn_with_resident(index, gpu_knn(x, kk, .bn_method(index), query = q,
                                     backend = index@backend, precision = index@precision,
                                     devices = index@devices, BPPARAM = bp))
  }
  if (!is.null(query)) {
    q <- .bn_query(query, transposed, index, x, subset)
    r <- run(q, k)
  } else {
    sub <- .bn_subset(subset, n, index@NAMES)
    if (is.null(sub)) {
      r <- run(NULL, k)
    } else {
      # the subset's points as a query, with one neighbour more: itself (at
      # distance 0, among any copies in index order) is left out, or the
      # last when copies before it filled the k + 1
      r <- run(x[sub, , drop = FALSE], k + 1L)
      self <- r$index == sub
      none <- rowSums(self) == 0
      self[none, k + 1L] <- TRUE
      keep <- t(!self)
      r$index <- matrix(t(r$index)[keep], ncol = k, byrow = TRUE)
      r$distance <- matrix(t(r$distance)[keep], ncol = k, byrow = TRUE)
    }
  }
  # the last 'last' columns, without names (no copy when that is all)
  pick <- function(m) {
    if (last < k) m <- m[, seq.int(k - last + 1L, length.out = last), drop = FALSE]
    if (!is.null(dimnames(m))) dimnames(m) <- NULL
    m
  }
  out <- list()
  if (get.index) out$index <- pick(r$index)
  if (get.distance) out$distance <- pick(r$distance)
  out
}

# findNeighbors() (query NULL: each point among all, itself included) and
# queryNeighbors(); threshold one, or one per point searched.
.gpucor_bn_range <- function(index, threshold, query = NULL, get.index = TRUE,
                             get.distance = TRUE, BPPARAM = NULL, subset = NULL,
                             transposed = FALSE, raw.index = FALSE, ...) {
  if (!methods::is(index, "GpucorIndex")) stop("'BNINDEX' must be a GpucorIndex")
  x <- .bn_data(index)
  if (missing(threshold) || !is.numeric(threshold) || length(threshold) < 1L ||
      anyNA(threshold))
    stop("'threshold' must be a number, or one per point")
  # BiocNeighbors' rule (its searches stop there)
  if (any(threshold <= 0)) stop("'threshold' should be positive")
  if (!is.null(query)) {
    q <- .bn_query(query, transposed, index, x, subset)
    npts <- nrow(q)
  } else {
    sub <- .bn_subset(subset, nrow(x), index@NAMES)
    q <- if (is.null(sub)) NULL else x[sub, , drop = FALSE]
    npts <- if (is.null(sub)) nrow(x) else length(sub)
  }
  if (length(threshold) != 1L && length(threshold) != npts)
    stop("length of 'threshold' should be equal to number of points specified in 'subset'")
  # one pass at the largest threshold, then each point's own
  r <- .bn_with_resident(index, .range_search(x, max(threshold), .bn_method(index), 2, q,
                                              index@backend, index@precision, index@devices,
                                              FALSE, 1L, self = is.null(q)))
  if (length(threshold) > 1L && any(threshold < max(threshold))) {
    for (i in which(threshold < max(threshold))) {
      ok <- r$distance[[i]] <= threshold[[i]]
      r$index[[i]] <- r$index[[i]][ok]
      r$distance[[i]] <- r$distance[[i]][ok]
    }
  }
  if (!get.index && !get.distance) return(unname(lengths(r$index)))
  out <- list()
  if (get.index) out$index <- unname(r$index)
  if (get.distance) out$distance <- unname(r$distance)
  out
}
