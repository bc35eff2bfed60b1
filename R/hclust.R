# stats::hclust()'s METHODS, in its order; R passes the name (the HC_* enum
# of src/algo/hclust.h and its gc_hclust_names, which
# tests/testthat/test-measures.R compares).
.gpucor_hclust_methods <- c("ward.D", "single", "complete", "average", "mcquitty",
                            "median", "centroid", "ward.D2")

#' Hierarchical clustering as stats::hclust does it, past 65536 objects
#'
#' `gpu_hclust()` clusters the objects of a dissimilarity `d` (a `dist`), or
#' the rows of a data matrix `x` under any [gpu_dist()] metric, and returns
#' the `hclust` object [stats::hclust()] returns for the same input:
#' `merge`, `height`, `order`, `labels`, `method`, `call` and `dist.method`,
#' so [stats::cutree()], `as.dendrogram()`, `plot()` and
#' `dynamicTreeCut::cutreeDynamic()` take it.  It has no limit of 65536
#' objects, and from `x` on the GPU the distances are computed on the
#' device and stay there: they never reach R.
#'
#' **Algorithms.**  The reducible methods (`"single"`, `"complete"`,
#' `"average"`, `"mcquitty"`, `"ward.D"`, `"ward.D2"`) run the
#' nearest-neighbour chain, O(n^2) time: a chain of nearest neighbours grows
#' until two clusters are each other's nearest neighbour, they merge (a
#' Lance-Williams update of one row of distances, with stats' formulas), and
#' the chain goes on.  On the GPU the distances are resident on the device
#' and each step of the chain is a parallel scan of one row; the steps run
#' in CUDA graphs, without the host in the loop.  Both engines make the same
#' steps with the same arithmetic, so in double they give the same bits.
#' `"centroid"` and `"median"` are not reducible (a merge can bring two
#' other clusters nearer), so they run stats' own algorithm (its
#' nearest-neighbour list) on the CPU with either backend; `backend = "gpu"`
#' then computes only the distances from `x`.
#'
#' **Exactness.**  Where no two distances tie, the merges are those of
#' [stats::hclust()], so `merge` and `order` are identical and `height`
#' agrees to rounding (the chain reaches each merge through the same
#' clusters, but the update of a distance may be made in another order
#' than stats': about 1e-15 relative; single and complete linkage, which
#' only take minima and maxima, give stats' heights exactly).  Centroid and
#' median give stats' result exactly, ties included.  With ties a row scan
#' takes, among the equal nearest distances, the chain's previous cluster
#' if it is one of them, else the cluster of smallest index; merges of equal
#' height keep the order the chain made them in.  That is a valid
#' clustering for the method, but not always the one stats' greedy order
#' gives (stats merges the tied pair whose first object has the smallest
#' index first), and fastcluster's can differ again.
#'
#' **Memory.**  With `n` objects, the distances take `4 n (n - 1)` bytes in
#' double (`2 n (n - 1)` in single).  The CPU engine works on a copy of
#' `d` (the input is not modified), or on the `dist` it computes from `x`:
#' that many bytes of host memory besides `d`.  The GPU keeps them on the
#' device (in double, or in float with `precision = "single"`), plus about
#' 64 MiB and 40 bytes per object; from `d` it needs no host memory besides
#' `d` itself.  So an 80 GB card takes about 130000 objects in double
#' (100000 need 40 GB) and 180000 in single; a problem that does not fit
#' stops with an error that gives the numbers before anything is computed.
#' In single precision the distances are rounded to float, so merges whose
#' heights differ by less than about 1e-7 relative may come in another
#' order than in double.
#'
#' @section On the CPU:
#' From a `dist`, the CPU engine runs the chain as `fastcluster::hclust()`
#' does, and takes about its time on 2 cores (`bench/incumbents.R`, the
#' 2-core machine, 2026-11-28, 3000 objects: average linkage 0.437 s
#' against fastcluster's 0.446 s; an earlier run took 1.15 times
#' fastcluster's time).  So for a `dist` in memory of fewer than 65536
#' objects, `fastcluster::hclust(d)` is as good; `gpu_hclust()` gains
#' against [stats::hclust()] (1.25 s there), from `x` (0.52 s against
#' 1.57 s for `dist()` then fastcluster; single linkage 0.55 s and Ward 0.95 s
#' against 2.29 s and 7.71 s for `fastcluster::hclust.vector()`), past 65536
#' objects and on the GPU.
#'
#' @param d a `dist` (or a square symmetric matrix of dissimilarities, taken
#'   with [stats::as.dist()]), or an on-disk square matrix (an `HDF5Matrix`
#'   or other `DelayedMatrix`, such as `gpu_dist(output = gpu_hdf5(...))`
#'   or `gpu_cor(output = ...)` writes): its lower triangle is read in
#'   blocks of columns (DelayedArray's block size) into a `dist`, as
#'   `as.dist()` takes it, with no n x n matrix made in R.
#' @param x instead of `d` (by name: it follows `...`): a numeric matrix (or data frame,
#'   `SummarizedExperiment`, ... as for [gpu_dist()]) whose rows are the
#'   objects.
#' @param method the agglomeration method, one of `"complete"` (the
#'   default), `"single"`, `"average"`, `"mcquitty"`, `"ward.D"`,
#'   `"ward.D2"`, `"centroid"` or `"median"` (may be abbreviated; `"ward"`
#'   is taken as `"ward.D"` with stats' message).
#' @param distance with `x`: the [gpu_dist()] metric (`"euclidean"`,
#'   `"correlation"`, `"spearman"`, ...).
#' @param members `NULL`, or the sizes of the clusters the objects stand
#'   for, as in [stats::hclust()].
#' @param backend,precision,devices,verbose as for [gpu_cor()]; the GPU
#'   engine uses one GPU, the first of `devices`, and `precision = "single"`
#'   keeps the distances in float there (the CPU engine works in double).
#'   `verbose` also names the algorithm (the nearest-neighbour chain, or
#'   stats' list for centroid and median) and where the distances came from.
#' @param ... further arguments of [gpu_dist()] with `x`: `p` (Minkowski's
#'   power), `assay` and `use.dimred` (a `SingleCellExperiment`'s cells are
#'   clustered: see "Orientation" in [gpucor]).  (The arguments after `...` are matched by their
#'   whole names only.)  The first three arguments are those of
#'   [stats::hclust()], in its order, so `gpu_hclust(d, "average")` is
#'   `hclust(d, "average")`.
#' @return An object of class `"hclust"`, as [stats::hclust()] returns.
#' @seealso [stats::hclust()], [gpu_dist()], [stats::cutree()]
#' @examples
#' x <- matrix(rnorm(200), 40, 5)
#' hc <- gpu_hclust(dist(x), method = "average")
#' identical(hc$merge, hclust(dist(x), method = "average")$merge)
#' cutree(gpu_hclust(x = x, distance = "correlation"), k = 3)
#' @export
gpu_hclust <- function(d = NULL,
                       method = c("complete", "single", "average", "mcquitty", "ward.D",
                                  "ward.D2", "centroid", "median"),
                       members = NULL, ..., x = NULL, distance = "euclidean",
                       backend = getOption("gpucor.backend", "auto"),
                       precision = c("double", "single"),
                       devices = getOption("gpucor.devices", 0L),
                       verbose = getOption("gpucor.verbose", FALSE)) {
  .check_common()
  if (is.null(d) == is.null(x)) stop("give either 'd' or 'x'")
  if (missing(method)) method <- "complete"
  if (!is.character(method) || length(method) != 1L || is.na(method))
    stop("invalid clustering method")
  if (method == "ward") {
    message("The \"ward\" method has been renamed to \"ward.D\"; note new \"ward.D2\"")
    method <- "ward.D"
  }
  i.meth <- pmatch(method, .gpucor_hclust_methods)
  if (is.na(i.meth)) stop("invalid clustering method", paste("", method))
  method <- .gpucor_hclust_methods[i.meth]
  reducible <- !method %in% c("median", "centroid")
  dots <- list(...)
  if (length(dots) && (is.null(names(dots)) ||
                       !all(names(dots) %in% c("p", "assay", "use.dimred"))))
    stop("'...' takes gpu_dist()'s 'p' and 'assay' only (and 'use.dimred' for a SingleCellExperiment)")
  if (!is.null(d) && length(dots)) stop("'p', 'assay' and 'use.dimred' go with 'x', not with 'd'")
  pw <- if (is.null(dots$p)) 2 else dots$p

  if (!is.null(d)) {
    if (inherits(d, "DelayedArray")) {
      # an on-disk n x n result: its lower triangle read in blocks of
      # columns (R/cutree.R), labelled as stats::as.dist() labels a matrix
      if (length(dim(d)) != 2L || nrow(d) != ncol(d))
        stop("invalid dissimilarities: 'd' must be a \"dist\" or a square numeric matrix")
      if (nrow(d) < 2L) stop("must have n >= 2 objects to cluster")
      lab <- if (!is.null(rownames(d))) rownames(d) else colnames(d)
      d <- structure(.delayed_to_dist(d), Labels = lab, Size = nrow(d), class = "dist")
    }
    if (!inherits(d, "dist")) {
      if (!is.matrix(d) || nrow(d) != ncol(d) || !is.numeric(d))
        stop("invalid dissimilarities: 'd' must be a \"dist\" or a square numeric matrix")
      d <- stats::as.dist(d)
    }
    n <- attr(d, "Size")
    if (is.null(n) || is.na(n)) stop("invalid dissimilarities")
    n <- as.double(n)
    labels <- attr(d, "Labels")
    dist.method <- attr(d, "method")
    work <- n * n
  } else {
    m <- .dist_method(distance, pw)
    assay <- if (is.null(dots$assay)) 1L else dots$assay
    x <- .dist_input(.cells_as_rows(x, "x", assay, dots$use.dimred), assay)
    n <- as.double(nrow(x))
    labels <- dimnames(x)[[1L]]
    dist.method <- m
    work <- n * n * max(1, ncol(x))
  }
  if (n < 2) stop("must have n >= 2 objects to cluster")
  if (n > .Machine$integer.max) stop("too many objects")
  if (!is.null(d) && length(d) != n * (n - 1) / 2) stop("dissimilarities of improper length")
  if (!is.null(members)) {
    if (length(members) != n) stop("invalid length of members")
    members <- as.double(members)
    if (anyNA(members) || any(members <= 0)) stop("'members' must be positive numbers")
  }
  backend <- .resolve_backend(backend, work)
  len_bytes <- 4 * n * (n - 1)
  # the CPU engine's copy of d, or the dist it computes from x
  if (backend == "cpu" || !reducible)
    .memory_guard(len_bytes, sprintf("gpu_hclust(): the distances of %.0f objects", n),
                  "Cluster a subset, or use the GPU (the distances stay on the device).")

  inplace <- FALSE
  bar <- NULL
  data <- d
  src <- ", from 'd'"   # for verbose: where the distances came from
  if (!is.null(x)) {
    if (backend == "gpu" && reducible) {
      data <- x
      src <- ", distances of 'x' on the device"
    } else {
      src <- ", distances of 'x' by gpu_dist()"
      # one bar for the distances' engine call and the clustering's; the
      # distances' share as on the GPU (src/hclust.c): p coordinates a
      # pair against the merges' few scans of each distance
      bar <- .progress_begin("gpu_hclust")
      .progress_frame(bar, "distances", 1L, 2L, ncol(x) / (ncol(x) + 8))
      data <- gpu_dist(x, method = dist.method, p = pw,
                       backend = backend, precision = "double", devices = devices)
      if (anyNA(data))
        stop("the distances between the rows of 'x' have NA/NaN values (a constant row, ",
             "a row without observed values, or two rows sharing too few observed ",
             "coordinates): remove those rows, or compute the distances with gpu_dist() ",
             "and replace the NAs")
      inplace <- TRUE   # our own copy: the engine may overwrite it
      .progress_frame(bar, "clustering", 2L, 2L)
    }
  } else if (!is.double(data)) {
    data <- as.double(data)
    inplace <- TRUE
  }
  run_backend <- if (reducible) backend else "cpu"
  # for verbose: the algorithm, and where the distances came from
  path <- paste0(if (reducible) "nearest-neighbour chain" else "stats' nearest-neighbour list",
                 src)
  r <- .engine_call(.Call(C_gpucor_hclust, data, n, method, members,
                          if (!is.null(x)) m, as.double(pw),
                          .engine_opts(run_backend, precision, verbose, devices), inplace),
                    "gpu_hclust", run_backend, precision, devices, verbose,
                    report = function(s, th) .engine_report("gpu_hclust", th, precision, s,
                                                            devices, path, path))
  rm(data)
  .progress_end(bar)
  if (isTRUE(attr(r, "nonfinite"))) warning("treating non-finite values as NA")
  structure(list(merge = r[[1L]], height = r[[2L]], order = r[[3L]],
                 labels = labels, method = .gpucor_hclust_methods[i.meth],
                 call = match.call(), dist.method = dist.method),
            class = "hclust")
}
