# gpu_blockwise_modules() against WGCNA::blockwiseModules(maxBlockSize =
# ncol(datExpr)) with the same arguments: colors and unmergedColors
# identical, MEs to 1e-8, and the rest of the list (names, order, classes,
# good samples and genes, the tree) as WGCNA returns it.
#
# The reference runs inside with_wgcna() (helper-gpucor.R).

# (WGCNA's C code prints some notes: captured)
reference_modules <- function(x, ...) {
  utils::capture.output(r <- with_wgcna(WGCNA::blockwiseModules(x, maxBlockSize = ncol(x), ...)))
  r
}

# Planted modules: k main factors, each module made of two sub-modules (a
# second factor of their own), loadings of either sign, 25% unassigned
# genes; a few genes and one sample with many missing values, a gene
# observed in 3 samples and a constant gene (the last two are set aside).
planted <- function(n = 40, p = 600, seed = 1, k = 4, a = 0.75, b = 0.3) {
  set.seed(seed)
  f <- matrix(stats::rnorm(n * k), n, k)
  g <- matrix(stats::rnorm(n * 2 * k), n, 2 * k)
  mod <- sample(0:k, p, TRUE, prob = c(0.25, rep(0.75 / k, k)))
  sub <- sample(1:2, p, TRUE)
  s <- sample(c(-1, 1), p, TRUE, prob = c(0.25, 0.75))
  x <- matrix(stats::rnorm(n * p), n, p)
  for (j in which(mod > 0)) {
    aj <- a * stats::runif(1, 0.7, 1.3)
    bj <- b * stats::runif(1, 0.7, 1.3)
    x[, j] <- s[j] * (aj * f[, mod[j]] + bj * g[, 2 * (mod[j] - 1) + sub[j]]) +
      sqrt(max(0.05, 1 - aj^2 - bj^2)) * x[, j]
  }
  dimnames(x) <- list(paste0("s", 1:n), paste0("g", 1:p))
  for (j in sample(p, 6)) x[sample(n, round(n * stats::runif(1, 0.1, 0.45))), j] <- NA
  x[5, sample(p, round(0.6 * p))] <- NA
  x[-(1:3), 11] <- NA
  x[, 12] <- 2.5
  x
}

expect_same_modules <- function(got, want, info) {
  expect_identical(names(got), names(want), info = info)
  expect_identical(lapply(got, class), lapply(want, class), info = info)
  expect_identical(got$colors, want$colors, info = info)
  expect_identical(got$unmergedColors, want$unmergedColors, info = info)
  expect_identical(names(got$MEs), names(want$MEs), info = info)
  expect_identical(rownames(got$MEs), rownames(want$MEs), info = info)
  expect_identical(is.na(got$MEs), is.na(want$MEs), info = info)
  if (identical(dim(got$MEs), dim(want$MEs)))
    expect_lt(max(abs(as.matrix(got$MEs) - as.matrix(want$MEs)), 0, na.rm = TRUE), 1e-8)
  for (nm in c("goodSamples", "goodGenes", "TOMFiles", "blockGenes", "blocks", "MEsOK"))
    expect_identical(got[[nm]], want[[nm]], info = paste(info, nm))
  # the tree: the same merges, heights to rounding (gpu_tom's TOM is
  # WGCNA's to about 1e-12)
  tg <- got$dendrograms[[1]]
  tw <- want$dendrograms[[1]]
  expect_identical(tg$merge, tw$merge, info = info)
  expect_identical(tg$order, tw$order, info = info)
  expect_equal(tg$height, tw$height, tolerance = 1e-12, info = info)
  expect_identical(tg[c("labels", "method", "dist.method")], tw[c("labels", "method", "dist.method")],
                   info = info)
}

test_that("gpu_blockwise_modules matches WGCNA::blockwiseModules in one block: the defaults", {
  skip_if_not_installed("WGCNA")
  skip_if_not_installed("dynamicTreeCut")
  withr::local_options(gpucor.backend = "cpu")
  x <- planted(seed = 1)
  got <- gpu_blockwise_modules(x)
  want <- reference_modules(x)
  expect_same_modules(got, want, "defaults, seed 1")
  # the data's planted problems are set aside: a sample and two genes
  expect_identical(which(!got$goodSamples), 5L)
  expect_identical(which(!got$goodGenes), 11:12)
  expect_true(all(is.na(got$MEs[5, ])))
  expect_gt(length(unique(got$colors)), 5)
  # a data frame is taken as its matrix
  expect_identical(gpu_blockwise_modules(as.data.frame(x))$colors, got$colors)
})

test_that("gpu_blockwise_modules matches WGCNA's network and TOM variants", {
  skip_if_not_installed("WGCNA")
  skip_if_not_installed("dynamicTreeCut")
  withr::local_options(gpucor.backend = "cpu")
  x <- planted(seed = 2)
  cases <- list(
    list(power = 4, networkType = "signed"),
    list(networkType = "signed hybrid", TOMType = "unsigned"),
    list(networkType = "signed", power = 12, TOMType = "signed", TOMDenom = "mean"),
    list(corType = "bicor", maxPOutliers = 0.05),
    list(corType = "bicor", quickCor = 0.3, pearsonFallback = "none"),
    # WGCNA suppresses the TOM of zero (or negative) adjacencies for the
    # signed TOM types; negative Nowick TOM values
    list(networkType = "signed hybrid", suppressTOMForZeroAdjacencies = TRUE),
    list(TOMType = "signed Nowick", suppressNegativeTOM = TRUE))
  for (cs in cases) {
    info <- paste("seed 2,", paste(deparse(cs), collapse = ""))
    expect_same_modules(do.call(gpu_blockwise_modules, c(list(x), cs)),
                        do.call(reference_modules, c(list(x), cs)), info)
  }
})

test_that("gpu_blockwise_modules matches WGCNA's cut, kME and merging variants", {
  skip_if_not_installed("WGCNA")
  skip_if_not_installed("dynamicTreeCut")
  withr::local_options(gpucor.backend = "cpu")
  x <- planted(seed = 3)
  cases <- list(
    list(deepSplit = 0, minModuleSize = 15, mergeCutHeight = 0.01),
    list(deepSplit = 1, minModuleSize = 15, mergeCutHeight = 0.01, numericLabels = TRUE),
    list(deepSplit = 3, minModuleSize = 15, mergeCutHeight = 0.01),
    list(deepSplit = 3, minModuleSize = 15, mergeCutHeight = 0.01,
         useBranchEigennodeDissim = TRUE, minBranchEigennodeDissim = 0.5),
    list(minModuleSize = 40, mergeCutHeight = 0.5, numericLabels = TRUE),
    list(pamRespectsDendro = FALSE, reassignThreshold = 0.5, minKMEtoStay = 0.5),
    list(minCoreKME = 0.8, minCoreKMESize = 25, pamStage = FALSE))
  got <- lapply(cases, function(cs) do.call(gpu_blockwise_modules, c(list(x), cs)))
  for (i in seq_along(cases)) {
    info <- paste("seed 3,", paste(deparse(cases[[i]]), collapse = ""))
    expect_same_modules(got[[i]], do.call(reference_modules, c(list(x), cases[[i]])), info)
  }
  # the cases are not all one: deepSplit, the branch eigengenes and the
  # merging change the modules of this data
  n_mod <- vapply(got, function(r) length(unique(r$unmergedColors)), 1L)
  expect_true(length(unique(n_mod[1:3])) > 1L)
  expect_lt(n_mod[4], n_mod[3])
  expect_true(is.numeric(got[[5]]$colors))
})

test_that("gpu_blockwise_modules saves and loads the TOM as WGCNA does", {
  skip_if_not_installed("WGCNA")
  skip_if_not_installed("dynamicTreeCut")
  withr::local_options(gpucor.backend = "cpu")
  dir <- withr::local_tempdir()
  x <- planted(n = 30, p = 200, seed = 4)
  base_g <- file.path(dir, "g")
  base_w <- file.path(dir, "w")
  got <- gpu_blockwise_modules(x, saveTOMs = TRUE, saveTOMFileBase = base_g, minModuleSize = 10)
  want <- reference_modules(x, saveTOMs = TRUE, saveTOMFileBase = base_w, minModuleSize = 10)
  expect_identical(got$TOMFiles, paste0(base_g, "-block.1.RData"))
  expect_identical(got$colors, want$colors)
  eg <- new.env()
  ew <- new.env()
  expect_identical(load(got$TOMFiles, envir = eg), "TOM")
  load(want$TOMFiles, envir = ew)
  expect_identical(attributes(eg$TOM), attributes(ew$TOM))
  expect_lt(max(abs(eg$TOM - ew$TOM)), 1e-12)
  # loadTOM reads WGCNA's file: the same tree as WGCNA's from that file
  # (labels "1", "2", ...: WGCNA's as.matrix() of the TOM names them)
  expect_same_modules(gpu_blockwise_modules(x, loadTOM = TRUE, saveTOMFileBase = base_w,
                                            minModuleSize = 10),
                      reference_modules(x, loadTOM = TRUE, saveTOMFileBase = base_w,
                                        minModuleSize = 10),
                      "loadTOM, seed 4")
  # a missing file: said, and the TOM computed
  expect_message(r <- gpu_blockwise_modules(x, loadTOM = TRUE, minModuleSize = 10,
                                            saveTOMFileBase = file.path(dir, "none")),
                 "Will recalculate TOM")
  expect_identical(r$colors, got$colors)
})

test_that("gpu_blockwise_modules keeps one block, says so once, and leaves the RNG as it was", {
  skip_if_not_installed("WGCNA")
  skip_if_not_installed("dynamicTreeCut")
  withr::local_options(gpucor.backend = "cpu")
  x <- planted(n = 30, p = 200, seed = 5)
  one <- gpu_blockwise_modules(x, minModuleSize = 10)
  st <- get(".gpucor_state", envir = asNamespace("gpucor"))
  old <- st$blockwise_note
  on.exit(st$blockwise_note <- old)
  st$blockwise_note <- NULL
  expect_message(r <- gpu_blockwise_modules(x, maxBlockSize = 50, minModuleSize = 10),
                 "keeps all 198 genes in one block")
  expect_identical(r, one)
  expect_no_message(gpu_blockwise_modules(x, blocks = rep(1:2, 100), minModuleSize = 10))
  st$blockwise_note <- NULL
  expect_message(r <- gpu_blockwise_modules(x, blocks = rep(1:2, 100), minModuleSize = 10),
                 "'blocks' is ignored")
  expect_identical(r$blocks, one$blocks)
  expect_identical(unique(one$blocks), c(1, NA))
  set.seed(7)
  seed <- .Random.seed
  gpu_blockwise_modules(x, minModuleSize = 10)
  expect_identical(.Random.seed, seed)
})

test_that("WGCNA's colours, goodSamplesGenes and kME p-values are WGCNA's", {
  skip_if_not_installed("WGCNA")
  expect_identical(gpucor:::.standard_colors(), WGCNA::standardColors())
  expect_identical(gpucor:::.labels_to_colors(c(0, 3, 1, 435, 0)),
                   WGCNA::labels2colors(c(0, 3, 1, 435, 0)))
  w <- capture_conditions(WGCNA::labels2colors(c(0, 2, 436, 900)))
  g <- capture_conditions(gpucor:::.labels_to_colors(c(0, 2, 436, 900)))
  expect_identical(g$value, w$value)
  expect_length(g$warnings, 1L)
  info <- new_seed()
  x <- rmat(30, 40)
  x[sample(30 * 40, 300)] <- NA
  x[1:20, 1] <- NA          # a gene missing in most samples
  x[2, 1:25] <- NA          # a sample missing most genes
  x[, 3] <- 1               # a constant gene
  x[sample(30, 12), 4] <- NA
  want <- WGCNA::goodSamplesGenes(x, verbose = 0)
  expect_identical(gpucor:::.good_samples_genes(x), want, info = info)
  r <- c(-0.99, -0.3, 0, 0.5, 0.9999)
  expect_identical(gpucor:::.cor_p_fisher(r, 37), WGCNA::corPvalueFisher(r, 37))
})

test_that("gpu_blockwise_modules without modules: all grey, as WGCNA (whose merging then fails)", {
  skip_if_not_installed("WGCNA")
  skip_if_not_installed("dynamicTreeCut")
  withr::local_options(gpucor.backend = "cpu")
  x <- planted(n = 30, p = 200, seed = 8)
  got <- capture_conditions(gpu_blockwise_modules(x, minModuleSize = 190))
  want <- capture_conditions(reference_modules(x, minModuleSize = 190))
  expect_same_modules(got$value, want$value, "no modules, seed 8")
  expect_identical(unique(got$value$colors), "grey")
  expect_length(got$warnings, 1L)
  expect_match(got$warnings, "mergeCloseModules failed")
})

test_that("gpu_blockwise_modules takes WGCNA's arguments, in its order, with its defaults", {
  skip_if_not_installed("WGCNA")
  ours <- formals(gpu_blockwise_modules)
  ref <- formals(WGCNA::blockwiseModules)
  n <- length(ref)
  expect_identical(as.list(ours)[seq_len(n)], as.list(ref))
  # gpucor's own after '...'
  expect_identical(names(ours)[-seq_len(n)], c("backend", "precision", "devices"))
})

test_that("gpu_blockwise_modules names what it does not support", {
  x <- planted(n = 20, p = 60, seed = 6)
  expect_error(gpu_blockwise_modules(x, weights = matrix(1, 20, 60)), "'weights'")
  expect_error(gpu_blockwise_modules(x, cosineCorrelation = TRUE), "cosineCorrelation")
  expect_error(gpu_blockwise_modules(x, stabilityLabels = matrix(1, 60, 2)), "stabilityLabels")
  expect_error(gpu_blockwise_modules(x, useBranchSplit = TRUE), "useBranchSplit")
  expect_error(gpu_blockwise_modules(x, power = 31), "between 1 and 30")
  # WGCNA's approximate Pearson pairs (its planted genes have 10-45% NA)
  expect_error(gpu_blockwise_modules(x, quickCor = 0.5), "quickCor > 0 with corType = \"pearson\"")
  expect_error(gpu_blockwise_modules(x, corType = "spearman"), "'corType'")
  expect_error(gpu_blockwise_modules(x, networkType = "distance"), "'networkType'")
  expect_error(gpu_blockwise_modules(x, blocks = 1:3), "'blocks'")
})

test_that("NA adjacencies (two genes with one common sample) stop with a clear error", {
  withr::local_options(gpucor.backend = "cpu")
  set.seed(38)
  x <- matrix(rnorm(9 * 40), 9, 40)
  x[1:4, 1] <- NA   # genes 1 and 2 share sample 9 only: their correlation is NA
  x[5:8, 2] <- NA
  expect_error(gpu_blockwise_modules(x, minModuleSize = 3, verbose = 0), "NA adjacencies")
})
