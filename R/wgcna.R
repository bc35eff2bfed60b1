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
#' `x` (and `y`) with the arguments, defaults and values of
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
#'   correlations are between genes).
#' @param y `NULL`, or a matrix or vector with the rows of `x`.
#' @param use `"all.obs"` or `"pairwise.complete.obs"` (may be
#'   abbreviated).
#' @param maxPOutliers,quick,pearsonFallback,robustX,robustY as in
#'   [WGCNA::bicor()].
#' @param backend,precision,devices,verbose as for [gpu_cor()].
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
gpu_bicor <- function(x, y = NULL, use = "all.obs", maxPOutliers = 1, quick = 0,
                      pearsonFallback = "individual", robustX = TRUE, robustY = TRUE,
                      backend = getOption("gpucor.backend", "auto"),
                      precision = c("double", "single"),
                      devices = getOption("gpucor.devices", 0L),
                      verbose = getOption("gpucor.verbose", FALSE), output = NULL) {
  .check_common()
  use <- .wgcna_choice(use, c("all.obs", "pairwise.complete.obs"), "use")
  bo <- .bicor_opts(maxPOutliers, quick, pearsonFallback)
  for (a in list(list(robustX, "robustX"), list(robustY, "robustY")))
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
  .bicor_run(x, y, bo, robustX, if (is.null(y)) robustX else robustY,
             backend, precision, devices, verbose, "gpu_bicor", output)
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
                       fun, output = NULL, post = .hdf5_post()) {
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
  prx <- .Call(C_gpucor_bicor_prep, x, px, opts)
  pry <- if (is.null(y)) NULL else .Call(C_gpucor_bicor_prep, y, py, opts)
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
#' `gpu_adjacency()` is [WGCNA::adjacency()] with `corFnc` `"cor"` (Pearson),
#' `"bicor"` or Spearman: the correlations between the columns of `x` made
#' into \eqn{|r|^\beta} (`"unsigned"`), \eqn{((1 + r) / 2)^\beta}
#' (`"signed"`) or \eqn{r^\beta} for \eqn{r > 0}, else 0 (`"signed hybrid"`).
#' The power is applied by the engine as the correlations come out (R's
#' `^`), so the correlation matrix is never stored besides the result.
#' Missing values are handled pairwise by default, as WGCNA's
#' `corOptions = list(use = "p")`; a constant column's row and column are
#' `NA`, the diagonal included, as WGCNA's `cor()` gives them.
#'
#' @param x a numeric matrix (samples in rows, genes in columns), a data
#'   frame, or a `SummarizedExperiment`/`ExpressionSet` (genes in rows).
#' @param power the soft-thresholding power \eqn{\beta > 0}.
#' @param type `"unsigned"`, `"signed"` or `"signed hybrid"`.
#' @param corType `"pearson"`, `"bicor"` or `"spearman"`.
#' @param use `"pairwise.complete.obs"` (default, WGCNA's `"p"`),
#'   `"everything"` or `"all.obs"`, for Pearson and Spearman; bicor always
#'   works pairwise with `quick` as in [gpu_bicor()].
#' @param maxPOutliers,quick,pearsonFallback bicor's options ([gpu_bicor()]).
#' @param backend,precision,devices,verbose as for [gpu_cor()].
#' @param output `NULL` (default: the result in memory), or [gpu_hdf5()]:
#'   the matrix is written to an HDF5 file as the engine makes it (the power
#'   applied as in memory; the `NA` rows and columns, and bicor's pairs with
#'   missing values, done to each band of columns before it is written),
#'   never whole in memory, and returned as an `HDF5Array` with the values
#'   of the call in memory.
#' @return The n x n adjacency matrix with the column names of `x`; with
#'   `output`, an `HDF5Array`.
#' @seealso [gpu_tom()], [gpu_soft_threshold()]
#' @examples
#' x <- matrix(rnorm(30 * 8), 30, 8)
#' gpu_adjacency(x, power = 6)
#' @export
gpu_adjacency <- function(x, power = 6, type = c("unsigned", "signed", "signed hybrid"),
                          corType = c("pearson", "bicor", "spearman"),
                          use = "pairwise.complete.obs", maxPOutliers = 1, quick = 0,
                          pearsonFallback = "individual",
                          backend = getOption("gpucor.backend", "auto"),
                          precision = c("double", "single"),
                          devices = getOption("gpucor.devices", 0L),
                          verbose = getOption("gpucor.verbose", FALSE), output = NULL) {
  .check_common()
  power <- .wgcna_power(power)
  type <- .wgcna_choice(type[1L], .network_types, "type")
  corType <- .wgcna_choice(corType[1L], .cor_types, "corType")
  use <- .network_use(use)
  bo <- .bicor_opts(maxPOutliers, quick, pearsonFallback)
  x <- .wgcna_matrix(x, "x")
  if (use == "all.obs" && anyNA(x)) stop("missing observations in cov/cor")
  .adjacency_run(x, power, type, corType, use, bo, backend, precision, devices, verbose,
                 output)
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
#' @inheritParams gpu_adjacency
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
#' @export
gpu_soft_threshold <- function(x, powerVector = c(1:10, seq(12, 20, 2)),
                               networkType = "unsigned", corType = "pearson",
                               RsquaredCut = 0.85, nBreaks = 10, removeFirst = FALSE,
                               moreNetworkConcepts = FALSE, use = "pairwise.complete.obs",
                               maxPOutliers = 1, quick = 0, pearsonFallback = "individual",
                               backend = getOption("gpucor.backend", "auto"),
                               precision = c("double", "single"),
                               devices = getOption("gpucor.devices", 0L),
                               verbose = getOption("gpucor.verbose", FALSE)) {
  .check_common()
  if (!is.numeric(powerVector) || length(powerVector) == 0L || anyNA(powerVector) ||
      any(!is.finite(powerVector)) || any(powerVector <= 0))
    stop("'powerVector' must hold positive numbers", call. = FALSE)
  pv <- sort(powerVector)                    # WGCNA's Power column keeps its type
  powerVector <- as.double(pv)
  networkType <- .wgcna_choice(networkType, .network_types, "networkType")
  corType <- .wgcna_choice(corType, .cor_types, "corType")
  if (!is.numeric(RsquaredCut) || length(RsquaredCut) != 1L || is.na(RsquaredCut))
    stop("'RsquaredCut' must be a number", call. = FALSE)
  if (!is.numeric(nBreaks) || length(nBreaks) != 1L || is.na(nBreaks) || nBreaks < 4)
    stop("'nBreaks' must be a whole number of at least 4", call. = FALSE)
  use <- .network_use(use)
  bo <- .bicor_opts(maxPOutliers, quick, pearsonFallback)
  x <- .wgcna_matrix(x, "x")
  if (use == "all.obs" && anyNA(x)) stop("missing observations in cov/cor")
  p <- ncol(x)
  if (p < 3L) stop("the scan needs at least 3 genes (columns of 'x')", call. = FALSE)
  backend <- .resolve_backend(backend, work = as.double(p) * p / 2 * nrow(x))
  opts <- .engine_opts(backend, precision, verbose, devices)
  inp <- .network_input(x, corType, use, bo, opts)
  if (is.null(inp)) {
    # bicor with pairwise NAs: blocks of columns of the dense bicor
    k <- matrix(0, p, length(powerVector))
    w <- max(1L, floor(2^27 / (8 * p)))
    steps <- diff(c(0, powerVector))
    for (s in seq(1L, p, by = w)) {
      b <- s:min(p, s + w - 1L)
      r <- .bicor_run(x, x[, b, drop = FALSE], bo, TRUE, TRUE, backend, precision, devices,
                      FALSE, "gpu_soft_threshold")
      a <- .adjacency_of(r, networkType, 1)
      a[cbind(b, seq_along(b))] <- 1
      cur <- 1
      for (t in seq_along(powerVector)) {
        cur <- cur * a^steps[t]
        k[b, t] <- colSums(cur, na.rm = TRUE) - 1
      }
    }
  } else {
    k <- .network_call(inp, 2L, .network_params(.epi_adjacency[[networkType]], 1, powerVector),
                       opts, backend, precision, devices, verbose, "gpu_soft_threshold")
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
#' `gpu_tom(x)` is [WGCNA::TOMsimilarityFromExpr()] and
#' `gpu_tom(adjacency = A)` is [WGCNA::TOMsimilarity()]: the same
#' arguments, defaults and values, every `networkType`, `TOMType` and
#' `TOMDenom`.  With \eqn{A} the adjacency (diagonal 1), \eqn{k_i = \sum_j
#' |a_{ij}|}{k_i = sum_j |a_ij|} and \eqn{L = A A}, the TOM of a pair is
#' \eqn{(L_{ij} - a_{ij}) / (\min(k_i, k_j) - a_{ij})}{(L_ij - a_ij) /
#' (min(k_i, k_j) - a_ij)} ("unsigned"; "signed" takes
#' absolute values; "signed Nowick" keeps the sign; the "2" types are
#' WGCNA's newer \eqn{(a_{ij} + (L_{ij} - 2 a_{ij}) / (den - 1)) / 2}).  As
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
#' @inheritParams gpu_adjacency
#' @param x expression data (samples in rows, genes in columns), or a
#'   `SummarizedExperiment`/`ExpressionSet` (genes in rows); or `NULL` with
#'   `adjacency`.
#' @param networkType `"unsigned"`, `"signed"` or `"signed hybrid"`.
#' @param TOMType one of `"none"`, `"unsigned"`, `"signed"`, `"signed Nowick"`,
#'   `"unsigned 2"`, `"signed 2"`, `"signed Nowick 2"`; default `"signed"`
#'   from `x` (as `TOMsimilarityFromExpr`), `"unsigned"` from `adjacency`
#'   (as `TOMsimilarity`).  `"none"` returns the adjacency.
#' @param TOMDenom `"min"` or `"mean"`.
#' @param dist `TRUE`: \eqn{1 - TOM} as a `dist` object.
#' @param adjacency a square symmetric adjacency matrix with values in
#'   \[0, 1\] (\[-1, 1\] for `TOMType = "signed"`); `NA` counts as 0.
#' @param maxPOutliers,quickCor,pearsonFallback bicor's options
#'   ([gpu_bicor()]'s `quick` is `quickCor` here, as in WGCNA).
#' @param backend,precision,verbose as for [gpu_cor()].
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
gpu_tom <- function(x = NULL, power = 6, networkType = "unsigned",
                    TOMType = if (is.null(adjacency)) "signed" else "unsigned",
                    TOMDenom = "min", corType = "pearson", dist = FALSE, adjacency = NULL,
                    maxPOutliers = 1, quickCor = 0, pearsonFallback = "individual",
                    backend = getOption("gpucor.backend", "auto"),
                    precision = c("double", "single"),
                    devices = getOption("gpucor.devices", 0L),
                    verbose = getOption("gpucor.verbose", FALSE), output = NULL) {
  .check_common()
  TOMType <- .wgcna_choice(TOMType, .tom_types, "TOMType")
  TOMDenom <- .wgcna_choice(TOMDenom, c("min", "mean"), "TOMDenom")
  if (!is.logical(dist) || length(dist) != 1L || is.na(dist))
    stop("'dist' must be TRUE or FALSE", call. = FALSE)
  if (is.null(x) == is.null(adjacency))
    stop("give either 'x' (expression data) or 'adjacency'", call. = FALSE)
  tom_code <- match(TOMType, .tom_types) - 1L
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
    x <- .wgcna_matrix(x, "x")
    if (nrow(x) < 2L) stop("gpu_tom() needs at least 2 samples (rows of 'x')", call. = FALSE)
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
    # TOMsimilarityFromExpr() calls bicor's C code: no zero-MAD warning
    inp <- .network_input(x, corType, "pairwise.complete.obs", bo, opts,
                          warn = FALSE)
    if (is.null(inp) || TOMType == "none") {
      # bicor with pairwise NAs (per pair, on the CPU), or the adjacency itself
      r <- if (is.null(inp)) .bicor_run(x, NULL, bo, TRUE, TRUE, backend, precision, devices,
                                        verbose, "gpu_tom")
           else gpu_adjacency(x, power, networkType, corType, maxPOutliers = maxPOutliers,
                              quick = quickCor, pearsonFallback = pearsonFallback,
                              backend = backend, precision = precision, devices = devices,
                              verbose = verbose)
      A <- if (is.null(inp)) .adjacency_of(r, adj_type, power) else r
      if (TOMType == "none") {
        diag(A) <- 1
        dimnames(A) <- list(labels, labels)
        return(if (dist) stats::as.dist(1 - A) else A)
      }
      inp <- list(x = A, method = NULL, use = "everything", rows = NULL)
    }
  }
  .network_call(inp, if (dist) 4L else 3L,
                .network_params(epi, power, tom = tom_code, mean_denom = TOMDenom == "mean"),
                opts, backend, precision, devices, verbose, "gpu_tom", labels,
                call = match.call(), size = n, output = output)
}

# TOMsimilarity()'s checks of an adjacency, with clearer words; NA -> 0.
.check_adjacency <- function(A, signed) {
  if (is.data.frame(A)) A <- as.matrix(A)
  if (!is.matrix(A)) stop("'adjacency' must be a matrix", call. = FALSE)
  if (!(is.numeric(A) || is.logical(A))) stop("'adjacency' must be numeric", call. = FALSE)
  if (nrow(A) != ncol(A))
    stop(sprintf("'adjacency' must be square, not %d x %d", nrow(A), ncol(A)), call. = FALSE)
  A <- .as_double_matrix(A)
  if (length(A) && max(abs(A - t(A)), na.rm = TRUE) > 1e-12)
    stop("'adjacency' is not symmetric", call. = FALSE)
  lo <- if (signed) -1 else 0
  if (any(A < lo | A > 1, na.rm = TRUE))
    stop(sprintf("'adjacency' has values outside [%g, 1]%s", lo,
                 if (signed) "" else " (negative adjacencies need TOMType = \"signed\")"),
         call. = FALSE)
  A[is.na(A)] <- 0
  A
}
