# corpcor's shrinkage estimators (cor.shrink, pcor.shrink) as columns the
# engine multiplies: src/algo/shrink.h has the algebra.

#' Shrinkage correlation and partial correlation, as corpcor computes them
#'
#' `gpu_cor_shrink()` and `gpu_pcor_shrink()` compute what
#' [corpcor::cor.shrink()] and [corpcor::pcor.shrink()] compute: the
#' correlation matrix shrunk towards the identity, \eqn{(1 - \lambda) R + \lambda I},
#' and the partial correlations of that estimate (the standardized negative
#' of its inverse), with Schaefer and Strimmer's optimal \eqn{\lambda}
#' (corpcor's `estimate.lambda`) when `lambda` is missing.
#'
#' Neither builds a p x p matrix before the result's own: the shrinkage
#' correlation is the product of scaled, standardized columns, and its
#' inverse, by the Woodbury identity over the eigenvectors of the smaller
#' (n x n or p x p) Gram matrix, is again a product of prepared columns, so
#' both go through the correlation engine (GPU or CPU) like Pearson's.
#' `gpu_cor_edges(x, method = "pcor.shrink")` selects the strongest partial
#' correlations without the p x p matrix.
#'
#' Differences from corpcor:
#' * The weighted moments are computed in two passes (corpcor's are
#'   \eqn{E[x^2] - m^2}): where a column's mean dwarfs its spread (a 1e8
#'   offset) corpcor loses its digits, estimates \eqn{\lambda = 1} and may
#'   call the column constant; gpucor gives the values corpcor gives for the
#'   centred data.  corpcor's rule for a zero-scale column is kept: a weighted
#'   variance below `.Machine$double.eps` (so data on a scale of 1e-8 are
#'   all "constant" in both).
#' * The "zero scale" warning comes once per call (corpcor gives it twice
#'   when it estimates \eqn{\lambda}).
#' * Missing values are an error, with a clear message (corpcor fails inside
#'   its moments).
#' * With `lambda = 0` the partial correlation is the pseudoinverse's, as
#'   corpcor's, computed densely in R (the Woodbury form needs
#'   \eqn{\lambda > 0}); `gpu_cor_edges()` refuses it.
#' * Values agree with corpcor's to about 1e-12 (the inverse comes from an
#'   eigen decomposition of the smaller Gram matrix instead of corpcor's SVD).
#'   Where the estimated \eqn{\lambda} is zero to rounding (below about
#'   1e-12) and the correlation matrix is singular (fewer observations than
#'   variables, constant columns), the estimate is exactly 0 (the
#'   pseudoinverse) or 1e-17 (the inverse of a matrix of condition 1e17)
#'   depending on each side's order of operations, and the partial
#'   correlations are rounding on both sides: corpcor's and gpucor's can
#'   differ; give `lambda = 0` for the pseudoinverse.
#'
#' @param x a numeric matrix or data frame: observations in rows, variables
#'   in columns (as corpcor).
#' @param lambda the shrinkage intensity in \[0, 1\] (a value outside is
#'   clamped, as corpcor does); missing: estimated.
#' @param w optional weights of the observations (normalised to sum 1).
#' @param verbose `TRUE` (default): print corpcor's lines about
#'   \eqn{\lambda}, as corpcor; `2` (or option `gpucor.verbose`): also a
#'   message, as [gpu_cor()]'s `verbose` gives it, naming the engine that
#'   made the product and its threads or GPU.
#' @param backend `"auto"`, `"gpu"` or `"cpu"`: the engine of the product.
#' @param precision `"double"` or `"single"` (the GPU product).
#' @param devices GPU ordinals, or `"all"`.
#' @param output `NULL` (the matrix in memory), or [gpu_hdf5()]: the matrix
#'   is written to that HDF5 dataset as the engine makes it (past RAM; not
#'   with `lambda = 0`).
#' @param y `NULL` (default), or a second matrix of the same observations
#'   (not in corpcor): the block between `x`'s columns and `y`'s of the
#'   estimate for `cbind(x, y)` (lambda estimated from all of them; `spv`
#'   then names every column of both), without its
#'   `(px + py)` x `(px + py)` matrix.
#' @param BPPARAM `NULL`, or a `BiocParallel::BiocParallelParam`: the
#'   product's tiles (or, with `output`, its columns) shared by
#'   BiocParallel's workers, as in [gpu_cor()]; the columns are prepared
#'   once here.  The values are those of the call without it (on the CPU
#'   engine, bit for bit).
#' @return A p x p matrix (p x q with `y`) of class `"shrinkage"` with
#'   attributes `lambda` and `lambda.estimated` (and `spv`, the standardized
#'   partial variances, for `gpu_pcor_shrink()`), dimnames from
#'   `colnames(x)`, exactly as corpcor's.  With `output`, an `HDF5Array` of
#'   the matrix, with those attributes (no class).
#' @seealso [corpcor::cor.shrink()], [corpcor::pcor.shrink()], [gpu_cor_edges()]
#' @examples
#' x <- matrix(rnorm(20 * 50), 20, 50)
#' r <- gpu_cor_shrink(x)
#' pc <- gpu_pcor_shrink(x, verbose = FALSE)
#' attr(pc, "lambda")
#' @export
gpu_cor_shrink <- function(x, lambda, w, verbose = TRUE,
                           backend = getOption("gpucor.backend", "auto"),
                           precision = c("double", "single"),
                           devices = getOption("gpucor.devices", 0L), output = NULL,
                           y = NULL, BPPARAM = NULL) {
  .shrink_run(x, if (!missing(lambda)) lambda, if (!missing(w)) w, verbose, FALSE,
              backend, precision, devices, "gpu_cor_shrink", output, y, BPPARAM)
}

#' @rdname gpu_cor_shrink
#' @export
gpu_pcor_shrink <- function(x, lambda, w, verbose = TRUE,
                            backend = getOption("gpucor.backend", "auto"),
                            precision = c("double", "single"),
                            devices = getOption("gpucor.devices", 0L), output = NULL,
                            y = NULL, BPPARAM = NULL) {
  .shrink_run(x, if (!missing(lambda)) lambda, if (!missing(w)) w, verbose, TRUE,
              backend, precision, devices, "gpu_pcor_shrink", output, y, BPPARAM)
}

.shrink_run <- function(x, lambda, w, verbose, partial, backend, precision, devices, fun,
                        output = NULL, y = NULL, BPPARAM = NULL) {
  if (!(is.logical(verbose) || is.numeric(verbose)) || length(verbose) != 1L || is.na(verbose))
    stop("'verbose' must be TRUE, FALSE or 2 (corpcor's lines and the engine's)", call. = FALSE)
  # corpcor's lines from TRUE (its default); the engine's line, as
  # gpu_cor()'s verbose gives it, from 2 or with option gpucor.verbose
  say_engine <- verbose >= 2 || .opt("gpucor.verbose")
  verbose <- verbose >= 1
  precision <- match.arg(precision, c("double", "single"))
  devices <- .check_devices(devices)
  output <- .check_output(output)
  if (!is.null(BPPARAM)) .bp_check(BPPARAM)
  x <- .shrink_input(x)
  cx <- colnames(x)
  # with y: the estimate of cbind(x, y), its block x against y
  px <- ncol(x)
  if (!is.null(y)) {
    y <- .shrink_input(y, "y")
    if (nrow(y) != nrow(x)) stop("'x' and 'y' must have the same number of rows",
                                 call. = FALSE)
    cy <- colnames(y)
    x <- cbind(x, y)
    colnames(x) <- if (!is.null(cx) || !is.null(cy))
      c(if (is.null(cx)) rep("", px) else cx, if (is.null(cy)) rep("", ncol(y)) else cy)
  } else cy <- cx
  p <- ncol(x)
  q <- p - px
  sx <- seq_len(px)
  sy <- if (!is.null(y)) px + seq_len(q)
  backend <- .resolve_backend(backend, work = as.double(px) * (if (is.null(y)) px / 2 else q) *
                                nrow(x))
  prep <- .shrink_prepare(x, lambda, w, verbose, partial)
  dn <- if (!is.null(cx) || !is.null(cy)) list(cx, cy)
  if (!is.null(output) && !is.null(prep$dense))
    stop("'output' with lambda = 0 (the pseudoinverse, made in memory) is not supported",
         call. = FALSE)
  # the engine multiplies the prepared columns (the identity of lambda 1
  # too, as products of zero columns, where it goes to a file); lambda = 0
  # (corpcor's pseudoinverse) is dense here
  if (is.null(prep$dense) && (!is.null(output) || !is.null(prep$v))) {
    v <- if (is.null(prep$v)) matrix(0, 1L, p) else prep$v
    vx <- v[, sx, drop = FALSE]
    vy <- if (!is.null(y)) v[, sy, drop = FALSE]
    colnames(vx) <- cx
    if (!is.null(vy)) colnames(vy) <- cy
    r <- .cor_run(vx, vy, "everything", if (partial) "pcor.shrink" else "cor.shrink",
                  backend, precision, devices, say_engine, 1L, BPPARAM, output, fun)
    if (!is.null(output)) return(.shrink_attrs(r, prep, partial, colnames(x), NULL, verbose))
  } else {
    if (say_engine)
      message(sprintf("%s: no engine call (%s)", fun, if (!is.null(prep$dense))
        "lambda = 0: corpcor's pseudoinverse, in R" else "lambda = 1: the identity"))
    .memory_guard(8 * as.double(px) * (if (is.null(y)) px else q),
                  sprintf("%s(): the %d x %d result", fun, px, if (is.null(y)) px else q), "")
    r <- if (!is.null(prep$dense)) prep$dense else diag(p)
    if (!is.null(y)) r <- r[sx, sy, drop = FALSE]
  }
  attributes(r) <- list(dim = c(px, if (is.null(y)) px else q))
  if (!is.null(dn)) dimnames(r) <- dn
  .shrink_attrs(r, prep, partial, colnames(x), "shrinkage", verbose)
}

# corpcor's attributes, in its order (lambda, lambda.estimated, class, spv),
# and its closing line.
.shrink_attrs <- function(r, prep, partial, names, cls, verbose) {
  attr(r, "lambda") <- prep$lambda
  attr(r, "lambda.estimated") <- prep$estimated
  if (!is.null(cls)) class(r) <- cls
  if (partial) attr(r, "spv") <- stats::setNames(prep$spv, names)
  if (verbose) cat("\n")
  r
}

# corpcor's input: as.matrix(x), numeric, no NA.
.shrink_input <- function(x, what = "x") {
  if (is.data.frame(x)) x <- as.matrix(x)
  if (!is.matrix(x)) x <- as.matrix(x)
  if (!(is.numeric(x) || is.logical(x))) stop(sprintf("'%s' must be numeric", what), call. = FALSE)
  if (anyNA(x)) stop(sprintf("missing values in '%s': the shrinkage estimators take complete data",
                             what), call. = FALSE)
  if (nrow(x) < 2L) stop(sprintf("'%s' needs at least two observations", what), call. = FALSE)
  .as_double_matrix(x)
}

# corpcor's weights (pvt.check.w).
.shrink_weights <- function(w, n) {
  if (is.null(w)) return(rep(1 / n, n))
  if (!is.numeric(w) || anyNA(w)) stop("'w' must be numeric without NA", call. = FALSE)
  if (length(w) != n) stop("Weight vector has incompatible length", call. = FALSE)
  w <- as.double(w)
  sw <- sum(w)
  if (sw != 1) w <- w / sw
  w
}

# The columns whose products are the estimate: list(v (NULL: the
# identity), dense (a matrix computed here instead), lambda, estimated,
# spv).
.shrink_prepare <- function(x, lambda, w, verbose, partial) {
  n <- nrow(x); p <- ncol(x)
  w <- .shrink_weights(w, n)
  o <- .engine_opts("cpu", "double")
  sc <- .Call(C_gpucor_shrink_scale, x, w, o)
  z <- sc[[1L]]; zero <- sc[[2L]]
  if (any(zero))
    warning(paste(sum(zero), "instances of variables with zero scale detected!"), call. = FALSE)
  w2 <- sum(w * w)
  h1 <- 1 / (1 - w2)
  # the Gram matrix of the smaller side: its eigen decomposition is the
  # inverse's, and its squared sum is the lambda estimate's sum(r^2)
  by_rows <- n < p
  g <- if (p > 1L) .Call(C_gpucor_crossprod, z, NULL, by_rows, o)
  estimated <- is.null(lambda)
  if (estimated) {
    # corpcor's estimate.lambda: 1 for one variable, silently
    if (p == 1L) lambda <- 1
    else {
      if (n < 3L) stop("Sample size too small!", call. = FALSE)
      if (verbose) cat("Estimating optimal shrinkage intensity lambda (correlation matrix): ")
      se2r <- sum(g * g) - sc[[4L]]
      lambda <- if (se2r == 0) 1
                else max(0, min(1, (sc[[3L]] - se2r) / se2r * (w2 / (1 - w2))))
      if (verbose) cat(paste(round(lambda, 4), "\n"))
    }
  } else {
    if (!is.numeric(lambda) || length(lambda) != 1L || is.na(lambda))
      stop("'lambda' must be a single number", call. = FALSE)
    lambda <- min(1, max(0, as.double(lambda)))
    if (verbose)
      cat(paste("Specified shrinkage intensity lambda (correlation matrix):",
                round(lambda, 4), "\n"))
  }
  out <- list(lambda = lambda, estimated = estimated, spv = rep(1, p))
  if (lambda == 1 || p == 1L) return(out)
  s <- (1 - lambda) * h1
  if (!partial) {
    out$v <- .Call(C_gpucor_scale_copy, z, sqrt(s), o)
    return(out)
  }
  if (lambda == 0) {
    out$dense <- .shrink_pinv(z, s, zero, o)
    out$spv <- 1 / attr(out$dense, "pdiag")
    return(out)
  }
  e <- eigen(g * s, symmetric = TRUE)
  d <- pmax(e$values, 0)
  # U = diag(1 / sqrt(lambda + d)) Q' Y (n < p), or diag(sqrt(d / (lambda + d))) B';
  # v_i = u_i / sqrt(1 - |u_i|^2)
  if (by_rows) {
    pr <- .Call(C_gpucor_shrink_partial, e$vectors * rep(sqrt(s / (lambda + d)), each = n),
                z, o)
    out$v <- pr[[1L]]; u2 <- pr[[2L]]
  } else {
    u <- t(e$vectors * rep(sqrt(d / (lambda + d)), each = p))
    u2 <- .colSums(u * u, p, p)
    out$v <- u * rep(1 / sqrt(1 - u2), each = p)
  }
  out$spv <- ifelse(zero, 1, lambda / (1 - u2))
  out
}

# lambda = 0: corpcor's pseudoinverse, of the rank its SVD sees (singular
# values above max(dim) * largest * eps; an eigen decomposition of the Gram
# matrix cannot tell the noise of a centred column's last dimension from
# signal at that level), its partial correlations formed here (dense).
.shrink_pinv <- function(z, s, zero, o) {
  p <- ncol(z)
  sv <- svd(z, nu = 0L)
  keep <- sv$d > max(dim(z)) * sv$d[1L] * .Machine$double.eps
  if (sum(keep) < p - sum(zero))
    warning(paste("Estimated correlation matrix doesn't have full rank",
                  "- pseudoinverse used for inversion."), call. = FALSE)
  # the pseudoinverse of s Z'Z is t(S) S, S = diag(1 / (sqrt(s) d)) V'
  sm <- t(sv$v[, keep, drop = FALSE] * rep(1 / (sqrt(s) * sv$d[keep]), each = p))
  pd <- .colSums(sm * sm, nrow(sm), p)
  pd[zero] <- 1
  sm <- sm * rep(ifelse(zero, 0, 1 / sqrt(pd)), each = nrow(sm))
  r <- -.Call(C_gpucor_crossprod, sm, NULL, FALSE, o)
  diag(r) <- 1
  attr(r, "pdiag") <- pd
  r
}
