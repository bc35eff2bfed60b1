# gpu_blockwise_consensus_modules() against
# WGCNA::blockwiseConsensusModules(maxBlockSize = ncol) with the same
# arguments: colors and unmergedColors identical, multiMEs to 1e-8, and the
# rest of the list as WGCNA returns it; the multi-set
# gpu_merge_close_modules() against WGCNA::mergeCloseModules().
#
# The reference runs inside with_wgcna() (helper-gpucor.R): WGCNA attached,
# its collectGarbage() a no-op for the call.

reference_consensus <- function(me, ...) {
  utils::capture.output(r <- with_wgcna(WGCNA::blockwiseConsensusModules(
    me, maxBlockSize = ncol(me[[1]]$data), verbose = 0, ...)))
  r
}

# Sets of samples with the same planted modules: k modules of two
# sub-modules each, loadings of either sign, 25% unassigned genes; in each
# set its own factors, noise and sample count.  With 'na': a few genes with
# 10-40% missing values in each set, in set 1 a sample with 60% missing and
# a constant gene (12), in set 2 a gene observed in 3 samples (11): the
# last three are set aside.
planted_sets <- function(ns = c(40, 32), p = 200, seed = 1, k = 4, a = 0.75, b = 0.3,
                         na = TRUE) {
  set.seed(seed)
  mod <- sample(0:k, p, TRUE, prob = c(0.25, rep(0.75 / k, k)))
  sub <- sample(1:2, p, TRUE)
  s <- sample(c(-1, 1), p, TRUE, prob = c(0.25, 0.75))
  aj <- a * stats::runif(p, 0.7, 1.3)
  bj <- b * stats::runif(p, 0.7, 1.3)
  sets <- lapply(seq_along(ns), function(i) {
    n <- ns[i]
    f <- matrix(stats::rnorm(n * k), n, k)
    g <- matrix(stats::rnorm(n * 2 * k), n, 2 * k)
    x <- matrix(stats::rnorm(n * p), n, p)
    for (j in which(mod > 0))
      x[, j] <- s[j] * (aj[j] * f[, mod[j]] + bj[j] * g[, 2 * (mod[j] - 1) + sub[j]]) +
        sqrt(max(0.05, 1 - aj[j]^2 - bj[j]^2)) * x[, j]
    dimnames(x) <- list(paste0("s", i, "_", seq_len(n)), paste0("g", seq_len(p)))
    if (na) {
      for (j in sample(p, 4)) x[sample(n, round(n * stats::runif(1, 0.1, 0.4))), j] <- NA
      if (i == 1) {
        x[5, sample(p, round(0.6 * p))] <- NA
        x[, 12] <- 2.5
      }
      if (i == 2) x[-(1:3), 11] <- NA
    }
    list(data = x)
  })
  names(sets) <- paste0("set", seq_along(ns))
  sets
}

expect_same_consensus <- function(got, want, info) {
  expect_identical(names(got), names(want), info = info)
  expect_identical(got$colors, want$colors, info = info)
  expect_identical(got$unmergedColors, want$unmergedColors, info = info)
  expect_identical(names(got$multiMEs), names(want$multiMEs), info = info)
  for (s in seq_along(want$multiMEs)) {
    g <- got$multiMEs[[s]]$data
    w <- want$multiMEs[[s]]$data
    expect_identical(names(got$multiMEs[[s]]), names(want$multiMEs[[s]]), info = info)
    expect_identical(dimnames(g), dimnames(w), info = info)
    expect_identical(is.na(g), is.na(w), info = info)
    if (identical(dim(g), dim(w)))
      expect_lt(max(abs(as.matrix(g) - as.matrix(w)), 0, na.rm = TRUE), 1e-8)
  }
  for (nm in c("goodSamples", "goodGenes", "TOMFiles", "blockGenes", "blocks",
               "consensusQuantile"))
    expect_identical(got[[nm]], want[[nm]], info = paste(info, nm))
  # the sets' TOMs are WGCNA's to about 1e-12: the count of entries at most
  # the consensus can differ where a tie is that close
  expect_equal(got$originCount, want$originCount, tolerance = 1e-3, info = info)
  tg <- got$dendrograms[[1]]
  tw <- want$dendrograms[[1]]
  expect_identical(tg$merge, tw$merge, info = info)
  expect_equal(tg$height, tw$height, tolerance = 1e-10, info = info)
  expect_identical(tg[c("labels", "method", "dist.method")],
                   tw[c("labels", "method", "dist.method")], info = info)
  expect_identical(names(got$individualTOMInfo), names(want$individualTOMInfo), info = info)
}

test_that("gpu_blockwise_consensus_modules matches WGCNA in one block: defaults, two sets", {
  skip_if_not_installed("WGCNA")
  skip_if_not_installed("dynamicTreeCut")
  withr::local_options(gpucor.backend = "cpu")
  me <- planted_sets(seed = 1)
  got <- gpu_blockwise_consensus_modules(me, verbose = 0)
  expect_same_consensus(got, reference_consensus(me), "defaults, seed 1")
  # the planted problems are set aside
  expect_identical(which(!got$goodGenes), 11:12)
  expect_identical(which(!got$goodSamples[[1]]), 5L)
  expect_true(all(is.na(got$multiMEs[[1]]$data[5, ])))
  expect_gt(length(unique(got$colors)), 3)
  # the caller's random number state is left as it was
  set.seed(99)
  u <- stats::runif(1)
  set.seed(99)
  gpu_blockwise_consensus_modules(me, verbose = 0)
  expect_identical(stats::runif(1), u)
})

test_that("gpu_blockwise_consensus_modules matches WGCNA's network, calibration and consensus variants", {
  skip_if_not_installed("WGCNA")
  skip_if_not_installed("dynamicTreeCut")
  withr::local_options(gpucor.backend = "cpu")
  me2 <- planted_sets(seed = 2)
  me3 <- planted_sets(c(36, 30, 44), p = 180, seed = 3)
  cases <- list(
    list(me3, power = c(6, 8, 5), networkType = "signed", TOMType = "signed",
         consensusQuantile = 0.2),
    list(me2, corType = "bicor", maxPOutliers = 0.1, networkCalibration = "full quantile",
         numericLabels = TRUE),
    list(me2, networkCalibration = "none", deepSplit = 3, minModuleSize = 15,
         mergeCutHeight = 0.25, TOMDenom = "mean"),
    list(me2, useMean = TRUE, setWeights = c(2, 1), networkType = "signed hybrid"))
  not_run <- character(0)
  for (cs in cases) {
    info <- paste(length(cs[[1]]), "sets,", paste(deparse(cs[-1]), collapse = ""))
    want <- tryCatch(do.call(reference_consensus, cs), error = function(e) e)
    # WGCNA's "full quantile" calls preprocessCore, whose thread (started
    # with a fixed small stack) cannot start in a process that loaded
    # CUDA's libraries (pthread_create() error 22): no reference there
    if (inherits(want, "error") && grepl("pthread_create", conditionMessage(want))) {
      not_run <- c(not_run, info)
      next
    }
    expect_same_consensus(do.call(gpu_blockwise_consensus_modules, c(cs, verbose = 0)),
                          want, info)
  }
  if (length(not_run))
    skip(paste("the reference failed in preprocessCore (pthread_create) for:",
               paste(not_run, collapse = "; ")))
})

test_that("gpu_blockwise_consensus_modules returns WGCNA's calibration sample and consensus TOM file", {
  skip_if_not_installed("WGCNA")
  skip_if_not_installed("dynamicTreeCut")
  withr::local_options(gpucor.backend = "cpu")
  me <- planted_sets(seed = 4, na = FALSE)
  dir <- withr::local_tempdir()
  withr::local_dir(dir)
  args <- list(me, getNetworkCalibrationSamples = TRUE, sampleForCalibrationFactor = 100,
               saveConsensusTOMs = TRUE, consensusTOMFilePattern = "ref-%b.RData")
  want <- do.call(reference_consensus, args)
  args$consensusTOMFilePattern <- "ours-%b.RData"
  got <- do.call(gpu_blockwise_consensus_modules, c(args, verbose = 0))
  expect_identical(got$colors, want$colors)
  expect_identical(got$unmergedColors, want$unmergedColors)
  # the same sample of TOM entries (WGCNA's sample() after set.seed(54321))
  expect_identical(got$networkCalibrationSamples[[1]]$sampleIndex,
                   want$networkCalibrationSamples[[1]]$sampleIndex)
  expect_equal(got$networkCalibrationSamples[[1]]$TOMSamples,
               want$networkCalibrationSamples[[1]]$TOMSamples, tolerance = 1e-10)
  expect_identical(got$TOMFiles, "ours-1.RData")
  expect_identical(names(got$consensusTOMInfo), names(want$consensusTOMInfo))
  a <- new.env()
  b <- new.env()
  expect_identical(load("ours-1.RData", envir = a), "consTomDS")
  load("ref-1.RData", envir = b)
  expect_identical(attributes(a$consTomDS), attributes(b$consTomDS))
  expect_equal(as.vector(a$consTomDS), as.vector(b$consTomDS), tolerance = 1e-10)
})

test_that("the consensus TOM in C is R's arithmetic on the sets' TOMs", {
  info <- new_seed()
  n <- 5000
  ds <- lapply(1:3, function(s) stats::runif(n))
  ds[[2]][1:50] <- ds[[1]][1:50]   # ties
  toms <- lapply(ds, function(d) 1 - d)
  pw <- c(1, 1.7, 2)
  cal <- Map(function(t, p) if (p == 1) t else t^p, toms, pw)
  cons_c <- function(mode, q = 0, w = rep(1 / 3, 3), from_tom = FALSE, input = ds, p = pw)
    .Call(gpucor:::C_gpucor_consensus_tom, input, from_tom, p, mode, q, w,
          gpucor:::.engine_opts("cpu", "double"))
  count <- function(c) vapply(cal, function(t) sum(t <= c), 1)
  m <- do.call(pmin, cal)
  r <- cons_c(0L)
  expect_identical(r$dist, 1 - m, info = info)
  expect_identical(r$count, count(m), info = info)
  qq <- apply(do.call(cbind, cal), 1, stats::quantile, probs = 0.3, names = FALSE)
  r <- cons_c(1L, 0.3)
  expect_identical(r$dist, 1 - qq, info = info)
  expect_identical(r$count, count(qq), info = info)
  w <- c(0.5, 0.25, 0.25)
  mw <- w[1] * cal[[1]] + w[2] * cal[[2]] + w[3] * cal[[3]]
  expect_identical(cons_c(2L, w = w)$dist, 1 - mw, info = info)
  # from the TOMs themselves
  expect_identical(cons_c(0L, from_tom = TRUE, input = toms, p = c(1, 1, 1))$dist,
                   1 - do.call(pmin, toms), info = info)
})

test_that("gpu_blockwise_consensus_modules takes WGCNA's arguments, in its order, with its defaults", {
  skip_if_not_installed("WGCNA")
  ours <- formals(gpu_blockwise_consensus_modules)
  ref <- formals(WGCNA::blockwiseConsensusModules)
  n <- length(ref)
  expect_identical(as.list(ours)[seq_len(n)], as.list(ref))
  expect_identical(names(ours)[-seq_len(n)], c("backend", "precision", "devices"))
})

test_that("gpu_blockwise_consensus_modules: bad input and unsupported arguments are clear errors", {
  me <- planted_sets(ns = c(20, 20), p = 40, seed = 5, na = FALSE)
  x <- me[[1]]$data
  bcm <- function(...) gpu_blockwise_consensus_modules(..., verbose = 0)
  expect_error(bcm(x), "list of sets")
  expect_error(bcm(list(x, x)), "component 'data'")
  expect_error(bcm(list(list(data = x), list(data = x[, -1]))), "same genes")
  expect_error(bcm(me, power = c(6, 6, 6)), "Length of 'power'")
  expect_error(bcm(me, individualTOMInfo = list()), "individualTOMInfo")
  expect_error(bcm(me, consensusTOMInfo = list()), "consensusTOMInfo")
  expect_error(bcm(me, useIndivTOMSubset = 1:2), "useIndivTOMSubset")
  expect_error(bcm(me, cosineCorrelation = TRUE), "cosineCorrelation")
  expect_error(bcm(me, useBranchEigennodeDissim = TRUE), "useBranchEigennodeDissim")
  expect_error(bcm(me, stabilityLabels = matrix(1, 40, 2)), "stabilityLabels")
  expect_error(bcm(me, consensusQuantile = 2), "between 0 and 1")
  expect_error(bcm(me, networkCalibration = "other"), "networkCalibration")
  expect_error(bcm(me, saveConsensusTOMs = TRUE, consensusTOMFilePattern = "x.RData"), "%b")
  expect_error(bcm(me, setWeights = 1:3), "setWeights")
})

test_that("multi-set gpu_merge_close_modules matches WGCNA::mergeCloseModules", {
  skip_if_not_installed("WGCNA")
  withr::local_options(gpucor.backend = "cpu")
  me <- planted_sets(c(36, 30, 44), p = 150, seed = 6, na = FALSE)
  # modules of the planted genes, each planted module split in two
  labs <- c("grey", "blue", "brown", "turquoise", "yellow", "green", "red", "black", "pink")
  r <- with_wgcna(WGCNA::blockwiseConsensusModules(me, maxBlockSize = 150, verbose = 0,
                                                      mergeCutHeight = 0, minModuleSize = 8))
  cols <- r$unmergedColors
  expect_gt(length(unique(cols)), 3)
  cases <- list(list(), list(consensusQuantile = 0.3), list(useAbs = TRUE, cutHeight = 0.5),
                list(relabel = TRUE, cutHeight = 0.6, getNewUnassdME = FALSE))
  for (cs in cases) {
    info <- paste(deparse(cs), collapse = "")
    a <- c(list(me, cols, verbose = 0), cs)
    utils::capture.output(want <- do.call(WGCNA::mergeCloseModules, a))
    got <- do.call(gpu_merge_close_modules, a)
    expect_identical(got$colors, want$colors, info = info)
    expect_identical(names(got), names(want), info = info)
    for (w in c("oldMEs", "newMEs")) {
      expect_identical(names(got[[w]]), names(want[[w]]), info = info)
      for (s in seq_along(me)) {
        expect_identical(names(got[[w]][[s]]), names(want[[w]][[s]]), info = info)
        expect_equal(got[[w]][[s]]$data, want[[w]][[s]]$data, tolerance = 1e-10, info = info)
        expect_equal(got[[w]][[s]]$averageExpr, want[[w]][[s]]$averageExpr, tolerance = 1e-10,
                     info = info)
      }
    }
    expect_identical(got$dendro$merge, want$dendro$merge, info = info)
    expect_equal(got$dendro$height, want$dendro$height, tolerance = 1e-12, info = info)
  }
  # numeric labels; a plain list of matrices is not WGCNA's format
  num <- match(cols, labs) - 1
  utils::capture.output(want <- WGCNA::mergeCloseModules(me, num, verbose = 0))
  expect_identical(gpu_merge_close_modules(me, num, verbose = 0)$colors, want$colors)
  expect_error(gpu_merge_close_modules(lapply(me, `[[`, "data"), cols), "component 'data'")
  expect_error(gpu_merge_close_modules(me, cols, useSets = 4), "useSets")
})

test_that("gpu_blockwise_consensus_modules on the GPU gives the CPU's modules", {
  skip_if_not_installed("WGCNA")
  skip_if_not_installed("dynamicTreeCut")
  skip_if_no_gpu()
  me <- planted_sets(seed = 7)
  cpu <- gpu_blockwise_consensus_modules(me, verbose = 0, backend = "cpu")
  gpu <- gpu_blockwise_consensus_modules(me, verbose = 0, backend = "gpu")
  expect_identical(gpu$colors, cpu$colors)
  expect_identical(gpu$unmergedColors, cpu$unmergedColors)
  for (s in seq_along(me))
    expect_lt(max(abs(as.matrix(gpu$multiMEs[[s]]$data) - as.matrix(cpu$multiMEs[[s]]$data)),
                  na.rm = TRUE), 1e-8)
})
