# .cutree_tree() (the "tree" method of gpu_cutree_dynamic()) against
# dynamicTreeCut 1.63's cutreeDynamicTree(): identical labels, type included,
# on random trees of every linkage (ties, planted clusters, n = 2..150 and a
# few of 1500) for every maxTreeHeight, deepSplit and minModuleSize corner;
# hand-worked trees for the reference's quirks and for the one-object
# branches where the reference fails.

# The reference's value, or its error as an "error" object; its "No module
# detected" print is swallowed.
ref_tree <- function(...) {
  tryCatch({
    utils::capture.output(v <- dynamicTreeCut::cutreeDynamicTree(...))
    v
  }, error = function(e) e)
}

# A labelling as the reference makes them: 0 unassigned, modules 1..K
# numbered by size (largest first), each a run of the dendrogram order of at
# least min_size objects.
valid_labels <- function(lab, hc, min_size) {
  at <- lab[hc$order]
  k <- max(at)
  if (!is.double(lab) && !is.integer(lab) || anyNA(lab) || any(at != round(at)) || k < 0)
    return(FALSE)
  sizes <- tabulate(at[at > 0], k)
  runs <- vapply(seq_len(k), function(i) {
    w <- which(at == i)
    length(w) > 0 && max(w) - min(w) + 1 == length(w)
  }, TRUE)
  all(runs) && all(sizes >= min_size) && !is.unsorted(rev(sizes))
}

hand_tree <- function(merge, height, order)
  structure(list(merge = matrix(as.integer(merge), ncol = 2L), height = height,
                 order = as.integer(order), labels = NULL, method = "hand"),
            class = "hclust")

test_that("random trees give cutreeDynamicTree()'s labels for every setting", {
  skip_if_not_installed("dynamicTreeCut")
  env <- Sys.getenv("GPUCOR_TEST_SEED", "")
  seeds <- if (nzchar(env)) as.integer(env) else sample.int(1e6, 18)
  have_fc <- requireNamespace("fastcluster", quietly = TRUE)
  compared <- failed <- 0
  for (seed in seeds) {
    set.seed(seed)
    n <- sample(c(2:5, 8, 13, 30, 60, 150), 1)
    kind <- sample(c("normal", "integer", "planted"), 1)
    x <- switch(kind,
                normal = matrix(rnorm(n * 3), n),
                # manhattan distances of small integers: many tied heights
                integer = matrix(sample(0:3, n * 3, TRUE), n),
                planted = matrix(rnorm(n * 3, sd = 0.4), n) + sample(1:5, n, TRUE) * 3)
    d <- dist(x, if (kind == "integer") "manhattan" else "euclidean")
    linkage <- sample(c("average", "complete", "single"), 1)
    fc <- have_fc && runif(1) < 0.4
    hc <- if (fc) fastcluster::hclust(d, linkage) else stats::hclust(d, linkage)
    heights <- list(NULL, min(hc$height) / 2, 2 * max(hc$height) + 1,
                    unname(stats::quantile(hc$height, 0.7)))
    for (h in heights) for (ds in list(TRUE, FALSE, 0, 1, 2)) for (m in c(1, 2, 5, 20, n + 1)) {
      what <- sprintf("seed %d (n %d, %s, %s%s, maxTreeHeight %s, deepSplit %s, minModuleSize %g)",
                      seed, n, kind, linkage, if (fc) " fastcluster" else "",
                      format(h), format(ds), m)
      ours <- gpucor:::.cutree_tree(hc, h, ds, m)
      ref <- ref_tree(hc, h, ds, m)
      if (inherits(ref, "error")) {
        # the reference fails on a branch of one object, which only a
        # minModuleSize of 1 or 2 lets through; ours keeps such a branch whole
        failed <- failed + 1
        expect_identical(conditionMessage(ref), "incorrect number of dimensions", label = what)
        expect_true(m <= 2, label = what)
        expect_true(valid_labels(ours, hc, m), label = what)
      } else {
        compared <- compared + 1
        expect_identical(ours, ref, label = what)
      }
    }
  }
  expect_gt(compared, 0.7 * (compared + failed))
})

test_that("larger trees with planted modules give the reference's labels", {
  skip_if_not_installed("dynamicTreeCut")
  seed <- sample.int(1e6, 1)
  set.seed(seed)
  n <- 1500
  centres <- matrix(rnorm(30 * 8, sd = 3), 30)
  x <- matrix(rnorm(n * 8), n) + centres[sample(30, n, TRUE), ]
  d <- dist(x)
  for (linkage in c("average", "complete", "single")) {
    hc <- stats::hclust(d, linkage)
    for (ds in c(TRUE, FALSE)) for (m in c(20, 50)) {
      what <- sprintf("seed %d (%s, deepSplit %s, minModuleSize %d)", seed, linkage, ds, m)
      ours <- gpucor:::.cutree_tree(hc, NULL, ds, m)
      expect_identical(ours, ref_tree(hc, NULL, ds, m), label = what)
      expect_true(max(ours) > 1, label = what)
    }
  }
})

test_that("two objects: one module of both, or none", {
  skip_if_not_installed("dynamicTreeCut")
  hc <- hand_tree(c(-1, -2), 3, c(2, 1))
  # the static cut at 0.99 * 3 leaves two singletons: with minModuleSize 1
  # they make one run (the last object joins the run before it), which
  # cannot split; one module of all objects comes back as integers
  expect_identical(gpucor:::.cutree_tree(hc, NULL, TRUE, 1), c(1L, 1L))
  expect_identical(gpucor:::.cutree_tree(hc, 3, FALSE, 2), c(1L, 1L))
  # no static branch of minModuleSize objects: zeros, in double
  expect_identical(gpucor:::.cutree_tree(hc, NULL, TRUE, 2), c(0, 0))
  expect_identical(gpucor:::.cutree_tree(hc, 3, TRUE, 3), c(0, 0))
  for (h in list(NULL, 1, 3, 10)) for (m in c(1, 2, 3)) for (ds in list(TRUE, FALSE, 2))
    expect_identical(gpucor:::.cutree_tree(hc, h, ds, m), ref_tree(hc, h, ds, m),
                     label = sprintf("maxTreeHeight %s, minModuleSize %d", format(h), m))
})

test_that("the reference's quirks: the last object joins the run before it; logical NAs", {
  skip_if_not_installed("dynamicTreeCut")
  # objects 1 and 2 join at 1, object 3 at 9; cut at 5 with minModuleSize 1
  # the branches are {1, 2} and {3}
  merge <- c(-1, -3, -2, 1)
  in_order <- hand_tree(merge, c(1, 9), c(1, 2, 3))
  # {3} is last in the order, so it joins the run of {1, 2}: heights 1 1 9
  # do not split, and one module of all three comes back (integer)
  expect_identical(gpucor:::.cutree_tree(in_order, 5, TRUE, 1), c(1L, 1L, 1L))
  expect_identical(ref_tree(in_order, 5, TRUE, 1), c(1L, 1L, 1L))
  # {3} first: a run of one object, where the reference fails; it stays
  # whole here, module 2 (the smaller)
  first <- hand_tree(merge, c(1, 9), c(3, 1, 2))
  expect_s3_class(ref_tree(first, 5, TRUE, 1), "error")
  expect_identical(gpucor:::.cutree_tree(first, 5, TRUE, 1), c(1, 1, 2))
  expect_identical(gpucor:::.cutree_tree(first, 5, FALSE, 1), c(1, 1, 2))

  # Nine objects (an average-linkage tree of integer points): the static cut
  # at 0.99 * 4 leaves {2} out and a branch of eight, whose join heights in
  # order, 4/3 1 0 0 1 1 1 1, split after the 0s into two pieces of four,
  # below minModuleSize 5: the reference returns logical NAs
  nine <- hand_tree(c(-5, -1, -3, -7, -6, 2, 5, -2, -9, -4, 1, -8, 3, 4, 6, 7),
                    c(0, 1, 1, 1, 4 / 3, 1.5, 2.25, 4), c(2, 6, 3, 5, 9, 1, 4, 7, 8))
  for (ds in c(TRUE, FALSE)) {
    expect_identical(gpucor:::.cutree_tree(nine, NULL, ds, 5), rep(NA, 9))
    expect_identical(ref_tree(nine, NULL, ds, 5), rep(NA, 9))
    # with minModuleSize 4 both pieces are modules
    expect_identical(gpucor:::.cutree_tree(nine, NULL, ds, 4), c(2, 0, 1, 2, 1, 1, 2, 2, 1))
    expect_identical(ref_tree(nine, NULL, ds, 4), c(2, 0, 1, 2, 1, 1, 2, 2, 1))
  }
})

test_that("numeric deepSplit counts as deepSplit != FALSE; equal heights; big minModuleSize", {
  skip_if_not_installed("dynamicTreeCut")
  seed <- sample.int(1e6, 1)
  set.seed(seed)
  x <- matrix(rnorm(400 * 4, sd = 0.6), 400) + sample(1:6, 400, TRUE) * 2
  hc <- stats::hclust(dist(x), "average")
  deep <- gpucor:::.cutree_tree(hc, NULL, TRUE, 10)
  flat <- gpucor:::.cutree_tree(hc, NULL, FALSE, 10)
  what <- sprintf("seed %d", seed)
  expect_false(identical(deep, flat), label = what)
  expect_identical(gpucor:::.cutree_tree(hc, NULL, 2, 10), deep, label = what)
  expect_identical(gpucor:::.cutree_tree(hc, NULL, 1, 10), deep, label = what)
  expect_identical(gpucor:::.cutree_tree(hc, NULL, 0, 10), flat, label = what)
  expect_identical(deep, ref_tree(hc, NULL, TRUE, 10), label = what)
  expect_identical(flat, ref_tree(hc, NULL, FALSE, 10), label = what)

  # every distance equal: all heights tie
  eq <- stats::hclust(dist(diag(12)), "complete")
  for (h in list(NULL, 0.5, 5)) for (m in c(2, 5, 12, 13)) for (ds in c(TRUE, FALSE))
    expect_identical(gpucor:::.cutree_tree(eq, h, ds, m), ref_tree(eq, h, ds, m),
                     label = sprintf("equal heights, maxTreeHeight %s, minModuleSize %d",
                                     format(h), m))

  # minModuleSize above n: no module, zeros in double
  expect_identical(gpucor:::.cutree_tree(hc, NULL, TRUE, 401), rep(0, 400))
  # the default maxTreeHeight = 1 of cutreeDynamicTree()
  expect_identical(gpucor:::.cutree_tree(hc), ref_tree(hc),
                   label = what)
})

test_that("bad trees and arguments are errors", {
  hc <- stats::hclust(dist(1:6))
  bad <- hc
  bad$height <- rev(bad$height)
  expect_error(gpucor:::.cutree_tree(bad), "not sorted", fixed = TRUE)
  bad <- hc
  bad$merge[2, 1] <- 5L
  expect_error(gpucor:::.cutree_tree(bad), "invalid 'merge'")
  bad <- hc
  bad$order[1] <- bad$order[2]
  expect_error(gpucor:::.cutree_tree(bad), "not a permutation")
  expect_error(gpucor:::.cutree_tree(list(merge = 1)), "hclust")
  expect_error(gpucor:::.cutree_tree(hc, NA), "maxTreeHeight")
  expect_error(gpucor:::.cutree_tree(hc, deepSplit = NA), "deepSplit")
  expect_error(gpucor:::.cutree_tree(hc, deepSplit = NULL), "deepSplit")
  expect_error(gpucor:::.cutree_tree(hc, minModuleSize = NA), "minModuleSize")
})
