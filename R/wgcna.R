# WGCNA's network construction on gpucor's engines: bicor, the adjacency,
# the soft-threshold scan and the topological overlap.  Each function takes
# the arguments, defaults and results of the WGCNA function of the same
# role; the C side is src/wgcna.c, src/algo/bicor.c and src/algo/tom.c,
# and on the GPU the engine's sinks (SINK_DENSE_DEVICE, SINK_POWSUM) and
# src/cuda/tom.cu.

# The engine's epilogue codes (EPI_* in src/engine/engine.h).
.epi_adjacency <- c(unsigned = 3L, signed = 4L, "signed hybrid" = 5L, keep_sign = 6L)
.tom_types <- c("none", "unsigned", "signed", "signed Nowick", "unsigned 2", "signed 2",
                "signed Nowick 2")
.bicor_fallbacks <- c("none", "individual", "all")
.network_types <- c("unsigned", "signed", "signed hybrid")
.cor_types <- c("pearson", "bicor", "spearman")

# One of 'choices' by partial matching, or an error naming the argument.
.wgcna_choice <- function(v, choices, what) {
  k <- if (is.character(v) && length(v) == 1L && !is.na(v)) pmatch(v, choices) else NA
  if (is.na(k))
    stop(sprintf("'%s' must be one of %s", what,
                 paste0("\"", choices, "\"", collapse = ", ")), call. = FALSE)
  choices[k]
}

.wgcna_power <- function(power, what = "power") {
  if (!is.numeric(power) || length(power) != 1L || is.na(power) || !is.finite(power) ||
      power <= 0)
    stop(sprintf("'%s' must be one positive number, not %s", what,
                 paste(deparse(power, width.cutoff = 40L), collapse = " ")), call. = FALSE)
  as.double(power)
}

# Genes (columns) as a double matrix: a matrix or data frame, or a
# SummarizedExperiment / ExpressionSet (features in rows, so transposed).
.wgcna_matrix <- function(x, what, assay = 1L, vector_ok = FALSE) {
  x <- .as_input(x, what, assay, TRUE)
  if (is.data.frame(x)) x <- as.matrix(x)
  # WGCNA::bicor takes a vector as one column (its result is a matrix)
  if (vector_ok && is.null(dim(x)) && is.atomic(x) && (is.numeric(x) || is.logical(x)))
    x <- matrix(x, ncol = 1L)
  if (!is.matrix(x)) stop(sprintf("'%s' must be a matrix (samples in rows, genes in columns)", what),
                          call. = FALSE)
  .check_cor_input(x, what)
  .as_double_matrix(x)
}

.bicor_opts <- function(maxPOutliers, quick, pearsonFallback) {
  if (!is.numeric(maxPOutliers) || length(maxPOutliers) != 1L || is.na(maxPOutliers) ||
      maxPOutliers <= 0 || maxPOutliers > 1)
    stop("'maxPOutliers' must be a number in (0, 1]", call. = FALSE)
  if (!is.numeric(quick) || length(quick) != 1L || is.na(quick) || quick < 0)
    stop("'quick' must be a number >= 0", call. = FALSE)
  list(maxp = as.double(maxPOutliers), quick = as.double(quick),
       fallback = match(.wgcna_choice(pearsonFallback, .bicor_fallbacks, "pearsonFallback"),
                        .bicor_fallbacks))
}

# Constant columns (all observed values equal, or none observed): WGCNA's
# cor() makes their whole row and column NA, the diagonal included.
.constant_cols <- function(x) {
  if (!ncol(x)) return(logical(0))
  if (!anyNA(x)) return(colSums(x != rep(x[1L, ], each = nrow(x))) == 0)
  # an empty column: min Inf > max -Inf
  lo <- suppressWarnings(apply(x, 2L, min, na.rm = TRUE))
  hi <- suppressWarnings(apply(x, 2L, max, na.rm = TRUE))
  lo >= hi
}

#' Biweight midcorrelation, as WGCNA::bicor computes it
#'
#' `gpu_bicor()` computes the biweight midcorrelation between the columns of
#' `x` (and `y`) with the arguments (in its order), defaults and values of
#' [WGCNA::bicor()]: each column's median and raw median absolute deviation
#' (type-7 quantiles, no 1.4826 factor), \eqn{u = (x - med) / (9\,mad)}{u = (x - med) / (9 mad)},
#' weights \eqn{(1 - u^2)^2} for \eqn{|u| < 1} (0 beyond), the
#' `maxPOutliers` rescaling of \eqn{u} (the `maxPOutliers` and
#' `1 - maxPOutliers` quantiles of \eqn{u} map to -0.5 and 0.5 when they lie
#' beyond them), and the weighted, median-centred columns scaled to unit
#' length; bicor is then the dot product of two such columns, computed by
#' the engine's product path (the GPU's GEMM, or the CPU's tiles).
#'
#' A column of zero MAD is prepared as Pearson's (centred on its mean) under
#' `pearsonFallback = "individual"` (its correlation with a bicor column is
#' then the dot product of the two prepared columns, as WGCNA's), is `NA`
#' under `"none"`, and under `"all"` one such column makes every column of
#' that side Pearson's.  `robustX = FALSE` (`robustY`) prepares that side as
#' Pearson's.  A constant or empty column gives an `NA` row and column,
#' the diagonal included, as in WGCNA.
#'
#' With `use = "pairwise.complete.obs"` each column is first prepared on its
#' own observed rows; the pairs in which a column has more than
#' `floor(quick * nrow(x))` missing values are then recomputed on the rows
#' both columns observe (median, MAD, weights and norm again), on the CPU
#' (WGCNA's `quick = 0` rule: with the default every pair with an `NA`).
#' `use = "all.obs"` (the default) stops on missing values.
#'
#' The values agree with WGCNA's to about 1e-15 (the diagonal is exactly 1
#' where WGCNA's may be 1 minus an ulp).  The medians are found on the
#' CPU (threads as for the CPU engine); the products on the backend chosen.
#'
#' @param x a numeric matrix or data frame (samples in rows, variables in
#'   columns), a numeric vector (one variable; the result is still a
#'   matrix, as [WGCNA::bicor()]'s), or a
#'   `SummarizedExperiment`/`ExpressionSet` (genes in rows: the
#'   correlations are between genes; see "Orientation" in [gpucor]).  An
#'   on-disk `DelayedMatrix`/`HDF5Matrix` or `big.matrix` is read once, in
#'   whole chunks of its file, into one double matrix (after the memory
#'   check), as [gpu_cor()] reads one that fits its memory budget.
#' @param y `NULL`, or a matrix or vector with the rows of `x`.
#' @param use `"all.obs"` or `"pairwise.complete.obs"` (may be
#'   abbreviated).
#' @param maxPOutliers,quick,pearsonFallback,robustX,robustY as in
#'   [WGCNA::bicor()].
#' @param cosine,cosineX,cosineY WGCNA's cosine bicor (of both sides, of
#'   `x`, of `y`): the weights as for bicor, applied to the values without
#'   subtracting the median (and Pearson's side not centred on its mean).
#'   Prepared in R (the engine's products as for bicor); complete data only
#'   (an error with missing values and `quick < 1`).
#' @param nThreads as in [WGCNA::bicor()]: `0` (default) leaves the CPU
#'   engine's threads as set (option `gpucor.threads`, see
#'   [gpucor_options]); a positive number is the CPU engine's threads for
#'   this call.
#' @param verbose `TRUE` or `FALSE` as for [gpu_cor()], or WGCNA's number
#'   (`0` is `FALSE`, more is `TRUE`).
#' @param indent accepted for WGCNA's calls and ignored (a one-time
#'   message says so): gpucor's messages are not indented.
#' @param backend,precision,devices as for [gpu_cor()].
#' @param output `NULL` (default: the result in memory), or [gpu_hdf5()]:
#'   the matrix is written to an HDF5 file as the engine makes it, never
#'   whole in memory, and returned as an `HDF5Array`, with the values of the
#'   call in memory: the pairs with missing values are recomputed in each
#'   band of columns before it is written (on the CPU, whichever backend
#'   made the products; a symmetric result's pairs twice, once for each
#'   side of the diagonal).
#' @return The correlation matrix, with the column names of `x` and `y`;
#'   with `output`, an `HDF5Array`.
#' @seealso [gpu_adjacency()], [gpu_tom()], [gpu_cor()]
#' @examples
#' x <- matrix(rnorm(40 * 5), 40, 5)
#' x[1, 1] <- 20   # an outlier bicor discounts
#' gpu_bicor(x)
#' @export
gpu_bicor <- function(x, y = NULL, robustX = TRUE, robustY = TRUE, use = "all.obs",
                      maxPOutliers = 1, quick = 0, pearsonFallback = "individual",
                      cosine = FALSE, cosineX = cosine, cosineY = cosine, nThreads = 0,
                      verbose = getOption("gpucor.verbose", FALSE), indent = 0,
                      backend = getOption("gpucor.backend", "auto"),
                      precision = c("double", "single"),
                      devices = getOption("gpucor.devices", 0L), output = NULL) {
  .check_common()
  .ref_threads(nThreads)
  .ref_ignored("gpu_bicor", .ref_given("indent"), .why_ignored)
  use <- .wgcna_choice(use, c("all.obs", "pairwise.complete.obs"), "use")
  bo <- .bicor_opts(maxPOutliers, quick, pearsonFallback)
  for (a in list(list(robustX, "robustX"), list(robustY, "robustY"),
                 list(cosineX, "cosineX"), list(cosineY, "cosineY")))
    if (!is.logical(a[[1]]) || length(a[[1]]) != 1L || is.na(a[[1]]))
      stop(sprintf("'%s' must be TRUE or FALSE", a[[2]]), call. = FALSE)
  x <- .wgcna_matrix(x, "x", vector_ok = TRUE)
  if (!is.null(y)) {
    y <- .wgcna_matrix(y, "y", vector_ok = TRUE)
    if (nrow(y) != nrow(x)) stop("'x' and 'y' must have the same number of rows", call. = FALSE)
  }
  if (use == "all.obs" && (anyNA(x) || anyNA(y)))
    stop(sprintf("missing values in '%s': use = \"pairwise.complete.obs\" computes each pair on the rows both observe",
                 if (anyNA(x)) "x" else "y"), call. = FALSE)
  if ((cosineX || (!is.null(y) && cosineY)) && (anyNA(x) || anyNA(y)))
    stop("cosine bicor is computed here on complete data only: remove the missing values, or use cosine = FALSE",
         call. = FALSE)
  .bicor_run(x, y, bo, robustX, if (is.null(y)) robustX else robustY,
             backend, precision, devices, verbose, "gpu_bicor", output,
             cosine = c(cosineX, if (is.null(y)) cosineX else cosineY))
}

# WGCNA's cosine bicor preparation of the columns of x (bicor's
# 'cosineX'): the weights of gc_bicor_prep_col() (src/algo/bicor.c), from
# the median-centred values, applied to the values themselves, not
# centred; Pearson's side (robustX = FALSE, or the zero-MAD fallback) is
# x / |x|.  Computed in R: the engine's preparation has no cosine mode.
# The value is .Call(C_gpucor_bicor_prep)'s: the prepared columns, and a
# flag per column (1 NA, 2 zero MAD, 4 Pearson's, as BICOR_COL_*).
.bicor_prep_cosine <- function(x, p) {
  if (anyNA(x))
    stop("cosine bicor is computed here on complete data only: remove the missing values",
         call. = FALSE)
  q7 <- function(v, pr) stats::quantile(v, pr, type = 7, names = FALSE)
  unit <- function(a) {
    s <- sqrt(sum(a^2))
    if (s == 0 || !is.finite(s)) return(NULL)
    a / s
  }
  pearson <- function(v) {
    a <- unit(v)
    if (is.null(a)) list(numeric(length(v)), 1L) else list(a, 4L)
  }
  z <- matrix(0, nrow(x), ncol(x))
  flags <- integer(ncol(x))
  for (j in seq_len(ncol(x))) {
    v <- x[, j]
    r <- if (p$pearson) pearson(v) else {
      med <- q7(v, 0.5)
      mad <- q7(abs(v - med), 0.5)
      if (mad == 0) {
        if (p$fallback == "none") list(numeric(length(v)), 3L)
        else { f <- pearson(v); f[[2L]] <- bitwOr(f[[2L]], 2L); f }
      } else {
        u <- (v - med) / (9 * mad)
        if (p$max_outliers < 1) {
          lo <- min(q7(u, p$max_outliers), -0.5)
          hi <- max(q7(u, 1 - p$max_outliers), 0.5)
          u <- ifelse(u < 0, u * 0.5 / abs(lo), u * 0.5 / hi)
        }
        u[abs(u) > 1] <- 1
        a <- unit(v * (1 - u^2)^2)
        if (is.null(a)) list(numeric(length(v)), 1L) else list(a, 0L)
      }
    }
    z[, j] <- r[[1L]]
    flags[j] <- r[[2L]]
  }
  if (!p$pearson && p$fallback == "all" && any(bitwAnd(flags, 2L) != 0L)) {
    # WGCNA: the whole side as Pearson's
    p$pearson <- TRUE
    r <- .bicor_prep_cosine(x, p)
    r[[2L]] <- bitwOr(r[[2L]], bitwAnd(flags, 2L))
    return(r)
  }
  list(z, flags)
}

# WGCNA::bicor's warning for a side with a column of zero MAD.
.zero_mad_warning <- function(side, fallback)
  warning(sprintf("bicor: zero MAD in variable '%s'. %s", side,
                  c("Some results will be NA.",
                    "Pearson correlation was used for individual columns with zero (or missing) MAD.",
                    "Pearson correlation was used for entire variable.")[fallback]),
          call. = FALSE)

# How bicor prepares one side's columns (src/options.c reads it): WGCNA's
# maxPOutliers and pearsonFallback, and whether the side is Pearson's
# (robustX = FALSE).
.bicor_params <- function(bo, pearson)
  list(max_outliers = as.double(bo$maxp), fallback = .bicor_fallbacks[bo$fallback],
       pearson = as.logical(pearson))

# The bicor matrix of x (and y), NA columns and the pairwise pairs done;
# the WGCNA warnings.  With 'output' the matrix goes to that file (the
# pairs and NA columns done by the file sink to each band, then the steps
# of 'post', .hdf5_post()) and its HDF5Array comes back.
.bicor_run <- function(x, y, bo, robustX, robustY, backend, precision, devices, verbose,
                       fun, output = NULL, post = .hdf5_post(), cosine = c(FALSE, FALSE)) {
  n <- nrow(x)
  q <- if (is.null(y)) ncol(x) else ncol(y)
  .memory_guard(8 * as.double(ncol(x)) * q * is.null(output) +
                  16 * as.double(n) * (ncol(x) + q),
                sprintf("%s(): the %d x %d result", fun, ncol(x), q), "")
  backend <- .resolve_backend(backend, work = as.double(ncol(x)) *
                                (if (is.null(y)) ncol(x) / 2 else q) * n)
  opts <- .engine_opts(backend, precision, verbose, devices, fun = fun)
  px <- .bicor_params(bo, !robustX)
  py <- .bicor_params(bo, !robustY)
  prx <- if (cosine[1L]) .bicor_prep_cosine(x, px) else .Call(C_gpucor_bicor_prep, x, px, opts)
  pry <- if (is.null(y)) NULL
         else if (cosine[2L]) .bicor_prep_cosine(y, py)
         else .Call(C_gpucor_bicor_prep, y, py, opts)
  zero_mad <- c(any(bitwAnd(prx[[2L]], 2L) != 0L),
                !is.null(y) && any(bitwAnd(pry[[2L]], 2L) != 0L))
  pairs <- bo$quick < 1 && (anyNA(x) || anyNA(y))
  if (pairs) {
    # a side that "all" made Pearson's is Pearson's on the pairs' rows too
    if (bo$fallback == 3L && zero_mad[1L]) px$pearson <- TRUE
    if (bo$fallback == 3L && zero_mad[2L]) py$pearson <- TRUE
  }
  nax <- bitwAnd(prx[[2L]], 1L) != 0L
  nay <- if (is.null(y)) nax else bitwAnd(pry[[2L]], 1L) != 0L
  cy <- if (is.null(y)) colnames(x) else colnames(y)
  if (!is.null(output)) {
    # the pairs and the NA rows and columns done to each band of columns
    # before it is written (src/wgcna.c, gpucor_bicor_file)
    if (any(nax)) post$na_row <- nax
    if (any(nay)) post$na_col <- nay
    pw <- .engine_call(
      .Call(C_gpucor_bicor_file, prx[[1L]], pry[[1L]], x, y, prx[[2L]], pry[[2L]],
            list(x = px, y = py, quick = bo$quick, pairs = pairs), opts,
            .hdf5_spec(output, ncol(x), q, post), fun),
      fun, backend, precision, devices, verbose)
    r <- .hdf5_result(output, list(colnames(x), cy))
  } else {
    r <- .engine_call(.Call(C_gpucor_cor, prx[[1L]], pry[[1L]], "bicor", "everything", NULL,
                            opts, NULL),
                      fun, backend, precision, devices, verbose)
    attributes(r) <- list(dim = dim(r))
    pw <- if (pairs) .Call(C_gpucor_bicor_pairs, x, prx[[2L]], y, pry[[2L]],
                           list(x = px, y = py, quick = bo$quick), r, opts) else c(0, 0, 0)
    if (any(nax)) r[nax, ] <- NA_real_
    if (any(nay)) r[, nay] <- NA_real_
    if (!is.null(colnames(x)) || !is.null(cy)) dimnames(r) <- list(colnames(x), cy)
  }
  zero_mad <- zero_mad | pw[2:3] != 0
  for (k in which(zero_mad)) .zero_mad_warning(c("x", "y")[k], bo$fallback)
  if (pw[1L] > 0)
    warning("Missing values generated in calculation of bicor. Likely cause: too many missing entries, zero median absolute deviation, or zero variance.",
            call. = FALSE)
  r
}

# The correlation input of the network functions: what the engine takes
# (the data, or bicor's prepared columns), or, for bicor with pairwise
# NAs (recomputed per pair on the CPU), NULL: the caller makes the dense
# bicor matrix first.
.network_input <- function(x, corType, use, bo, opts, warn = TRUE) {
  if (corType == "bicor") {
    if (bo$quick < 1 && anyNA(x)) return(NULL)
    pr <- .Call(C_gpucor_bicor_prep, x, .bicor_params(bo, FALSE), opts)
    zero_mad <- any(bitwAnd(pr[[2L]], 2L) != 0L)
    if (zero_mad && warn) .zero_mad_warning("x", bo$fallback)
    return(list(x = pr[[1L]], method = "bicor", use = "everything", rows = NULL,
                na_cols = bitwAnd(pr[[2L]], 1L) != 0L))
  }
  # WGCNA's cor(): the pairwise rule of stats; its constant columns are NA
  # on the diagonal too (Spearman is stats::cor's).  Without NA the pairs
  # are the columns: the product path, not the per-pair one
  if (use == "pairwise.complete.obs" && !anyNA(x)) use <- "everything"
  list(x = x, method = corType, use = use, rows = NULL,
       na_cols = if (corType == "pearson") NULL else logical(0))
}

.network_params <- function(epi, beta = 1, powers = numeric(0), tom = 0L, mean_denom = 0L)
  list(epilogue = as.integer(epi), beta = as.double(beta), powers = as.double(powers),
       tom = as.integer(tom), mean_denom = as.integer(mean_denom))

.network_use <- function(use) {
  use <- .stats_use(use)
  if (!use %in% c("everything", "pairwise.complete.obs", "all.obs"))
    stop("'use' must be \"pairwise.complete.obs\" (WGCNA's \"p\"), \"everything\" or \"all.obs\"",
         call. = FALSE)
  use
}

# The adjacency of a correlation matrix in R's arithmetic, as
# WGCNA::adjacency() makes it.
.adjacency_of <- function(r, type, power) {
  switch(type,
    unsigned = abs(r)^power,
    signed = ((1 + r) / 2)^power,
    "signed hybrid" = { r[!is.na(r) & r < 0] <- 0; r^power },
    keep_sign = sign(r) * abs(r)^power)
}

#' Network adjacency, as WGCNA::adjacency computes it
#'
#' `gpu_adjacency()` is [WGCNA::adjacency()], with its arguments in its
#' order, for `corFnc` `"cor"` (Pearson, or Spearman with
#' `corOptions = list(method = "spearman")`) and `"bicor"`: the
#' correlations between the columns of `x` made into \eqn{|r|^\beta}
#' (`"unsigned"`), \eqn{((1 + r) / 2)^\beta} (`"signed"`), \eqn{r^\beta}
#' for \eqn{r > 0}, else 0 (`"signed hybrid"`), or, with `type =
#' "distance"`, \eqn{(1 - (d / \max d)^2)^\beta}{(1 - (d / max d)^2)^beta}
#' of the distances between the genes ([gpu_dist()]).
#' The power is applied by the engine as the correlations come out (R's
#' `^`), so the correlation matrix is never stored besides the result.
#' Missing values are handled pairwise by default, as WGCNA's
#' `corOptions = list(use = "p")`; a constant column's row and column are
#' `NA`, the diagonal included, as WGCNA's `cor()` gives them.
#'
#' WGCNA's arguments and how they are taken: `selectCols` gives the
#' `ncol(x) x length(selectCols)` adjacencies of all genes with those
#' (made in R from the correlations); `corOptions` may hold `use`,
#' `method`, `maxPOutliers`, `quick`, `pearsonFallback` and `cosine`
#' (WGCNA's cosine correlation, not centred; complete data only), and
#' `nThreads`, `verbose`, `indent`, which change nothing; `weights` (a
#' matrix like `x`, or one weight per sample) give WGCNA's weighted
#' Pearson correlation (each column centred on its weighted mean,
#' multiplied by its weights; complete data only) and are ignored for
#' bicor, as WGCNA 1.72 ignores them; `distOptions` gives [gpu_dist()]'s
#' `method` and `p` for `type = "distance"`; `weightArgNames` is ignored
#' (a one-time message).  gpucor's own `corType`, `use`, `maxPOutliers`,
#' `quick` and `pearsonFallback`, given by name, take precedence over
#' `corFnc` and `corOptions`.
#'
#' @param datExpr a numeric matrix (samples in rows, genes in columns), a
#'   data frame, or a `SummarizedExperiment`/`ExpressionSet` (genes in
#'   rows; see "Orientation" in [gpucor]).
#' @param x the same as `datExpr`, by name (gpucor's earlier name).
#' @param selectCols `NULL`, or the columns (indices or names) whose
#'   adjacencies with all genes are wanted.
#' @param power the soft-thresholding power \eqn{\beta > 0} (default 6, 1
#'   for `"distance"`).
#' @param type `"unsigned"`, `"signed"`, `"signed hybrid"` or `"distance"`.
#' @param corFnc `"cor"` or `"bicor"` (or those functions).
#' @param corOptions a list (or WGCNA's string, `"use = 'p'"`) of the
#'   correlation's options, see Details.
#' @param weights `NULL`, or WGCNA's weights of the observations (Pearson).
#' @param distFnc,distOptions for `type = "distance"`: `"dist"` (computed
#'   by [gpu_dist()]) and its `method` and `p`.
#' @param weightArgNames accepted and ignored.
#' @param corType `"pearson"`, `"bicor"` or `"spearman"` (gpucor's
#'   name for the correlation; it overrides `corFnc`).
#' @param use `"pairwise.complete.obs"` (default, WGCNA's `"p"`),
#'   `"everything"` or `"all.obs"`, for Pearson and Spearman; bicor always
#'   works pairwise with `quick` as in [gpu_bicor()].
#' @param maxPOutliers,quick,pearsonFallback bicor's options ([gpu_bicor()]).
#' @param backend,precision,devices as for [gpu_cor()].
#' @param verbose as for [gpu_bicor()] (`TRUE`/`FALSE`, or WGCNA's number).
#' @param output `NULL` (default: the result in memory), or [gpu_hdf5()]:
#'   the matrix is written to an HDF5 file as the engine makes it (the power
#'   applied as in memory; the `NA` rows and columns, and bicor's pairs with
#'   missing values, done to each band of columns before it is written),
#'   never whole in memory, and returned as an `HDF5Array` with the values
#'   of the call in memory.  Not with `selectCols`, `type = "distance"` or
#'   bicor's `cosine`.
#' @return The n x n adjacency matrix with the column names of `x`
#'   (`n x length(selectCols)` with `selectCols`); with `output`, an
#'   `HDF5Array`.
#' @seealso [gpu_tom()], [gpu_soft_threshold()]
#' @examples
#' x <- matrix(rnorm(30 * 8), 30, 8)
#' gpu_adjacency(x, power = 6)
#' gpu_adjacency(x, type = "signed", power = 12)      # WGCNA's positions
#' gpu_adjacency(x, 1:2, corFnc = "bicor")            # genes 1, 2 against all
#' @export
gpu_adjacency <- function(datExpr, selectCols = NULL, type = "unsigned",
                          power = if (type == "distance") 1 else 6, corFnc = "cor",
                          corOptions = list(use = "p"), weights = NULL, distFnc = "dist",
                          distOptions = "method = 'euclidean'",
                          weightArgNames = c("weights.x", "weights.y"), x = NULL,
                          corType = c("pearson", "bicor", "spearman"),
                          use = "pairwise.complete.obs", maxPOutliers = 1, quick = 0,
                          pearsonFallback = "individual",
                          backend = getOption("gpucor.backend", "auto"),
                          precision = c("double", "single"),
                          devices = getOption("gpucor.devices", 0L),
                          verbose = getOption("gpucor.verbose", FALSE), output = NULL) {
  .check_common()
  if (missing(datExpr) == is.null(x))
    stop("give the expression data as 'datExpr' (or as 'x'), once", call. = FALSE)
  if (missing(datExpr)) datExpr <- x
  given <- .ref_given(c("corType", "use", "maxPOutliers", "quick", "pearsonFallback"))
  .ref_ignored("gpu_adjacency", .ref_given("weightArgNames"), .why_ignored)
  type <- .wgcna_choice(type[1L], c(.network_types, "distance"), "type")
  power <- .wgcna_power(power)
  if (!is.null(output) && (type == "distance" || !is.null(selectCols)))
    stop("output = gpu_hdf5() is not available with 'selectCols' or type = \"distance\"",
         call. = FALSE)
  if (type == "distance") {
    if (!is.null(selectCols))
      stop("'selectCols' cannot be used with type = \"distance\" (as in WGCNA)", call. = FALSE)
    return(.adjacency_distance(datExpr, power, distFnc, distOptions, backend, precision,
                               devices, verbose))
  }
  # WGCNA's corFnc and corOptions, unless gpucor's own arguments are given
  co <- .ref_cor_options(corFnc, corOptions, "gpu_adjacency")
  corType <- if ("corType" %in% given) .wgcna_choice(corType[1L], .cor_types, "corType")
             else co$corType
  if (!"use" %in% given && !is.null(co$use)) use <- co$use
  for (a in c("maxPOutliers", "quick", "pearsonFallback"))
    if (!a %in% given && !is.null(co[[a]])) assign(a, co[[a]])
  use <- .network_use(use)
  bo <- .bicor_opts(maxPOutliers, quick, pearsonFallback)
  x <- .wgcna_matrix(datExpr, "datExpr")
  if (use == "all.obs" && anyNA(x)) stop("missing observations in cov/cor")
  W <- .ref_weights(weights, x, corType, "gpu_adjacency")
  cosine <- isTRUE(co$cosine)
  sel <- if (!is.null(selectCols)) x[, selectCols, drop = FALSE]
  if (!is.null(sel) || (cosine && corType == "bicor")) {
    if (!is.null(output))
      stop("output = gpu_hdf5() is not available with bicor's 'cosine'", call. = FALSE)
    # a rectangular result, or bicor's cosine preparation: the correlations
    # first, then the adjacency in R's arithmetic
    r <- if (corType == "bicor")
      .bicor_run(x, sel, bo, TRUE, TRUE, backend, precision, devices, verbose, "gpu_adjacency",
                 cosine = c(cosine, cosine))
    else if (!is.null(W) || cosine)
      .pearson_prep_product(x, W, cosine, sel, if (!is.null(W)) W[, selectCols, drop = FALSE], backend, precision,
                            devices, verbose)
    else gpu_cor(x, sel, use = use, method = corType, backend = backend, precision = precision,
                 devices = devices, verbose = verbose)
    a <- .adjacency_of(r, type, power)
    dimnames(a) <- list(colnames(x), if (is.null(sel)) colnames(x) else colnames(sel))
    return(a)
  }
  if (!is.null(W) || cosine) {
    # weighted or cosine Pearson: the engine's products of prepared columns
    inp <- .pearson_prep(x, W, cosine)
    backend <- .resolve_backend(backend, work = as.double(ncol(x))^2 / 2 * nrow(x))
    return(.network_call(inp, 1L, .network_params(.epi_adjacency[[type]], power),
                         .engine_opts(backend, precision, verbose, devices), backend,
                         precision, devices, verbose, "gpu_adjacency", colnames(x),
                         inp$na_cols, output = output))
  }
  .adjacency_run(x, power, type, corType, use, bo, backend, precision, devices, verbose,
                 output)
}

# WGCNA's corFnc ("cor" or "bicor", by name) and corOptions (a list, or a
# string of arguments as WGCNA takes it) as gpucor's settings: corType,
# use, bicor's options, cosine.  Options that change nothing here
# (nThreads, verbose, indent) are dropped; any other is an error.
.ref_cor_options <- function(corFnc, corOptions, fun) {
  if (is.function(corFnc)) {
    corFnc <- if (identical(corFnc, stats::cor)) "cor"
              else if (requireNamespace("WGCNA", quietly = TRUE) &&
                       identical(corFnc, WGCNA::cor)) "cor"
              else if (requireNamespace("WGCNA", quietly = TRUE) &&
                       identical(corFnc, WGCNA::bicor)) "bicor"
              else "another function"
  }
  if (!is.character(corFnc) || length(corFnc) != 1L || !corFnc %in% c("cor", "bicor"))
    stop(sprintf("%s(): 'corFnc' must be \"cor\" or \"bicor\" (gpucor computes those; use corType for Spearman)",
                 fun), call. = FALSE)
  if (is.character(corOptions)) {
    corOptions <- if (length(corOptions) == 1L && nzchar(trimws(corOptions)))
      tryCatch(eval(parse(text = paste0("list(", corOptions, ")")), baseenv()),
               error = function(e) stop(sprintf("%s(): 'corOptions' could not be read as arguments: %s",
                                                fun, conditionMessage(e)), call. = FALSE))
      else list()
  }
  if (is.null(corOptions)) corOptions <- list()
  if (!is.list(corOptions) || (length(corOptions) && is.null(names(corOptions))))
    stop(sprintf("%s(): 'corOptions' must be a named list (or WGCNA's string of arguments)", fun),
         call. = FALSE)
  out <- list(corType = if (corFnc == "bicor") "bicor" else "pearson")
  known <- c("use", "method", "maxPOutliers", "quick", "pearsonFallback", "cosine", "nThreads",
             "verbose", "indent")
  bad <- setdiff(names(corOptions), known)
  if (length(bad))
    stop(sprintf("%s(): corOptions %s not supported (gpucor takes %s)", fun,
                 paste0("'", bad, "'", collapse = ", "),
                 paste0("'", known[seq_len(6L)], "'", collapse = ", ")), call. = FALSE)
  if (!is.null(corOptions$method)) {
    if (corFnc != "cor") stop(sprintf("%s(): corOptions 'method' goes with corFnc = \"cor\"", fun),
                              call. = FALSE)
    out$corType <- .wgcna_choice(corOptions$method, c("pearson", "spearman"), "corOptions$method")
  }
  for (a in c("use", "maxPOutliers", "quick", "pearsonFallback", "cosine"))
    out[a] <- list(corOptions[[a]])
  if (!is.null(out$cosine) && (!is.logical(out$cosine) || length(out$cosine) != 1L ||
                                is.na(out$cosine)))
    stop(sprintf("%s(): corOptions 'cosine' must be TRUE or FALSE", fun), call. = FALSE)
  if (isTRUE(out$cosine) && out$corType == "spearman")
    stop(sprintf("%s(): cosine goes with Pearson or bicor", fun), call. = FALSE)
  out
}

# WGCNA's 'weights' of the expression data (a matrix of x's shape, or a
# vector with one weight per sample): NULL, or the matrix.  Applied to
# Pearson's correlation; WGCNA 1.72 ignores them for bicor (so does
# gpucor, saying so once).
.ref_weights <- function(weights, x, corType, fun) {
  if (length(weights) == 0L) return(NULL)
  if (corType == "bicor") {
    .ref_ignored(fun, "weights", list(weights = "WGCNA 1.72 computes bicor without them too"))
    return(NULL)
  }
  if (corType != "pearson") stop(sprintf("%s(): 'weights' go with Pearson's correlation", fun),
                                 call. = FALSE)
  if (is.data.frame(weights)) weights <- as.matrix(weights)
  if (is.null(dim(weights)) && length(weights) == nrow(x))
    weights <- matrix(weights, nrow(x), ncol(x))
  if (!is.numeric(weights) || !identical(as.integer(dim(weights)), dim(x)))
    stop(sprintf("%s(): 'weights' must be a numeric matrix of the dimensions of the expression data (or one weight per sample)",
                 fun), call. = FALSE)
  if (anyNA(x) || any(!is.finite(weights)))
    stop(sprintf("%s(): 'weights' are applied to complete data: remove the missing values (and non-finite weights)",
                 fun), call. = FALSE)
  if (any(weights < 0)) stop("All weights must be non-negative.", call. = FALSE)
  .as_double_matrix(weights)
}

# Pearson's columns, weighted (WGCNA's weights: each column centred on its
# weighted mean and multiplied by its weights) and/or cosine (not
# centred), to unit length: their products are WGCNA's weighted or cosine
# correlations, made by the engine's bicor path (products of prepared
# columns).  Complete data only.  The network input .network_call() takes.
.pearson_prep <- function(x, W = NULL, cosine = FALSE) {
  if (anyNA(x))
    stop("cosine correlations are computed here on complete data only: remove the missing values",
         call. = FALSE)
  m <- if (cosine) numeric(ncol(x))
       else if (is.null(W)) colMeans(x) else colSums(W * x) / colSums(W)
  a <- x - rep(m, each = nrow(x))
  if (!is.null(W)) a <- W * a
  nrm <- sqrt(colSums(a^2))
  na <- !is.finite(nrm) | nrm == 0
  a <- a / rep(ifelse(na, 1, nrm), each = nrow(x))
  a[, na] <- 0
  list(x = a, method = "bicor", use = "everything", rows = NULL, na_cols = na)
}

# The weighted or cosine Pearson correlations between the columns of x and
# those of y (weights W, Wy), as .pearson_prep() prepares them.
.pearson_prep_product <- function(x, W, cosine, y, Wy, backend, precision, devices, verbose,
                                  fun = "gpu_adjacency") {
  px <- .pearson_prep(x, W, cosine)
  py <- .pearson_prep(y, Wy, cosine)
  backend <- .resolve_backend(backend, as.double(ncol(x)) * ncol(y) * nrow(x))
  r <- .engine_call(.Call(C_gpucor_cor, px$x, py$x, "bicor", "everything", NULL,
                          .engine_opts(backend, precision, verbose, devices, fun = fun), NULL),
                    fun, backend, precision, devices, verbose)
  attributes(r) <- list(dim = dim(r))
  r[px$na_cols, ] <- NA_real_
  r[, py$na_cols] <- NA_real_
  r
}

# WGCNA's adjacency of type "distance": 1 - (d / max(d))^2 to the power,
# d the distances between the columns (genes) by gpu_dist() (distFnc
# "dist"; distOptions its method and p, as a list or WGCNA's string).
.adjacency_distance <- function(datExpr, power, distFnc, distOptions, backend, precision,
                                devices, verbose) {
  if (!identical(distFnc, "dist"))
    stop("gpu_adjacency(): 'distFnc' must be \"dist\" (computed by gpu_dist())", call. = FALSE)
  if (is.character(distOptions))
    distOptions <- eval(parse(text = paste0("list(", distOptions, ")")), baseenv())
  if (!is.list(distOptions) || !all(names(distOptions) %in% c("method", "p")))
    stop("gpu_adjacency(): 'distOptions' may give dist()'s 'method' and 'p'", call. = FALSE)
  x <- .wgcna_matrix(datExpr, "datExpr")
  d <- gpu_dist(t(x), method = if (is.null(distOptions$method)) "euclidean" else distOptions$method,
                p = if (is.null(distOptions$p)) 2 else distOptions$p, backend = backend,
                precision = precision, devices = devices, verbose = verbose)
  if (any(d < 0, na.rm = TRUE))
    warning("gpu_adjacency(): the distance function returned (some) negative values", call. = FALSE)
  a <- 1 - as.matrix((d / max(d, na.rm = TRUE))^2)
  a^power
}

# gpu_adjacency() after its checks (and gpu_tom()'s TOMType "none" into a
# file).  With 'output' the matrix goes to that file and its HDF5Array
# comes back; 'post' (.hdf5_post()) then adds steps after R's own (gpu_tom's
# unit diagonal, and 1 - A for a 'dist').
.adjacency_run <- function(x, power, type, corType, use, bo, backend, precision, devices,
                           verbose, output = NULL, post = .hdf5_post()) {
  p <- ncol(x)
  .memory_guard(8 * as.double(p) * p * is.null(output),
                sprintf("gpu_adjacency(): the %d x %d result", p, p),
                "gpu_soft_threshold() and gpu_tom() never hold it; output = gpu_hdf5() writes it to a file.")
  backend <- .resolve_backend(backend, work = as.double(p) * p / 2 * nrow(x))
  opts <- .engine_opts(backend, precision, verbose, devices)
  inp <- .network_input(x, corType, use, bo, opts)
  if (is.null(inp)) {
    if (!is.null(output)) {
      # the power on the host, to the bicor values as .adjacency_of() takes it
      post$epi <- .epi_adjacency[[type]]
      post$beta <- power
      return(.bicor_run(x, NULL, bo, TRUE, TRUE, backend, precision, devices, verbose,
                        "gpu_adjacency", output, post))
    }
    r <- .bicor_run(x, NULL, bo, TRUE, TRUE, backend, precision, devices, verbose,
                    "gpu_adjacency")
    a <- .adjacency_of(r, type, power)
  } else {
    na_cols <- if (is.null(inp$na_cols)) .constant_cols(x) else inp$na_cols
    return(.network_call(inp, 1L, .network_params(.epi_adjacency[[type]], power), opts,
                         backend, precision, devices, verbose, "gpu_adjacency",
                         colnames(x), na_cols, output = output, post = post))
  }
  dimnames(a) <- list(colnames(x), colnames(x))
  a
}

# The engine's result, finished where it was made (a large result passed
# back through a closure would be copied at its next attribute change):
# NA rows and columns (na_cols), dimnames from labels, or the attributes of
# a 'dist' of 1 - TOM; a warning when genes with NA adjacencies made TOM
# values NA.  With 'output' the matrix (a 'dist' as its full matrix) goes
# to that file, the NA rows and columns and the steps of 'post'
# (.hdf5_post()) done by the file sink, and its HDF5Array comes back.
.network_call <- function(inp, what, params, opts, backend, precision, devices, verbose, fun,
                          labels = NULL, na_cols = NULL, call = NULL, size = NULL,
                          output = NULL, post = .hdf5_post()) {
  spec <- NULL
  if (!is.null(output)) {
    if (any(na_cols)) post$na_row <- post$na_col <- na_cols
    g <- if (is.null(inp$method)) nrow(inp$x) else ncol(inp$x)
    spec <- .hdf5_spec(output, g, g, post)
  }
  # the TOM runs on one GPU: its adjacency stays resident on the first of
  # 'devices' (src/wgcna.c)
  tom <- what %in% c(3L, 4L)
  r <- .engine_call(.Call(C_gpucor_network, inp$x, what, inp$method, inp$use, inp$rows, params,
                          opts, spec),
                    fun, backend, precision, devices, verbose,
                    report = function(s, th) .engine_report(
                      fun, th, precision, s,
                      if (tom) (if (identical(devices, -1L)) 0L else devices[1L]) else devices,
                      if (tom && (identical(devices, -1L) || length(devices) > 1L))
                        "gpu_tom() uses one GPU, the first of 'devices'"))
  bad <- attr(r, "bad")
  # stats::cor's warning, which WGCNA's Spearman (stats' cor) passes on
  if (isTRUE(attr(r, "sd0")) && identical(inp$method, "spearman") && what == 1L)
    warning("the standard deviation is zero", call. = FALSE)
  if (!is.null(output)) {
    r <- .hdf5_result(output, if (!is.null(labels)) list(labels, labels))
  } else if (what == 4L) {
    attributes(r) <- list(Size = size, Labels = labels, Diag = FALSE, Upper = FALSE,
                          method = "1 - TOM", call = call, class = "dist")
  } else {
    attributes(r) <- list(dim = dim(r))
    if (any(na_cols)) {
      r[na_cols, ] <- NA_real_
      r[, na_cols] <- NA_real_
    }
    if (what != 2L && !is.null(labels)) dimnames(r) <- list(labels, labels)
  }
  if (!is.null(bad))
    warning(sprintf("%d gene%s with NA adjacencies (a constant gene, or pairs of genes with fewer than two common samples) make their TOM values NA -- a constant gene makes them all NA; remove such genes first (WGCNA::goodSamplesGenes)",
                    as.integer(bad), if (bad == 1) "" else "s"), call. = FALSE)
  r
}

# WGCNA's scale-free fit of connectivities k (scaleFreeFitIndex): k cut
# into nBreaks equal bins (cut()'s breaks), the log10 of each bin's mean k
# (an empty bin, or one whose mean is 0, takes the bin's midpoint) against
# the log10 of its frequency plus 1e-9; R^2 and slope of that line, and
# the adjusted R^2 of the fit with an exponential term.
.scale_free_fit <- function(k, nBreaks, removeFirst) {
  bins <- cut(k, nBreaks)
  dk <- tapply(k, bins, mean)
  p_dk <- as.vector(tapply(k, bins, length) / length(k))
  # hist()'s midpoints of the equal bins over range(k)
  b1 <- seq(min(k), max(k), length.out = nBreaks + 1)
  mids <- 0.5 * (b1[-1L] + b1[-(nBreaks + 1L)])
  dk <- ifelse(is.na(dk), mids, dk)
  dk <- ifelse(dk == 0, mids, dk)
  p_dk <- ifelse(is.na(p_dk), 0, p_dk)
  log_dk <- as.vector(log10(dk))
  if (removeFirst) {
    p_dk <- p_dk[-1L]
    log_dk <- log_dk[-1L]
  }
  log_p <- as.numeric(log10(p_dk + 1e-09))
  fit1 <- summary(stats::lm(log_p ~ log_dk))
  fit2 <- summary(stats::lm(log_p ~ log_dk + I(10^log_dk)))
  c(fit1$r.squared, fit1$coefficients[2L, 1L], fit2$adj.r.squared)
}

#' The soft-thresholding power scan, as WGCNA::pickSoftThreshold makes it
#'
#' `gpu_soft_threshold()` computes, for every power in `powerVector`, each
#' gene's connectivity \eqn{k_i = \sum_{j \ne i} a_{ij}}{k_i = sum over j != i of a_ij} in the network of
#' that power, and WGCNA's scale-free fit of those connectivities: the
#' `fitIndices` table and the `powerEstimate` of
#' [WGCNA::pickSoftThreshold()] (the lowest power whose `SFT.R.sq` exceeds
#' `RsquaredCut`, `NA` when none does).  The connectivities of all powers
#' are one reduction over the correlation tiles as the engine makes them
#' (the powers built as WGCNA builds them, \eqn{a^{w_t} = a^{w_{t-1}}
#' a^{w_t - w_{t-1}}}): the n x n matrix is never stored, in host or device
#' memory.  Missing values are handled pairwise, as WGCNA's default.
#'
#' The arguments are [WGCNA::pickSoftThreshold()]'s, in its order:
#' `dataIsExpr = FALSE` takes `data` as a similarity of the genes (square,
#' symmetric, values in \[-1, 1\]; its diagonal taken as 1), whose powers
#' are the networks (computed in R); `corFnc` and `corOptions` are read as
#' for [gpu_adjacency()] (`"cor"` or `"bicor"`, and `use`, `method`,
#' `maxPOutliers`, `quick`, `pearsonFallback`, `cosine`); `weights` give
#' WGCNA's weighted Pearson correlation (complete data; ignored for bicor,
#' as WGCNA ignores them); `blockSize`, `gcInterval` and `indent` are
#' ignored (gpucor never holds the matrix; a one-time message says so);
#' `verbose` takes WGCNA's numbers.  gpucor's own `corType`, `use`,
#' `maxPOutliers`, `quick` and `pearsonFallback`, given by name, take
#' precedence over `corFnc` and `corOptions`.
#'
#' @param data expression data (samples in rows, genes in columns: a
#'   matrix, data frame, or `SummarizedExperiment`/`ExpressionSet` with
#'   genes in rows; see "Orientation" in [gpucor]), or with `dataIsExpr =
#'   FALSE` a similarity matrix (also on disk, read as `gpu_tom()`'s
#'   `adjacency` is).
#' @param x the same as `data`, by name (gpucor's earlier name).
#' @param dataIsExpr `TRUE` (expression data) or `FALSE` (a similarity).
#' @param weights `NULL`, or WGCNA's weights of the observations (Pearson).
#' @param blockSize,gcInterval,indent accepted and ignored.
#' @param corFnc,corOptions WGCNA's correlation function (`"cor"`,
#'   `"bicor"`) and its options, as for [gpu_adjacency()].
#' @param corType `"pearson"`, `"bicor"` or `"spearman"` (overrides
#'   `corFnc`).
#' @param use `"pairwise.complete.obs"` (default, WGCNA's `"p"`),
#'   `"everything"` or `"all.obs"`.
#' @param maxPOutliers,quick,pearsonFallback bicor's options ([gpu_bicor()]).
#' @param backend,precision,devices as for [gpu_cor()].
#' @param verbose as for [gpu_bicor()].
#' @param powerVector the powers (positive; sorted as WGCNA sorts them).
#' @param networkType `"unsigned"`, `"signed"` or `"signed hybrid"`.
#' @param RsquaredCut,nBreaks,removeFirst,moreNetworkConcepts as in
#'   [WGCNA::pickSoftThreshold()].
#' @return A list: `powerEstimate`, and `fitIndices`, a data frame with
#'   columns `Power`, `SFT.R.sq`, `slope`, `truncated.R.sq`, `mean.k.`,
#'   `median.k.`, `max.k.` (and `Density`, `Centralization`,
#'   `Heterogeneity` with `moreNetworkConcepts`).  Unlike WGCNA it prints
#'   nothing.
#' @seealso [gpu_tom()], [gpu_adjacency()]
#' @examples
#' x <- matrix(rnorm(40 * 60), 40, 60)
#' gpu_soft_threshold(x, powerVector = 1:6)$fitIndices
#' # WGCNA's call, positions and all
#' gpu_soft_threshold(x, TRUE, NULL, 0.8, 1:6)$powerEstimate
#' @export
gpu_soft_threshold <- function(data, dataIsExpr = TRUE, weights = NULL, RsquaredCut = 0.85,
                               powerVector = c(seq(1, 10, by = 1), seq(12, 20, by = 2)),
                               removeFirst = FALSE, nBreaks = 10, blockSize = NULL,
                               corFnc = "cor", corOptions = list(use = "p"),
                               networkType = "unsigned", moreNetworkConcepts = FALSE,
                               gcInterval = NULL, verbose = getOption("gpucor.verbose", FALSE),
                               indent = 0, x = NULL, corType = "pearson",
                               use = "pairwise.complete.obs", maxPOutliers = 1, quick = 0,
                               pearsonFallback = "individual",
                               backend = getOption("gpucor.backend", "auto"),
                               precision = c("double", "single"),
                               devices = getOption("gpucor.devices", 0L)) {
  .check_common()
  .ref_ignored("gpu_soft_threshold", .ref_given(c("blockSize", "gcInterval", "indent")),
               .why_ignored)
  if (missing(data) == is.null(x))
    stop("give the data as 'data' (or as 'x'), once", call. = FALSE)
  if (missing(data)) data <- x
  if (!is.logical(dataIsExpr) || length(dataIsExpr) != 1L || is.na(dataIsExpr))
    stop("'dataIsExpr' must be TRUE or FALSE (the powers are the fifth argument, 'powerVector', as in WGCNA::pickSoftThreshold())",
         call. = FALSE)
  given <- .ref_given(c("corType", "use", "maxPOutliers", "quick", "pearsonFallback"))
  if (!is.numeric(powerVector) || length(powerVector) == 0L || anyNA(powerVector) ||
      any(!is.finite(powerVector)) || any(powerVector <= 0))
    stop("'powerVector' must hold positive numbers", call. = FALSE)
  pv <- sort(powerVector)                    # WGCNA's Power column keeps its type
  powerVector <- as.double(pv)
  networkType <- .wgcna_choice(networkType, .network_types, "networkType")
  co <- .ref_cor_options(corFnc, corOptions, "gpu_soft_threshold")
  corType <- if ("corType" %in% given) .wgcna_choice(corType, .cor_types, "corType")
             else co$corType
  if (!"use" %in% given && !is.null(co$use)) use <- co$use
  for (a in c("maxPOutliers", "quick", "pearsonFallback"))
    if (!a %in% given && !is.null(co[[a]])) assign(a, co[[a]])
  cosine <- isTRUE(co$cosine)
  if (!is.numeric(RsquaredCut) || length(RsquaredCut) != 1L || is.na(RsquaredCut))
    stop("'RsquaredCut' must be a number", call. = FALSE)
  if (!is.numeric(nBreaks) || length(nBreaks) != 1L || is.na(nBreaks) || nBreaks < 4)
    stop("'nBreaks' must be a whole number of at least 4", call. = FALSE)
  use <- .network_use(use)
  bo <- .bicor_opts(maxPOutliers, quick, pearsonFallback)
  steps <- diff(c(0, powerVector))
  # WGCNA's connectivities from blocks of the dense adjacency a (columns b)
  k_dense <- function(k, a, b) {
    a[cbind(b, seq_along(b))] <- 1
    cur <- 1
    for (t in seq_along(powerVector)) {
      cur <- cur * a^steps[t]
      k[b, t] <- colSums(cur, na.rm = TRUE) - 1
    }
    k
  }
  if (!dataIsExpr) {
    # a similarity of the genes (WGCNA's checkSimilarity), its powers as
    # they are: no network type applies
    if (length(weights))
      stop("'weights' can only be used when 'data' is expression data (dataIsExpr = TRUE)",
           call. = FALSE)
    S <- .check_adjacency(data, TRUE, "data")
    p <- ncol(S)
    if (p < 3L) stop("the scan needs at least 3 genes (columns of 'data')", call. = FALSE)
    k <- k_dense(matrix(0, p, length(powerVector)), S, seq_len(p))
  } else {
    x <- .wgcna_matrix(data, "data")
    if (use == "all.obs" && anyNA(x)) stop("missing observations in cov/cor")
    W <- .ref_weights(weights, x, corType, "gpu_soft_threshold")
    p <- ncol(x)
    if (p < 3L) stop("the scan needs at least 3 genes (columns of 'data')", call. = FALSE)
    backend <- .resolve_backend(backend, work = as.double(p) * p / 2 * nrow(x))
    opts <- .engine_opts(backend, precision, verbose, devices)
    inp <- if (corType == "pearson" && (cosine || !is.null(W))) .pearson_prep(x, W, cosine)
           else if (corType == "bicor" && cosine) NULL
           else .network_input(x, corType, use, bo, opts)
    if (is.null(inp)) {
      # bicor with pairwise NAs, or cosine bicor: blocks of columns of the
      # dense bicor
      k <- matrix(0, p, length(powerVector))
      w <- max(1L, floor(2^27 / (8 * p)))
      for (s in seq(1L, p, by = w)) {
        b <- s:min(p, s + w - 1L)
        r <- .bicor_run(x, x[, b, drop = FALSE], bo, TRUE, TRUE, backend, precision, devices,
                        FALSE, "gpu_soft_threshold", cosine = c(cosine, cosine))
        k <- k_dense(k, .adjacency_of(r, networkType, 1), b)
      }
    } else {
      k <- .network_call(inp, 2L, .network_params(.epi_adjacency[[networkType]], 1, powerVector),
                         opts, backend, precision, devices, verbose, "gpu_soft_threshold")
    }
  }
  fit <- t(vapply(seq_along(powerVector), function(t)
    .scale_free_fit(k[, t], nBreaks, removeFirst), numeric(3)))
  out <- data.frame(Power = pv, SFT.R.sq = fit[, 1L], slope = fit[, 2L],
                    truncated.R.sq = fit[, 3L], mean.k. = colMeans(k),
                    median.k. = apply(k, 2L, stats::median), max.k. = apply(k, 2L, max))
  if (moreNetworkConcepts) {
    out$Density <- colSums(k) / (p * (p - 1))
    out$Centralization <- p / ((p - 1) * (p - 2)) * (apply(k, 2L, max) - colMeans(k))
    out$Heterogeneity <- sqrt(p * colSums(k^2) / colSums(k)^2 - 1)
  }
  ok <- which(out$SFT.R.sq > RsquaredCut)
  list(powerEstimate = pv[if (length(ok)) min(ok) else NA_integer_], fitIndices = out)
}

#' Topological overlap, as WGCNA computes it -- the whole network in one block
#'
#' `gpu_tom(datExpr)` is [WGCNA::TOMsimilarityFromExpr()] and
#' `gpu_tom(adjacency = A)` (or `adjMat = A`) is [WGCNA::TOMsimilarity()]:
#' the same arguments (`TOMsimilarityFromExpr()`'s in its order), defaults
#' and values, every `networkType`, `TOMType` and `TOMDenom`.  With \eqn{A} the adjacency (diagonal 1), \eqn{k_i = \sum_j
#' |a_{ij}|}{k_i = sum_j |a_ij|} and \eqn{L = A A}, the TOM of a pair is
#' \eqn{(L_{ij} - a_{ij}) / (\min(k_i, k_j) - a_{ij})}{(L_ij - a_ij) /
#' (min(k_i, k_j) - a_ij)} ("unsigned"; "signed" takes
#' absolute values; "signed Nowick" keeps the sign; the "2" types are
#' WGCNA's newer \eqn{(a_{ij} + (L_{ij} - 2 a_{ij}) / (den - 1)) / 2};
#' where a gene's connectivity outside the pair is tiny, \eqn{den - 1} and
#' \eqn{L_{ij} - 2 a_{ij}} are differences of nearly equal sums, so such a
#' value depends on the order of summation -- WGCNA's and gpucor's, each
#' rounding correctly, may differ there by about \eqn{10^{-16} (k + 1) / (den
#' - 1)} relative, e.g. 1e-5 when \eqn{den - 1} is 1e-11).  As
#' in WGCNA, a signed TOM of an unsigned network, and every "signed Nowick",
#' is made of the adjacency \eqn{sign(r) |r|^\beta}.
#'
#' On the GPU the adjacency is made by the correlation engine straight into
#' device memory and stays there (n^2 doubles: 20 GB for 50000 genes;
#' floats with `precision = "single"`); \eqn{A A} is computed by cuBLAS panel
#' by panel against it and each panel turned into TOM values on the device,
#' then copied into the result.  `dist = TRUE` returns \eqn{1 - TOM} as a
#' `dist` (half the memory of the matrix; what [gpu_hclust()] or
#' `fastcluster::hclust()` take next), made without the matrix.  The CPU
#' engine holds the adjacency in host memory and computes the product with
#' its own tiled kernel (half of it: the result is symmetric).
#'
#' A gene whose adjacencies hold an `NA` (a constant gene, or a pair with
#' fewer than two common samples) makes its TOM values `NA`; a constant gene
#' makes every off-diagonal value `NA`, as in WGCNA (which drops such genes
#' first in `blockwiseModules()`); a warning says so.
#'
#' WGCNA's further arguments: `weights` (a matrix like `datExpr`, or one
#' weight per sample) give WGCNA's weighted Pearson correlation (each gene
#' centred on its weighted mean and multiplied by its weights; complete
#' data only), and are ignored for bicor, as WGCNA 1.72 ignores them;
#' `cosineCorrelation = TRUE` makes the correlations cosine ones, not
#' centred (Pearson: \eqn{x'y / (|x| |y|)}{x'y / (|x| |y|)}; bicor:
#' its weights applied to the values themselves; complete data only); the
#' prepared columns of both go to the engine's product as bicor's do.
#' `suppressTOMForZeroAdjacencies` (signed TOM types only, as in WGCNA)
#' sets the TOM to 0 where the adjacency is 0, `NA` or, for an adjacency
#' made with its sign, negative; `suppressNegativeTOM` (the "signed
#' Nowick" types only) sets negative TOM values to 0.
#' `replaceMissingAdjacencies = TRUE` replaces `NA` adjacencies by 0
#' before the TOM is made (its documented meaning; WGCNA 1.72's
#' `TOMsimilarityFromExpr()` leaves them, so a constant gene still makes
#' its whole TOM `NA` there).  `nThreads > 0` sets the CPU engine's threads
#' for the call (option `gpucor.threads`); `useInternalMatrixAlgebra` and
#' `indent` are ignored (a one-time message); `verbose` takes WGCNA's
#' numbers (`0` is `FALSE`).  The arguments not in WGCNA (`x`,
#' `adjacency`, `adjMat`, `dist`, `backend`, `precision`, `devices`,
#' `output`) come after WGCNA's and are matched by name.
#'
#' @param datExpr expression data (samples in rows, genes in columns), or
#'   a `SummarizedExperiment`/`ExpressionSet` (genes in rows; see
#'   "Orientation" in [gpucor]); or `NULL` with `adjacency`.
#' @param x the same as `datExpr`, by name (gpucor's earlier name).
#' @param weights `NULL`, or WGCNA's weights of the observations (Pearson).
#' @param corType `"pearson"` or `"bicor"`.
#' @param power the soft-thresholding power \eqn{\beta > 0}.
#' @param cosineCorrelation,replaceMissingAdjacencies,suppressTOMForZeroAdjacencies,suppressNegativeTOM
#'   as in [WGCNA::TOMsimilarityFromExpr()], see Details.
#' @param useInternalMatrixAlgebra,indent accepted and ignored.
#' @param nThreads `0`, or the CPU engine's threads for this call.
#' @param verbose as for [gpu_bicor()].
#' @param adjMat the same as `adjacency` ([WGCNA::TOMsimilarity()]'s name).
#' @param networkType `"unsigned"`, `"signed"` or `"signed hybrid"`.
#' @param TOMType one of `"none"`, `"unsigned"`, `"signed"`, `"signed Nowick"`,
#'   `"unsigned 2"`, `"signed 2"`, `"signed Nowick 2"`; default `"signed"`
#'   from `x` (as `TOMsimilarityFromExpr`), `"unsigned"` from `adjacency`
#'   (as `TOMsimilarity`).  `"none"` returns the adjacency.
#' @param TOMDenom `"min"` or `"mean"`.
#' @param dist `TRUE`: \eqn{1 - TOM} as a `dist` object.
#' @param adjacency a square symmetric adjacency matrix with values in
#'   \[0, 1\] (\[-1, 1\] for `TOMType = "signed"`); `NA` counts as 0.
#'   An on-disk matrix (an `HDF5Matrix`, such as
#'   `gpu_adjacency(output = gpu_hdf5(...))` writes, another `DelayedMatrix`,
#'   or a `bigmemory::big.matrix`) is read in whole chunks of the file,
#'   blocks of DelayedArray's block size, into the one double matrix the
#'   engine is given (it must be whole for the TOM's products), never
#'   densified by `as.matrix()`; the result is the matrix in memory's.
#' @param maxPOutliers,quickCor,pearsonFallback bicor's options
#'   ([gpu_bicor()]'s `quick` is `quickCor` here, as in WGCNA).
#' @param backend,precision as for [gpu_cor()].
#' @param devices which GPUs may be used, as for [gpu_cor()]; but the GPU
#'   engine runs `gpu_tom()` -- the adjacency and the TOM made from it --
#'   on one GPU, the first of `devices` (the first visible one for
#'   `"all"`): the adjacency stays resident in that GPU's memory between
#'   the two products.  `verbose = TRUE` names the GPU that ran.
#' @param output `NULL` (default: the result in memory), or [gpu_hdf5()]:
#'   the TOM matrix is written to an HDF5 file panel by panel as the engine
#'   makes it, never whole in host memory, and returned as an `HDF5Array`
#'   with the values of the call in memory.  With `dist = TRUE` the file
#'   holds the full n x n matrix of \eqn{1 - TOM}, diagonal 0 (what
#'   `gpu_dist(output =)` writes for a `dist`).  The CPU engine still holds
#'   the adjacency in host memory (n^2 doubles), the GPU engine in device
#'   memory; with `corType = "bicor"` and missing values the adjacency is
#'   made in host memory on either engine (its pairs are recomputed on the
#'   CPU).  `TOMType = "none"` writes the adjacency as it comes out of the
#'   engine.
#' @return The n x n TOM matrix (dimnames from the gene names, diagonal 1),
#'   or with `dist = TRUE` a `dist` of \eqn{1 - TOM}; with `output`, an
#'   `HDF5Array` of either.
#' @seealso [gpu_soft_threshold()], [gpu_adjacency()], [gpu_hclust()]
#' @examples
#' x <- matrix(rnorm(30 * 10), 30, 10)
#' tom <- gpu_tom(x, power = 6)
#' d <- gpu_tom(x, power = 6, dist = TRUE)
#' @export
gpu_tom <- function(datExpr = NULL, weights = NULL, corType = "pearson",
                    networkType = "unsigned", power = 6,
                    TOMType = if (is.null(adjacency)) "signed" else "unsigned",
                    TOMDenom = "min", maxPOutliers = 1, quickCor = 0,
                    pearsonFallback = "individual", cosineCorrelation = FALSE,
                    replaceMissingAdjacencies = FALSE, suppressTOMForZeroAdjacencies = FALSE,
                    suppressNegativeTOM = FALSE, useInternalMatrixAlgebra = FALSE,
                    nThreads = 0, verbose = getOption("gpucor.verbose", FALSE), indent = 0,
                    x = NULL, adjacency = NULL, adjMat = NULL, dist = FALSE,
                    backend = getOption("gpucor.backend", "auto"),
                    precision = c("double", "single"),
                    devices = getOption("gpucor.devices", 0L), output = NULL) {
  .check_common()
  .ref_threads(nThreads)
  .ref_ignored("gpu_tom", .ref_given(c("useInternalMatrixAlgebra", "indent")), .why_ignored)
  if (!is.null(datExpr) && !is.null(x))
    stop("give the expression data once: as 'datExpr' (or as 'x')", call. = FALSE)
  if (is.null(x)) x <- datExpr
  if (!is.null(adjMat)) {
    if (!is.null(adjacency)) stop("give the adjacency once: as 'adjacency' (or as 'adjMat')",
                                  call. = FALSE)
    adjacency <- adjMat
  }
  TOMType <- .wgcna_choice(TOMType, .tom_types, "TOMType")
  TOMDenom <- .wgcna_choice(TOMDenom, c("min", "mean"), "TOMDenom")
  for (a in c("dist", "cosineCorrelation", "replaceMissingAdjacencies",
              "suppressTOMForZeroAdjacencies", "suppressNegativeTOM")) {
    v <- get(a)
    if (!is.logical(v) || length(v) != 1L || is.na(v))
      stop(sprintf("'%s' must be TRUE or FALSE", a), call. = FALSE)
  }
  if (is.null(x) == is.null(adjacency))
    stop("give either 'datExpr' (expression data) or 'adjacency'", call. = FALSE)
  tom_code <- match(TOMType, .tom_types) - 1L
  # WGCNA applies these two to the signed TOM types, and to the Nowick types
  zero <- suppressTOMForZeroAdjacencies &&
    TOMType %in% c("signed", "signed Nowick", "signed 2", "signed Nowick 2")
  negative <- suppressNegativeTOM && TOMType %in% c("signed Nowick", "signed Nowick 2")
  if (!is.null(output) && (zero || negative || replaceMissingAdjacencies || cosineCorrelation ||
                           length(weights)))
    stop("output = gpu_hdf5() is not available with 'weights', 'cosineCorrelation', 'replaceMissingAdjacencies', 'suppressTOMForZeroAdjacencies' or 'suppressNegativeTOM'",
         call. = FALSE)
  W <- NULL
  if (!is.null(adjacency)) {
    if (TOMType == "none") stop("'TOMType' cannot be \"none\" with 'adjacency'", call. = FALSE)
    A <- .check_adjacency(adjacency, TOMType == "signed")
    n <- nrow(A)
    labels <- colnames(A)
    inp <- list(x = A, method = NULL, use = "everything", rows = NULL)
    epi <- 0L
  } else {
    power <- .wgcna_power(power)
    networkType <- .wgcna_choice(networkType, .network_types, "networkType")
    corType <- .wgcna_choice(corType, .cor_types[1:2], "corType")
    bo <- .bicor_opts(maxPOutliers, quickCor, pearsonFallback)
    x <- .wgcna_matrix(x, "datExpr")
    if (nrow(x) < 2L) stop("gpu_tom() needs at least 2 samples (rows of 'datExpr')", call. = FALSE)
    if (length(weights) == 1L && nrow(x) > 1L)
      stop("'weights' must be WGCNA's weights of the observations (a matrix like 'datExpr'): the power is gpu_tom()'s fifth argument, as in TOMsimilarityFromExpr(); give it as power = ",
           call. = FALSE)
    W <- .ref_weights(weights, x, corType, "gpu_tom")
    n <- ncol(x)
    labels <- colnames(x)
    # tomSimilarity's choice of adjacency: the sign kept for a signed TOM of
    # an unsigned network, and for every "signed Nowick"
    adj_type <- if (TOMType == "signed Nowick" ||
                    (TOMType == "signed" && networkType == "unsigned")) "keep_sign" else networkType
    epi <- .epi_adjacency[[adj_type]]
  }
  if (is.null(output))
    .memory_guard((if (dist) 4 else 8) * as.double(n) * n,
                  sprintf("gpu_tom(): the %s of %d genes", if (dist) "'dist'" else "matrix", n),
                  if (dist) "" else "dist = TRUE takes half as much.")
  backend <- .resolve_backend(backend, work = as.double(n)^3 / 2)
  opts <- .engine_opts(backend, precision, verbose, devices)
  if (!is.null(output) && is.null(adjacency) && TOMType == "none") {
    # the adjacency, its diagonal 1 (and 1 - A for a 'dist') as in memory
    return(.adjacency_run(x, power, networkType, corType,
                          "pairwise.complete.obs", bo, backend,
                          precision, devices, verbose, output,
                          .hdf5_post(diag = 1, epi2 = if (dist) 1L else 0L)))
  }
  if (!is.null(output) && backend == "cpu")
    .memory_guard(8 * as.double(n) * n,
                  sprintf("gpu_tom(): the CPU engine's adjacency of %d genes", n),
                  "The GPU engine holds it in GPU memory.")
  if (is.null(adjacency)) {
    # TOMsimilarityFromExpr() calls bicor's C code: no zero-MAD warning.
    # Weighted and cosine correlations: columns prepared in R
    prepared <- cosineCorrelation || (corType == "pearson" && !is.null(W))
    inp <- if (corType == "bicor" && cosineCorrelation) {
      pr <- .bicor_prep_cosine(x, .bicor_params(bo, FALSE))
      list(x = pr[[1L]], method = "bicor", use = "everything", rows = NULL,
           na_cols = bitwAnd(pr[[2L]], 1L) != 0L)
    } else if (corType == "pearson" && (cosineCorrelation || !is.null(W))) {
      .pearson_prep(x, W, cosineCorrelation)
    } else .network_input(x, corType, "pairwise.complete.obs", bo, opts, warn = FALSE)
    if (is.null(inp) || TOMType == "none" || replaceMissingAdjacencies) {
      # bicor with pairwise NAs (per pair, on the CPU), the adjacency itself,
      # or its NAs replaced by 0: the adjacency in memory first
      A <- if (is.null(inp)) {
        .adjacency_of(.bicor_run(x, NULL, bo, TRUE, TRUE, backend, precision, devices,
                                 verbose, "gpu_tom"), adj_type, power)
      } else if (TOMType == "none" && !prepared) {
        # the adjacency itself: gpu_adjacency()'s, its bicor warnings too
        gpu_adjacency(x, type = networkType, power = power, corType = corType,
                      maxPOutliers = maxPOutliers, quick = quickCor,
                      pearsonFallback = pearsonFallback, backend = backend,
                      precision = precision, devices = devices, verbose = verbose)
      } else {
        inp$na_cols <- if (is.null(inp$na_cols)) .constant_cols(x) else inp$na_cols
        .network_call(inp, 1L, .network_params(epi, power), opts, backend, precision, devices,
                      verbose, "gpu_tom", NULL, inp$na_cols)
      }
      if (TOMType == "none") {
        diag(A) <- 1
        dimnames(A) <- list(labels, labels)
        return(if (dist) stats::as.dist(1 - A) else A)
      }
      if (replaceMissingAdjacencies) A[is.na(A)] <- 0
      attributes(A) <- list(dim = dim(A))
      inp <- list(x = A, method = NULL, use = "everything", rows = NULL)
    }
  }
  r <- .network_call(inp, if (dist) 4L else 3L,
                     .network_params(epi, power, tom = tom_code, mean_denom = TOMDenom == "mean"),
                     opts, backend, precision, devices, verbose, "gpu_tom", labels,
                     call = match.call(), size = n, output = output)
  if (zero || negative) r <- .tom_suppress(r, zero, negative, dist, adjacency, inp, x, power,
                                         networkType, TOMType, backend, precision, devices)
  r
}

# WGCNA's suppressTOMForZeroAdjacencies (TOM 0 where the adjacency is 0, NA
# or, for the adjacency made with its sign, negative) and
# suppressNegativeTOM (negative TOM values 0) on gpu_tom()'s result r (a
# matrix, or the 'dist' of 1 - TOM, where TOM 0 is 1).  The diagonal is
# left as it is.
.tom_suppress <- function(r, zero, negative, dist, adjacency, inp, x, power, networkType,
                          TOMType, backend, precision, devices) {
  hit <- FALSE
  if (zero) {
    a <- if (!is.null(adjacency)) inp$x
    else if (is.null(inp$method)) inp$x
    else {
      # the adjacency of the TOM is sign(r) |r|^power for a signed TOM of an
      # unsigned network and for "signed Nowick": positive exactly where the
      # signed hybrid adjacency is
      type <- if (TOMType == "signed Nowick" ||
                  (TOMType == "signed" && networkType == "unsigned")) "signed hybrid"
              else networkType
      .network_call(inp, 1L, .network_params(.epi_adjacency[[type]], power),
                    .engine_opts(backend, precision, FALSE, devices), backend, precision,
                    devices, FALSE, "gpu_tom", NULL,
                    if (is.null(inp$na_cols)) .constant_cols(x) else inp$na_cols)
    }
    hit <- is.na(a) | a <= 0
  }
  if (dist) {
    h <- if (zero) hit[lower.tri(hit)] else FALSE
    if (negative) h <- h | (!is.na(unclass(r)) & unclass(r) > 1)
    r[h] <- 1
  } else {
    if (zero) diag(hit) <- FALSE
    if (negative) hit <- hit | (!is.na(r) & r < 0)
    r[hit] <- 0
  }
  r
}

# TOMsimilarity()'s checks of an adjacency, with clearer words; NA -> 0.
# An on-disk one (a gpu_hdf5() result) is read into one double matrix
# (.on_disk_matrix()); the checks go over blocks of columns, so no n x n
# temporaries are made besides the matrix itself (and its copy with NA
# made 0, where it has NA).
.check_adjacency <- function(A, signed, what = "adjacency") {
  A <- .on_disk_matrix(A)
  if (is.data.frame(A)) A <- as.matrix(A)
  if (!is.matrix(A)) stop(sprintf("'%s' must be a matrix", what), call. = FALSE)
  if (!(is.numeric(A) || is.logical(A))) stop(sprintf("'%s' must be numeric", what), call. = FALSE)
  if (nrow(A) != ncol(A))
    stop(sprintf("'%s' must be square, not %d x %d", what, nrow(A), ncol(A)), call. = FALSE)
  A <- .as_double_matrix(A)
  lo <- if (signed) -1 else 0
  # max(abs(A - t(A)), na.rm = TRUE) > 1e-12, any(A < lo | A > 1, na.rm =
  # TRUE) and anyNA(A) in one pass in C, on the threads, interruptible:
  # in R they take n x n temporaries (a transpose) and seconds past Ctrl-C
  chk <- .Call(C_gpucor_adjacency_check, A, lo, .engine_opts("cpu", "double"))
  if (chk[1L] == 1L)
    stop(sprintf("'%s' is not symmetric", what), call. = FALSE)
  if (chk[1L] == 2L)
    stop(sprintf("'%s' has values outside [%g, 1]%s", what, lo,
                 if (signed) "" else " (negative adjacencies need TOMType = \"signed\")"),
         call. = FALSE)
  if (chk[2L] == 1L) A[is.na(A)] <- 0
  A
}
