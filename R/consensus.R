# WGCNA's blockwiseConsensusModules() with the whole network in one block:
# each set's TOM (gpu_tom(), through .bw_dissimilarity()), their
# calibration and consensus, the average-linkage tree of the consensus
# (gpu_hclust()), the dynamic tree cut, the sets' eigengenes, WGCNA's
# consensus kME check and reassignment, and the merging of close modules
# across the sets (gpu_merge_close_modules() with several sets), each step
# with the reference's arguments and in its order.

# WGCNA's goodSamplesGenesMS() with its defaults: genes (goodGenesMS()),
# then samples (goodSamplesMS()), again until neither loses one.  Its
# rules differ from the one-set goodSamplesGenes() (.good_samples_genes()):
# a gene needs at least minNGenes observed values and at least minFraction
# of the samples in every set, and a variance above tol^2 there (tol from
# each set's largest absolute value); a sample at least minNGenes and
# minFraction of the good genes.
.good_samples_genes_ms <- function(xs, verbose = 0, indent = 0, minFraction = 1 / 2,
                                   minNSamples = 4, minNGenes = 4) {
  spaces <- .wgcna_spaces(indent)
  nsets <- length(xs)
  tol <- vapply(xs, function(x) 1e-10 * max(abs(x), na.rm = TRUE), 1)
  gg <- rep(TRUE, ncol(xs[[1L]]))
  gs <- lapply(xs, function(x) rep(TRUE, nrow(x)))
  bad_g <- 0
  bad_s <- rep(0, nsets)
  step <- 1
  if (verbose > 0) .wgcna_say(spaces, "Flagging genes and samples with too many missing values...")
  repeat {
    if (verbose > 0) .wgcna_say(spaces, " ..step", step)
    # genes
    n_before <- sum(gg)
    for (s in seq_len(nsets)) {
      if (sum(gg) == 0) break
      if (sum(gs[[s]]) == 0) next
      xg <- xs[[s]][gs[[s]], gg, drop = FALSE]
      present <- colSums(!is.na(xg))
      keep <- present >= minNGenes & present >= minFraction * sum(gs[[s]])
      gg[gg] <- keep
      if (any(gg)) {
        v <- .col_vars_na(xg[, keep, drop = FALSE])
        drop <- !is.na(v) & v <= tol[s]^2
        gg[gg][drop] <- FALSE
      }
    }
    if (sum(gg) < minNGenes)
      stop("Too few genes with valid expression levels in the required number of samples in all sets.",
           call. = FALSE)
    if (verbose > 1 && n_before - sum(gg) > 0)
      .wgcna_say("  ..Excluding", n_before - sum(gg),
                 "genes from the calculation due to too many missing samples or zero variance.")
    # samples (of the samples that were good before this step)
    for (s in seq_len(nsets)) {
      if (sum(gs[[s]]) == 0) next
      n_before <- sum(gs[[s]])
      present <- rowSums(!is.na(xs[[s]][gs[[s]], gg, drop = FALSE]))
      gs[[s]][gs[[s]]] <- present >= minFraction * sum(gg) & present >= minNGenes
      if (sum(gs[[s]]) < minNSamples)
        stop(paste("Too few samples with valid expression levels for the required number of genes in set",
                   s), call. = FALSE)
      if (verbose > 1 && n_before - sum(gs[[s]]) > 0)
        .wgcna_say("  ..Set", s, ": Excluding", n_before - sum(gs[[s]]),
                   "samples from the calculation due to too many missing genes.")
    }
    now_g <- sum(!gg)
    now_s <- vapply(gs, function(g) sum(!g), 1)
    changed <- now_g > bad_g || any(now_s > bad_s)
    bad_g <- now_g
    bad_s <- now_s
    step <- step + 1
    if (!changed) break
  }
  list(goodGenes = gg, goodSamples = gs, allOK = sum(c(bad_g, bad_s)) == 0)
}

# Quantile normalization of the sets' vectors (preprocessCore's
# normalize.quantiles(), which WGCNA's "full quantile" calibration calls):
# the mean over the sets of the values of each rank, given to each set's
# value of that rank; tied values get their average rank, and a half rank
# the mean of the two neighbouring values.
.cs_quantile_normalize <- function(v) {
  k <- length(v)
  n <- length(v[[1L]])
  m <- numeric(n)
  for (s in seq_len(k)) m <- m + sort(v[[s]], method = "radix")
  m <- m / k
  for (s in seq_len(k)) {
    o <- order(v[[s]], method = "radix")
    sv <- v[[s]][o]
    # tie runs in the sorted values: average rank of each run
    start <- c(TRUE, sv[-1L] != sv[-n])
    run <- cumsum(start)
    first <- which(start)
    len <- tabulate(run, length(first))
    r <- (first + (len - 1) / 2)[run]
    rm(sv, start, run)
    fr <- floor(r)
    out <- m[fr]
    half <- r != fr
    if (any(half)) out[half] <- 0.5 * (m[fr[half]] + m[fr[half] + 1L])
    v[[s]][o] <- out
    rm(o, r, fr, out, half)
  }
  v
}

# How the sets' TOMs make the consensus: src/algo/consensus.h's CS_MIN,
# CS_QUANTILE, CS_MEAN, in this order.
.cs_modes <- c("minimum", "quantile", "mean")

# The consensus TOM of the sets' dissimilarities 'ds' (1 - TOM, the
# 'dist's of .bw_dissimilarity()), as WGCNA's consensusTOM() makes it for
# one block: calibration ("single quantile": each set's TOM after the first
# raised to the power that maps its calibrationQuantile to the first
# set's, the quantiles of type 8 from a sample of the entries drawn as
# consensusTOM() draws it, after set.seed(54321); "full quantile":
# quantile normalization; "none"), then the consensus: the weighted mean
# (useMean), the minimum (consensusQuantile 0) or a quantile of the sets.
# The elementwise work is one pass in C (src/algo/consensus.c), so that
# memory holds the sets' inputs and the result only (full quantile: the
# sets' TOMs, normalized in R, instead of the inputs).  Returns 1 - the
# consensus TOM (a plain vector), originCount (how many entries of each
# set's calibrated TOM are at most the consensus) and the calibration
# samples.
.cs_consensus_tom <- function(ds, networkCalibration, calibrationQuantile,
                              sampleForCalibration, sampleForCalibrationFactor,
                              getNetworkCalibrationSamples, consensusQuantile, useMean,
                              setWeights, verbose, spaces) {
  nsets <- length(ds)
  npairs <- length(ds[[1L]])
  samples <- if (getNetworkCalibrationSamples) list() else NULL
  pw <- rep(1, nsets)
  from_tom <- FALSE
  if (networkCalibration == "single quantile") {
    if (sampleForCalibration) {
      qx <- min(calibrationQuantile, 1 - calibrationQuantile)
      nsc <- min(sampleForCalibrationFactor * 1 / qx, npairs)
      nentries <- if (npairs <= .Machine$integer.max) as.integer(npairs) else npairs
      # consensusTOM()'s own seed (its default randomSeed), the state
      # before it put back afterwards, as it does
      withr::local_seed(54321)
      idx <- sample(nentries, nsc)
      if (getNetworkCalibrationSamples)
        samples[[1L]] <- list(sampleIndex = idx, TOMSamples = matrix(NA, length(idx), nsets))
    }
    q <- numeric(nsets)
    for (s in seq_len(nsets)) {
      if (verbose > 2) .wgcna_say(spaces, "....Working on set", s)
      if (sampleForCalibration) {
        v <- 1 - ds[[s]][idx]
        if (getNetworkCalibrationSamples) samples[[1L]]$TOMSamples[, s] <- v
      } else {
        v <- 1 - as.vector(ds[[s]])
      }
      q[s] <- stats::quantile(v, probs = calibrationQuantile, type = 8, names = FALSE)
      rm(v)
      if (s > 1L) pw[s] <- log(q[1L]) / log(q[s])
    }
  } else if (networkCalibration == "full quantile") {
    if (verbose > 1) .wgcna_say(spaces, "..working on quantile normalization")
    for (s in seq_len(nsets)) ds[[s]] <- 1 - as.vector(ds[[s]])
    ds <- .cs_quantile_normalize(ds)
    from_tom <- TRUE
  }
  if (verbose > 2) .wgcna_say(spaces, "....Calculating consensus network")
  mode <- if (nsets == 1L || (!useMean && consensusQuantile == 0)) "minimum"
          else if (useMean) "mean" else "quantile"
  w <- if (is.null(setWeights)) rep(1, nsets) else as.double(setWeights)
  r <- .Call(C_gpucor_consensus_tom, ds, from_tom, pw, match(mode, .cs_modes) - 1L,
             as.double(consensusQuantile), w / sum(w), .engine_opts("cpu", "double"))
  list(dist = r$dist, originCount = r$count, samples = samples)
}

# WGCNA's consensus reassignment (blockwiseConsensusModules()): each
# gene's score for each module is the sum over the sets of
# -2 log p (p: the one-sided Fisher p-value of its kME in the set), times
# (nSets + the sum of the kMEs' signs) / (2 nSets); a gene moves to the
# module of its best score when the difference of the log chi-square
# (nSets degrees of freedom) probabilities of the best and its own score is
# below log(reassignThreshold); a module left with fewer than
# minModuleSize genes goes.  (As in WGCNA 1.72 a moved gene takes the
# position of its best module among the eigengenes as its label; and as the
# best score is the larger, that difference is never negative: WGCNA's rule
# moves no gene.)
.cs_reassign <- function(all_labels, good_genes, sets, MEs, index, corFnc, corOptions,
                         unsigned, nGSamples, reassignThreshold, minModuleSize, engine,
                         verbose, spaces) {
  good_labels <- all_labels[good_genes]
  if (sum(good_labels != 0) == 0) return(all_labels)
  if (verbose > 2) .wgcna_say(spaces, "....checking for genes that should be reassigned..")
  prop <- good_labels[good_labels != 0]
  assigned <- seq_along(all_labels)[good_genes][good_labels != 0]
  nsets <- length(sets)
  nmods <- ncol(MEs[[1L]])
  lp <- array(0, dim = c(length(prop), nmods, nsets))
  sum_sign <- matrix(0, length(prop), nmods)
  for (s in seq_len(nsets)) {
    kme <- .bw_cor(sets[[s]][, good_labels != 0, drop = FALSE], as.matrix(MEs[[s]]), corFnc,
                   corOptions, engine)
    if (unsigned) kme <- abs(kme)
    if (sum(abs(kme) > 1, na.rm = TRUE) > 0)
      stop("Some entries in 'cor' are out of normal range -1 to 1.", call. = FALSE)
    z <- -0.5 * log((1 + kme) / (1 - kme)) * sqrt(nGSamples[s] - 3)
    lp[, , s] <- -2 * log(stats::pnorm(-z))
    sum_sign <- sum_sign + sign(kme)
  }
  score <- matrix(apply(lp, c(1L, 2L), sum), ncol = nmods) * (nsets + sum_sign) / (2 * nsets)
  rm(lp)
  score[!is.finite(score)] <- 0.001
  .bw_move_genes(score, prop, assigned, index, all_labels, function(best, own) {
    d <- stats::pchisq(best, nsets, log.p = TRUE) - stats::pchisq(own, nsets, log.p = TRUE)
    ifelse(is.finite(d), d < log(reassignThreshold), FALSE)
  }, minModuleSize, verbose, spaces)
}

# Refuse a non-default value of an argument that gpu_blockwise_consensus_modules()
# does not support.
.cs_unsupported <- function(ok, what, why = "") {
  if (!ok)
    stop(sprintf("gpu_blockwise_consensus_modules() does not support '%s'%s", what, why),
         call. = FALSE)
}

#' Consensus modules as WGCNA::blockwiseConsensusModules finds them, in one block
#'
#' `gpu_blockwise_consensus_modules(multiExpr, ...)` gives the value of
#' `WGCNA::blockwiseConsensusModules(multiExpr, maxBlockSize = <all genes>,
#' ...)`: modules of genes that are co-expressed in every one of several
#' sets of samples (WGCNA's consensus modules), with every gene in one
#' block.  It takes the reference's arguments, in its order and with its
#' defaults, and makes its steps in its order:
#'
#' 1. genes and samples with too many missing values in any set, and genes
#'    of zero variance in a set, are set aside (WGCNA's
#'    `goodSamplesGenesMS()` with its defaults);
#' 2. each set's network and topological overlap by [gpu_tom()] (`power`,
#'    one for all sets or one per set, `networkType`, `TOMType`, `TOMDenom`,
#'    `corType` `"pearson"` or `"bicor"` with `maxPOutliers`, `quickCor`,
#'    `pearsonFallback`, `suppressNegativeTOM`), each kept as the lower
#'    triangle of the TOM (a `dist`-sized vector), never as a matrix;
#' 3. the calibration of the sets' TOMs (`networkCalibration`): with
#'    `"single quantile"` (the default) each set's TOM after the first is
#'    raised to the power that makes its `calibrationQuantile` quantile
#'    (type 8) equal to the first set's; with `sampleForCalibration` the
#'    quantiles are of a sample of `sampleForCalibrationFactor /
#'    min(calibrationQuantile, 1 - calibrationQuantile)` entries, drawn with
#'    R's `sample()` after `set.seed(54321)` exactly as WGCNA's
#'    `consensusTOM()` draws them (the random number state is put back
#'    afterwards), so the sample, and so the powers, are WGCNA's; `"full
#'    quantile"` normalizes the TOMs' quantiles (as `preprocessCore`'s
#'    `normalize.quantiles()`, which WGCNA calls); `"none"` leaves them;
#' 4. the consensus TOM: the entrywise minimum of the sets'
#'    (`consensusQuantile = 0`), their `consensusQuantile` quantile (type
#'    7), or with `useMean` their mean weighted by `setWeights`;
#' 5. the average-linkage tree of \eqn{1 -} the consensus TOM, by
#'    [gpu_hclust()], and the hybrid dynamic tree cut (`deepSplit`,
#'    `detectCutHeight`, `minModuleSize`, `maxCoreScatter`, `minGap`,
#'    `maxAbsCoreScatter`, `minAbsGap`, `minSplitHeight`,
#'    `minAbsSplitHeight`, `pamStage`, `pamRespectsDendro`);
#' 6. each set's module eigengenes, WGCNA's consensus kME check (a gene's
#'    kME is the `trimmingConsensusQuantile` quantile of its kMEs in the
#'    sets; `minCoreKME`, `minCoreKMESize`, `minKMEtoStay`) and its
#'    consensus reassignment (`reassignThresholdPS`; as written in WGCNA
#'    1.72 that rule never moves a gene, and here neither);
#' 7. the merging of modules whose eigengenes are close in every set, by
#'    [gpu_merge_close_modules()] on the sets (`mergeCutHeight`,
#'    `mergeConsensusQuantile`, `equalizeQuantilesForModuleMerging`,
#'    `quantileSummaryForModuleMerging`), and each set's eigengenes of the
#'    merged modules.
#'
#' The correlations of the kME steps are [gpu_cor()] or [gpu_bicor()] with
#' `use = "p"` (WGCNA's consensus steps pass bicor no other option); the
#' merging's are Pearson's, as WGCNA's.
#'
#' **One block.**  `maxBlockSize`, `blocks`, `blockSizePenaltyPower` and
#' `nPreclusteringCenters` are accepted, but every gene is in one block (the
#' first call of a session where they would have split the genes says so
#' in a message, as [gpu_blockwise_modules()] does).  The sets' TOMs and
#' their consensus take (sets + 1) times \eqn{4 n^2} bytes of host memory
#' for \eqn{n} genes (`dist`-sized double vectors; 3.2 GB for two sets of
#' 12625 genes), and the making of one set's TOM, the tree and the cut
#' what they take in [gpu_blockwise_modules()].  The calibration and the
#' consensus are one pass over the pairs in C (with the CPU threads of
#' option `gpucor.threads`), which keeps no per-set copy.  `"full
#' quantile"` calibration works in R on the sets' TOMs and needs about five
#' more such vectors while it sorts and ranks them.
#'
#' **Files.**  WGCNA writes each set's TOM into a file
#' (`individualTOMFileNames`, `useDiskCache`) and deletes it before it
#' returns, whatever `saveIndividualTOMs` says (blockwiseConsensusModules()
#' does not pass that argument on); here the TOMs stay in memory, so no file
#' is written, and `useDiskCache`, `chunkSize`, `cacheBase`, `cacheDir`,
#' `saveIndividualTOMs` and `individualTOMFileNames` change nothing.  With
#' `saveConsensusTOMs = TRUE` the consensus TOM is saved as WGCNA saves it:
#' an object `consTomDS` (a `dist`) in the file `consensusTOMFilePattern`
#' with `%b` replaced by 1, whose name comes back in `TOMFiles`.
#'
#' **Exactness.**  Each set's TOM agrees with WGCNA's to about 1e-12, not
#' bit for bit, the calibration sample is WGCNA's, and the tree is an exact
#' average linkage of the consensus; so `colors`, `unmergedColors` and
#' `multiMEs` are WGCNA's wherever no two merge heights of the tree, and no
#' value that the cut or the kME steps compare with a threshold, are within
#' that distance of each other.  The tree's `call` is gpu_hclust()'s.
#'
#' **Not supported** (an error names the argument): `individualTOMInfo`,
#' `useIndivTOMSubset` and `consensusTOMInfo` (WGCNA's precomputed TOMs),
#' `cosineCorrelation = TRUE`, `useBranchEigennodeDissim = TRUE`,
#' `stabilityLabels`, and `quickCor > 0` with `corType = "pearson"` where
#' it would change the network (see [gpu_blockwise_modules()]).  The
#' returned `individualTOMInfo` describes the one block (no files:
#' `saveTOMs` is `FALSE`), and `consensusTOMInfo` (with
#' `saveConsensusTOMs`) has WGCNA's components but no TOMs.  `nThreads >
#' 0` sets the threads of gpucor's CPU engine for the call.  WGCNA's
#' `verbose` output comes as messages, some of it worded differently.
#' Where WGCNA 1.72's reassignment would fail (exactly one gene of a module
#' scoring higher for another module: it calls `apply()` on a vector) this
#' goes on.
#'
#' @param multiExpr expression data in WGCNA's multi-set format: a list of
#'   sets, each a list whose component `data` is a matrix or data frame
#'   (samples in rows, genes in columns), the same genes in every set.
#' @param checkMissingData whether to set aside the genes and samples with
#'   too many missing values, and the genes of zero variance.
#' @param blocks,maxBlockSize,blockSizePenaltyPower,nPreclusteringCenters
#'   accepted, not used: every gene is in one block (see above).
#' @param randomSeed `NULL`, or a seed set for the call (the random number
#'   generator's state is restored afterwards, as WGCNA restores it).
#' @param individualTOMInfo,useIndivTOMSubset,consensusTOMInfo must be
#'   `NULL`.
#' @param corType `"pearson"` or `"bicor"`.
#' @param maxPOutliers,quickCor,pearsonFallback bicor's options, as in
#'   [gpu_tom()].
#' @param cosineCorrelation must be `FALSE`.
#' @param power the soft-thresholding power: one number, or one per set
#'   (between 1 and 50 with `checkPower`).
#' @param networkType `"unsigned"`, `"signed"` or `"signed hybrid"`.
#' @param checkPower whether to check that `power` is between 1 and 50.
#' @param replaceMissingAdjacencies accepted (see [gpu_blockwise_modules()]).
#' @param TOMType,TOMDenom as in [gpu_tom()].
#' @param suppressNegativeTOM for the `"signed Nowick"` types, negative TOM
#'   values set to 0.
#' @param saveIndividualTOMs,individualTOMFileNames accepted; no file is
#'   written (see above).
#' @param networkCalibration `"single quantile"`, `"full quantile"` or
#'   `"none"` (see above).
#' @param calibrationQuantile,sampleForCalibration,sampleForCalibrationFactor
#'   the `"single quantile"` calibration (see above).
#' @param getNetworkCalibrationSamples `TRUE`: return the calibration's
#'   sample (`networkCalibrationSamples`: a list of one block's
#'   `sampleIndex` and `TOMSamples`, the sets' uncalibrated TOM values).
#' @param consensusQuantile the quantile of the sets' calibrated TOMs that
#'   is the consensus (0: their minimum).
#' @param useMean,setWeights `useMean = TRUE`: the consensus is the mean of
#'   the sets' TOMs weighted by `setWeights` (equal weights by default).
#' @param saveConsensusTOMs,consensusTOMFilePattern `TRUE`: save the
#'   consensus TOM into a file (see above).
#' @param useDiskCache,chunkSize,cacheBase,cacheDir accepted, not used.
#' @param deepSplit,detectCutHeight,minModuleSize,maxCoreScatter,minGap,maxAbsCoreScatter,minAbsGap,minSplitHeight,minAbsSplitHeight,pamStage,pamRespectsDendro
#'   the tree cut's options (`detectCutHeight` is its `cutHeight`,
#'   `minModuleSize` its `minClusterSize`).
#' @param checkMinModuleSize `TRUE`: a `minModuleSize` above half the genes
#'   is lowered to that, with WGCNA's warning.
#' @param useBranchEigennodeDissim must be `FALSE`.
#' @param minBranchEigennodeDissim not used.
#' @param stabilityLabels must be `NULL`.
#' @param minStabilityDissim not used.
#' @param reassignThresholdPS,trimmingConsensusQuantile,minCoreKME,minCoreKMESize,minKMEtoStay
#'   WGCNA's consensus kME steps (see above).
#' @param impute whether the eigengenes impute missing values (WGCNA's
#'   `moduleEigengenes()` option).
#' @param trapErrors as in WGCNA.
#' @param equalizeQuantilesForModuleMerging,quantileSummaryForModuleMerging,mergeConsensusQuantile
#'   the merging's `equalizeQuantiles`, `quantileSummary` and
#'   `consensusQuantile` (see [gpu_merge_close_modules()]).
#' @param mergeCutHeight the consensus eigengene dissimilarity below which
#'   modules are merged.
#' @param numericLabels `TRUE`: modules are numbers (0 for unassigned
#'   genes); `FALSE`: WGCNA's colours ("grey" for unassigned).
#' @param nThreads `0`, or the number of CPU threads.
#' @param verbose,indent WGCNA's level of detail and indentation of
#'   progress messages; from 1, the TOM and tree steps name the engine
#'   that ran them (as [gpu_tom()]'s and [gpu_hclust()]'s `verbose`).
#' @param ... other arguments are ignored, as WGCNA ignores them.
#' @param backend,precision,devices as for [gpu_tom()] and [gpu_hclust()]
#'   (after `...`: matched by their whole names only).
#' @return WGCNA's list: `colors` (after merging, named by gene),
#'   `unmergedColors`, `multiMEs` (for each set, named as the sets of
#'   `multiExpr`, a list whose `data` is a data frame of the merged
#'   modules' eigengenes, a row per sample, `NA` for the samples set
#'   aside), `goodSamples` (a list, one per set), `goodGenes`,
#'   `dendrograms` (a list of the one `hclust` tree), `TOMFiles` (`NULL`
#'   without `saveConsensusTOMs`), `blockGenes`, `blocks`, `originCount`
#'   (for each set, how many entries of its calibrated TOM are at most the
#'   consensus), `networkCalibrationSamples` (`NULL` unless
#'   `getNetworkCalibrationSamples`), `individualTOMInfo`,
#'   `consensusTOMInfo` (`NULL` unless `saveConsensusTOMs`) and
#'   `consensusQuantile`.
#' @seealso [gpu_blockwise_modules()], [gpu_merge_close_modules()],
#'   [gpu_tom()], [gpu_hclust()]
#' @examples
#' \donttest{
#' if (requireNamespace("WGCNA", quietly = TRUE) &&
#'     requireNamespace("dynamicTreeCut", quietly = TRUE)) {
#'   set.seed(1)
#'   sim <- function(n) {
#'     f <- matrix(rnorm(n * 3), n, 3)
#'     f[, rep(1:3, each = 60)] + matrix(rnorm(n * 180), n, 180)
#'   }
#'   multiExpr <- list(A = list(data = sim(40)), B = list(data = sim(30)))
#'   net <- gpu_blockwise_consensus_modules(multiExpr, minModuleSize = 10, verbose = 0)
#'   table(net$colors)
#' }
#' }
#' @export
gpu_blockwise_consensus_modules <- function(
    multiExpr, checkMissingData = TRUE, blocks = NULL, maxBlockSize = 5000,
    blockSizePenaltyPower = 5, nPreclusteringCenters = NULL, randomSeed = 54321,
    individualTOMInfo = NULL, useIndivTOMSubset = NULL, corType = "pearson", maxPOutliers = 1,
    quickCor = 0, pearsonFallback = "individual", cosineCorrelation = FALSE, power = 6,
    networkType = "unsigned", checkPower = TRUE, replaceMissingAdjacencies = FALSE,
    TOMType = "unsigned", TOMDenom = "min", suppressNegativeTOM = FALSE,
    saveIndividualTOMs = TRUE, individualTOMFileNames = "individualTOM-Set%s-Block%b.RData",
    networkCalibration = c("single quantile", "full quantile", "none"),
    calibrationQuantile = 0.95, sampleForCalibration = TRUE,
    sampleForCalibrationFactor = 1000, getNetworkCalibrationSamples = FALSE,
    consensusQuantile = 0, useMean = FALSE, setWeights = NULL, saveConsensusTOMs = FALSE,
    consensusTOMFilePattern = "consensusTOM-block.%b.RData", useDiskCache = TRUE,
    chunkSize = NULL, cacheBase = ".blockConsModsCache", cacheDir = ".",
    consensusTOMInfo = NULL, deepSplit = 2, detectCutHeight = 0.995, minModuleSize = 20,
    checkMinModuleSize = TRUE, maxCoreScatter = NULL, minGap = NULL, maxAbsCoreScatter = NULL,
    minAbsGap = NULL, minSplitHeight = NULL, minAbsSplitHeight = NULL,
    useBranchEigennodeDissim = FALSE, minBranchEigennodeDissim = mergeCutHeight,
    stabilityLabels = NULL, minStabilityDissim = NULL, pamStage = TRUE,
    pamRespectsDendro = TRUE, reassignThresholdPS = 1e-04,
    trimmingConsensusQuantile = consensusQuantile, minCoreKME = 0.5,
    minCoreKMESize = minModuleSize / 3, minKMEtoStay = 0.2, impute = TRUE, trapErrors = FALSE,
    equalizeQuantilesForModuleMerging = FALSE, quantileSummaryForModuleMerging = "mean",
    mergeCutHeight = 0.15, mergeConsensusQuantile = consensusQuantile, numericLabels = FALSE,
    nThreads = 0, verbose = 2, indent = 0, ...,
    backend = getOption("gpucor.backend", "auto"), precision = c("double", "single"),
    devices = getOption("gpucor.devices", 0L)) {
  engine <- .bw_engine(backend, match.arg(precision), devices, verbose, indent)
  spaces <- .wgcna_spaces(indent)
  ms <- .ms_sets(multiExpr, "multiExpr")
  xs <- ms$x
  nSets <- length(xs)
  nGenes <- ncol(xs[[1L]])
  nSamples <- vapply(xs, nrow, 1L)
  set_names <- names(multiExpr)

  # arguments: WGCNA's checks first, in its order
  if (!is.numeric(power) || anyNA(power) || any(!is.finite(power)))
    stop("'power' must be one number, or one per set", call. = FALSE)
  if (length(power) != 1L && length(power) != nSets)
    stop("Invalid arguments: Length of 'power' must equal number of sets given in 'multiExpr'.",
         call. = FALSE)
  power <- rep_len(as.double(power), nSets)
  for (a in c("checkMissingData", "cosineCorrelation", "checkPower", "replaceMissingAdjacencies",
              "suppressNegativeTOM", "saveIndividualTOMs", "sampleForCalibration",
              "getNetworkCalibrationSamples", "useMean", "saveConsensusTOMs", "useDiskCache",
              "checkMinModuleSize", "useBranchEigennodeDissim", "pamStage",
              "pamRespectsDendro", "impute", "trapErrors", "equalizeQuantilesForModuleMerging",
              "numericLabels")) {
    v <- get(a, inherits = FALSE)
    if (!is.logical(v) || length(v) != 1L || is.na(v))
      stop(sprintf("'%s' must be TRUE or FALSE", a), call. = FALSE)
  }
  # WGCNA's seed for the call, the caller's state back afterwards
  if (!is.null(randomSeed)) withr::local_seed(randomSeed)
  for (a in c("consensusQuantile", "calibrationQuantile", "trimmingConsensusQuantile",
              "mergeConsensusQuantile")) {
    v <- get(a, inherits = FALSE)
    if (!is.numeric(v) || length(v) != 1L || is.na(v) || v < 0 || v > 1)
      stop(sprintf("'%s' must be between 0 and 1.", a), call. = FALSE)
  }
  if (checkMinModuleSize && minModuleSize > nGenes / 2) {
    minModuleSize <- nGenes / 2
    warning("blockwiseConsensusModules: minModuleSize appeared too large and was lowered to",
            minModuleSize,
            ". If you insist on keeping the original minModuleSize, set checkMinModuleSize = FALSE.",
            call. = FALSE)
  }
  if (verbose > 0)
    .wgcna_say(spaces, "Calculating consensus modules and module eigengenes",
               "block-wise from all genes")
  .cs_unsupported(is.null(individualTOMInfo), "individualTOMInfo",
                  " (the TOMs are computed in the call)")
  .cs_unsupported(is.null(useIndivTOMSubset), "useIndivTOMSubset",
                  " (the TOMs are computed in the call)")
  .cs_unsupported(is.null(consensusTOMInfo), "consensusTOMInfo",
                  " (the TOMs are computed in the call)")
  .cs_unsupported(!cosineCorrelation, "cosineCorrelation = TRUE",
                  " (gpu_tom() has no cosine correlation)")
  .cs_unsupported(!useBranchEigennodeDissim, "useBranchEigennodeDissim = TRUE")
  .cs_unsupported(is.null(stabilityLabels), "stabilityLabels")
  corType <- .wgcna_choice(corType, .cor_types[1:2], "corType")
  TOMType <- .wgcna_choice(TOMType, .tom_types, "TOMType")
  TOMDenom <- .wgcna_choice(TOMDenom, c("min", "mean"), "TOMDenom")
  networkType <- .wgcna_choice(networkType, .network_types, "networkType")
  networkCalibration <- .wgcna_choice(networkCalibration[1L],
                                      c("single quantile", "full quantile", "none"),
                                      "networkCalibration")
  quantileSummaryForModuleMerging <- .wgcna_choice(quantileSummaryForModuleMerging,
                                                   c("mean", "median"),
                                                   "quantileSummaryForModuleMerging")
  if (checkPower && (any(power < 1) || any(power > 50)))
    stop("power must be between 1 and 50.", call. = FALSE)
  for (s in seq_len(nSets)) power[s] <- .wgcna_power(power[s])
  bo <- .bicor_opts(maxPOutliers, quickCor, pearsonFallback)
  bo <- list(maxPOutliers = maxPOutliers, quickCor = quickCor,
             pearsonFallback = .bicor_fallbacks[bo$fallback])
  if (!is.null(nThreads) && (!is.numeric(nThreads) || length(nThreads) != 1L ||
                             is.na(nThreads) || nThreads < 0))
    stop("'nThreads' must be 0 or a positive number", call. = FALSE)
  if (!is.null(setWeights) && (!is.numeric(setWeights) || any(!is.finite(setWeights))))
    stop("Entries of 'setWeights' must all be finite.", call. = FALSE)
  if (!is.null(setWeights) && length(setWeights) != nSets)
    stop("Length of 'setWeights' must equal the number of sets.", call. = FALSE)
  if (getNetworkCalibrationSamples && !sampleForCalibration)
    stop("Incompatible input options: networkCalibrationSamples can only be returned if sampleForCalibration is TRUE.",
         call. = FALSE)
  if (!is.numeric(sampleForCalibrationFactor) || length(sampleForCalibrationFactor) != 1L ||
      is.na(sampleForCalibrationFactor) || sampleForCalibrationFactor <= 0)
    stop("'sampleForCalibrationFactor' must be a positive number", call. = FALSE)
  if (saveConsensusTOMs) {
    if (!is.character(consensusTOMFilePattern) || length(consensusTOMFilePattern) != 1L ||
        is.na(consensusTOMFilePattern) || !grepl("%b", consensusTOMFilePattern, fixed = TRUE))
      stop(paste("File name for consensus TOM must contain the tag %b somewhere in the file name -\n",
                 "   - this tag will be replaced by the block number. "), call. = FALSE)
  }
  if (!is.null(blocks) && length(blocks) != nGenes)
    stop("Input error: length of 'blocks' must equal number of genes in 'multiExpr'.",
         call. = FALSE)
  if (!is.null(nThreads) && nThreads > 0) {
    old <- options(gpucor.threads = as.integer(nThreads))
    on.exit(options(old), add = TRUE)
  }

  gene_names <- colnames(xs[[1L]])
  if (is.null(gene_names)) gene_names <- paste0("Column.", seq_len(nGenes))
  sample_names <- lapply(seq_len(nSets), function(s) {
    r <- ms$rownames[[s]]
    if (is.null(r)) paste0("Row.", seq_len(nSamples[s])) else r
  })

  if (verbose > 0) .wgcna_say(spaces, "Calculating topological overlaps block-wise from all genes")
  if (checkMissingData) {
    gsg <- .good_samples_genes_ms(xs, verbose - 1, indent + 1)
    if (!gsg$allOK)
      xs <- lapply(seq_len(nSets), function(s)
        xs[[s]][gsg$goodSamples[[s]], gsg$goodGenes, drop = FALSE])
  } else {
    gsg <- list(goodGenes = rep(TRUE, nGenes),
                goodSamples = lapply(nSamples, function(n) rep(TRUE, n)), allOK = TRUE)
  }
  if (checkMissingData) names(gsg$goodSamples) <- set_names   # as goodSamplesMS() names them
  good_genes <- gsg$goodGenes
  n_good <- sum(good_genes)
  nGSamples <- vapply(gsg$goodSamples, sum, 1L)
  if (corType == "pearson" && quickCor > 0) {
    for (s in seq_len(nSets)) {
      nas <- colSums(is.na(xs[[s]]))
      if (any(nas > 0 & nas <= floor(quickCor * nrow(xs[[s]]))))
        stop("gpu_blockwise_consensus_modules() does not support quickCor > 0 with corType = \"pearson\" and missing values: gpu_tom() computes each Pearson pair on the samples both genes observe (quickCor = 0)",
             call. = FALSE)
    }
  }
  .bw_one_block_note("gpu_blockwise_consensus_modules", blocks, maxBlockSize, good_genes)
  blocks <- rep(NA, nGenes)
  blocks[good_genes] <- 1
  block_genes <- list(seq_len(nGenes)[good_genes])

  # each set's dissimilarity 1 - TOM ('dist's of the lower triangle)
  ds <- vector("list", nSets)
  # one bar: each set's TOM, the consensus, the tree, the modules
  bar <- .progress_begin("gpu_blockwise_consensus_modules")
  w <- .bw_progress_weights(n_good, max(nSamples), nSets)
  nsteps <- nSets + 3L
  for (s in seq_len(nSets)) {
    .progress_frame(bar, sprintf("TOM of set %d", s), s, nsteps, w[["tom"]])
    if (verbose > 2) .wgcna_say(spaces, "....Working on set", s)
    ds[[s]] <- .bw_dissimilarity(xs[[s]], power[s], networkType, TOMType, TOMDenom, corType,
                                 bo, FALSE, suppressNegativeTOM, FALSE, FALSE, "", engine,
                                 verbose, spaces)
  }
  .progress_frame(bar, "consensus", nSets + 1L, nsteps, w[["consensus"]])
  cons <- .cs_consensus_tom(ds, networkCalibration, calibrationQuantile,
                            sampleForCalibration, sampleForCalibrationFactor,
                            getNetworkCalibrationSamples, consensusQuantile, useMean,
                            setWeights, verbose, spaces)
  rm(ds)
  d <- cons$dist
  cons$dist <- NULL
  attributes(d) <- list(Size = as.integer(n_good), Diag = FALSE, Upper = FALSE,
                        class = "dist")
  TOMFiles <- NULL
  if (saveConsensusTOMs) {
    # WGCNA's file: the consensus TOM, a 'dist' named consTomDS
    TOMFiles <- gsub("%b", "1", consensusTOMFilePattern, fixed = TRUE)
    consTomDS <- 1 - d
    save(consTomDS, file = TOMFiles)
    rm(consTomDS)
  }

  if (verbose > 1) .wgcna_say(spaces, "..Working on block 1 .")
  if (verbose > 2) .wgcna_say(spaces, "....clustering and detecting modules..")
  .progress_frame(bar, "tree", nSets + 2L, nsteps, w[["tree"]])
  tree <- gpu_hclust(d, method = "average", backend = backend, precision = engine$precision,
                     devices = engine$devices, verbose = verbose > 0)
  .progress_frame(bar, "modules", nsteps, nsteps)
  labels <- gpu_cutree_dynamic(
    dendro = tree, distM = d, deepSplit = deepSplit, cutHeight = detectCutHeight,
    minClusterSize = minModuleSize, method = "hybrid", maxCoreScatter = maxCoreScatter,
    minGap = minGap, maxAbsCoreScatter = maxAbsCoreScatter, minAbsGap = minAbsGap,
    minSplitHeight = minSplitHeight, minAbsSplitHeight = minAbsSplitHeight,
    pamStage = pamStage, pamRespectsDendro = pamRespectsDendro, verbose = verbose - 3,
    indent = indent + 2)
  rm(d)

  # WGCNA's consensus steps: cor or bicor with use = "p" and no other option
  corFnc <- c(pearson = "cor", bicor = "bicor")[[corType]]
  corOptions <- list(use = "p")
  unsigned <- networkType == "unsigned"
  all_labels <- rep(0, nGenes)
  found <- NULL
  if (sum(labels > 0) == 0) {
    if (verbose > 1) .wgcna_say(spaces, "No modules detected in block 1")
  } else {
    found <- .bw_check_modules(xs, labels, impute, trapErrors, corFnc, corOptions, unsigned,
                               minCoreKME, minCoreKMESize, minKMEtoStay, minModuleSize, engine,
                               verbose, indent, spaces, trimmingConsensusQuantile)
    if (is.null(found) && verbose > 1)
      .wgcna_say(spaces, "  ..No significant modules detected in block 1")
  }
  if (!is.null(found)) {
    all_labels[good_genes] <- found$labels
    all_labels <- .cs_reassign(all_labels, good_genes, xs, found$MEs, found$index, corFnc,
                               corOptions, unsigned, nGSamples, reassignThresholdPS^nSets,
                               minModuleSize, engine, verbose, spaces)
  }

  if (verbose > 1) .wgcna_say(spaces, "..merging consensus modules that are too close..")
  colors <- if (numericLabels) all_labels else .labels_to_colors(all_labels)
  merged_colors <- colors
  sets <- lapply(xs, function(x) list(data = x))
  names(sets) <- set_names
  merged <- try(gpu_merge_close_modules(
    sets, colors[good_genes], equalizeQuantiles = equalizeQuantilesForModuleMerging,
    quantileSummary = quantileSummaryForModuleMerging, consensusQuantile = mergeConsensusQuantile,
    cutHeight = mergeCutHeight, relabel = TRUE, impute = impute, verbose = verbose - 2,
    indent = indent + 2), silent = TRUE)
  multiMEs <- NULL
  if (inherits(merged, "try-error")) {
    warning(paste("gpu_blockwise_consensus_modules: mergeCloseModule failed with this message:\n     ",
                  merged, "---> returning unmerged consensus modules"), call. = FALSE)
    MEs <- try(lapply(xs, function(x)
      gpu_module_eigengenes(x, colors[good_genes], impute = impute)$eigengenes), silent = TRUE)
    if (inherits(MEs, "try-error")) {
      warning(paste("gpu_blockwise_consensus_modules: ME calculation failed with this message:\n     ",
                    MEs, "---> returning empty module eigengenes"), call. = FALSE)
    } else {
      multiMEs <- lapply(seq_len(nSets), function(s)
        list(data = .bw_sample_MEs(MEs[[s]], gsg$goodSamples[[s]], sample_names[[s]])))
    }
  } else {
    merged_colors[good_genes] <- merged$colors
    multiMEs <- lapply(seq_len(nSets), function(s)
      list(data = .bw_sample_MEs(merged$newMEs[[s]]$data, gsg$goodSamples[[s]],
                                 sample_names[[s]])))
  }
  if (!is.null(multiMEs)) names(multiMEs) <- set_names
  names(colors) <- gene_names
  names(merged_colors) <- gene_names
  individualTOMInfo <- list(
    blocks = blocks, blockGenes = block_genes, goodSamplesAndGenes = gsg, nGGenes = n_good,
    gBlocks = rep(1, n_good), nThreads = if (is.null(nThreads)) 0 else nThreads,
    saveTOMs = FALSE, intNetworkType = match(networkType, .network_types),
    intCorType = match(corType, .cor_types), nSets = nSets, setNames = set_names)
  consensusTOMInfo <- if (saveConsensusTOMs)
    list(TOMFiles = TOMFiles, saveConsensusTOMs = TRUE, individualTOMInfo = individualTOMInfo,
         useIndivTOMSubset = seq_len(nSets), goodSamplesAndGenes = gsg, nGGenes = n_good,
         nSets = nSets, saveCalibratedIndividualTOMs = FALSE,
         calibratedIndividualTOMFileNames = NULL,
         networkCalibrationSamples = cons$samples, consensusQuantile = consensusQuantile,
         originCount = cons$originCount)
  .progress_end(bar)
  list(colors = merged_colors, unmergedColors = colors, multiMEs = multiMEs,
       goodSamples = gsg$goodSamples, goodGenes = good_genes, dendrograms = list(tree),
       TOMFiles = TOMFiles, blockGenes = block_genes, blocks = blocks,
       originCount = cons$originCount, networkCalibrationSamples = cons$samples,
       individualTOMInfo = individualTOMInfo, consensusTOMInfo = consensusTOMInfo,
       consensusQuantile = consensusQuantile)
}
