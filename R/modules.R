# WGCNA's module eigengenes and the merging of close modules (issue 38):
# gpu_module_eigengenes() does what WGCNA::moduleEigengenes() does and
# gpu_merge_close_modules() what WGCNA::mergeCloseModules() does for one set
# of samples, with their arguments, defaults and values.  A module is small
# (the samples by the genes of one module), so this is R: base svd(),
# stats::cor() and an average-linkage tree of a few dozen eigengenes.  No
# engine call is made, so the backend option does not matter here.

# The colours WGCNA::labels2colors(1:n) gives (.labels_to_colors(), with
# the standard colour sequence, in R/blockwise.R).
.me_label_colors <- function(n) .labels_to_colors(seq_len(n))

.me_flag <- function(v, what) {
  if (!is.logical(v) || length(v) != 1L || is.na(v))
    stop(sprintf("'%s' must be TRUE or FALSE", what), call. = FALSE)
  v
}

.me_number <- function(v, what, lower = -Inf) {
  if (!(is.numeric(v) || is.logical(v)) || length(v) != 1L || is.na(v) || v < lower)
    stop(sprintf("'%s' must be a number%s", what,
                 if (is.finite(lower)) sprintf(" >= %g", lower) else ""), call. = FALSE)
  as.numeric(v)
}

# The expression data as a double matrix (samples in rows, genes in columns).
.me_matrix <- function(x, what) {
  if (is.null(x)) stop(sprintf("'%s' is NULL", what), call. = FALSE)
  if (length(dim(x)) != 2L)
    stop(sprintf("'%s' must be a matrix or data frame (samples in rows, genes in columns)",
                 what), call. = FALSE)
  if (is.data.frame(x)) {
    ok <- vapply(x, function(v) is.numeric(v) || is.logical(v), NA)
    if (!all(ok)) stop(sprintf("'%s' must be numeric", what), call. = FALSE)
    x <- as.matrix(x)
  }
  .check_cor_input(x, what)
  if (nrow(x) < 1L) stop(sprintf("'%s' has no samples (rows)", what), call. = FALSE)
  if (ncol(x) < 1L) stop(sprintf("'%s' has no genes (columns)", what), call. = FALSE)
  .as_double_matrix(x)
}

# One label per gene, none missing; a factor without unused levels.
.me_colors <- function(colors, ngenes, what, xwhat) {
  if (is.null(colors)) stop(sprintf("'%s' is NULL", what), call. = FALSE)
  if (!is.atomic(colors) || !(is.factor(colors) || is.numeric(colors) || is.character(colors)))
    stop(sprintf("'%s' must be a vector of module labels (colors, numbers or a factor)", what),
         call. = FALSE)
  if (length(colors) != ngenes)
    stop(sprintf("'%s' must have one label per gene (column of '%s'): %d labels for %d genes",
                 what, xwhat, length(colors), ngenes), call. = FALSE)
  if (anyNA(colors)) stop(sprintf("'%s' has missing values", what), call. = FALSE)
  invisible(colors)
}

# Pearson correlation over the pairwise-complete observations, NA (quietly)
# where a column is constant: WGCNA's cor(use = "p") inside these functions.
.me_cor <- function(x, y = NULL) {
  suppressWarnings(stats::cor(x, y, use = "pairwise.complete.obs"))
}

# k-nearest-neighbour imputation of a module's genes (rows), as WGCNA calls
# impute::impute.knn; that function sets the seed, so the caller's random
# number state is put back afterwards.
.me_impute <- function(dm) {
  had_seed <- exists(".Random.seed", envir = globalenv(), inherits = FALSE)
  if (had_seed) seed <- get(".Random.seed", envir = globalenv(), inherits = FALSE)
  on.exit(if (had_seed) assign(".Random.seed", seed, envir = globalenv())
          else if (exists(".Random.seed", envir = globalenv(), inherits = FALSE))
            rm(".Random.seed", envir = globalenv()))
  r <- impute::impute.knn(dm, k = min(10, nrow(dm) - 1))
  if (is.list(r) && !is.null(r$data)) r$data else r
}

# The eigengene of one module, from dm (its genes in rows, samples in
# columns), in WGCNA's steps: impute, scale each gene, take the first
# principal component (its variance explained from the first min(nVE, ...)
# components); if that fails and subHubs, a weighted average of the scaled
# genes around the hub gene.  A step that failed leaves dm as the steps
# before it made it, as in WGCNA.  Returns the eigengene (pc, or the error),
# the variance explained (ve), isPC, isHub and the average expression (ae,
# or the error in ae_error).
# A cache of module summaries across calls: the merging's iterations, a
# blockwise run's kME check and merging, and a sweep of cuts and merge
# heights on the same data all summarize the same modules again.  One table
# per data matrix (the consensus functions read several sets), found by the
# matrix's fingerprint (a 64-bit hash of its values and dimensions,
# src/modules.c); the .me_cache_sets most recently used are kept, and all
# are dropped once they hold .me_cache_bytes of summaries.  A table's
# entries are keyed by the settings and the hash of the module's genes.
.me_cache <- new.env(parent = emptyenv())
.me_cache_sets <- 8L
.me_cache_bytes <- 2^27

.me_cache_for <- function(x) {
  fp <- .Call(C_gpucor_fingerprint, x)
  tabs <- .me_cache$tabs
  if (is.null(tabs)) tabs <- list()
  used <- sum(vapply(tabs, length, 0L)) * (2 * nrow(x) + 10) * 8
  if (used > .me_cache_bytes) tabs <- list()
  tab <- tabs[[fp]]
  if (is.null(tab)) tab <- new.env(hash = TRUE, parent = emptyenv())
  tabs[[fp]] <- NULL
  tabs[[fp]] <- tab                                   # the most recent last
  if (length(tabs) > .me_cache_sets) tabs <- tabs[-1L]
  .me_cache$tabs <- tabs
  tab
}

# levels(as.factor(v)) without converting every element of a numeric v to
# a string (the slow part of factor() on 12625 labels, called at every
# merging step): the sorted distinct values, as strings.
.me_levels <- function(v, drop = FALSE) {
  if (is.numeric(v)) return(unique(as.character(sort(unique(v)))))
  if (drop && is.factor(v)) return(levels(droplevels(v)))   # factor()'s levels
  levels(as.factor(v))
}

# For each element of v, its level's position in levs (levels(.me_levels(v))
# or a subset of it; NA where none).
.me_level_codes <- function(v, levs) {
  if (is.numeric(v)) {
    u <- sort(unique(v))
    return(match(as.character(u), levs)[match(v, u)])
  }
  match(as.character(v), levs)
}

# The first k right singular vectors of dm (genes x samples).  When their
# signs do not matter (the eigengene is aligned afterwards; the variance
# explained is a square) they are the eigenvectors of the samples' Gram
# matrix, a product and a small symmetric eigenproblem, several times
# faster than the SVD of a large module; they agree with svd()'s to about
# 1e-13 wherever the singular values are not nearly tied.  Otherwise svd().
.me_right_vectors <- function(dm, k, sign_free) {
  if (sign_free && nrow(dm) > ncol(dm)) {
    e <- eigen(crossprod(dm), symmetric = TRUE)
    return(e$vectors[, seq_len(k), drop = FALSE])
  }
  svd(dm, nu = 0, nv = k)$v
}

# t(base::scale(t(m))) without its per-column R function: the same
# arithmetic (the mean, then the root of the residuals' sum of squares over
# the observed count less one, sums in R's long double), the same doubles.
.me_scale_rows <- function(m) {
  ok <- !is.na(m)
  cnt <- rowSums(ok)
  m <- m - rowMeans(m, na.rm = TRUE)
  m / sqrt(rowSums(m^2, na.rm = TRUE) / pmax(1, cnt - 1))
}

.me_module <- function(dm, nPC, nVE, impute, scale, subHubs, softPower, align) {
  out <- list(pc = NULL, error = NULL, ve = NULL, isPC = TRUE, isHub = FALSE,
              ae = NULL, ae_error = NULL)
  pc <- tryCatch({
    if (nrow(dm) > 1L && impute && anyNA(dm)) dm <- .me_impute(dm)
    if (scale) dm <- .me_scale_rows(dm)
    kv <- seq_len(min(dim(dm), nVE))
    v <- .me_right_vectors(dm, max(min(dim(dm), nPC), length(kv)), align == "along average")
    out$ve <- rowMeans(.me_cor(v[, kv], t(dm))^2, na.rm = TRUE)
    v[, 1L]
  }, error = function(e) e)
  if (inherits(pc, "error") && subHubs) {
    out$isPC <- FALSE
    pc <- tryCatch({
      se <- t(.me_scale_rows(dm))
      cv <- stats::cov(se, use = "pairwise.complete.obs")
      cv[!is.finite(cv)] <- 0
      kIM <- rowMeans(abs(cv)^softPower, na.rm = TRUE)^3
      if (max(kIM, na.rm = TRUE) > 1) kIM <- kIM - 1
      kIM[is.na(kIM)] <- 0
      sgn <- sign(cv[, which.max(kIM)])
      sgn[is.na(sgn)] <- 0
      out$isHub <- TRUE
      pcx <- rowMeans(se * rep(kIM * sgn, each = nrow(se)) / sum(kIM), na.rm = TRUE)
      out$ve <- mean(.me_cor(pcx, t(dm))^2, na.rm = TRUE)
      pcx
    }, error = function(e) e)
  }
  if (inherits(pc, "error")) {
    out$error <- pc
    return(out)
  }
  ae <- tryCatch({
    if (out$isPC) se <- t(.me_scale_rows(dm))
    out$ae <- rowMeans(se, na.rm = TRUE)
    if (align == "along average") {
      r <- .me_cor(out$ae, pc)
      if (!is.finite(r)) r <- 0
      if (abs(r) < 1e-10 && out$isPC && nrow(dm) > ncol(dm)) {
        # uncorrelated with the average: the sign is svd()'s, as WGCNA's
        pc <- svd(dm, nu = 0, nv = 1)$v[, 1L]
        r <- .me_cor(out$ae, pc)
        if (!is.finite(r)) r <- 0
      }
      if (r < 0) pc <- -pc
    }
    NULL
  }, error = function(e) e)
  out$ae_error <- ae
  out$pc <- pc
  out
}

# The work of gpu_module_eigengenes() on a checked double matrix x (rn: the
# row names of the data as given).
.me_eigengenes <- function(x, rn, colors, impute, nPC, align, excludeGrey, grey, subHubs,
                           trapErrors, returnValidOnly, softPower, scale, verbose, indent,
                           cache = NULL) {
  spaces <- .wgcna_spaces(indent)
  if (is.null(cache)) cache <- .me_cache_for(x)
  # the summary of a module depends on these settings too
  setting <- paste(impute, nPC, align, subHubs, softPower, scale)
  levs <- .me_levels(colors, drop = TRUE)   # levels(factor(colors))
  if (excludeGrey) {
    levs <- levs[levs != as.character(grey)]
    if (!length(levs))
      stop("no module to summarize: the only color is 'grey' and 'excludeGrey' is TRUE",
           call. = FALSE)
  }
  if (verbose > 0)
    message(sprintf("%sgpu_module_eigengenes: calculating %d module eigengenes", spaces,
                    length(levs)))
  nVE <- min(nPC, 10)
  nm <- length(levs)
  # the columns of data.frame(matrix(NA, ...)), as WGCNA makes them (a
  # module that fails keeps its logical NA column), filled as lists
  eig <- avg <- rep(list(rep(NA, nrow(x))), nm)
  vex <- rep(list(rep(NA, nVE)), nm)
  validMEs <- rep(TRUE, nm)
  validAEs <- isHub <- rep(FALSE, nm)
  isPC <- rep(TRUE, nm)
  validColors <- colors
  code <- .me_level_codes(colors, levs)
  # each module's genes in increasing order (split() without its factor)
  ord <- order(code, na.last = NA, method = "radix")
  ends <- cumsum(tabulate(code, nm))
  starts <- c(0L, ends[-nm])
  members <- lapply(seq_len(nm), function(i)
    ord[seq.int(starts[i] + 1L, length.out = ends[i] - starts[i])])
  # a module's summary depends on its genes only (and x and the settings):
  # merging iterations and later calls on the same data reuse it
  keys <- vapply(members, function(idx)
    paste(setting, length(idx), .Call(C_gpucor_fingerprint, idx)), "")
  sums <- mget(keys, envir = cache, ifnotfound = list(NULL))
  todo <- which(vapply(sums, is.null, NA))
  n_pass <- 0L
  t0 <- proc.time()[["elapsed"]]
  if (length(todo) && scale && align == "along average") {
    # every module whose sign is free, in one compiled pass (those with
    # missing values, constant genes, ... come back to .me_module())
    sub <- integer(length(code))
    for (j in seq_along(todo)) sub[members[[todo[j]]]] <- j
    b <- .Call(C_gpucor_module_eigengenes, x, sub, length(todo), nVE, .threads())
    n_pass <- sum(b$status == 0L)
    for (j in which(b$status == 0L)) {
      i <- todo[j]
      sums[[i]] <- list(pc = b$pc[, j], error = NULL,
                        ve = b$ve[seq_len(min(length(members[[i]]), nrow(x), nVE)), j],
                        isPC = TRUE, isHub = FALSE, ae = b$ae[, j], ae_error = NULL)
      assign(keys[i], sums[[i]], envir = cache)
    }
  }
  if (verbose > 0)
    .engine_report("gpu_module_eigengenes", .threads(), "double",
                   proc.time()[["elapsed"]] - t0, cpu_note = sprintf(paste(
                     "%d of %d modules in one compiled pass, %d from this session's cache,",
                     "%d in R"), n_pass, nm, nm - length(todo), length(todo) - n_pass))
  for (i in seq_len(nm)) {
    genes <- members[[i]]
    if (verbose > 1)
      message(sprintf("%s  module %s: %d genes", spaces, levs[i], length(genes)))
    m <- sums[[i]]
    if (is.null(m)) {
      dm <- t(x[, genes, drop = FALSE])
      if (impute && nrow(dm) > 1L && anyNA(dm) && !requireNamespace("impute", quietly = TRUE))
        stop(sprintf(paste("module %s has missing values: imputing them (impute = TRUE) needs",
                           "the Bioconductor package 'impute'; install it, or use impute = FALSE"),
                     levs[i]), call. = FALSE)
      m <- .me_module(dm, nPC, nVE, impute, scale, subHubs, softPower, align)
      assign(keys[i], m, envir = cache)
    }
    isPC[i] <- m$isPC
    isHub[i] <- m$isHub
    if (!is.null(m$ve)) vex[[i]][seq_along(m$ve)] <- m$ve
    if (!m$isPC && verbose > 0 && is.null(m$error))
      message(sprintf("%s  module %s: its principal component failed; a hub-gene summary is used",
                      spaces, levs[i]))
    if (!is.null(m$error)) {
      if (!trapErrors) stop(m$error)
      warning(sprintf("the eigengene of module %s failed (%s); the module has been removed",
                      levs[i], conditionMessage(m$error)), call. = FALSE)
      validMEs[i] <- isPC[i] <- isHub[i] <- FALSE
      validColors[genes] <- grey
      next
    }
    eig[[i]] <- unname(m$pc)
    if (!is.null(m$ae)) avg[[i]] <- unname(m$ae)
    if (!is.null(m$ae_error)) {
      if (!trapErrors) stop(m$ae_error)
      warning(sprintf("the average expression of module %s failed (%s); it is not valid",
                      levs[i], conditionMessage(m$ae_error)), call. = FALSE)
    }
    validAEs[i] <- is.null(m$ae_error)
  }
  frame <- function(cols, names, rows)
    structure(cols, names = names, row.names = rows, class = "data.frame")
  rows <- if (!is.null(rn)) make.unique(rn) else .set_row_names(nrow(x))
  eig <- frame(eig, paste0("ME", levs), rows)
  avg <- frame(avg, paste0("AE", levs), rows)
  vex <- frame(vex, paste0("X", seq_len(nm)), .set_row_names(nVE))
  allOK <- all(validMEs)
  if (returnValidOnly && !allOK) {
    eig <- eig[, validMEs, drop = FALSE]
    avg <- avg[, validMEs, drop = FALSE]
    vex <- vex[, validMEs, drop = FALSE]
    # As in WGCNA, isPC, isHub and validAEs keep an entry for every module.
    validMEs <- rep(TRUE, ncol(eig))
  }
  list(eigengenes = eig, averageExpr = avg, varExplained = vex, nPC = nPC,
       validMEs = validMEs, validColors = validColors, allOK = allOK, allPC = all(isPC),
       isPC = isPC, isHub = isHub, validAEs = validAEs, allAEOK = all(validAEs))
}

#' Module eigengenes, as WGCNA::moduleEigengenes computes them
#'
#' `gpu_module_eigengenes()` summarizes each module of genes by its
#' eigengene, with the arguments, defaults and value of
#' [WGCNA::moduleEigengenes()] (WGCNA 1.72): for each module (each distinct
#' label of `colors`, in the order of `levels(factor(colors))`) its genes'
#' missing values are imputed (`impute`, by [impute::impute.knn()] with
#' `k = min(10, genes - 1)`), each gene is scaled to mean 0 and variance 1
#' (`scale`), and the eigengene is the first right singular vector of the
#' genes-by-samples matrix ([base::svd()]); `varExplained` is the mean
#' squared correlation of each of the first `min(nPC, 10)` singular vectors
#' with the module's genes.  With `align = "along average"` the eigengene's
#' sign is chosen so that it correlates positively with the module's
#' average scaled expression (`averageExpr`).
#'
#' When the singular value decomposition fails (a gene that is constant or
#' has missing values left, a module the imputation refuses) and `subHubs`
#' is `TRUE`, the eigengene is a weighted average of the scaled genes: the
#' weights are the cubed mean adjacencies (`|cov|^softPower`) of each gene
#' in the module, signed by the gene's covariance with the hub gene, as
#' WGCNA does (`isPC` is then `FALSE`, `isHub` `TRUE`).  When that fails too,
#' the call stops, or with `trapErrors = TRUE` the module is removed with a
#' warning: its genes get the label `grey` in `validColors`, its column
#' stays `NA` (or is dropped under `returnValidOnly`).
#'
#' With `scale = TRUE` and `align = "along average"` (the defaults) the
#' modules without missing values are summarized in one compiled pass
#' (OpenMP over the modules): a module's singular vectors are the
#' eigenvectors of the smaller of its two Gram matrices (LAPACK's `dsyevr`,
#' only the components asked for).  Other settings, and modules with
#' missing values or constant genes, are summarized in base R as WGCNA
#' does.  The eigengenes, average expressions and variances explained agree
#' with WGCNA's to about 1e-14 (seen at most 7e-15 on the ALL data's
#' modules; where two singular values nearly tie the vectors are
#' ill-defined in both), the sign included, and the labels, flags, names
#' and row names are WGCNA's.  One exception: an eigengene uncorrelated with
#' its module's average expression (\eqn{|r| < 10^{-10}}, e.g. a module of
#' two anti-correlated genes) has a sign that is rounding in WGCNA too; it
#' comes from [base::svd()] as WGCNA's does, but the correlation that
#' aligns it is computed differently and may fall on the other side of 0
#' (seen in 14 of 300 such two-gene modules).  Each module's summary is kept for later
#' calls on the same data (the same values and dimensions: a 64-bit hash of
#' them keys the cache; another matrix empties it), so merging, the kME
#' check and a sweep of cut settings summarize a module once.  This runs on
#' the CPU whatever `gpucor.backend` says.
#'
#' **Differences from WGCNA.**  Arguments are checked first, with errors
#' that name them: `colors` with missing values, `nPC` that is not a whole
#' number of at least 1 (WGCNA falls back to hub genes with `nPC = 0`), and
#' data that is not numeric stop; with missing values to impute and the
#' package impute not installed the call stops and says so.  After the
#' imputation the random number state is put back as it was; where there
#' was none, it is removed again (WGCNA leaves impute's seed behind).
#' Progress messages (`verbose > 0`) are [message()]s and are worded
#' differently; the reference's failures are reported as warnings worded
#' differently too.  Like WGCNA's, with `returnValidOnly` and a removed
#' module, `isPC`, `isHub` and `validAEs` keep one entry per module, the
#' removed ones included (so `allPC` and `allAEOK` are `FALSE`).
#'
#' @param expr expression data: a numeric matrix or data frame, samples in
#'   rows and genes in columns.
#' @param colors the module label of each gene (a character vector of
#'   colours, a numeric vector, or a factor without unused levels), one per
#'   column of `expr`.
#' @param impute `TRUE`: impute missing values of a module of two or more
#'   genes with [impute::impute.knn()] (the package impute is needed only
#'   then).
#' @param nPC the number of principal components whose variance explained
#'   is returned (at most 10 are; more gives a warning).
#' @param align `"along average"` (align each eigengene with the module's
#'   average expression) or `""` (keep the sign [base::svd()] gives).
#' @param excludeGrey `TRUE`: leave out the module labelled `grey`.
#' @param grey the label of unassigned genes: `0` for numeric `colors`,
#'   `"grey"` otherwise.
#' @param subHubs `TRUE`: where the principal component fails, use the
#'   hub-gene summary instead.
#' @param trapErrors `TRUE`: remove a module whose eigengene fails (with a
#'   warning) instead of stopping.
#' @param returnValidOnly `TRUE`: drop the removed modules' columns.
#' @param softPower the power of the adjacency that weighs genes in the
#'   hub-gene summary (at least 0).
#' @param scale `TRUE`: scale each gene before the decomposition.
#' @param verbose,indent how much to report (0: nothing; from 1 a message
#'   names the engine: the CPU engine and its threads, and how many modules
#'   its compiled pass made) and how far to indent it.
#' @return A list, as WGCNA's: `eigengenes` (a data frame, samples by
#'   modules, columns `"ME"` and the label, row names those of `expr`),
#'   `averageExpr` (the same with `"AE"`), `varExplained` (a data frame,
#'   `min(nPC, 10)` rows, columns `X1`, `X2`, ...), `nPC`, `validMEs`,
#'   `validColors` (`colors` with the removed modules' genes set to
#'   `grey`), `allOK`, `allPC`, `isPC`, `isHub`, `validAEs` and `allAEOK`.
#' @seealso [WGCNA::moduleEigengenes()], [gpu_merge_close_modules()],
#'   [WGCNA::mergeCloseModules()], [gpu_tom()]
#' @examples
#' set.seed(1)
#' f <- matrix(rnorm(40 * 2), 40, 2)
#' x <- cbind(f[, 1] + matrix(rnorm(40 * 10), 40, 10),
#'            f[, 2] + matrix(rnorm(40 * 10), 40, 10))
#' me <- gpu_module_eigengenes(x, rep(c("blue", "brown"), each = 10))
#' head(me$eigengenes)
#' me$varExplained
#' @export
gpu_module_eigengenes <- function(expr, colors, impute = TRUE, nPC = 1,
                                  align = "along average", excludeGrey = FALSE,
                                  grey = if (is.numeric(colors)) 0 else "grey",
                                  subHubs = TRUE, trapErrors = FALSE,
                                  returnValidOnly = trapErrors, softPower = 6, scale = TRUE,
                                  verbose = 0, indent = 0) {
  rn <- rownames(expr)
  x <- .me_matrix(expr, "expr")
  .me_colors(colors, ncol(x), "colors", "expr")
  if (is.factor(colors) && nlevels(droplevels(colors)) < nlevels(colors))
    stop("'colors' has unused levels (empty modules): drop them with droplevels(colors)",
         call. = FALSE)
  impute <- .me_flag(impute, "impute")
  excludeGrey <- .me_flag(excludeGrey, "excludeGrey")
  subHubs <- .me_flag(subHubs, "subHubs")
  trapErrors <- .me_flag(trapErrors, "trapErrors")
  returnValidOnly <- .me_flag(returnValidOnly, "returnValidOnly")
  scale <- .me_flag(scale, "scale")
  if (!is.numeric(nPC) || length(nPC) != 1L || is.na(nPC) || nPC < 1 || nPC != round(nPC))
    stop("'nPC' must be a whole number >= 1", call. = FALSE)
  if (nPC > 10) warning("'nPC' is larger than 10: varExplained is given for 10 components",
                        call. = FALSE)
  if (!is.character(align) || length(align) != 1L || !align %in% c("", "along average"))
    stop("'align' must be \"along average\" or \"\"", call. = FALSE)
  if (!is.atomic(grey) || length(grey) != 1L || is.na(grey))
    stop("'grey' must be one label", call. = FALSE)
  .me_number(softPower, "softPower", 0)
  verbose <- .me_number(verbose, "verbose")
  indent <- .me_number(indent, "indent")
  .me_eigengenes(x, rn, colors, impute, nPC, align, excludeGrey, grey, subHubs, trapErrors,
                 returnValidOnly, softPower, scale, verbose, indent)
}

# Average-linkage tree of a dissimilarity, as WGCNA makes it (fastcluster's
# hclust; stats' where fastcluster is not installed: the same tree where no
# two distances tie).
.me_hclust <- function(d) {
  if (requireNamespace("fastcluster", quietly = TRUE))
    fastcluster::hclust(d, method = "average")
  else stats::hclust(d, method = "average")
}

# The order of the eigengenes whose dissimilarity is d (rows named by
# them): the order of its average-linkage tree, the grey one last if
# greyLast (WGCNA's .clustOrder()).
.me_order_index <- function(d, greyLast, greyName) {
  g <- match(greyName, rownames(d))
  if (greyLast && !is.na(g)) {
    keep <- rownames(d) != greyName
    if (sum(keep) > 1L) {
      o <- .me_hclust(stats::as.dist(d[keep, keep]))$order
      o[o >= g] <- o[o >= g] + 1L
      o <- c(o, g)
    } else if (ncol(d) > 1L) {
      o <- if (g == 1L) c(2L, 1L) else c(1L, 2L)
    } else o <- 1L
  } else {
    o <- if (length(d) > 1L) .me_hclust(stats::as.dist(d))$order else 1L
  }
  o
}

# The columns o of a data frame of eigengenes, as WGCNA's orderMEs() makes
# them: as.data.frame(MEs[, o]), which loses the row names of a single
# column.
.me_reorder <- function(MEs, o, names = colnames(MEs)) {
  out <- as.data.frame(MEs[, o])
  colnames(out) <- names[o]
  out
}

# Eigengenes in the order of their average-linkage tree on 1 - cor (or
# 1 - |cor|), the grey one last if greyLast: WGCNA's consensusOrderMEs()
# for one set.
.me_order <- function(MEs, useAbs, greyLast, greyName) {
  r <- .me_cor(MEs)
  d <- if (useAbs) 1 - abs(r) else 1 - r
  dimnames(d) <- list(make.unique(names(MEs)), names(MEs))
  .me_reorder(MEs, .me_order_index(d, greyLast, greyName))
}

# The same for several sets (each a list with the eigengenes in 'data', as
# WGCNA's multiSetMEs() gives them): the order of the tree of the largest
# dissimilarity over the sets 'use' (WGCNA's consensusMEDissimilarity()),
# applied to every set's eigengenes, average expressions and variances
# explained (whose columns WGCNA's orderMEs() names after the eigengenes).
.me_order_sets <- function(MEs, use, useAbs, greyLast, greyName) {
  d <- NULL
  for (s in use) {
    r <- .me_cor(MEs[[s]]$data)
    ds <- if (useAbs) 1 - abs(r) else 1 - r
    d <- if (is.null(d)) ds else pmax(d, ds)
  }
  nm <- names(MEs[[use[1L]]]$data)
  dimnames(d) <- list(make.unique(nm), nm)
  o <- .me_order_index(d, greyLast, greyName)
  for (s in seq_along(MEs)) {
    nm <- colnames(MEs[[s]]$data)
    MEs[[s]]$data <- .me_reorder(MEs[[s]]$data, o)
    if (!is.null(MEs[[s]]$averageExpr))
      MEs[[s]]$averageExpr <- .me_reorder(MEs[[s]]$averageExpr, o, nm)
    if (!is.null(MEs[[s]]$varExplained))
      MEs[[s]]$varExplained <- .me_reorder(MEs[[s]]$varExplained, o, nm)
  }
  MEs
}

# 1 - corFnc(MEs without the grey one) (or 1 - |.|), with the eigengenes'
# names: the dissimilarity WGCNA's mergeCloseModules() clusters, for one set.
.me_diss <- function(MEs, greyName, corFnc, corOptions, useAbs) {
  use <- which(names(MEs) != greyName)
  corOptions$x <- MEs[, use, drop = FALSE]
  r <- as.matrix(do.call(corFnc, corOptions))
  d <- if (useAbs) 1 - abs(r) else 1 - r
  if (!identical(dim(d), c(length(use), length(use))))
    stop("'corFnc' must return the square correlation matrix of its 'x'", call. = FALSE)
  dimnames(d) <- rep(list(make.unique(names(MEs)[use])), 2L)
  d
}

# The consensus of the sets' dissimilarities (.me_diss() of each set 'use'):
# each entry's quantile 1 - consensusQuantile over the sets (type 7, as
# WGCNA's .consensusMEDissimilarity()), after equalizing the sets'
# distributions with equalizeQuantiles (each value replaced by the mean,
# or median, over the sets of the values of its rank, ranks averaged over
# ties and rounded).
.me_cons_diss <- function(MEs, use, greyName, corFnc, corOptions, useAbs, equalize,
                          summary, consensusQuantile) {
  ds <- lapply(MEs[use], function(m) .me_diss(m$data, greyName, corFnc, corOptions, useAbs))
  k <- nrow(ds[[1L]])
  if (equalize && k > 1L) {
    low <- lower.tri(ds[[1L]])
    v <- matrix(vapply(ds, function(d) d[low], numeric(sum(low))), ncol = length(ds))
    srt <- matrix(apply(v, 2L, sort, na.last = TRUE), ncol = length(ds))
    ref <- if (summary == "median") apply(srt, 1L, stats::median, na.rm = TRUE)
           else rowMeans(srt, na.rm = TRUE)
    rk <- matrix(apply(v, 2L, rank, ties.method = "average", na.last = "keep"),
                 ncol = length(ds))
    for (s in seq_along(ds)) {
      m <- matrix(0, k, k)
      m[low] <- ref[round(rk[, s])]
      m <- m + t(m)
      dimnames(m) <- dimnames(ds[[s]])
      ds[[s]] <- m
    }
  }
  if (length(ds) == 1L) return(ds[[1L]])
  a <- array(unlist(ds), dim = c(k, k, length(ds)))
  out <- apply(a, c(1L, 2L), stats::quantile, probs = 1 - consensusQuantile, names = FALSE,
               na.rm = TRUE)
  dim(out) <- c(k, k)
  dimnames(out) <- dimnames(ds[[1L]])
  out
}

# WGCNA's multi-set data (checkSets()): a list of sets, each a list whose
# component 'data' is a matrix or data frame (samples in rows), all with
# the same genes (columns).  The sets' double matrices and row names.
.ms_sets <- function(multi, what) {
  if (!is.list(multi) || is.data.frame(multi) || length(multi) < 1L)
    stop(sprintf("'%s' must be a list of sets, each a list with the expression data in its component 'data' (WGCNA's multi-set format)",
                 what), call. = FALSE)
  ok <- vapply(multi, function(s) is.list(s) && !is.data.frame(s) && !is.null(s$data) &&
                 length(dim(s$data)) == 2L, NA)
  if (!all(ok))
    stop(sprintf("'%s' must be a list of sets, each a list with the expression data (a matrix or data frame, samples in rows) in its component 'data' (WGCNA's multi-set format): set %d is not",
                 what, which(!ok)[1L]), call. = FALSE)
  ng <- vapply(multi, function(s) ncol(s$data), 1L)
  if (any(ng != ng[1L])) {
    b <- which(ng != ng[1L])[1L]
    stop(sprintf("the sets of '%s' must have the same genes (columns): set 1 has %d, set %d has %d",
                 what, ng[1L], b, ng[b]), call. = FALSE)
  }
  list(x = lapply(seq_along(multi), function(s)
         .me_matrix(multi[[s]]$data, sprintf("%s[[%d]]$data", what, s))),
       rownames = lapply(multi, function(s) rownames(s$data)))
}

#' Merge modules whose eigengenes are close, as WGCNA::mergeCloseModules does
#'
#' `gpu_merge_close_modules()` merges the modules of `colors` whose
#' eigengenes are highly correlated, with the arguments, defaults and value
#' of [WGCNA::mergeCloseModules()] (WGCNA 1.72), for one set of samples or
#' for several (WGCNA's consensus form): the
#' eigengenes of the modules other than `unassdColor` are computed with
#' [gpu_module_eigengenes()] (or taken from `MEs`), clustered by average
#' linkage on their dissimilarity \eqn{1 - cor} (\eqn{1 - |cor|} with
#' `useAbs`), and the tree is cut at `cutHeight`: the modules of one branch
#' take the label of the first of them in the order of the eigengenes
#' (WGCNA's: the order of their own tree).  With `iterate` this is repeated
#' on the merged modules until nothing merges.  With `relabel` the merged
#' modules are relabelled by size, the largest getting the first label of
#' `colorSeq` (by default `1, 2, ...` for numeric labels, and for colours
#' WGCNA's standard colour sequence, `"turquoise"`, `"blue"`, `"brown"`,
#' ...).  The eigengenes of the merged modules, and their tree, are computed
#' again when `getNewMEs` asks for them.
#'
#' **Several sets.**  `exprData` in WGCNA's multi-set format (a list of
#' sets, each a list whose `data` is a matrix or data frame, the same genes
#' in every set) merges consensus modules: each set has its own eigengenes
#' (WGCNA's `multiSetMEs()`), ordered by the tree of the largest
#' dissimilarity over the sets (`consensusOrderMEs()`), and the tree that
#' is cut is that of the consensus dissimilarity: for each pair of
#' eigengenes the `1 - consensusQuantile` quantile (type 7) over the sets
#' `useSets` of their dissimilarities, after `equalizeQuantiles` has given
#' the sets the same distribution of dissimilarities (each value replaced by
#' the `quantileSummary` over the sets of the values of its rank).  `MEs`,
#' `oldMEs` and `newMEs` are then lists of sets too, each as
#' `multiSetMEs()` gives it (`data`, `averageExpr`, `varExplained`, ...; as
#' in WGCNA the reordered `averageExpr` and `varExplained` take the
#' eigengenes' column names).  Where WGCNA 1.72 fails, this goes on:
#' `equalizeQuantiles = TRUE` (WGCNA's reshaping of the equalized
#' dissimilarities stops with an error) and `useSets` other than all the
#' sets in order (WGCNA indexes its array of dissimilarities by the set
#' number); the eigengenes of every set are computed, those of `useSets`
#' decide the order and the merging.
#'
#' The merged colours are WGCNA's; the trees are made as WGCNA makes them
#' (by fastcluster's hclust when fastcluster is installed, else by
#' [stats::hclust()]), so their merges and order are WGCNA's and their
#' heights agree to rounding, and the eigengenes agree with WGCNA's to about
#' 1e-15.  This runs in R on the CPU whatever `gpucor.backend` says.
#'
#' **Differences from WGCNA.**  A list that is not in WGCNA's multi-set
#' format (a list of matrices, sets with different genes) stops with an
#' error; for one set `useSets` may only be `NULL` or 1, and
#' `consensusQuantile` and `equalizeQuantiles` do nothing
#' (WGCNA's `equalizeQuantiles = TRUE` stops with an error on one set).
#' Given `MEs` must have the rows of `exprData`, and where they are used
#' (one column per label of `colors`) columns named `"ME"` and the labels;
#' a matrix is taken as a data frame.  `corFnc` defaults to [stats::cor()] (WGCNA's
#' default is its own cor(), which agrees to rounding).  The dendrograms'
#' `call` names this package's call of hclust.  Progress messages
#' (`verbose > 0`) are [message()]s worded differently, and nothing is
#' printed at `verbose = 0` (WGCNA prints that there is nothing to merge
#' with fewer than two modules at any verbosity).  `colors` with missing
#' values stops.  As in WGCNA, `cutHeight` must lie in \[0, 1\], or in
#' \[0, 2\] with `useAbs = TRUE`.
#'
#' @param exprData expression data: a numeric matrix or data frame, samples
#'   in rows and genes in columns; or several sets of samples in WGCNA's
#'   multi-set format (see above).
#' @param colors the module label of each gene, one per column of
#'   `exprData` (colours, numbers or a factor).
#' @param MEs `NULL`, or the eigengenes of the modules (a data frame, as
#'   [gpu_module_eigengenes()]'s `eigengenes`; for several sets a list of
#'   sets, each with its eigengenes in `data`): they are used when they
#'   have one column per label of `colors` (the unassigned one included),
#'   and computed again otherwise.
#' @param useSets `NULL` (all sets), or the numbers of the sets whose
#'   eigengenes decide the merging.
#' @param impute passed to [gpu_module_eigengenes()].
#' @param checkDataFormat `TRUE`; `FALSE` stops, as WGCNA does for data
#'   that is not in its multi-set format.
#' @param unassdColor the label of unassigned genes (never merged): `0` for
#'   numeric `colors`, `"grey"` otherwise.
#' @param corFnc,corOptions the correlation function, called as
#'   `do.call(corFnc, c(list(x = MEs), corOptions))`, that gives the
#'   dissimilarity of the tree (the order of the eigengenes always uses
#'   Pearson correlation).
#' @param useAbs `TRUE`: dissimilarity \eqn{1 - |cor|}.
#' @param equalizeQuantiles,quantileSummary,consensusQuantile WGCNA's
#'   consensus options (see above); nothing to do for one set (checked
#'   only).
#' @param cutHeight the height at which the tree of the eigengenes is cut.
#' @param iterate `TRUE`: merge again until nothing merges.
#' @param relabel `TRUE`: relabel the merged modules by decreasing size.
#' @param colorSeq the labels `relabel` uses (default: as WGCNA's).
#' @param getNewMEs `TRUE`: return the eigengenes of the merged modules.
#' @param getNewUnassdME `TRUE`: include the eigengene of the unassigned
#'   genes among them.
#' @param trapErrors `TRUE`: when merging fails, warn and return the
#'   original colours with `allOK = FALSE` instead of stopping.
#' @param verbose,indent how much to report (0: nothing; from 1 a message
#'   names the engine that makes the eigengenes) and how far to indent it.
#' @return A list, as WGCNA's: `colors` (the merged labels, of the type of
#'   `colors`), `dendro` (the tree of the new eigengenes, or of the last
#'   round of merging; `NULL` with fewer than two modules), `oldDendro` (the
#'   tree of the first round), `cutHeight`, `oldMEs` (the eigengenes of the
#'   original modules, unassigned ones excluded, in tree order, or `MEs`
#'   when they were used), `newMEs` (the eigengenes of the merged modules
#'   in tree order, the unassigned one last; `NULL` unless `getNewMEs`) and
#'   `allOK`.  With `trapErrors` and a failure: `colors` (the original
#'   ones) and `allOK = FALSE`.
#' @seealso [WGCNA::mergeCloseModules()], [gpu_module_eigengenes()],
#'   [WGCNA::moduleEigengenes()], [gpu_hclust()]
#' @examples
#' set.seed(1)
#' f <- matrix(rnorm(40 * 2), 40, 2)
#' f <- cbind(f, f[, 1] + 0.1 * rnorm(40))   # modules 1 and 3 are alike
#' x <- do.call(cbind, lapply(1:3, function(k) f[, k] + matrix(rnorm(40 * 8), 40, 8)))
#' colors <- rep(c("blue", "brown", "turquoise"), each = 8)
#' m <- gpu_merge_close_modules(x, colors, cutHeight = 0.25, verbose = 0)
#' table(m$colors)
#' @export
gpu_merge_close_modules <- function(exprData, colors, MEs = NULL, useSets = NULL, impute = TRUE,
                                    checkDataFormat = TRUE,
                                    unassdColor = if (is.numeric(colors)) 0 else "grey",
                                    corFnc = stats::cor, corOptions = list(use = "p"),
                                    useAbs = FALSE, equalizeQuantiles = FALSE,
                                    quantileSummary = "mean", consensusQuantile = 0,
                                    cutHeight = 0.2, iterate = TRUE, relabel = FALSE,
                                    colorSeq = NULL, getNewMEs = TRUE, getNewUnassdME = TRUE,
                                    trapErrors = FALSE, verbose = 1, indent = 0) {
  multi <- is.list(exprData) && !is.data.frame(exprData)
  if (!.me_flag(checkDataFormat, "checkDataFormat") && !multi)
    stop("'exprData' is not in WGCNA's multi-set format (checkDataFormat = FALSE)",
         call. = FALSE)
  if (multi) {
    ms <- .ms_sets(exprData, "exprData")
    xs <- ms$x
    rns <- ms$rownames
  } else {
    rns <- list(rownames(exprData))
    xs <- list(.me_matrix(exprData, "exprData"))
  }
  nsets <- length(xs)
  use <- seq_len(nsets)
  if (!is.null(useSets)) {
    if (!is.numeric(useSets) || anyNA(useSets) || any(useSets != round(useSets)) ||
        any(useSets < 1) || any(useSets > nsets) || anyDuplicated(useSets))
      stop(sprintf("'useSets' must be NULL or distinct set numbers between 1 and %d", nsets),
           call. = FALSE)
    use <- as.integer(useSets)
  }
  x <- xs[[1L]]
  .me_colors(colors, ncol(x), "colors", "exprData")
  if (!is.atomic(unassdColor) || length(unassdColor) != 1L || is.na(unassdColor))
    stop("'unassdColor' must be one label", call. = FALSE)
  impute <- .me_flag(impute, "impute")
  useAbs <- .me_flag(useAbs, "useAbs")
  equalizeQuantiles <- .me_flag(equalizeQuantiles, "equalizeQuantiles")
  quantileSummary <- .wgcna_choice(quantileSummary, c("mean", "median"), "quantileSummary")
  consensusQuantile <- .me_number(consensusQuantile, "consensusQuantile", 0)
  if (consensusQuantile > 1) stop("'consensusQuantile' must be in [0, 1]", call. = FALSE)
  iterate <- .me_flag(iterate, "iterate")
  relabel <- .me_flag(relabel, "relabel")
  getNewMEs <- .me_flag(getNewMEs, "getNewMEs")
  getNewUnassdME <- .me_flag(getNewUnassdME, "getNewUnassdME")
  trapErrors <- .me_flag(trapErrors, "trapErrors")
  verbose <- .me_number(verbose, "verbose")
  indent <- .me_number(indent, "indent")
  if (!is.function(corFnc) && !(is.character(corFnc) && length(corFnc) == 1L))
    stop("'corFnc' must be a function", call. = FALSE)
  if (!is.list(corOptions)) stop("'corOptions' must be a list", call. = FALSE)
  .me_number(cutHeight, "cutHeight")
  if (cutHeight < 0 || cutHeight > 1 + useAbs)
    stop(sprintf("'cutHeight' must be between 0 and %d", 1L + useAbs), call. = FALSE)
  if (!is.null(MEs)) {
    if (multi) {
      if (!is.list(MEs) || is.data.frame(MEs) || length(MEs) != nsets ||
          !all(vapply(MEs, function(m) is.list(m) && !is.null(m$data), NA)))
        stop("'MEs' must be a list of sets as 'exprData' (each with its eigengenes in 'data')",
             call. = FALSE)
      for (s in seq_len(nsets)) {
        if (is.matrix(MEs[[s]]$data)) MEs[[s]]$data <- as.data.frame(MEs[[s]]$data)
        if (nrow(MEs[[s]]$data) != nrow(xs[[s]]))
          stop(sprintf("'MEs' has %d rows in set %d, 'exprData' %d (samples)",
                       nrow(MEs[[s]]$data), s, nrow(xs[[s]])), call. = FALSE)
      }
    } else {
      if (is.matrix(MEs)) MEs <- as.data.frame(MEs)
      if (!is.data.frame(MEs)) stop("'MEs' must be a data frame of eigengenes", call. = FALSE)
      if (nrow(MEs) != nrow(x))
        stop(sprintf("'MEs' has %d rows, 'exprData' %d (samples)", nrow(MEs), nrow(x)),
             call. = FALSE)
    }
  }
  spaces <- .wgcna_spaces(indent)
  if (verbose > 0) {
    message(sprintf("%sgpu_merge_close_modules: merging modules whose distance is less than %g",
                    spaces, cutHeight))
    message(sprintf("%sgpu_merge_close_modules: CPU engine, %d thread%s (the eigengenes; %s)",
                    spaces, .threads(), if (.threads() == 1L) "" else "s",
                    "their correlations by 'corFnc'"))
  }
  origColors <- colors
  if (is.factor(colors)) colors <- droplevels(colors)
  greyName <- paste0("ME", unassdColor)
  caches <- lapply(xs, .me_cache_for)
  eigengenes <- function(s, labels, excludeGrey)
    .me_eigengenes(xs[[s]], rns[[s]], labels, impute, 1, "along average", excludeGrey,
                   unassdColor, TRUE, FALSE, FALSE, 6, TRUE, verbose - 1, indent + 1,
                   caches[[s]])
  drop <- function(v) if (is.factor(v)) droplevels(v) else v
  if (multi) {
    # WGCNA's multiSetMEs() (each set's moduleEigengenes(), 'eigengenes'
    # called 'data') in consensusOrderMEs()' order; the dissimilarity is
    # the consensus of the sets'
    ordered_MEs <- function(labels, excludeGrey, greyLast) {
      m <- lapply(seq_len(nsets), function(s) {
        e <- eigengenes(s, labels, excludeGrey)
        names(e)[names(e) == "eigengenes"] <- "data"
        e
      })
      names(m) <- names(exprData)
      .me_order_sets(m, use, useAbs, greyLast, greyName)
    }
    diss <- function(MEs)
      .me_cons_diss(MEs, use, greyName, corFnc, corOptions, useAbs, equalizeQuantiles,
                    quantileSummary, consensusQuantile)
    me_names <- function(MEs) names(MEs[[1L]]$data)
  } else {
    ordered_MEs <- function(labels, excludeGrey, greyLast)
      .me_order(eigengenes(1L, labels, excludeGrey)$eigengenes, useAbs, greyLast, greyName)
    diss <- function(MEs) .me_diss(MEs, greyName, corFnc, corOptions, useAbs)
    me_names <- function(MEs) names(MEs)
  }

  run <- function() {
    oldMEs <- NULL
    iteration <- 1L
    repeat {
      if (!is.null(MEs) && length(.me_levels(colors)) == length(me_names(MEs))) {
        want <- paste0("ME", .me_levels(colors))
        if (!setequal(me_names(MEs), want))
          stop(sprintf("the columns of 'MEs' must be named %s (\"ME\" and the labels)",
                       paste(want, collapse = ", ")), call. = FALSE)
      } else {
        if (!is.null(MEs) && verbose > 0)
          message(spaces, "  the number of MEs is not that of the colors: computing the MEs")
        MEs <- ordered_MEs(colors, TRUE, FALSE)
      }
      if (iteration == 1L) oldMEs <- MEs
      levs <- .me_levels(colors)
      if (sum(levs != as.character(unassdColor)) < 2L) {
        if (verbose > 0)
          message(spaces, "  fewer than two modules (labels ", paste(levs, collapse = ", "),
                  "): nothing to merge")
        merged <- colors
        nOld <- nNew <- 1L
        oldTree <- tree <- NULL
        break
      }
      nOld <- length(.me_levels(colors))
      tree <- .me_hclust(stats::as.dist(diss(MEs)))
      if (iteration == 1L) oldTree <- tree
      branch <- stats::cutree(tree, h = cutHeight)
      merged <- colors
      for (b in unique(branch)) {
        mods <- substring(names(branch)[branch == b], 3L)
        if (length(mods) < 2L) next
        if (is.numeric(origColors)) mods <- as.numeric(mods)
        if (verbose > 3) message(spaces, "  merging ", paste(mods, collapse = ", "))
        for (m in mods[-1L]) merged[merged == m] <- mods[1L]
      }
      merged <- drop(merged)
      nNew <- length(.me_levels(merged))
      if (!(nNew < nOld && iterate)) break
      colors <- merged
      MEs <- NULL
      iteration <- iteration + 1L
    }
    newColors <- merged
    if (relabel) {
      raw <- .me_levels(merged)
      if (is.null(colorSeq))
        colorSeq <- if (is.numeric(origColors)) seq_along(table(origColors))
                    else .me_label_colors(length(raw))
      bySize <- raw[order(-table(merged))]
      if (is.factor(newColors)) newColors <- as.character(newColors)
      k <- 0L
      for (col in bySize) if (col != unassdColor) {
        k <- k + 1L
        newColors[merged == col] <- colorSeq[k]
      }
      if (is.factor(merged)) newColors <- as.factor(newColors)
    }
    newColors <- drop(newColors)
    newMEs <- NULL
    if (getNewMEs) {
      if (nNew < nOld || relabel || getNewUnassdME) {
        if (verbose > 0) message(spaces, "  calculating the new MEs")
        newMEs <- ordered_MEs(newColors, !getNewUnassdME, TRUE)
        d <- diss(newMEs)
        tree <- if (length(d) > 1L) .me_hclust(stats::as.dist(d)) else NULL
      } else newMEs <- MEs
    }
    list(colors = newColors, dendro = tree, oldDendro = oldTree, cutHeight = cutHeight,
         oldMEs = oldMEs, newMEs = newMEs, allOK = TRUE)
  }
  res <- tryCatch(run(), error = function(e) e)
  if (inherits(res, "error")) {
    if (!trapErrors) stop(res)
    warning(sprintf(paste("merging the modules failed (%s): returning the colors unmerged",
                          "and no eigengenes"), conditionMessage(res)), call. = FALSE)
    return(list(colors = origColors, allOK = FALSE))
  }
  res
}
