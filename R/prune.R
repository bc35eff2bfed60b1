#' Gene networks from mutual information: ARACNE, CLR and MRNET
#'
#' `gpu_aracne_a()`, `gpu_aracne_m()`, `gpu_clr()` and `gpu_mrnet()` infer a
#' network from a matrix of mutual information (MI) between variables, as
#' `parmigene::aracne.a()`, `aracne.m()`, `clr()` and `mrnet()` (parmigene
#' 1.1.0) do: the same zero pattern, and the same values (ARACNE keeps the
#' input's values; CLR and MRNET are made by parmigene's arithmetic in its
#' order, so they agree to the last bit).
#'
#' * ARACNE looks at every triangle of variables `(i, j, k)` and removes its
#'   weakest edge when it is weaker than both others by a tolerance:
#'   `gpu_aracne_a()` removes `mi[i, j]` when `mi[i, j] < min(mi[i, k],
#'   mi[j, k]) - eps` for some `k` (strictly: a tie is kept);
#'   `gpu_aracne_m()` when `mi[i, j] < (1 - tau) * min(mi[i, k], mi[j, k])`.
#'   Removals are decided on the input (a removed edge still takes part in
#'   the other triangles), so the order of the triangles does not matter.
#'   Removed edges become 0; the others, and the diagonal, keep `mi`'s
#'   values.  With a negative MI value (the k-nearest-neighbour estimate
#'   can give them) `gpu_aracne_m()` follows parmigene's decision tree for
#'   each triangle, which then depends on the order of the three variables,
#'   exactly; this case runs about three times slower on the CPU.
#' * CLR (parmigene's variant, not the paper's): per row `i` the mean
#'   `m_i` and variance `v_i` (divisor `n`, the diagonal included); `z_i =
#'   (mi[i, j] - m_i)^2 / v_i` (0 where `mi[i, j] < m_i` or `v_i = 0`); the
#'   result is `sqrt(z_i^2 + z_j^2)`, 0 on the diagonal.
#' * MRNET: for each target `i`, variables are selected greedily by
#'   relevance minus mean redundancy with those already selected, `mi[i,
#'   j] - mean(mi[j, S])`, while that score is positive (ties: the first
#'   variable); the score at selection is the edge's weight, and the
#'   result keeps the larger of the two directions.
#'
#' Differences from parmigene: `mi` must be a numeric square matrix (or
#' data frame) that is exactly symmetric, with finite values (parmigene
#' reads one triangle of an asymmetric matrix silently, and lets NA through
#' into its comparisons); `eps` and `tau` must be single positive numbers
#' (as parmigene asks; `tau >= 1` is accepted as parmigene does, and then
#' removes nothing from a non-negative `mi`).  The result keeps both of
#' `mi`'s dimnames (parmigene names both sides by `rownames(mi)`).
#'
#' Engines: ARACNE runs on either; its step is a max-min product of `mi`
#' with itself (`m[i, j] = max_k min(mi[i, k], mi[j, k])`, `n^3 / 2`
#' comparisons) in tiles, on the CPU's threads or on the GPU (one tiled
#' kernel, the matrix resident on the device: `8 n^2` bytes plus `n^2`
#' bytes of decisions).  CLR and MRNET run on the CPU's threads with either
#' backend (`verbose = TRUE` says so).
#'
#' @param mi a symmetric numeric matrix (or data frame) of mutual
#'   information, such as `parmigene::knnmi.all()` or `gpu_knnmi()` make.
#'   May be left out when `x` is given.
#' @param eps `gpu_aracne_a()`'s tolerance, a positive number (parmigene's
#'   default 0.05).
#' @param tau `gpu_aracne_m()`'s tolerance, a positive number (parmigene's
#'   default 0.15).
#' @param x instead of `mi`: the data; `mi` is then `gpu_knnmi(x, k = k,
#'   noise = noise, backend = backend, ...)`.
#' @param k,noise for `x`: `gpu_knnmi()`'s `k` and `noise`.
#' @param backend,devices,verbose as for [gpu_cor()] (one GPU: the first of
#'   `devices`).
#' @param ... for `x`: further arguments of `gpu_knnmi()` (`verbose`).
#' @return An n x n matrix with `mi`'s dimnames: the pruned `mi` (ARACNE),
#'   the CLR scores, or the MRNET scores.
#' @seealso `parmigene::aracne.a()`, `parmigene::clr()`, `parmigene::mrnet()`.
#' @examples
#' set.seed(1)
#' mi <- matrix(runif(36), 6)
#' mi <- mi + t(mi)
#' diag(mi) <- 0
#' gpu_aracne_a(mi, eps = 0.05)
#' gpu_aracne_m(mi, tau = 0.15)
#' gpu_clr(mi)
#' gpu_mrnet(mi)
#' @export
gpu_aracne_a <- function(mi, eps = 0.05, x = NULL, k = 3, noise = 0,
                         backend = getOption("gpucor.backend", "auto"),
                         devices = getOption("gpucor.devices", 0L),
                         verbose = getOption("gpucor.verbose", FALSE), ...) {
  .check_tolerance(eps, "eps")
  mi <- .prune_input(if (missing(mi)) NULL else mi, x, k, noise, backend, devices, ...)
  .aracne_run(mi, as.double(eps), 1, backend, devices, verbose, "gpu_aracne_a")
}

#' @rdname gpu_aracne_a
#' @export
gpu_aracne_m <- function(mi, tau = 0.15, x = NULL, k = 3, noise = 0,
                         backend = getOption("gpucor.backend", "auto"),
                         devices = getOption("gpucor.devices", 0L),
                         verbose = getOption("gpucor.verbose", FALSE), ...) {
  .check_tolerance(tau, "tau")
  mi <- .prune_input(if (missing(mi)) NULL else mi, x, k, noise, backend, devices, ...)
  # parmigene: aracne_impl(mi, n, 0, 1 - tau)
  .aracne_run(mi, 0, 1 - as.double(tau), backend, devices, verbose, "gpu_aracne_m")
}

#' @rdname gpu_aracne_a
#' @export
gpu_clr <- function(mi, x = NULL, k = 3, noise = 0,
                    backend = getOption("gpucor.backend", "auto"),
                    devices = getOption("gpucor.devices", 0L),
                    verbose = getOption("gpucor.verbose", FALSE), ...) {
  mi <- .prune_input(if (missing(mi)) NULL else mi, x, k, noise, backend, devices, ...)
  .clr_mrnet_run(mi, 0L, backend, devices, verbose, "gpu_clr")
}

#' @rdname gpu_aracne_a
#' @export
gpu_mrnet <- function(mi, x = NULL, k = 3, noise = 0,
                      backend = getOption("gpucor.backend", "auto"),
                      devices = getOption("gpucor.devices", 0L),
                      verbose = getOption("gpucor.verbose", FALSE), ...) {
  mi <- .prune_input(if (missing(mi)) NULL else mi, x, k, noise, backend, devices, ...)
  .clr_mrnet_run(mi, 1L, backend, devices, verbose, "gpu_mrnet")
}

.check_tolerance <- function(v, name) {
  if (!is.numeric(v) || length(v) != 1L || is.na(v) || !is.finite(v) || v <= 0)
    stop(sprintf("'%s' must be a positive number", name), call. = FALSE)
}

# The MI matrix: 'mi' checked and made a double matrix, or gpu_knnmi(x).
# Finiteness and symmetry are checked by the engine's entry point (one
# pass, no n x n logical in R).
.prune_input <- function(mi, x, k, noise, backend, devices, ...) {
  if (is.null(mi) == is.null(x)) stop("give one of 'mi' and 'x'", call. = FALSE)
  if (!is.null(x)) {
    mi <- gpu_knnmi(x, k = k, noise = noise, backend = backend, devices = devices, ...)
  } else if (...length()) {
    stop("'...' goes to gpu_knnmi() with 'x', not with 'mi'", call. = FALSE)
  }
  if (is.data.frame(mi)) mi <- as.matrix(mi)
  if (!is.matrix(mi) || !is.numeric(mi))
    stop("'mi' must be a numeric matrix", call. = FALSE)
  if (nrow(mi) != ncol(mi))
    stop(sprintf("'mi' must be a square matrix (it is %d x %d)", nrow(mi), ncol(mi)),
         call. = FALSE)
  if (anyNA(mi)) stop("'mi' has NA/NaN values", call. = FALSE)
  if (!is.double(mi)) storage.mode(mi) <- "double"
  mi
}

.aracne_run <- function(mi, eps, eta, backend, devices, verbose, fun) {
  verbose <- .check_verbose(verbose)
  devices <- .check_devices(devices)
  n <- as.double(nrow(mi))
  backend <- .resolve_backend(backend, work = n^3)
  .memory_guard(8 * n^2, sprintf("%s(): the result", fun), "")
  r <- .engine_call(.Call(C_gpucor_aracne, mi, eps, eta,
                          .engine_opts(backend, "double", verbose, devices)),
                    fun, backend, "double", devices, verbose)
  dimnames(r) <- dimnames(mi)
  r
}

# CLR and MRNET run on the CPU with either backend (as gpu_hclust()'s
# centroid and median do); the backend is still resolved, so that
# backend = "gpu" without a GPU is the same error as elsewhere.
.clr_mrnet_run <- function(mi, what, backend, devices, verbose, fun) {
  verbose <- .check_verbose(verbose)
  devices <- .check_devices(devices)
  n <- as.double(nrow(mi))
  .resolve_backend(backend, work = n^3)
  .memory_guard(8 * n^2, sprintf("%s(): the result", fun), "")
  r <- .engine_call(.Call(C_gpucor_clr_mrnet, mi, what,
                          .engine_opts("cpu", "double", verbose, devices)),
                    fun, "cpu", "double", devices, verbose)
  dimnames(r) <- dimnames(mi)
  r
}
