# gpu_cutree_dynamic() against dynamicTreeCut::cutreeDynamic (1.63): the
# same labels (identical(): values and type) on random and planted-module
# data for both methods and the arguments users change, ties in heights,
# tiny trees, trees from hclust, fastcluster and gpu_hclust, distM as a
# matrix, a 'dist' and an on-disk matrix; a fresh seed per test, printed in
# the expectation's label.
new_cut_seed <- function() {
  seed <- sample.int(1e6, 1)
  set.seed(seed)
  seed
}

planted <- function(n, p, k, noise) {
  f <- matrix(rnorm(n * k), n)
  g <- sample(0:k, p, TRUE)
  vapply(g, function(j) if (j == 0) rnorm(n) else f[, j] + noise * rnorm(n), numeric(n))
}

# Both calls with the same arguments: the same labels, or both an error.
same_cut <- function(args, info) {
  ref <- tryCatch(do.call(dynamicTreeCut::cutreeDynamic, args), error = function(e) e)
  got <- tryCatch(do.call(gpu_cutree_dynamic, args), error = function(e) e)
  if (inherits(ref, "error")) expect_s3_class(got, "error")
  else expect_identical(got, ref, info = info)
}

test_that("hybrid labels equal cutreeDynamic's on planted modules, many settings", {
  skip_if_not_installed("dynamicTreeCut")
  seed <- new_cut_seed()
  for (rep in 1:4) {
    x <- planted(30, sample(c(60, 150), 1), 4, runif(1, 0.4, 2))
    dm <- 1 - abs(cor(x))
    tree <- stats::hclust(as.dist(dm), sample(c("average", "complete"), 1))
    for (ds in 0:3) for (pr in c(TRUE, FALSE)) for (um in c(FALSE, TRUE)) {
      mcs <- sample(c(3, 8, 20), 1)
      args <- list(tree, distM = dm, deepSplit = ds, pamRespectsDendro = pr, useMedoids = um,
                   minClusterSize = mcs, verbose = 0)
      same_cut(args, sprintf("seed %d rep %d deepSplit %d pamRespectsDendro %s useMedoids %s mcs %g",
                             seed, rep, ds, pr, um, mcs))
    }
  }
})

test_that("given thresholds, no PAM stage, small clusters not respected, cutHeight, maxPamDist", {
  skip_if_not_installed("dynamicTreeCut")
  seed <- new_cut_seed()
  x <- planted(25, 120, 4, 1.2)
  dm <- 1 - abs(cor(x))
  tree <- stats::hclust(as.dist(dm), "average")
  h <- tree$height
  variants <- list(
    list(cutHeight = quantile(h, 0.9)[[1]]), list(cutHeight = max(h) + 1),
    list(cutHeight = min(h) / 2), list(cutHeight = quantile(h, 0.5)[[1]]),
    list(maxCoreScatter = 0.5), list(minGap = 0.05), list(maxCoreScatter = 0.9, minGap = 0.01),
    list(maxAbsCoreScatter = median(h), minAbsGap = 0.01),
    list(minSplitHeight = 0.5), list(minAbsSplitHeight = quantile(h, 0.6)[[1]]),
    list(pamStage = FALSE), list(respectSmallClusters = FALSE),
    list(respectSmallClusters = FALSE, pamRespectsDendro = FALSE),
    list(maxPamDist = 0), list(maxPamDist = max(h)), list(useMedoids = TRUE, maxPamDist = 0),
    list(deepSplit = TRUE), list(deepSplit = FALSE), list(deepSplit = 1.5), list(minClusterSize = 1),
    list(minClusterSize = 200))
  for (i in seq_along(variants)) {
    for (pr in c(TRUE, FALSE)) {
      args <- c(list(tree, distM = dm, verbose = 0, pamRespectsDendro = pr), variants[[i]])
      # both print a warning line for pamRespectsDendro without respectSmallClusters
      capture.output(same_cut(args, sprintf("seed %d variant %d pamRespectsDendro %s", seed, i, pr)))
    }
  }
})

test_that("ties in heights, tiny trees, trees from fastcluster and gpu_hclust", {
  skip_if_not_installed("dynamicTreeCut")
  seed <- new_cut_seed()
  # integer-valued distances: many merges at the same height
  for (rep in 1:3) {
    x <- matrix(sample(0:3, 80 * 6, TRUE), 80)
    d <- dist(x, "manhattan")
    tree <- stats::hclust(d, "average")
    for (ds in c(0, 2)) for (um in c(FALSE, TRUE))
      same_cut(list(tree, distM = as.matrix(d), deepSplit = ds, useMedoids = um,
                    minClusterSize = 4, verbose = 0),
               sprintf("seed %d ties rep %d deepSplit %d useMedoids %s", seed, rep, ds, um))
  }
  for (n in 2:5) {
    x <- matrix(rnorm(n * 3), n)
    d <- dist(x)
    tree <- stats::hclust(d, "average")
    for (mcs in c(1, 2, 20))
      same_cut(list(tree, distM = as.matrix(d), minClusterSize = mcs, verbose = 0),
               sprintf("seed %d n %d mcs %g", seed, n, mcs))
  }
  x <- planted(30, 200, 5, 1)
  d <- as.dist(1 - cor(x))
  trees <- list(gpu_hclust(d, method = "average"))
  if (requireNamespace("fastcluster", quietly = TRUE))
    trees <- c(trees, list(fastcluster::hclust(d, "average")))
  for (tr in trees)
    for (ds in 0:3)
      same_cut(list(tr, distM = as.matrix(d), deepSplit = ds, minClusterSize = 10, verbose = 0),
               sprintf("seed %d deepSplit %d", seed, ds))
})

test_that("distM as a 'dist', a data frame, an integer matrix and on disk give the matrix's labels", {
  skip_if_not_installed("dynamicTreeCut")
  seed <- new_cut_seed()
  info <- sprintf("seed %d", seed)
  x <- planted(30, 150, 4, 1.3)
  dm <- 1 - abs(cor(x))
  tree <- stats::hclust(as.dist(dm), "average")
  ref <- dynamicTreeCut::cutreeDynamic(tree, distM = dm, deepSplit = 2, minClusterSize = 10,
                                       verbose = 0)
  cut <- function(d) gpu_cutree_dynamic(tree, distM = d, deepSplit = 2, minClusterSize = 10,
                                        verbose = 0)
  expect_identical(cut(as.dist(dm)), ref, info = info)
  expect_identical(cut(as.data.frame(dm)), ref, info = info)
  di <- matrix(sample(0:9, 150^2, TRUE), 150)
  di <- di + t(di)
  treei <- stats::hclust(as.dist(di), "average")
  expect_identical(gpu_cutree_dynamic(treei, distM = di, minClusterSize = 5, verbose = 0),
                   dynamicTreeCut::cutreeDynamic(treei, distM = di, minClusterSize = 5,
                                                 verbose = 0), info = info)
  skip_if_not_installed("HDF5Array")
  f <- tempfile(fileext = ".h5")
  on.exit(unlink(f))
  h5 <- suppressMessages(HDF5Array::writeHDF5Array(dm, f, "d", chunkdim = c(40, 40)))
  op <- options(DelayedArray.block.size = 150 * 8 * 17)   # blocks of 17 columns
  on.exit(options(op), add = TRUE)
  expect_identical(cut(h5), ref, info = info)
})

test_that("verbose prints the reference's lines; method 'tree' and a missing distM", {
  skip_if_not_installed("dynamicTreeCut")
  seed <- new_cut_seed()
  x <- planted(20, 80, 3, 1)
  dm <- 1 - abs(cor(x))
  tree <- stats::hclust(as.dist(dm), "average")
  out_ref <- capture.output(dynamicTreeCut::cutreeDynamic(tree, distM = dm, indent = 1))
  out <- capture.output(gpu_cutree_dynamic(tree, distM = dm, indent = 1))
  expect_identical(out, out_ref, info = sprintf("seed %d", seed))
  expect_silent(gpu_cutree_dynamic(tree, distM = dm, verbose = 0))
  for (ds in list(FALSE, TRUE, 2))
    expect_identical(gpu_cutree_dynamic(tree, method = "tree", deepSplit = ds, minClusterSize = 5),
                     dynamicTreeCut::cutreeDynamic(tree, method = "tree", deepSplit = ds,
                                                   minClusterSize = 5))
  expect_warning(a <- gpu_cutree_dynamic(tree, minClusterSize = 5), "requires a valid dissimilarity")
  expect_identical(a, suppressWarnings(dynamicTreeCut::cutreeDynamic(tree, minClusterSize = 5)))
})

test_that("external branch splits are called as the reference calls them", {
  skip_if_not_installed("dynamicTreeCut")
  seed <- new_cut_seed()
  x <- planted(30, 150, 4, 1)
  dm <- 1 - abs(cor(x))
  tree <- stats::hclust(as.dist(dm), "average")
  # the mean distance between the branches, scaled by an option
  between <- function(branch1, branch2, dissimMat, tree, scale = 1)
    scale * mean(dissimMat[branch1, branch2])
  calls <- 0
  counting <- function(branch1, branch2, ...) { calls <<- calls + 1; length(branch1) }
  for (ms in c(0.5, 0.8, 0.95)) {
    args <- list(tree, distM = dm, deepSplit = 3, minClusterSize = 5, verbose = 0,
                 externalBranchSplitFnc = list(between), minExternalSplit = ms,
                 externalSplitOptions = list(scale = 1.1))
    same_cut(args, sprintf("seed %d minExternalSplit %g", seed, ms))
    args <- list(tree, distM = dm, deepSplit = 3, minClusterSize = 5, verbose = 0,
                 externalBranchSplitFnc = list(between, counting), minExternalSplit = c(ms, 20),
                 externalSplitOptions = list(list(scale = 1), list()),
                 externalSplitFncNeedsDistance = c(TRUE, FALSE))
    same_cut(args, sprintf("seed %d two criteria %g", seed, ms))
  }
  calls <- 0
  gpu_cutree_dynamic(tree, distM = dm, deepSplit = 3, minClusterSize = 5, verbose = 0,
                     externalBranchSplitFnc = list(counting), minExternalSplit = 0)
  expect_gt(calls, 0)
  expect_error(gpu_cutree_dynamic(tree, distM = dm, deepSplit = 3, minClusterSize = 5, verbose = 0,
                                  externalBranchSplitFnc = list(function(branch1, branch2, ...)
                                    stop("boom")), minExternalSplit = 1),
               "external branch split function failed")
})

test_that("bad input gives a clear error", {
  x <- matrix(rnorm(200), 20)
  dm <- as.matrix(dist(t(x)))
  tree <- stats::hclust(as.dist(dm), "average")
  expect_error(gpu_cutree_dynamic(list(merge = tree$merge), distM = dm), "class hclust")
  expect_error(gpu_cutree_dynamic(tree, distM = dm[-1, -1]), "incorrect dimensions")
  expect_error(gpu_cutree_dynamic(tree, distM = dist(x)), "incorrect dimensions")
  expect_error(gpu_cutree_dynamic(tree, distM = 1:10), "must be a matrix")
  expect_error(gpu_cutree_dynamic(tree, distM = matrix("a", 10, 10)), "numeric")
  expect_error(gpu_cutree_dynamic(tree, distM = dm, method = "nope"), "Invalid method")
  expect_error(gpu_cutree_dynamic(tree, distM = dm, deepSplit = 7, minClusterSize = 2),
               "out of range")
  bad <- tree
  bad$merge[9, ] <- c(9L, 9L)
  expect_error(gpu_cutree_dynamic(bad, distM = dm, minClusterSize = 2, verbose = 0),
               "merge matrix")
  one <- structure(list(merge = matrix(integer(0), 0, 2), height = numeric(0)), class = "hclust")
  expect_error(gpu_cutree_dynamic(one, distM = matrix(0, 1, 1)), "number of merges is zero")
})

test_that("the formals are cutreeDynamic's", {
  skip_if_not_installed("dynamicTreeCut")
  expect_identical(formals(gpu_cutree_dynamic), formals(dynamicTreeCut::cutreeDynamic))
})
