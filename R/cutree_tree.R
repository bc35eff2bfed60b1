# The "tree" method of dynamicTreeCut::cutreeDynamic(): dynamicTreeCut
# 1.63's cutreeDynamicTree(dendro, maxTreeHeight, deepSplit, minModuleSize),
# whose value (numbers, type) this returns, for gpu_cutree_dynamic().
# (cutreeDynamic(method = "tree") passes maxTreeHeight = cutHeight,
# minModuleSize = minClusterSize and its deepSplit, FALSE by default there.)
#
# The splitting runs in src/cutree_tree.c (its header tells the algorithm);
# here are the checks and the numbering of the modules.  Where the reference
# has no answer we give the natural one:
#  - a branch of one object (a static branch when minModuleSize <= 1, or a
#    piece of one object split again with deepSplit, possible when
#    minModuleSize <= 2) makes the reference fail ("incorrect number of
#    dimensions": a one-row subset drops to a vector); here it stays whole,
#    a module if minModuleSize <= 1;
#  - the reference prints "No module detected" when no static branch has
#    minModuleSize objects; this returns its zeros silently.
# Its other corners are kept: zeros (double) without a static branch; a
# logical NA vector when branches exist but no final piece has
# minModuleSize objects (its .assignModuleNumber() then returns logical(0),
# indexed by the order); an integer vector when one module takes every
# object; else doubles.  deepSplit counts as FALSE when deepSplit == FALSE
# (so 0 is FALSE and 2 is TRUE), as there.
.cutree_tree <- function(dendro, maxTreeHeight = 1, deepSplit = TRUE, minModuleSize = 50) {
  merge <- dendro$merge
  height <- dendro$height
  ord <- dendro$order
  n <- length(ord)
  if (!is.list(dendro) || !is.matrix(merge) || !is.numeric(merge) || ncol(merge) != 2L ||
      n < 2L || nrow(merge) != n - 1L || !is.numeric(height) || length(height) != n - 1L ||
      !is.numeric(ord))
    stop("'dendro' must be an \"hclust\" object of at least two objects")
  if (anyNA(height)) stop("'dendro$height' has missing values")
  # stats::cutree()'s error, which the reference's static cut raises
  if (is.unsorted(height))
    stop("the 'height' component of 'tree' is not sorted (increasingly)")
  if (!is.null(maxTreeHeight) && (!is.numeric(maxTreeHeight) || length(maxTreeHeight) != 1L ||
                                  is.na(maxTreeHeight)))
    stop("'maxTreeHeight' must be NULL or a number")
  if (!(is.logical(deepSplit) || is.numeric(deepSplit)) || length(deepSplit) != 1L ||
      is.na(deepSplit))
    stop("'deepSplit' must be TRUE, FALSE or a number")
  if (!is.numeric(minModuleSize) || length(minModuleSize) != 1L || is.na(minModuleSize))
    stop("'minModuleSize' must be a number")
  minModuleSize <- as.double(minModuleSize)

  top <- max(height)
  if (is.null(maxTreeHeight) || maxTreeHeight > top) maxTreeHeight <- 0.99 * top
  # the merges stats::cutree(h = ) makes: those before the first one
  # higher than h (its own formula, Inf heights included)
  nmade <- which.max(c(height, Inf) > maxTreeHeight) - 1L
  if (!is.integer(merge)) merge <- matrix(as.integer(merge), ncol = 2L)
  params <- c(minModuleSize, 2 * minModuleSize, trunc(minModuleSize / 3) + 1)
  runs <- .Call(C_gpucor_cutree_tree, merge, as.double(height), as.integer(ord), nmade,
                params, deepSplit != FALSE)
  if (is.null(runs)) return(rep(0, n))

  start <- runs[[1L]]
  size <- runs[[2L]] - start + 1L
  keep <- size >= minModuleSize
  if (!any(keep)) return(rep(NA, n))
  start <- start[keep]
  size <- size[keep]
  if (length(size) == 1L && size == n) return(rep(1L, n))
  # modules numbered by size, largest first; equal sizes left to right in
  # the order (a stable sort, as the reference's sort of a table)
  number <- integer(length(size))
  number[order(-size)] <- seq_along(size)
  at <- numeric(n)
  at[sequence(size, from = start)] <- rep.int(number, size)
  out <- numeric(n)
  out[ord] <- at
  out
}
