#' Mutual information between rows by k nearest neighbours, as parmigene
#'
#' `gpu_knnmi()` estimates the mutual information between every pair of
#' rows of `x` (variables in rows, samples in columns) with Kraskov's second
#' k-nearest-neighbour estimator, as [parmigene::knnmi.all()] computes it,
#' on the CPU engine or the GPU.  With `noise = 0` the values are
#' parmigene's (to about 1e-12: its sum over the samples runs in another
#' order) wherever no two samples tie at a k-th neighbour distance (see
#' below).
#'
#' Each row is normalised as parmigene does it: `(x - mean(x)) / sd(x)`
#' (divisor n - 1), then its minimum subtracted (a constant row is left as
#' it is).  For a pair of rows `(X, Y)` and each sample `i`, the `k`
#' nearest other samples are found in the maximum norm,
#' `max(|x_i - x_j|, |y_i - y_j|)`; `e_x(i)` and `e_y(i)` are the largest
#' `|x_i - x_j|` and `|y_i - y_j|` over those `k`, and `n_x(i)` counts the
#' samples `j != i` with `|x_i - x_j| <= e_x(i)` (`n_y(i)` alike).  The
#' estimate, in nats (it can be negative), is
#' `psi(k) + psi(n) - 1/k - mean(psi(n_x) + psi(n_y))` with `n` samples
#' and `psi` the digamma function (parmigene's table: `psi(1)` is minus
#' Euler's constant, `psi(j + 1) = psi(j) + 1/j`).  The result is exactly
#' symmetric with a zero diagonal.
#'
#' **Ties.** Where several samples are at the k-th smallest distance from a
#' sample, the neighbours are those of smaller sample index (column of
#' `x`).  parmigene's choice there follows its search grid instead, so on
#' data with ties (integer data, repeated values) the two may differ; where
#' the tied samples have the same `|x_i - x_j|` and `|y_i - y_j|`
#' (duplicated samples) the choice does not matter.  The counts `n_x`,
#' `n_y` include every sample at exactly `e_x`, `e_y`, as parmigene's do.
#'
#' **Differences from parmigene.** `noise` adds uniform jitter on
#' `[0, noise)` to each normalised value, where parmigene adds its
#' own, but drawn from R's generator ([stats::runif()], one draw per entry
#' of `x` in column-major order), so `set.seed()` makes it reproducible;
#' parmigene's jitter comes from a generator seeded by the data and shared
#' between its threads, which differs from call to call.  The default is
#' `noise = 0` (parmigene's is `1e-12`).  Missing and non-finite values are
#' an error (parmigene cannot handle them), and so is a `k` that is not a
#' whole number; a row whose mean or standard deviation overflows gives
#' `NaN` against every other, as in parmigene.  A matrix of fewer than two
#' rows gives its zero diagonal (parmigene stops).
#'
#' @param x a numeric matrix or data frame, variables in rows and samples in
#'   columns (as [parmigene::knnmi.all()]); integer and logical values are
#'   coerced to double.
#' @param k the number of neighbours: a whole number, at least 2 and less
#'   than the number of samples (columns).
#' @param noise the width of uniform jitter added to each normalised value
#'   (0, the default: none); see Details.
#' @param backend `"auto"` (default: the GPU for large inputs when one is
#'   usable), `"cpu"` or `"gpu"`; as in [gpu_cor()].
#' @param devices,verbose as in [gpu_cor()]; the computation is in double
#'   precision on both engines.
#' @return The `nrow(x)` x `nrow(x)` matrix of mutual informations, with
#'   `rownames(x)` as both dimnames.
#' @seealso [parmigene::knnmi.all()], [gpu_dist()]
#' @references Kraskov, A., Stoegbauer, H. and Grassberger, P. (2004)
#'   Estimating mutual information.  *Physical Review E* 69, 066138.
#' @examples
#' x <- matrix(rnorm(5 * 100), 5, 100)
#' mi <- gpu_knnmi(x, k = 3)
#' if (requireNamespace("parmigene", quietly = TRUE))
#'   all.equal(mi, parmigene::knnmi.all(x, k = 3, noise = 0))
#' @export
gpu_knnmi <- function(x, k = 3, noise = 0,
                      backend = getOption("gpucor.backend", "auto"),
                      devices = getOption("gpucor.devices", 0L),
                      verbose = getOption("gpucor.verbose", FALSE)) {
  .check_common()
  x <- .knnmi_input(x)
  if (!is.numeric(k) || length(k) != 1L || !is.finite(k) || k != floor(k))
    stop("'k' must be a whole number")
  if (k < 2) stop("'k' must be at least 2")
  if (k >= ncol(x))
    stop(sprintf("'x' has too few columns (samples) for k = %d: it needs more than k", k))
  if (!is.numeric(noise) || length(noise) != 1L || !is.finite(noise) || noise < 0)
    stop("'noise' must be a non-negative number")
  n <- nrow(x)
  jitter <- if (noise > 0) noise * array(stats::runif(length(x)), dim(x))
  backend <- .resolve_backend(backend, work = as.double(n) * n / 2 * ncol(x) *
                                .cpu_cost("knnmi", FALSE, "rows"))
  # the GPU's pairs land in a 'dist' first (src/knnmi.c): half a matrix more
  .memory_guard(8 * (as.double(n) * n * (if (backend == "gpu") 1.5 else 1) +
                       5 * as.double(n) * ncol(x)),
                sprintf("gpu_knnmi(): the mutual information of %d rows", n),
                "Compute the mutual information between blocks of rows.")
  r <- .engine_call(.Call(C_gpucor_knnmi, x, "knnmi", as.integer(k), jitter,
                          .engine_opts(backend, "double", verbose, devices)),
                    "gpu_knnmi", backend, "double", devices, verbose)
  timing <- attr(r, "timing")          # these two only with option gpucor.profile
  threads <- attr(r, "threads")
  attributes(r) <- list(dim = c(n, n))
  rn <- rownames(x)
  if (!is.null(rn)) dimnames(r) <- list(rn, rn)
  if (.opt("gpucor.profile")) {
    if (!is.null(timing)) attr(r, "timing") <- timing
    if (!is.null(threads)) attr(r, "threads") <- threads
  }
  r
}

# gpu_knnmi()'s x as a double matrix without missing or non-finite values,
# variables in rows.
.knnmi_input <- function(x) {
  if (is.data.frame(x)) {
    if (!all(vapply(x, function(v) is.numeric(v) || is.logical(v), NA)))
      stop("'x' must be numeric")
    rn <- rownames(x)   # as parmigene: automatic row names too
    x <- as.matrix(x)
    rownames(x) <- rn
  }
  if (!is.matrix(x) || !(is.numeric(x) || is.logical(x)))
    stop("'x' must be a numeric matrix or data frame")
  x <- .as_double_matrix(x)
  if (anyNA(x)) stop("missing values in 'x': gpu_knnmi() cannot handle NA")
  if (any(is.infinite(x))) stop("non-finite values in 'x'")
  x
}
