#' Dynamic tree cut: modules of a dendrogram, as dynamicTreeCut finds them
#'
#' `gpu_cutree_dynamic()` is `dynamicTreeCut::cutreeDynamic()` with the
#' same arguments, defaults and labels, with its hybrid method in compiled
#' code: the pass over the merges and the PAM stage, which in dynamicTreeCut
#' are R loops (the PAM stage takes, for every unassigned object, its mean
#' distance to every cluster).  On the ALL data's 12625 genes that is the
#' step that took 22.7 s of a WGCNA pipeline.
#'
#' `distM` may be a `dist` (for example `gpu_tom(dist = TRUE)`, or
#' `as.dist()` of a matrix), a numeric matrix, or an on-disk matrix (an
#' `HDF5Matrix` or other `DelayedMatrix`, such as `gpu_tom(output =
#' gpu_hdf5(...))` writes), read in blocks into a `dist`: no n x n matrix
#' is made in R.  The reference needs a dense matrix (and makes a second
#' one, logical, to test its diagonal).
#'
#' @details The labels are dynamicTreeCut's: 0 for unassigned objects, then
#'   1, 2, ... by decreasing module size; the same numeric vector
#'   (`identical()`), for both methods and every argument.  Every
#'   decision of the hybrid method compares a mean of distances with a
#'   bound; these means are summed as R sums them (in long double, in the
#'   same order, with `mean()`'s second pass), so that the labels stay
#'   identical when a mean lands on a bound.  Where dynamicTreeCut stops
#'   with an error (a PAM-stage object whose nearest "cluster" is the
#'   unlabelled group, which its code does not expect), so does this
#'   function, with a message saying so.  With `useMedoids = TRUE` the
#'   reference's pairing of medoids with labels on a branch that holds an
#'   unlabelled basic cluster is kept as it is.  Method `"tree"` runs the
#'   same algorithm as `cutreeDynamicTree()`, in compiled code, with its
#'   value types (a logical `NA` vector when no piece reaches
#'   `minClusterSize`); where `cutreeDynamicTree()` fails on a branch of
#'   one object ("incorrect number of dimensions", with `minClusterSize` of
#'   1 or 2), that branch stays whole (a module if `minClusterSize` <= 1).
#'
#'   The cut runs on the CPU with either backend (the work is small next to
#'   the TOM and the tree); `options(gpucor.threads)` sets its threads.
#'   From `verbose = 1`, a message names the engine, its threads and the
#'   method that ran.
#'   `externalBranchSplitFnc` (R functions called at merges, such as
#'   WGCNA's `branchEigengeneDissim`) are called from the compiled pass as
#'   the reference calls them.  A `DelayedMatrix` `distM` must be symmetric
#'   (its lower triangle is read).
#'
#' @param dendro a dendrogram, of class `hclust` (from [stats::hclust()],
#'   `fastcluster::hclust()` or [gpu_hclust()]).
#' @param cutHeight,minClusterSize,method,distM,deepSplit,maxCoreScatter,minGap,maxAbsCoreScatter,minAbsGap,minSplitHeight,minAbsSplitHeight,externalBranchSplitFnc,minExternalSplit,externalSplitOptions,externalSplitFncNeedsDistance,assumeSimpleExternalSpecification,pamStage,pamRespectsDendro,useMedoids,maxDistToLabel,maxPamDist,respectSmallClusters,verbose,indent
#'   as for `dynamicTreeCut::cutreeDynamic()`: the same names, order and
#'   defaults (`deepSplit` 1 for `"hybrid"`, `FALSE` for `"tree"`;
#'   `maxPamDist` defaults to `cutHeight` as given).
#' @return A numeric vector of labels, one per object of `dendro`, as
#'   `cutreeDynamic()` returns it.
#' @seealso `dynamicTreeCut::cutreeDynamic()`, [gpu_hclust()], [gpu_tom()]
#' @examples
#' x <- matrix(rnorm(40 * 200), 40)
#' d <- gpu_dist(t(x))
#' tree <- gpu_hclust(d, method = "average")
#' table(gpu_cutree_dynamic(tree, distM = d, minClusterSize = 10, verbose = 0))
#' @export
gpu_cutree_dynamic <- function(dendro, cutHeight = NULL, minClusterSize = 20, method = "hybrid",
                               distM = NULL, deepSplit = (ifelse(method == "hybrid", 1, FALSE)),
                               maxCoreScatter = NULL, minGap = NULL, maxAbsCoreScatter = NULL,
                               minAbsGap = NULL, minSplitHeight = NULL, minAbsSplitHeight = NULL,
                               externalBranchSplitFnc = NULL, minExternalSplit = NULL,
                               externalSplitOptions = list(),
                               externalSplitFncNeedsDistance = NULL,
                               assumeSimpleExternalSpecification = TRUE, pamStage = TRUE,
                               pamRespectsDendro = TRUE, useMedoids = FALSE,
                               maxDistToLabel = NULL, maxPamDist = cutHeight,
                               respectSmallClusters = TRUE, verbose = 2, indent = 0) {
  if (!is.null(maxDistToLabel)) {
    .print_flush("cutreeDynamic: maxDistToLabel in deprecated. Please use maxPamDist instead")
    maxPamDist <- maxDistToLabel
  }
  if (!inherits(dendro, "hclust"))
    stop("Argument dendro must have class hclust.")
  met <- charmatch(method, c("hybrid", "tree"))
  if (length(met) != 1L || is.na(met) || met == 0L)
    stop("Invalid method argument. Accepted values are (unique abbreviations of) hybrid, tree")
  if (met == 1L && is.null(distM)) {
    warning(paste("cutreeDynamic: method \"hybrid\" requires a valid dissimilarity matrix \"distM\".",
                  "\nDefaulting to method \"tree\"."))
    met <- 2L
  }
  if (met == 2L)
    return(.engine_call(.cutree_tree(dendro, maxTreeHeight = cutHeight, deepSplit = deepSplit,
                                     minModuleSize = minClusterSize),
                        "gpu_cutree_dynamic", "cpu", verbose = .cutree_verbose(verbose),
                        report = .cpu_report("gpu_cutree_dynamic",
                                             "method \"tree\": one pass over the merges", 1L)))
  external <- list(fnc = externalBranchSplitFnc, min = minExternalSplit,
                   options = externalSplitOptions, needsDistance = externalSplitFncNeedsDistance,
                   simple = assumeSimpleExternalSpecification)
  .cutree_hybrid(dendro, distM, cutHeight, minClusterSize, deepSplit, maxCoreScatter, minGap,
                 maxAbsCoreScatter, minAbsGap, minSplitHeight, minAbsSplitHeight, pamStage,
                 pamRespectsDendro, useMedoids, maxPamDist, respectSmallClusters, verbose, indent,
                 external)
}

# The external branch splits as cutreeHybrid() prepares them, as one
# function of the two branches' objects that the compiled pass calls: TRUE
# when one of the criteria, taken in order, falls below its minimum.
.cutree_external <- function(ext, dendro, distM) {
  fns <- ext$fnc
  n <- length(fns)
  if (n == 0) return(NULL)
  if (length(ext$min) < 1) stop("'minExternalBranchSplit' must be given.")
  opts <- ext$options
  if (ext$simple && n == 1) opts <- list(opts)
  fns <- lapply(fns, match.fun)
  for (es in seq_len(n)) {
    opts[[es]]$tree <- dendro
    if (length(ext$needsDistance) == 0 || ext$needsDistance[es]) opts[[es]]$dissimMat <- distM
  }
  minSplit <- ext$min
  function(branch1, branch2) {
    es <- 0
    merge <- FALSE
    while (es < n && !merge) {
      es <- es + 1
      split <- do.call(fns[[es]], c(opts[[es]], list(branch1 = branch1, branch2 = branch2)))
      merge <- split < minSplit[es]
    }
    merge
  }
}

# verbose > 0 (dynamicTreeCut's levels) also names the engine that ran
.cutree_verbose <- function(verbose) length(verbose) == 1L && isTRUE(verbose > 0)

.print_flush <- function(...) {
  cat(...)
  cat("\n")
  flush(stdout())
}

# cutreeHybrid()'s thresholds (computed as it computes them), the compiled
# pass and PAM stage, then its renumbering of the labels by module size.
.cutree_hybrid <- function(dendro, distM, cutHeight, minClusterSize, deepSplit, maxCoreScatter,
                           minGap, maxAbsCoreScatter, minAbsGap, minSplitHeight,
                           minAbsSplitHeight, pamStage, pamRespectsDendro, useMedoids,
                           maxPamDist, respectSmallClusters, verbose, indent,
                           external = list()) {
  spaces <- .wgcna_spaces(indent)
  height <- as.double(dendro$height)
  merge <- dendro$merge
  nMerge <- length(height)
  if (nMerge < 1)
    stop("The given dendrogram is suspicious: number of merges is zero.")
  if (!is.matrix(merge) || !identical(dim(merge), c(nMerge, 2L)))
    stop("'dendro$merge' must be a matrix of ", nMerge, " rows and 2 columns")
  storage.mode(merge) <- "integer"
  d <- .cutree_distances(distM, nMerge + 1)
  if (pamRespectsDendro && !respectSmallClusters)
    .print_flush(paste("cutreeHybrid Warning: parameters pamRespectsDendro (TRUE)",
                       "and respectSmallClusters (FALSE) imply contradictory intent.\n",
                       "Although the code will work, please check you really",
                       "intented these settings for the two arguments."))
  refMerge <- round(nMerge * 0.05)
  if (refMerge < 1) refMerge <- 1
  refHeight <- height[refMerge]
  if (is.null(cutHeight)) {
    cutHeight <- 0.99 * (max(height) - refHeight) + refHeight
    if (verbose > 0)
      .print_flush(paste(spaces, "..cutHeight not given, setting it to", signif(cutHeight, 3),
                         " ===>  99% of the (truncated) height range in dendro."))
  } else if (cutHeight > max(height)) {
    cutHeight <- max(height)
  }
  if (is.null(maxPamDist)) maxPamDist <- cutHeight
  if (sum(height <= cutHeight) < minClusterSize) {
    if (verbose > 0) .print_flush(paste(spaces, "cutHeight set too low: no merges below the cut."))
    return(rep(0, times = nMerge + 1))
  }
  external <- .cutree_external(external, dendro, distM)
  defMCS <- c(0.64, 0.73, 0.82, 0.91, 0.95)
  defMG <- (1 - defMCS) * 3 / 4
  nSplitDefaults <- length(defMCS)
  if (is.logical(deepSplit)) deepSplit <- as.integer(deepSplit) * (nSplitDefaults - 2)
  deepSplit <- deepSplit + 1
  if ((deepSplit < 1) | (deepSplit > nSplitDefaults))
    stop(paste("Parameter deepSplit (value", deepSplit,
               ") out of range: allowable range is 0 through", nSplitDefaults - 1))
  interpolate <- function(data, index) {
    i <- round(index)
    n <- length(data)
    if (i < 1) return(data[1])
    if (i >= n) return(data[n])
    r <- index - i
    data[i] * (1 - r) + data[i + 1] * r
  }
  if (is.null(maxCoreScatter)) maxCoreScatter <- interpolate(defMCS, deepSplit)
  if (is.null(minGap)) minGap <- interpolate(defMG, deepSplit)
  if (is.null(maxAbsCoreScatter))
    maxAbsCoreScatter <- refHeight + maxCoreScatter * (cutHeight - refHeight)
  if (is.null(minAbsGap)) minAbsGap <- minGap * (cutHeight - refHeight)
  if (is.null(minSplitHeight)) minSplitHeight <- 0
  if (is.null(minAbsSplitHeight))
    minAbsSplitHeight <- refHeight + minSplitHeight * (cutHeight - refHeight)
  params <- as.double(c(cutHeight, maxAbsCoreScatter, minAbsGap, minAbsSplitHeight, maxPamDist,
                        minClusterSize))
  if (length(params) != 6L || anyNA(params[-5L]))
    stop("the cut's thresholds must be single numbers")
  flags <- as.logical(c(pamStage, pamRespectsDendro, useMedoids, respectSmallClusters))
  if (length(flags) != 4L || anyNA(flags))
    stop("'pamStage', 'pamRespectsDendro', 'useMedoids' and 'respectSmallClusters' ",
         "must be TRUE or FALSE")
  Colors <- .engine_call(.Call(C_gpucor_cutree_hybrid, merge, height, d$x, nMerge + 1, params,
                               flags, external, .engine_opts("cpu", "double")),
                         "gpu_cutree_dynamic", "cpu", verbose = .cutree_verbose(verbose),
                         report = .cpu_report("gpu_cutree_dynamic", paste0(
                           "method \"hybrid\"", if (pamStage) ", PAM stage" else "")))
  # cutreeHybrid's renumbering: 0 stays 0, the others by decreasing size
  # (ties by label), with its types (double with unlabelled objects,
  # integer without).
  Colors[Colors < 0] <- 0
  UnlabeledExist <- (sum(Colors == 0) > 0)
  NumLabs <- as.numeric(as.factor(Colors))
  Sizes <- table(NumLabs)
  if (UnlabeledExist) {
    SizeRank <- if (length(Sizes) > 1)
      c(1, rank(-Sizes[2:length(Sizes)], ties.method = "first") + 1) else 1
  } else {
    SizeRank <- rank(-Sizes[1:length(Sizes)], ties.method = "first")
  }
  if (verbose > 0) .print_flush(paste(spaces, "..done."))
  SizeRank[NumLabs] - UnlabeledExist
}

# The distances of n objects for the compiled cut: list(x = a double
# matrix or a packed 'dist' vector).
.cutree_distances <- function(distM, n) {
  if (is.null(distM)) stop("distM must be non-NULL")
  if (inherits(distM, "dist")) {
    if (attr(distM, "Size") != n) stop("distM has incorrect dimensions.")
    # passed as it is (the compiled code reads its values; no copy)
    if (!is.double(distM)) distM <- structure(as.double(distM), Size = n, class = "dist")
    return(list(x = distM))
  }
  if (inherits(distM, "DelayedMatrix") || inherits(distM, "DelayedArray")) {
    if (!identical(as.numeric(dim(distM)), c(n, n))) stop("distM has incorrect dimensions.")
    return(list(x = .delayed_to_dist(distM)))
  }
  if (is.data.frame(distM)) distM <- as.matrix(distM)
  if (is.null(dim(distM))) stop("distM must be a matrix.")
  if (!identical(as.numeric(dim(distM)), c(n, n))) stop("distM has incorrect dimensions.")
  if (!is.matrix(distM)) distM <- as.matrix(distM)
  if (!is.numeric(distM) && !is.logical(distM))
    stop("'distM' must be numeric, not ", class(distM)[1L])
  if (!is.double(distM)) storage.mode(distM) <- "double"
  list(x = distM)
}

# The lower triangle of a symmetric on-disk matrix as a packed 'dist'
# vector, read in blocks of columns (DelayedArray's block size, as the
# other blocked readers: .block_bytes()).
.delayed_to_dist <- function(m) {
  n <- nrow(m)
  out <- numeric(n * (n - 1) / 2)
  step <- max(1L, as.integer(.block_bytes() / (8 * n)))
  off <- 0
  for (j0 in seq(1L, max(1L, n - 1L), by = step)) {
    j1 <- min(n - 1L, j0 + step - 1L)
    blk <- as.matrix(m[, j0:j1, drop = FALSE])
    storage.mode(blk) <- "double"
    for (j in j0:j1) {
      len <- n - j
      out[off + seq_len(len)] <- blk[(j + 1L):n, j - j0 + 1L]
      off <- off + len
    }
  }
  out
}
