#' Covariance matrices, as stats::cov computes them
#'
#' `gpu_cov()` is [stats::cov()] with [gpu_cor()]'s engines: the same
#' arguments in the same order, the same values, dimnames, `NA` results and
#' errors for every `use` mode and method.
#'
#' The covariances come from the correlations and the spreads of the
#' columns over the rows used: Pearson's is \eqn{r_{ij} s_i s_j}{r[i, j] *
#' s[i] * s[j]} with the two-pass standard deviations; Spearman's the same
#' with those of the ranks; Kendall's (stats' sum of sign products over
#' ordered pairs of rows, an integer) is \eqn{\tau_b \sqrt{T_i T_j}}{tau_b *
#' sqrt(T[i] * T[j])} rounded to the integer, with \eqn{T_i}{T[i]} the
#' untied ordered pairs of column \eqn{i}{i}.  So Pearson and Spearman
#' agree with stats to about 1e-15 of \eqn{s_i s_j}{s[i] * s[j]}, and
#' Kendall exactly.  Columns with a zero standard deviation (no
#' correlation exists; their covariances are 0 or below the double range)
#' are taken from stats, row by row.  Under `use = "pairwise.complete.obs"`
#' with missing values each pair that meets a missing value has its own
#' rows, means and spreads: the CPU engine computes those pairs with stats'
#' own long-double arithmetic (so they agree with stats to the last bit),
#' on all threads and interruptibly, whatever `backend` says; the pairs of
#' complete columns are \eqn{r_{ij} s_i s_j}{r[i, j] * s[i] * s[j]} as
#' above.
#'
#' @param x,y as for [gpu_cor()], except that a sparse `Matrix` is read
#'   into a dense matrix.  A `DelayedArray`/`HDF5Array` or `big.matrix`
#'   is read as by [gpu_cor()]: once, in whole chunks of its file, when it
#'   fits the memory budget (option `gpucor.block_memory`), else in blocks
#'   of whole columns, each block pair's covariances computed as here.
#' @inheritParams gpu_cor
#' @return As [stats::cov()]: a matrix of covariances, or a single number
#'   when `x` and `y` are both vectors.
#' @seealso [gpu_cor()], [stats::cov()]
#' @examples
#' x <- matrix(rnorm(200), 20, 10)
#' all.equal(gpu_cov(x), cov(x))
#' all.equal(gpu_cov(x, method = "kendall"), cov(x, method = "kendall"))
#' @export
gpu_cov <- function(x, y = NULL, use = "everything",
                    method = c("pearson", "kendall", "spearman"),
                    backend = getOption("gpucor.backend", "auto"),
                    precision = c("double", "single"),
                    devices = getOption("gpucor.devices", 0L),
                    verbose = getOption("gpucor.verbose", FALSE), assay = 1L,
                    BPPARAM = NULL) {
  method <- match.arg(method)
  if (!is.null(BPPARAM)) {
    devices <- .check_devices(devices)
    r <- .bp_entry(x, y, use, method, backend, precision, devices,
                   .check_verbose(verbose), assay, TRUE, BPPARAM)
    if (!is.null(r)) return(r)
  }
  # an input on disk is read once when it fits the memory budget, else in
  # blocks of columns (R/blocks.R); the other side, a container not read
  # so, as a matrix
  bx <- if (isS4(x)) .block_source(x, assay)
  by <- if (isS4(y)) .block_source(y, assay)
  if (!is.null(bx) || !is.null(by)) {
    xs <- if (!is.null(bx)) bx else .as_input(x, "x", assay, TRUE)
    ys <- if (!is.null(by)) by else .as_input(y, "y", assay, TRUE)
    r <- .blocked_cor(xs, ys, use, method, backend, precision, devices, verbose, cov = TRUE)
    if (!is.null(r)) return(r)
    x <- xs
    y <- ys
  }
  x <- .as_input(x, "x", assay, TRUE)
  y <- .as_input(y, "y", assay, TRUE)
  if (is.data.frame(y)) y <- as.matrix(y)
  if (is.data.frame(x)) x <- as.matrix(x)
  use_name <- .stats_use(use)
  # stats::cov ranks whole columns: no pairwise mode for the rank methods
  if (method != "pearson" && use_name == "pairwise.complete.obs") {
    if (!is.matrix(x) && is.null(y))
      stop("supply both 'x' and 'y' or a matrix-like 'x'")
    stop("cannot handle 'pairwise.complete.obs'")
  }
  # stats' errors first, as gpu_cor() gives them
  inp <- .cor_input(x, y, use_name, method, assay)
  if (use_name == "pairwise.complete.obs" && (anyNA(inp$x) || anyNA(inp$y)))
    return(.cov_pairwise(inp, verbose, devices))
  # the spreads over the rows used, which the engine multiplies into the
  # correlations as they land (src/cor.c): no pass over the result in R
  # (gpu_cor()'s verbose line names gpu_cov)
  cor_r <- function() withCallingHandlers(
    gpu_cor(x, y, use_name, method, backend, precision, devices, verbose),
    warning = function(w)
      if (identical(conditionMessage(w), "the standard deviation is zero"))
        invokeRestart("muffleWarning"),
    message = function(m)
      if (startsWith(conditionMessage(m), "gpu_cor: ")) {
        message(sub("^gpu_cor: ", "gpu_cov: ", conditionMessage(m)))
        invokeRestart("muffleMessage")
      })
  if (inp$nobs < 2L) {
    cor_r()
    return(stats::cov(x, y, use = use_name, method = method))
  }
  X <- inp$x
  Y <- inp$y
  if (!is.null(inp$rows)) {
    X <- X[inp$rows + 1L, , drop = FALSE]
    if (!is.null(Y)) Y <- Y[inp$rows + 1L, , drop = FALSE]
  }
  Yo <- if (is.null(Y)) X else Y
  sx <- .cov_spread(X, method)
  sy <- if (is.null(Y)) sx else .cov_spread(Y, method)
  .cov_mul$spreads <- list(sx, sy, method == "kendall")
  on.exit(.cov_mul$spreads <- NULL, add = TRUE)
  r <- cor_r()
  .cov_mul$spreads <- NULL
  # a row or column without a correlation (zero spread: all its values NA)
  # is taken from stats
  bad <- .Call(C_gpucor_cov_bad, r, sx, sy, is.null(Y))
  if (length(bad[[1L]]) || length(bad[[2L]])) {
    d <- dim(r)
    if (is.null(d)) dim(r) <- c(length(sx), length(sy))
    for (i in bad[[1L]]) r[i, ] <- stats::cov(X[, i], Yo, method = method)
    for (j in bad[[2L]]) r[, j] <- stats::cov(X, Yo[, j], method = method)
    if (is.null(d)) dim(r) <- NULL
  }
  if (is.null(Y) && method == "pearson")
    r <- .Call(C_gpucor_cov_diag, r, X, use_name == "pairwise.complete.obs", .threads())
  r
}

# gpu_cov()'s spreads on their way to the engine (.engine_opts(mul =)), set
# only around its call of gpu_cor().
.cov_mul <- new.env(parent = emptyenv())

# What turns a column's correlations into covariances: the standard
# deviation (of the ranks, for Spearman) over the rows used, by colMeans()'
# two-pass arithmetic on the column scaled by a power of two; for Kendall
# sqrt of the ordered pairs of rows not tied (src/cov.c, on the threads).
.cov_spread <- function(X, method) .Call(C_gpucor_col_spread, X, method, .threads())

# gpu_cov(use = "pairwise.complete.obs") of data with missing values (inp:
# .cor_input()'s checked input): the CPU engine gives each pair that meets
# an NA its covariance over the rows both observe (stats' arithmetic) and
# the pairs of complete columns their correlation, which becomes
# r s_i s_j here; a complete column without a correlation (zero spread)
# takes its covariances from stats.
.cov_pairwise <- function(inp, verbose, devices) {
  X <- inp$x
  Y <- inp$y
  r <- .engine_call(.Call(C_gpucor_cor, X, Y, "covariance", inp$use, NULL,
                          .engine_opts("cpu", "double", verbose, devices, fun = "gpu_cov"),
                          NULL),
                    "gpu_cov", "cpu", "double", devices, verbose)
  attributes(r) <- list(dim = dim(r))
  Yo <- if (is.null(Y)) X else Y
  # the pairs of complete columns: r s_i s_j in place, as in gpu_cov(); a
  # column with NA has an NA spread and keeps the engine's covariances
  sx <- .cov_spread(X, "pearson")
  sy <- if (is.null(Y)) sx else .cov_spread(Y, "pearson")
  res <- .Call(C_gpucor_cov_scale, r, sx, sy, is.null(Y), .threads())
  r <- res[[1L]]
  for (i in res[[2L]]) r[i, ] <- stats::cov(X[, i], Yo, use = "pairwise.complete.obs")
  for (j in res[[3L]]) r[, j] <- stats::cov(X, Yo[, j], use = "pairwise.complete.obs")
  if (is.null(Y)) r <- .Call(C_gpucor_cov_diag, r, X, TRUE, .threads())
  if (!inp$matrix_result) return(as.vector(r))
  if (!is.null(inp$cx) || !is.null(inp$cy)) dimnames(r) <- list(inp$cx, inp$cy)
  r
}
