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
#' Engines: all four run on the CPU's threads or on the GPU, with the
#' same results to the bit.  ARACNE's step is a max-min product of `mi`
#' with itself (`m[i, j] = max_k min(mi[i, k], mi[j, k])`, `n^3 / 2`
#' comparisons) in tiles (on the GPU one tiled kernel, the matrix resident
#' on the device: `8 n^2` bytes plus `n^2` bytes of decisions).  On the
#' GPU, CLR makes each row's moments and then the scores in place over the
#' resident matrix (`8 n^2` bytes), and MRNET runs one thread block per
#' target, its selections and sums in the CPU's order (the matrix resident,
#' the targets in batches).  `"auto"` picks the GPU, when one is usable,
#' for ARACNE and MRNET from about 500 variables on and for CLR (whose work
#' is `n^2`, about what copying `mi` to the device costs) from about
#' 10,000.
#'
#' From the data (`x`) with the GPU backend (`"auto"` chooses it as
#' [gpu_knnmi()] does), the mutual information is made on the device into
#' the matrix the algorithm then works on, and only the result comes back:
#' host memory holds `x` and the `n x n` result (`8 n^2` bytes), not the MI
#' as well.  The values are those of `gpu_knnmi()` followed by the
#' algorithm.  With the CPU backend, or with further arguments in `...`,
#' `mi` is `gpu_knnmi(x, ...)` in host memory first.
#'
#' @section On the CPU:
#' On the 2-core machine (`bench/incumbents.R`, 2026-11-28, a 2000 x 2000
#' MI matrix), ARACNE took 4.3 s against parmigene's 21.6 s (`aracne.a`)
#' and 34.8 s (`aracne.m`), CLR 0.11 s against 0.21 s, but MRNET 16.7 s
#' against `parmigene::mrnet()`'s 15.2 s: its greedy selection is serial
#' per target in both, so on a small CPU machine `parmigene::mrnet()` is as
#' fast; `gpu_mrnet()` gains on many cores and on the GPU
#' (`bench/README.md`).
#'
#' @param mi a symmetric numeric matrix (or data frame) of mutual
#'   information, such as `parmigene::knnmi.all()` or `gpu_knnmi()` make,
#'   or such a matrix on disk (an `HDF5Matrix`, such as `gpu_knnmi(output =
#'   gpu_hdf5(...))` writes, another `DelayedMatrix`, a
#'   `bigmemory::big.matrix`), read in whole chunks of the file into the one
#'   double matrix the engine is given.
#'   May be left out when `x` is given.
#' @param eps `gpu_aracne_a()`'s tolerance, a positive number (parmigene's
#'   default 0.05).
#' @param tau `gpu_aracne_m()`'s tolerance, a positive number (parmigene's
#'   default 0.15).
#' @param x instead of `mi`: the data (variables in rows, as
#'   [gpu_knnmi()]); `mi` is then `gpu_knnmi(x, k = k, noise = noise,
#'   backend = backend, ...)`, made on the device with the GPU backend (see
#'   Engines).
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
  if (missing(mi)) {
    r <- .prune_x_gpu(x, k, noise, backend, devices, verbose, 0L, as.double(eps), 1,
                      "gpu_aracne_a", ...)
    if (!is.null(r)) return(r)
  }
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
  # parmigene: aracne_impl(mi, n, 0, 1 - tau)
  if (missing(mi)) {
    r <- .prune_x_gpu(x, k, noise, backend, devices, verbose, 0L, 0, 1 - as.double(tau),
                      "gpu_aracne_m", ...)
    if (!is.null(r)) return(r)
  }
  mi <- .prune_input(if (missing(mi)) NULL else mi, x, k, noise, backend, devices, ...)
  .aracne_run(mi, 0, 1 - as.double(tau), backend, devices, verbose, "gpu_aracne_m")
}

#' @rdname gpu_aracne_a
#' @export
gpu_clr <- function(mi, x = NULL, k = 3, noise = 0,
                    backend = getOption("gpucor.backend", "auto"),
                    devices = getOption("gpucor.devices", 0L),
                    verbose = getOption("gpucor.verbose", FALSE), ...) {
  if (missing(mi)) {
    r <- .prune_x_gpu(x, k, noise, backend, devices, verbose, 1L, 0, 0, "gpu_clr", ...)
    if (!is.null(r)) return(r)
  }
  mi <- .prune_input(if (missing(mi)) NULL else mi, x, k, noise, backend, devices, ...)
  .clr_mrnet_run(mi, 0L, backend, devices, verbose, "gpu_clr")
}

#' @rdname gpu_aracne_a
#' @export
gpu_mrnet <- function(mi, x = NULL, k = 3, noise = 0,
                      backend = getOption("gpucor.backend", "auto"),
                      devices = getOption("gpucor.devices", 0L),
                      verbose = getOption("gpucor.verbose", FALSE), ...) {
  if (missing(mi)) {
    r <- .prune_x_gpu(x, k, noise, backend, devices, verbose, 2L, 0, 0, "gpu_mrnet", ...)
    if (!is.null(r)) return(r)
  }
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
  mi <- .on_disk_matrix(mi)
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

# CLR (what 0) and MRNET (1).  CLR's work is n^2 (its GPU run mostly
# copies mi there and back), MRNET's about ARACNE's.
.clr_mrnet_run <- function(mi, what, backend, devices, verbose, fun) {
  verbose <- .check_verbose(verbose)
  devices <- .check_devices(devices)
  n <- as.double(nrow(mi))
  backend <- .resolve_backend(backend, work = if (what == 0L) n^2 else n^3)
  .memory_guard(8 * n^2, sprintf("%s(): the result", fun), "")
  r <- .engine_call(.Call(C_gpucor_clr_mrnet, mi, what,
                          .engine_opts(backend, "double", verbose, devices)),
                    fun, backend, "double", devices, verbose)
  dimnames(r) <- dimnames(mi)
  r
}

# x = with the GPU backend (algo: 0 ARACNE with eps, eta; 1 CLR; 2 MRNET):
# the MI is made on the device and stays there (src/prune.c's
# gpucor_prune_x), so host memory holds x and the result only.  NULL where
# that does not apply (no x, the CPU backend, arguments in '...' for
# gpu_knnmi()): the caller then goes through gpu_knnmi() and host memory.
# x, k, noise, the backend and the jitter as gpu_knnmi() checks, resolves
# and draws them, so that the result is gpu_knnmi()'s MI pruned.
.prune_x_gpu <- function(x, k, noise, backend, devices, verbose, algo, eps, eta, fun, ...) {
  if (is.null(x) || ...length()) return(NULL)
  x <- .knnmi_input(x)
  .knnmi_args(x, k, noise)
  n <- nrow(x)
  backend <- .resolve_backend(backend, work = as.double(n) * n / 2 * ncol(x) *
                                .cpu_cost("knnmi", FALSE, "rows"))
  if (backend != "gpu") return(NULL)
  verbose <- .check_verbose(verbose)
  devices <- .check_devices(devices)
  jitter <- if (noise > 0) noise * array(stats::runif(length(x)), dim(x))
  .memory_guard(8 * (as.double(n) * n + 5 * as.double(n) * ncol(x)),
                sprintf("%s(): the result", fun), "")
  r <- .engine_call(.Call(C_gpucor_prune_x, x, as.integer(k), jitter, algo, eps, eta,
                          .engine_opts("gpu", "double", verbose, devices)),
                    fun, "gpu", "double", devices, verbose)
  rn <- rownames(x)
  if (!is.null(rn)) dimnames(r) <- list(rn, rn)
  r
}
