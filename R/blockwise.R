# WGCNA's blockwiseModules() with the whole network in one block: the
# network and its TOM (gpu_tom(), R/wgcna.R), the average-linkage tree
# (gpu_hclust(), R/hclust.R), the dynamic tree cut, the eigengenes, WGCNA's
# kME checks and reassignment, and the merging of close modules, each step
# with the reference's arguments and in its order.

# WGCNA's standard colour sequence (its standardColors()): these 34 first,
# then R's other colour names that are not a grey, in a fixed shuffle.
.wgcna_first_colors <- c(
  "turquoise", "blue", "brown", "yellow", "green", "red", "black", "pink", "magenta",
  "purple", "greenyellow", "tan", "salmon", "cyan", "midnightblue", "lightcyan", "grey60",
  "lightgreen", "lightyellow", "royalblue", "darkred", "darkgreen", "darkturquoise",
  "darkgrey", "orange", "darkorange", "white", "skyblue", "saddlebrown", "steelblue",
  "paleturquoise", "violet", "darkolivegreen", "darkmagenta")

.standard_colors <- function() {
  s <- .gpucor_state$standard_colors
  if (is.null(s)) {
    rest <- grDevices::colors()
    rest <- rest[!grepl("grey", rest, fixed = TRUE) & !grepl("gray", rest, fixed = TRUE)]
    rest <- rest[!rest %in% .wgcna_first_colors]
    # WGCNA's shuffle: the ranks of sin(13 k + sin(13 k)) as the new order
    k <- seq_along(rest)
    s <- c(.wgcna_first_colors, rest[rank(sin(13 * k + sin(13 * k)))])
    .gpucor_state$standard_colors <- s
  }
  s
}

# WGCNA's labels2colors() of whole-number labels: 0 is "grey", label k the
# k-th standard colour; past the end of the sequence it starts again with
# ".1", ".2", ... appended (with WGCNA's warning).
.labels_to_colors <- function(labels) {
  cs <- .standard_colors()
  top <- max(c(0, labels))
  if (top > length(cs)) {
    reps <- as.integer((top - 1) / length(cs)) + 1L
    warning(sprintf("labels2colors: Number of labels exceeds number of available colors. Some colors will be repeated %d times.",
                    reps), call. = FALSE)
    cs <- c(cs, paste0(cs, ".", rep(seq_len(reps), each = length(cs))))
  }
  out <- rep("grey", length(labels))
  out[labels != 0] <- cs[labels[labels != 0]]
  out
}

# WGCNA's indentation (indentSpaces) and its lines of 'verbose' output, as
# messages.
.wgcna_spaces <- function(indent) if (indent > 0) strrep("  ", indent) else ""
.wgcna_say <- function(spaces, ...) message(paste(spaces, ...))

# Column variances over the observed values (matrixStats::colVars(na.rm =
# TRUE)): NA where fewer than two are observed.
.col_vars_na <- function(x) {
  n <- colSums(!is.na(x))
  m <- colMeans(x, na.rm = TRUE)
  v <- colSums((x - rep(m, each = nrow(x)))^2, na.rm = TRUE) / (n - 1)
  v[n < 2] <- NA
  v
}

# x[rows, cols] without a copy when both select everything.
.bw_sub <- function(x, rows, cols) {
  if (all(rows) && all(cols)) x else x[rows, cols, drop = FALSE]
}

# WGCNA's goodGenes(): among the samples 'use_s', the genes 'use_g' with at
# least minNSamples observed values, fewer than (1 - minFraction) of them
# missing and a variance above tol^2.
.good_genes <- function(x, use_s, use_g, tol, minFraction, minNSamples, minNGenes,
                        verbose, spaces) {
  if (is.null(use_g)) use_g <- rep(TRUE, ncol(x))
  if (is.null(use_s)) use_s <- rep(TRUE, nrow(x))
  ns <- sum(use_s)
  present <- colSums(!is.na(.bw_sub(x, use_s, use_g)))
  gg <- use_g
  gg[use_g][present < minNSamples] <- FALSE
  xg <- .bw_sub(x, use_s, gg)
  v <- .col_vars_na(xg)
  v[is.na(v)] <- 0
  nas <- colSums(is.na(xg))
  rm(xg)
  gg[gg] <- nas < (1 - minFraction) * ns & v > tol^2 & ns - nas >= minNSamples
  if (sum(gg) < minNGenes)
    stop("Too few genes with valid expression levels in the required number of samples.",
         call. = FALSE)
  if (verbose > 0 && sum(use_g) - sum(gg) > 0)
    .wgcna_say(spaces, " ..Excluding", sum(use_g) - sum(gg),
               "genes from the calculation due to too many missing samples or zero variance.")
  gg
}

# WGCNA's goodSamples(): the samples with fewer than (1 - minFraction) of
# the genes 'use_g' missing and at least minNGenes of them observed.
.good_samples <- function(x, use_s, use_g, minFraction, minNSamples, minNGenes, verbose,
                          spaces) {
  if (is.null(use_g)) use_g <- rep(TRUE, ncol(x))
  if (is.null(use_s)) use_s <- rep(TRUE, nrow(x))
  ng <- sum(use_g)
  nas <- rowSums(is.na(.bw_sub(x, use_s, use_g)))
  gs <- use_s
  gs[use_s] <- nas < (1 - minFraction) * ng & ng - nas >= minNGenes
  if (sum(gs) < minNSamples)
    stop("Too few samples with valid expression levels for the required number of genes.",
         call. = FALSE)
  if (verbose > 0 && sum(use_s) - sum(gs) > 0)
    .wgcna_say(spaces, " ..Excluding", sum(use_s) - sum(gs),
               "samples from the calculation due to too many missing genes.")
  gs
}

# WGCNA's goodSamplesGenes() with its defaults (blockwiseModules passes
# none): genes, then samples, again until neither loses one.
.good_samples_genes <- function(x, verbose = 0, indent = 0, minFraction = 1 / 2,
                                minNSamples = 4, minNGenes = 4) {
  spaces <- .wgcna_spaces(indent)
  tol <- 1e-10 * max(abs(x), na.rm = TRUE)
  gg <- gs <- NULL
  bad_g <- bad_s <- 0
  step <- 1
  if (verbose > 0) .wgcna_say(spaces, "Flagging genes and samples with too many missing values...")
  repeat {
    if (verbose > 0) .wgcna_say(spaces, " ..step", step)
    gg <- .good_genes(x, gs, gg, tol, minFraction, minNSamples, minNGenes, verbose - 1,
                      .wgcna_spaces(indent + 1))
    gs <- .good_samples(x, gs, gg, minFraction, minNSamples, minNGenes, verbose - 1,
                        .wgcna_spaces(indent + 1))
    changed <- sum(!gg) > bad_g || sum(!gs) > bad_s
    bad_g <- sum(!gg)
    bad_s <- sum(!gs)
    step <- step + 1
    if (!changed) break
  }
  list(goodGenes = gg, goodSamples = gs, allOK = bad_g + bad_s == 0)
}

# WGCNA's cor(x, y) or bicor(x, y) with blockwiseModules' corOptions
# (use = "p"; bicor's maxPOutliers and pearsonFallback where given): a
# matrix, vectors taken as one column.
.bw_cor <- function(x, y, corFnc, corOptions, engine) {
  x <- as.matrix(x)
  y <- as.matrix(y)
  if (corFnc == "cor")
    return(gpu_cor(x, y, use = "pairwise.complete.obs", backend = engine$backend,
                   precision = engine$precision, devices = engine$devices))
  gpu_bicor(x, y, use = "pairwise.complete.obs",
            maxPOutliers = if (is.null(corOptions$maxPOutliers)) 1 else corOptions$maxPOutliers,
            pearsonFallback = if (is.null(corOptions$pearsonFallback)) "individual"
                              else corOptions$pearsonFallback,
            backend = engine$backend, precision = engine$precision, devices = engine$devices)
}

# WGCNA's corPvalueFisher() (two-sided), in its order of operations.
.cor_p_fisher <- function(r, n) {
  if (sum(abs(r) > 1, na.rm = TRUE) > 0)
    stop("Some entries in 'cor' are out of normal range -1 to 1.", call. = FALSE)
  z <- abs(0.5 * log((1 + r) / (1 - r)) * sqrt(n - 3))
  2 * stats::pnorm(-z)
}

# The first principal component of x's columns (samples in rows), its sign
# chosen so that it follows the kME-weighted mean of the columns (WGCNA's
# .alignedFirstPC, power 6).
.aligned_first_pc <- function(x, power = 6) {
  x <- as.matrix(x)
  pc <- tryCatch(svd(x, nu = 1, nv = 0)$u[, 1], error = function(e) NULL)
  if (is.null(pc)) {
    # WGCNA's fallback: a weighted mean of the columns
    pc <- rowMeans(x, na.rm = TRUE)
    w <- matrix(abs(stats::cor(x, pc, use = "p"))^power, nrow(x), ncol(x), byrow = TRUE)
    return(scale(rowMeans(x * w, na.rm = TRUE)))
  }
  w <- abs(stats::cor(x, pc))^power
  ok <- !is.na(x)
  mean_x <- rowSums(ifelse(ok, x, 0) * rep(w, each = nrow(x))) / drop(ok %*% w)
  s <- stats::cov(pc, mean_x)
  if (!is.finite(s)) s <- 0
  if (s < 0) -pc else pc
}

# The external branch split of useBranchEigennodeDissim (WGCNA's
# branchEigengeneDissim): 1 - the correlation of the two branches' aligned
# first principal components (1 - |r| unsigned).  The tree cut calls it
# with the options blockwiseModules gives (and 'expr', the scaled data).
.branch_eigengene_dissim <- function(expr, branch1, branch2, corFnc = "cor",
                                     corOptions = list(use = "p"), signed = TRUE,
                                     engine = list(backend = "cpu", precision = "double",
                                                   devices = 0L), ...) {
  r <- as.numeric(.bw_cor(.aligned_first_pc(expr[, branch1, drop = FALSE]),
                          .aligned_first_pc(expr[, branch2, drop = FALSE]),
                          corFnc, corOptions, engine))
  if (signed) 1 - r else 1 - abs(r)
}

# The shares of the progress bar of gpu_blockwise_modules() and
# gpu_blockwise_consensus_modules() that the steps take, from the work of
# each in units of p^2 (p genes, n samples): a TOM's products n + p
# multiply-adds a pair, the tree's merges a few scattered reads of each
# distance (counted as 60 multiply-adds), the consensus of the sets'
# TOMs 4 a set, the modules (tree cut, eigengenes, merging) 30.
.bw_progress_weights <- function(p, n, nsets) {
  work <- c(tom = (as.double(n) + p) / 2, consensus = if (nsets > 1L) 4 * nsets else 0,
            tree = 60, modules = 30)
  work / (nsets * work[["tom"]] + sum(work[-1L]))
}

# 1 - TOM of the block as a 'dist' without labels, as the reference makes
# it: from the file of saveTOMs (loadTOM), or by gpu_tom() (saved first
# with saveTOMs), with suppressTOMForZeroAdjacencies and suppressNegativeTOM
# applied as WGCNA's C code applies them (signed TOM types only; the
# negative values of the Nowick types).
.bw_dissimilarity <- function(x, power, networkType, TOMType, TOMDenom, corType, bo,
                              suppressZero, suppressNegative, loadTOM, saveTOMs, file,
                              engine, verbose, spaces) {
  if (loadTOM) {
    e <- new.env(parent = emptyenv())
    got <- if (file.exists(file)) try(load(file = file, envir = e), silent = TRUE)
    if (!identical(got, "TOM")) {
      .wgcna_say(spaces, paste0("Loading of TOM in block 1 failed:\n file ", file,
                                "\n  either does not exist or does not contain the object 'TOM'.\n",
                                "  Will recalculate TOM."))
    } else if (!inherits(e$TOM, "dist") || length(attr(e$TOM, "Size")) != 1L ||
               attr(e$TOM, "Size") != ncol(x)) {
      .wgcna_say(spaces, paste0("TOM file ", file,
                                " does not contain object of the right type or size.\n",
                                " Will recalculate TOM."))
    } else {
      if (verbose > 2) .wgcna_say(spaces, "  ..loading TOM for block 1 from file", file)
      d <- 1 - e$TOM
      # the reference's tree is of as.dist(1 - as.matrix(TOM)): labels
      # 1, ..., n where TOM has none
      if (is.null(attr(d, "Labels"))) attr(d, "Labels") <- as.character(seq_len(ncol(x)))
      attr(d, "method") <- NULL
      return(d)
    }
  }
  # gpu_tom() warns when NA adjacencies made TOM values NA: the flag
  # stands for anyNA() of the whole result
  na_tom <- FALSE
  tom_call <- function(dist)
    withCallingHandlers(
      gpu_tom(x, power = power, networkType = networkType, TOMType = TOMType,
              TOMDenom = TOMDenom, corType = corType, dist = dist,
              maxPOutliers = bo$maxPOutliers, quickCor = bo$quickCor,
              pearsonFallback = bo$pearsonFallback, backend = engine$backend,
              precision = engine$precision, devices = engine$devices, verbose = verbose > 0),
      warning = function(w)
        if (grepl("NA adjacencies", conditionMessage(w), fixed = TRUE)) {
          na_tom <<- TRUE
          invokeRestart("muffleWarning")
        })
  if (saveTOMs) {
    tom <- tom_call(FALSE)
    dimnames(tom) <- NULL
    # what the reference saves: as.dist() of the TOM matrix, named TOM
    TOM <- stats::as.dist(tom)
    rm(tom)
    if (verbose > 2) .wgcna_say(spaces, "  ..saving TOM for block 1 into file", file)
    if (!anyNA(TOM)) save(TOM, file = file)
    d <- 1 - TOM
    rm(TOM)
  } else {
    d <- tom_call(TRUE)
  }
  if (na_tom || (saveTOMs && anyNA(d)))
    stop("the network has NA adjacencies (pairs of genes with fewer than two common observed samples, or constant on those): WGCNA stops on them too (\"Standard deviation of some genes is zero.\"); remove such genes first",
         call. = FALSE)
  # (the reference's tree is of as.dist(1 - tom), without labels or
  # method: the caller drops them from the tree, not from d, whose
  # attributes cannot change without a copy of all of it)
  signed_tom <- TOMType %in% c("signed", "signed Nowick", "signed 2", "signed Nowick 2")
  zero <- suppressZero && signed_tom
  negative <- suppressNegative && TOMType %in% c("signed Nowick", "signed Nowick 2")
  if (zero || negative) {
    a <- NULL
    if (zero) {
      # WGCNA's adjacency of the TOM is sign(r) |r|^power for a signed TOM
      # of an unsigned network and for "signed Nowick": positive exactly
      # where the signed hybrid adjacency is
      type <- if (TOMType == "signed Nowick" ||
                  (TOMType == "signed" && networkType == "unsigned")) "signed hybrid"
              else networkType
      a <- gpu_adjacency(x, power = power, type = type, corType = corType,
                         maxPOutliers = bo$maxPOutliers, quick = bo$quickCor,
                         pearsonFallback = bo$pearsonFallback, backend = engine$backend,
                         precision = engine$precision, devices = engine$devices)
    }
    n <- ncol(x)
    pos <- 0
    for (j in seq_len(n - 1L)) {
      idx <- pos + seq_len(n - j)
      # TOM set to 0, so 1 - TOM to 1; a negative TOM's 1 - TOM is > 1
      hit <- if (zero) { aj <- a[(j + 1L):n, j]; is.na(aj) | aj <= 0 } else FALSE
      if (negative) hit <- hit | d[idx] > 1
      if (any(hit)) d[idx[hit]] <- 1
      pos <- pos + n - j
    }
  }
  d
}

# The one-time note that every gene stays in one block, where 'blocks' or
# 'maxBlockSize' would have split the good genes (fname: the caller).
.bw_one_block_note <- function(fname, blocks, maxBlockSize, good_genes) {
  n_good <- sum(good_genes)
  several <- !is.null(blocks) && length(unique(blocks[good_genes])) > 1L
  if ((several || (is.numeric(maxBlockSize) && length(maxBlockSize) == 1L &&
                   !is.na(maxBlockSize) && n_good > maxBlockSize)) &&
      !isTRUE(.gpucor_state$blockwise_note)) {
    .gpucor_state$blockwise_note <- TRUE
    message(sprintf("%s() keeps all %d genes in one block (%s ignored): the TOM of the whole network is computed at once, so that the modules do not depend on a pre-clustering into blocks. (This message is shown once per session.)",
                    fname, n_good, if (several) "'blocks' is" else "'maxBlockSize' is"))
  }
  invisible()
}

# The blockwise functions' engine settings (backend, precision, devices),
# their verbose and indent checked first.
.bw_engine <- function(backend, precision, devices, verbose, indent) {
  devices <- .check_devices(devices)
  if (!is.numeric(verbose) || length(verbose) != 1L || is.na(verbose))
    stop("'verbose' must be a number (WGCNA's level of detail)", call. = FALSE)
  if (!is.numeric(indent) || length(indent) != 1L || is.na(indent))
    stop("'indent' must be a number", call. = FALSE)
  list(backend = backend, precision = precision, devices = devices)
}

# After the cut: the eigengenes of the modules and WGCNA's kME check (a
# module goes when fewer than minCoreKMESize genes have kME above
# minCoreKME; genes below minKMEtoStay leave it, and it goes when fewer than
# minModuleSize stay).  NULL when no module is left.  x is one matrix, or
# for gpu_blockwise_consensus_modules() a list of the sets' matrices: then
# each set has its eigengenes (WGCNA's multiSetMEs()), a gene's kME is the
# quantile consensusQuantile of its kMEs in the sets, and MEs come back as
# a list of the sets' eigengenes.
.bw_check_modules <- function(x, labels, impute, trapErrors, corFnc, corOptions, unsigned,
                              minCoreKME, minCoreKMESize, minKMEtoStay, minModuleSize, engine,
                              verbose, indent, spaces, consensusQuantile = 0) {
  multi <- is.list(x)
  sets <- if (multi) x else list(x)
  if (verbose > 2) .wgcna_say(spaces, "....calculating module eigengenes..")
  # the modules' eigengenes from all of x, unassigned genes (0) left out:
  # the same as from x[, labels != 0], and the same matrix as the merging
  # step reads (their summaries are cached: .me_cache_for())
  MEs <- try(lapply(sets, function(s)
    gpu_module_eigengenes(expr = s, colors = labels, impute = impute, excludeGrey = TRUE,
                          grey = 0, verbose = verbose - 3, indent = indent + 2)$eigengenes),
    silent = TRUE)
  if (inherits(MEs, "try-error")) {
    what <- if (multi) "multiSetMEs" else "moduleEigengenes"
    if (!trapErrors && !multi) stop(MEs)
    if (verbose > 0) {
      .wgcna_say(spaces, "***", what, "failed with the following message:")
      .wgcna_say(spaces, "       ", MEs)
      .wgcna_say(spaces, "    ---> Stopping module detection here.")
    } else {
      warning(paste(if (multi) "gpu_blockwise_consensus_modules:" else "gpu_blockwise_modules:",
                    what, "failed with the following message:",
                    "\n     ", MEs, "---> Continuing with next block. "), call. = FALSE)
    }
    return(NULL)
  }
  index <- as.numeric(substring(names(MEs[[1L]]), 3))
  gone <- NULL
  if (verbose > 2) .wgcna_say(spaces, "....checking kME in modules..")
  for (mod in seq_along(index)) {
    genes <- labels == index[mod]
    if (multi) {
      kme <- vapply(seq_along(sets), function(s)
        as.vector(.bw_cor(sets[[s]][, genes, drop = FALSE], MEs[[s]][, mod], corFnc,
                          corOptions, engine)), numeric(sum(genes)))
      kme <- matrix(kme, ncol = length(sets))
      if (unsigned) kme <- abs(kme)
      kme <- apply(kme, 1L, stats::quantile, probs = consensusQuantile, names = FALSE,
                   na.rm = TRUE)
    } else {
      kme <- .bw_cor(x[, genes, drop = FALSE], MEs[[1L]][, mod], corFnc, corOptions, engine)
      if (unsigned) kme <- abs(kme)
    }
    if (sum(kme > minCoreKME) < minCoreKMESize) {
      labels[genes] <- 0
      gone <- c(gone, mod)
      if (verbose > 3)
        .wgcna_say(spaces, paste0("    ..deleting module ", mod, ": of ", sum(genes),
                                  " total genes in the module\n       only ",
                                  sum(kme > minCoreKME),
                                  " have the requisite high correlation with the eigengene."))
    } else if (sum(kme < minKMEtoStay) > 0) {
      if (verbose > 2)
        .wgcna_say(spaces, "    ..removing", sum(kme < minKMEtoStay), "genes from module", mod,
                   "because their KME is too low.")
      labels[genes][kme < minKMEtoStay] <- 0
      if (sum(labels[genes] > 0) < minModuleSize) {
        gone <- c(gone, mod)
        labels[genes] <- 0
        if (verbose > 3)
          .wgcna_say(spaces, paste0("    ..deleting module ", index[mod],
                                    ": not enough genes in the module after removal of low KME genes."))
      }
    }
  }
  if (!is.null(gone)) {
    MEs <- lapply(MEs, function(m) m[, -gone, drop = FALSE])
    labels[is.finite(match(labels, index[gone]))] <- 0
    index <- index[-gone]
  }
  if (sum(labels > 0) == 0) return(NULL)
  list(labels = labels, MEs = if (multi) MEs else MEs[[1L]], index = index)
}

# WGCNA's reassignment: a gene whose kME is highest for another module
# moves when the ratio of the Fisher p-values (best / own) is below
# reassignThreshold; a module left with fewer than minModuleSize genes
# goes.  As in WGCNA 1.72 a moved gene takes the position of its best
# module among the eigengenes as its label (the same as the module's label
# while no module was dropped before).
.bw_reassign <- function(all_labels, good_genes, x, MEs, index, corFnc, corOptions,
                         unsigned, nSamples, reassignThreshold, minModuleSize, engine,
                         verbose, spaces) {
  good_labels <- all_labels[good_genes]
  if (sum(good_labels != 0) == 0) return(all_labels)
  prop <- good_labels[good_labels != 0]
  assigned <- seq_along(all_labels)[good_genes][good_labels != 0]
  kme <- .bw_cor(x[, good_labels != 0, drop = FALSE], as.matrix(MEs), corFnc, corOptions,
                 engine)
  if (unsigned) kme <- abs(kme)
  .bw_move_genes(kme, prop, assigned, index, all_labels, function(best, own) {
    ratio <- .cor_p_fisher(best, nSamples) / .cor_p_fisher(own, nSamples)
    ifelse(is.finite(ratio), ratio < reassignThreshold, FALSE)
  }, minModuleSize, verbose, spaces)
}

# The moves of both reassignments: for each module (column of score, the
# assigned genes' scores; prop: their labels, index: the modules' labels),
# its genes that score higher for another module are candidates, and those
# moves(best, own) says move take the position of their best module as
# their label; a module left with fewer than minModuleSize genes goes.
.bw_move_genes <- function(score, prop, assigned, index, all_labels, moves, minModuleSize,
                           verbose, spaces) {
  gone <- NULL
  for (mod in seq_len(ncol(score))) {
    genes <- seq_along(prop)[prop == index[mod]]
    own <- score[genes, mod]
    best <- apply(score[genes, , drop = FALSE], 1, max)
    cand <- own < best
    cand[!is.finite(cand)] <- FALSE
    if (sum(cand) > 0) {
      which_best <- apply(score[genes[cand], , drop = FALSE], 1, which.max)
      move <- moves(best[cand], own[cand])
      if (sum(move) > 0) {
        if (verbose > 2)
          .wgcna_say(spaces, " ..reassigning", sum(move), "genes from module", mod,
                     "to modules with higher KME.")
        all_labels[assigned[genes[cand][move]]] <- which_best[move]
        if (length(genes) - sum(move) < minModuleSize) gone <- c(gone, mod)
      }
    }
  }
  if (!is.null(gone)) all_labels[is.finite(match(all_labels, index[gone]))] <- 0
  all_labels
}

#' Co-expression modules as WGCNA::blockwiseModules finds them, in one block
#'
#' `gpu_blockwise_modules(datExpr, ...)` gives the value of
#' `WGCNA::blockwiseModules(datExpr, maxBlockSize = ncol(datExpr), ...)`:
#' WGCNA's whole module detection with every gene in one block, so that no
#' pre-clustering into blocks changes the modules.  It takes the
#' reference's arguments, in its order and with its defaults, and makes its
#' steps in its order:
#'
#' 1. genes and samples with too many missing values, and genes of zero
#'    variance, are set aside (WGCNA's `goodSamplesGenes()` with its
#'    defaults: half the values present, at least 4 samples and 4 genes);
#' 2. the network and its topological overlap, by [gpu_tom()] (`power`,
#'    `networkType`, `TOMType`, `TOMDenom`, `corType` `"pearson"` or
#'    `"bicor"` with `maxPOutliers`, `quickCor`, `pearsonFallback`), made
#'    as a `dist` of \eqn{1 - TOM} and never as a matrix;
#' 3. the average-linkage tree of \eqn{1 - TOM}, by [gpu_hclust()];
#' 4. the hybrid dynamic tree cut (`deepSplit`, `detectCutHeight`,
#'    `minModuleSize`, `maxCoreScatter`, `minGap`, `maxAbsCoreScatter`,
#'    `minAbsGap`, `minSplitHeight`, `minAbsSplitHeight`, `pamStage`,
#'    `pamRespectsDendro`; with `useBranchEigennodeDissim` the branches'
#'    eigengene dissimilarity as an external split criterion);
#' 5. the module eigengenes, WGCNA's kME check of each module
#'    (`minCoreKME`, `minCoreKMESize`, `minKMEtoStay`) and its reassignment
#'    of genes to the module of their highest kME (`reassignThreshold`);
#' 6. the merging of modules whose eigengenes are closer than
#'    `mergeCutHeight`, with the module eigengenes of the result.
#'
#' The correlations of the kME steps are [gpu_cor()] or [gpu_bicor()]
#' (WGCNA's `cor`/`bicor` with `use = "p"`, and with
#' `useCorOptionsThroughout` bicor's `maxPOutliers` and `pearsonFallback`).
#'
#' **One block.**  `maxBlockSize`, `blocks`, `blockSizePenaltyPower` and
#' `nPreclusteringCenters` are accepted so that a call to
#' `blockwiseModules()` runs unchanged, but every gene is in one block: the
#' first call of a session where they would have split the genes says so
#' in a message.  The TOM of \eqn{n} genes takes \eqn{4 n^2} bytes as a
#' `dist` (the adjacency it is made from \eqn{8 n^2} bytes more, in device
#' memory on the GPU, in host memory on the CPU), and the dense
#' \eqn{1 - TOM} that the tree cut reads \eqn{8 n^2} bytes more: 1.9 GB of
#' host memory for 12625 genes.  `blocks` comes back as 1
#' for every good gene.
#'
#' **Exactness.**  The TOM agrees with WGCNA's to about 1e-12, not bit for
#' bit, and the tree is an exact average linkage of it; so `colors`,
#' `unmergedColors` and `MEs` are WGCNA's wherever no two merge heights of
#' the tree, and no value the cut or the kME steps compare with a
#' threshold, are within that distance of each other.  The tree's `call`
#' is gpu_hclust()'s.
#'
#' **Not supported** (an error says so): `weights`, `cosineCorrelation =
#' TRUE`, `stabilityLabels`, and `useBranchSplit = TRUE` in `...`.
#' `quickCor > 0` with `corType = "pearson"` is an error where it would
#' change the network (a gene with some, but at most `quickCor` times the
#' samples, missing values): [gpu_tom()] computes each Pearson pair on the
#' samples both genes observe, WGCNA's `quickCor = 0`.
#' `replaceMissingAdjacencies` is accepted, but an `NA` adjacency (a pair of
#' genes with fewer than two common observed samples, or constant on them)
#' stops with an error either way: WGCNA 1.72 stops too without it, and with
#' it does not replace them but leaves `NaN` in the TOM.  (Where two genes
#' share exactly one observed sample WGCNA's `cor()` gives a correlation of
#' plus or minus 1 from rounding, and goes on; gpucor's is `NA`.)  `nThreads > 0` sets the threads of gpucor's
#' CPU engine for the call (option `gpucor.threads`);
#' `useInternalMatrixAlgebra` changes nothing.  WGCNA's `verbose` output
#' comes as messages.
#'
#' @param datExpr expression data: a matrix or data frame (samples in rows,
#'   genes in columns), or a `SummarizedExperiment`/`ExpressionSet` (genes
#'   in rows; see "Orientation" in [gpucor]).
#' @param weights must be `NULL`.
#' @param checkMissingData whether to set aside the genes and samples with
#'   too many missing values, and the genes of zero variance.
#' @param blocks,maxBlockSize,blockSizePenaltyPower,nPreclusteringCenters
#'   accepted, not used: every gene is in one block (see above).
#' @param randomSeed `NULL`, or a seed set for the call (the random number
#'   generator's state is restored afterwards, as WGCNA restores it).
#' @param loadTOM,saveTOMs,saveTOMFileBase with `saveTOMs = TRUE` the TOM
#'   is saved as WGCNA saves it, an object `TOM` (`as.dist()` of the TOM
#'   matrix) in the file `saveTOMFileBase-block.1.RData`, whose name comes
#'   back in `TOMFiles`; `loadTOM = TRUE` reads that file instead of
#'   computing the TOM (a file that is missing or of the wrong size is
#'   reported and the TOM computed).
#' @param corType `"pearson"` or `"bicor"`.
#' @param maxPOutliers,quickCor,pearsonFallback bicor's options, as in
#'   [gpu_tom()] (WGCNA applies `quickCor` to Pearson too: see above).
#' @param cosineCorrelation must be `FALSE`.
#' @param power the soft-thresholding power (1 to 30, as WGCNA requires).
#' @param networkType `"unsigned"`, `"signed"` or `"signed hybrid"`.
#' @param replaceMissingAdjacencies accepted (see above).
#' @param TOMType,TOMDenom as in [gpu_tom()]; `TOMType = "none"` uses the
#'   adjacency itself.
#' @param suppressTOMForZeroAdjacencies for the signed TOM types, a TOM of
#'   0 for pairs whose adjacency is 0 or negative (as WGCNA's C code does;
#'   its unsigned types ignore the option).
#' @param suppressNegativeTOM for the `"signed Nowick"` types, negative TOM
#'   values set to 0.
#' @param getTOMs deprecated in WGCNA: a warning.
#' @param deepSplit,detectCutHeight,minModuleSize,maxCoreScatter,minGap,maxAbsCoreScatter,minAbsGap,minSplitHeight,minAbsSplitHeight,pamStage,pamRespectsDendro
#'   the tree cut's options (`detectCutHeight` is its `cutHeight`,
#'   `minModuleSize` its `minClusterSize`).
#' @param useBranchEigennodeDissim,minBranchEigennodeDissim whether two
#'   branches whose eigengenes' dissimilarity is below
#'   `minBranchEigennodeDissim` are merged by the tree cut.
#' @param stabilityLabels must be `NULL`.
#' @param stabilityCriterion,minStabilityDissim not used.
#' @param reassignThreshold,minCoreKME,minCoreKMESize,minKMEtoStay WGCNA's
#'   kME steps (see above).
#' @param mergeCutHeight the eigengene dissimilarity below which modules
#'   are merged.
#' @param impute whether the eigengenes impute missing values (WGCNA's
#'   `moduleEigengenes()` option).
#' @param trapErrors as in WGCNA: an error of the eigengenes becomes a
#'   warning.
#' @param numericLabels `TRUE`: modules are numbers (0 for unassigned
#'   genes); `FALSE`: WGCNA's colours ("grey" for unassigned).
#' @param nThreads `0`, or the number of CPU threads.
#' @param useInternalMatrixAlgebra not used.
#' @param useCorOptionsThroughout whether bicor's options are used in the
#'   kME steps and the merging too.
#' @param verbose,indent WGCNA's level of detail and indentation of
#'   progress messages; from 1, the TOM and tree steps name the engine
#'   that ran them (as [gpu_tom()]'s and [gpu_hclust()]'s `verbose`).
#' @param ... other arguments are ignored, as WGCNA ignores them
#'   (`useBranchSplit = TRUE` is an error).
#' @param backend,precision,devices as for [gpu_tom()] and [gpu_hclust()]
#'   (after `...`: matched by their whole names only).
#' @return WGCNA's list: `colors` (after merging, named by gene),
#'   `unmergedColors`, `MEs` (a data frame of the merged modules'
#'   eigengenes, a row per sample, `NA` for the samples set aside),
#'   `goodSamples`, `goodGenes`, `dendrograms` (a list of the one
#'   `hclust` tree), `TOMFiles` (`NULL` without `saveTOMs`), `blockGenes`
#'   (a list of the one block's genes), `blocks` and `MEsOK`.
#' @seealso [gpu_tom()], [gpu_hclust()], [gpu_soft_threshold()]
#' @examples
#' \donttest{
#' if (requireNamespace("WGCNA", quietly = TRUE) &&
#'     requireNamespace("dynamicTreeCut", quietly = TRUE)) {
#'   set.seed(1)
#'   f <- matrix(rnorm(40 * 3), 40, 3)
#'   x <- f[, rep(1:3, each = 60)] + matrix(rnorm(40 * 180), 40, 180)
#'   net <- gpu_blockwise_modules(x, minModuleSize = 10)
#'   table(net$colors)
#' }
#' }
#' @export
gpu_blockwise_modules <- function(
    datExpr, weights = NULL, checkMissingData = TRUE, blocks = NULL, maxBlockSize = 5000,
    blockSizePenaltyPower = 5,
    nPreclusteringCenters = as.integer(min(ncol(datExpr) / 20,
                                           100 * ncol(datExpr) / maxBlockSize)),
    randomSeed = 54321, loadTOM = FALSE, corType = "pearson", maxPOutliers = 1, quickCor = 0,
    pearsonFallback = "individual", cosineCorrelation = FALSE, power = 6,
    networkType = "unsigned", replaceMissingAdjacencies = FALSE, TOMType = "signed",
    TOMDenom = "min", suppressTOMForZeroAdjacencies = FALSE, suppressNegativeTOM = FALSE,
    getTOMs = NULL, saveTOMs = FALSE, saveTOMFileBase = "blockwiseTOM", deepSplit = 2,
    detectCutHeight = 0.995, minModuleSize = min(20, ncol(datExpr) / 2),
    maxCoreScatter = NULL, minGap = NULL, maxAbsCoreScatter = NULL, minAbsGap = NULL,
    minSplitHeight = NULL, minAbsSplitHeight = NULL, useBranchEigennodeDissim = FALSE,
    minBranchEigennodeDissim = mergeCutHeight, stabilityLabels = NULL,
    stabilityCriterion = c("Individual fraction", "Common fraction"),
    minStabilityDissim = NULL, pamStage = TRUE, pamRespectsDendro = TRUE,
    reassignThreshold = 1e-06, minCoreKME = 0.5, minCoreKMESize = minModuleSize / 3,
    minKMEtoStay = 0.3, mergeCutHeight = 0.15, impute = TRUE, trapErrors = FALSE,
    numericLabels = FALSE, nThreads = 0, useInternalMatrixAlgebra = FALSE,
    useCorOptionsThroughout = TRUE, verbose = 0, indent = 0, ...,
    backend = getOption("gpucor.backend", "auto"), precision = c("double", "single"),
    devices = getOption("gpucor.devices", 0L)) {
  engine <- .bw_engine(backend, match.arg(precision), devices, verbose, indent)
  spaces <- .wgcna_spaces(indent)
  if (verbose > 0)
    .wgcna_say(spaces, "Calculating module eigengenes block-wise from all genes")
  # WGCNA's seed for the call, the caller's state back afterwards
  if (!is.null(randomSeed)) withr::local_seed(randomSeed)

  corType <- .wgcna_choice(corType, .cor_types[1:2], "corType")
  TOMType <- .wgcna_choice(TOMType, .tom_types, "TOMType")
  TOMDenom <- .wgcna_choice(TOMDenom, c("min", "mean"), "TOMDenom")
  bo <- .bicor_opts(maxPOutliers, quickCor, pearsonFallback)
  pearsonFallback <- .bicor_fallbacks[bo$fallback]
  bo <- list(maxPOutliers = maxPOutliers, quickCor = quickCor,
             pearsonFallback = pearsonFallback)
  if (!is.null(nThreads) && (!is.numeric(nThreads) || length(nThreads) != 1L ||
                             is.na(nThreads) || nThreads < 0))
    stop("'nThreads' must be 0 or a positive number", call. = FALSE)
  power <- .wgcna_power(power)
  if (power < 1 || power > 30) stop("'power' must be between 1 and 30", call. = FALSE)
  networkType <- .wgcna_choice(networkType, .network_types, "networkType")
  for (a in c("checkMissingData", "loadTOM", "cosineCorrelation", "replaceMissingAdjacencies",
              "suppressTOMForZeroAdjacencies", "suppressNegativeTOM", "saveTOMs",
              "useBranchEigennodeDissim", "pamStage", "pamRespectsDendro", "impute",
              "trapErrors", "numericLabels", "useCorOptionsThroughout")) {
    v <- get(a, inherits = FALSE)
    if (!is.logical(v) || length(v) != 1L || is.na(v))
      stop(sprintf("'%s' must be TRUE or FALSE", a), call. = FALSE)
  }
  if (length(weights) > 0)
    stop("gpu_blockwise_modules() does not support 'weights' (WGCNA's weighted correlations)",
         call. = FALSE)
  if (cosineCorrelation)
    stop("gpu_blockwise_modules() does not support 'cosineCorrelation = TRUE' (gpu_tom() has no cosine correlation)",
         call. = FALSE)
  if (!is.null(stabilityLabels))
    stop("gpu_blockwise_modules() does not support 'stabilityLabels'", call. = FALSE)
  if (isTRUE(list(...)$useBranchSplit))
    stop("gpu_blockwise_modules() does not support 'useBranchSplit = TRUE'", call. = FALSE)
  if (!is.character(saveTOMFileBase) || length(saveTOMFileBase) != 1L || is.na(saveTOMFileBase))
    stop("'saveTOMFileBase' must be a file name", call. = FALSE)
  if (!is.null(nThreads) && nThreads > 0) {
    old <- options(gpucor.threads = as.integer(nThreads))
    on.exit(options(old), add = TRUE)
  }

  datExpr <- .wgcna_matrix(datExpr, "datExpr")
  nGenes <- ncol(datExpr)
  nSamples <- nrow(datExpr)
  sample_names <- rownames(datExpr)
  if (is.null(sample_names)) sample_names <- paste0("Row.", seq_len(nSamples))
  gene_names <- colnames(datExpr)
  if (is.null(gene_names)) gene_names <- paste0("Column.", seq_len(nGenes))
  if (!is.null(blocks) && length(blocks) != nGenes)
    stop("'blocks' must have one value per gene (column of 'datExpr')", call. = FALSE)
  if (!is.null(getTOMs)) warning("getTOMs is deprecated, please use saveTOMs instead.", call. = FALSE)

  if (checkMissingData) {
    gsg <- .good_samples_genes(datExpr, verbose - 1, indent + 1)
    if (!gsg$allOK) datExpr <- datExpr[gsg$goodSamples, gsg$goodGenes, drop = FALSE]
  } else {
    gsg <- list(goodGenes = rep(TRUE, nGenes), goodSamples = rep(TRUE, nSamples), allOK = TRUE)
  }
  good_genes <- gsg$goodGenes
  n_good <- sum(good_genes)
  if (corType == "pearson" && quickCor > 0) {
    # WGCNA's Pearson network takes the pairs of genes with at most
    # floor(quickCor * samples) missing values each from mean-imputed
    # columns; gpu_tom() computes every Pearson pair on the samples both
    # genes observe (WGCNA's quickCor = 0): the same where no gene has that
    # few (but some) missing values
    nas <- colSums(is.na(datExpr))
    if (any(nas > 0 & nas <= floor(quickCor * nrow(datExpr))))
      stop("gpu_blockwise_modules() does not support quickCor > 0 with corType = \"pearson\" and missing values: gpu_tom() computes each Pearson pair on the samples both genes observe (quickCor = 0)",
           call. = FALSE)
  }
  .bw_one_block_note("gpu_blockwise_modules", blocks, maxBlockSize, good_genes)
  blocks <- rep(NA, nGenes)
  blocks[good_genes] <- 1
  block_genes <- list(seq_len(nGenes)[good_genes])
  tom_file <- paste0(saveTOMFileBase, "-block.", 1, ".RData")

  # WGCNA's correlation options of the kME steps and of the merging
  corFnc <- c(pearson = "cor", bicor = "bicor")[[corType]]
  corOptions <- list(use = "p")
  if (useCorOptionsThroughout) corOptions <- c(corOptions, list(cosine = cosineCorrelation))
  if (corType == "bicor" && useCorOptionsThroughout)
    corOptions <- c(corOptions, list(maxPOutliers = maxPOutliers,
                                     pearsonFallback = pearsonFallback))
  signed <- networkType %in% c("signed", "signed hybrid")
  unsigned <- networkType == "unsigned"
  if (useBranchEigennodeDissim) {
    # the scaled data (missing values imputed, as WGCNA does) for the split
    scaled <- scale(datExpr)
    if (anyNA(scaled)) {
      if (!requireNamespace("impute", quietly = TRUE))
        stop("useBranchEigennodeDissim with missing values needs the 'impute' package (WGCNA imputes them with impute::impute.knn)",
             call. = FALSE)
      scaled <- t(impute::impute.knn(t(scaled))$data)
    }
    split_fnc <- list(.branch_eigengene_dissim)
    split_opt <- list(list(corFnc = corFnc, corOptions = corOptions, signed = signed,
                           engine = engine, expr = scaled))
    split_dist <- FALSE
    split_min <- minBranchEigennodeDissim
  } else {
    split_fnc <- list()
    split_opt <- list()
    split_dist <- logical(0)
    split_min <- numeric(0)
  }

  if (verbose > 1) .wgcna_say(spaces, "..Working on block 1 .")
  # one bar: the TOM, the tree, the modules (R/progress.R)
  bar <- .progress_begin("gpu_blockwise_modules")
  w <- .bw_progress_weights(sum(good_genes), nSamples, 1L)
  .progress_frame(bar, "TOM", 1L, 3L, w[["tom"]])
  d <- .bw_dissimilarity(datExpr, power, networkType, TOMType, TOMDenom, corType, bo,
                         suppressTOMForZeroAdjacencies, suppressNegativeTOM, loadTOM, saveTOMs,
                         tom_file, engine, verbose, spaces)
  if (verbose > 2) .wgcna_say(spaces, "....clustering..")
  .progress_frame(bar, "tree", 2L, 3L, w[["tree"]])
  tree <- gpu_hclust(d, method = "average", backend = backend, precision = engine$precision,
                     devices = engine$devices, verbose = verbose > 0)
  .progress_frame(bar, "modules", 3L, 3L)
  if (identical(attr(d, "method"), "1 - TOM")) tree[c("labels", "dist.method")] <- list(NULL)
  if (verbose > 2) .wgcna_say(spaces, "....detecting modules..")
  labels <- try(gpu_cutree_dynamic(
    dendro = tree, deepSplit = deepSplit, cutHeight = detectCutHeight,
    minClusterSize = minModuleSize, method = "hybrid", distM = d,   # the 'dist' itself
    maxCoreScatter = maxCoreScatter, minGap = minGap, maxAbsCoreScatter = maxAbsCoreScatter,
    minAbsGap = minAbsGap, minSplitHeight = minSplitHeight,
    minAbsSplitHeight = minAbsSplitHeight, externalBranchSplitFnc = split_fnc,
    minExternalSplit = split_min, externalSplitOptions = split_opt,
    externalSplitFncNeedsDistance = split_dist, assumeSimpleExternalSpecification = FALSE,
    pamStage = pamStage, pamRespectsDendro = pamRespectsDendro, verbose = verbose - 3,
    indent = indent + 2), silent = FALSE)
  rm(d)

  all_labels <- rep(0, nGenes)
  found <- NULL
  if (inherits(labels, "try-error")) {
    if (verbose > 0)
      .wgcna_say(spaces, "*** cutreeDynamic returned the following error:\n", spaces, labels,
                 spaces, "Stopping the module detection here.")
    else
      warning(paste("gpu_blockwise_modules: cutreeDynamic returned the following error:\n",
                    "      ", labels, "---> Continuing with next block. "), call. = FALSE)
  } else if (sum(labels > 0) == 0) {
    if (verbose > 1) .wgcna_say(spaces, "No modules detected in block 1")
  } else {
    found <- .bw_check_modules(datExpr, labels, impute, trapErrors, corFnc, corOptions,
                               unsigned, minCoreKME, minCoreKMESize, minKMEtoStay,
                               minModuleSize, engine, verbose, indent, spaces)
    if (is.null(found) && verbose > 1)
      .wgcna_say(spaces, "No significant modules detected in block 1")
  }
  if (!is.null(found)) {
    all_labels[good_genes] <- found$labels
    all_labels <- .bw_reassign(all_labels, good_genes, datExpr, found$MEs, found$index,
                               corFnc, corOptions, unsigned, nSamples, reassignThreshold,
                               minModuleSize, engine, verbose, spaces)
  }

  if (verbose > 1) .wgcna_say(spaces, "..merging modules that are too close..")
  colors <- if (numericLabels) all_labels else .labels_to_colors(all_labels)
  merged_colors <- colors
  MEsOK <- TRUE
  # WGCNA passes the name "cor" or "bicor" (its own functions, with
  # corOptions such as cosine): here the same correlation by .bw_cor()
  me_cor <- function(x, ...) .bw_cor(x, x, corFnc, corOptions, engine)
  merged <- try(gpu_merge_close_modules(
    exprData = datExpr, colors = colors[good_genes], cutHeight = mergeCutHeight,
    relabel = TRUE, corFnc = me_cor, corOptions = list(), impute = impute,
    verbose = verbose - 2, indent = indent + 2), silent = TRUE)
  if (inherits(merged, "try-error")) {
    warning(paste("gpu_blockwise_modules: mergeCloseModules failed with the following error message:\n    ",
                  merged, "\n--> returning unmerged colors.\n"), call. = FALSE)
    MEs <- try(gpu_module_eigengenes(expr = datExpr, colors = colors[good_genes],
                                     impute = impute, verbose = verbose - 3,
                                     indent = indent + 3), silent = TRUE)
    if (inherits(MEs, "try-error")) {
      if (!trapErrors) stop(MEs)
      if (verbose > 0) {
        .wgcna_say(spaces, "*** moduleEigengenes failed with the following error message:")
        .wgcna_say(spaces, "     ", MEs)
        .wgcna_say(spaces, "*** returning no module eigengenes.\n")
      } else {
        warning(paste("gpu_blockwise_modules: moduleEigengenes failed with the following error message:\n    ",
                      MEs, "\n--> returning no module eigengenes.\n"), call. = FALSE)
      }
      sample_MEs <- NULL
      MEsOK <- FALSE
    } else {
      if (sum(!MEs$validMEs) > 0) {
        merged_colors[good_genes] <- MEs$validColors
        MEs <- MEs$eigengenes[, MEs$validMEs]
      } else {
        MEs <- MEs$eigengenes
      }
      sample_MEs <- .bw_sample_MEs(MEs, gsg$goodSamples, sample_names)
    }
  } else {
    merged_colors[good_genes] <- merged$colors
    sample_MEs <- .bw_sample_MEs(merged$newMEs, gsg$goodSamples, sample_names)
  }
  TOMFiles <- if (saveTOMs) tom_file else NULL
  names(colors) <- gene_names
  names(merged_colors) <- gene_names
  .progress_end(bar)
  list(colors = merged_colors, unmergedColors = colors, MEs = sample_MEs,
       goodSamples = gsg$goodSamples, goodGenes = good_genes, dendrograms = list(tree),
       TOMFiles = TOMFiles, blockGenes = block_genes, blocks = blocks, MEsOK = MEsOK)
}

# The eigengenes of the good samples as WGCNA returns them: a data frame
# with a row per sample (NA for those set aside), rows named by sample.
.bw_sample_MEs <- function(MEs, good_samples, sample_names) {
  out <- as.data.frame(matrix(NA, nrow = length(good_samples), ncol = ncol(MEs)))
  out[good_samples, ] <- MEs[, ]
  names(out) <- names(MEs)
  rownames(out) <- make.unique(sample_names)
  out
}
