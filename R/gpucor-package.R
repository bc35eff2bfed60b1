#' gpucor: exact correlation and distance matrices on GPUs and CPUs
#'
#' [gpu_cor()] and [gpu_dist()] compute what [stats::cor()] and
#' [stats::dist()] compute, with the same values and semantics, on an NVIDIA
#' GPU when one is usable and otherwise with a tiled, multi-threaded C
#' engine.  See [gpucor_options] for the backend and thread options and
#' [gpu_available()] for the device.
#'
#' @section Orientation:
#' [gpu_cor()] correlates the *columns* of `x` (variables in columns, as
#' [stats::cor()]); [gpu_dist()] measures distances between the *rows* of
#' `x` (items in rows, as [stats::dist()]).  Expression matrices usually
#' hold genes in rows and samples in columns: correlations between genes
#' are `gpu_cor(t(expr))`, distances between genes `gpu_dist(expr, method =
#' "correlation")` (or `"spearman"`, ...).
#'
#' @section Memory:
#' A correlation matrix of `p` variables takes `8 * p^2` bytes (20000
#' genes: 3.2 GB; 50000: 20 GB), a `dist` of `n` items `4 * n * (n - 1)`
#' bytes (100000 items: 40 GB), and the engine also keeps a standardized
#' copy of the input.  Before allocating, gpucor compares this with the
#' memory available and stops with what to do instead (option
#' `gpucor.memory_guard`).  [stats::hclust()] on a `dist` needs another
#' copy of it and refuses more than 65536 objects.  Past the memory,
#' compute blocks of columns (`gpu_cor(x, x[, block])`) or rows, and keep
#' what you need of each block.
#'
#' @section Threads and forks:
#' The CPU engine uses option `gpucor.threads`, else `OMP_THREAD_LIMIT` /
#' `OMP_NUM_THREADS`, else every core (at most 2 under `R CMD check`).
#' Inside forked workers (`parallel::mclapply()`,
#' `BiocParallel::MulticoreParam()`) every call runs on one thread, because
#' OpenMP's threads do not survive `fork()`; the GPU cannot be used from a
#' forked child of a process that used it.  See [gpucor_options].
#'
#' @section Backends and precision:
#' `backend = "auto"` uses the GPU for problems large enough to repay its
#' fixed costs, the CPU otherwise; `"gpu"` and `"cpu"` force one.  Both
#' engines give the same values in double precision.  `precision =
#' "single"` (GPU only) is faster on cards with slow double precision:
#' correlations within about 1e-5 of double, distances with float's relative
#' error (about 1e-6), so near-duplicate rows with large offsets need
#' `"double"`.  `verbose = TRUE` says which engine ran.
#'
#' @section Differences from Dist() in amap:
#' `amap::Dist()` has methods of the same names that compute other
#' quantities: amap's `"pearson"` is gpucor's `"cosine"` (\eqn{1 -} the
#' uncentred correlation), amap's `"correlation"` is gpucor's
#' `"correlation"` (\eqn{1 - r}), while amap's `"spearman"` (a sum of
#' squared rank differences) and `"kendall"` (a count of discordant pairs)
#' are not \eqn{1 - \rho} and \eqn{1 - \tau_b} as here.  gpucor's six
#' [stats::dist()] metrics follow stats, including its rules for missing
#' values.
#'
#' @useDynLib gpucor, .registration = TRUE, .fixes = "C_"
#' @keywords internal
"_PACKAGE"
