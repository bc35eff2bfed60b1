#' Is a GPU usable by gpucor?
#'
#' `gpu_available()` tells whether `backend = "auto"` will use the GPU:
#' gpucor was built with CUDA and a CUDA device and driver are usable.
#' `gpu_info()` describes the device.
#'
#' Both query the CUDA runtime (device count, properties, free memory, driver
#' and runtime versions, and a cuBLAS handle round trip); the answer of
#' `gpu_available()` is cached for the session, `gpu_info()` always asks
#' afresh.
#'
#' @return `gpu_available()`: `TRUE` or `FALSE`, with attribute `"reason"`
#'   saying why not (an empty string when `TRUE`).
#' @examples
#' gpu_available()
#' str(gpu_info())
#' @export
gpu_available <- function() {
  if (!is.null(.gpucor_state$pid) && .gpucor_state$pid != Sys.getpid())
    return(structure(FALSE, reason = paste(
      "this is a forked child of the R process that initialized CUDA",
      "(CUDA cannot be used after fork)")))
  if (is.null(.gpucor_state$available)) {
    info <- gpu_info()
    .gpucor_state$pid <- Sys.getpid()
    .gpucor_state$available <- structure(isTRUE(info$available),
                                         reason = info$reason)
  }
  .gpucor_state$available
}

#' @rdname gpu_available
#' @return `gpu_info()`: a list with `built_with_cuda`, `available`,
#'   `reason`, `device_count`, `name`, `memory_total` and `memory_free`
#'   (bytes), `compute_capability` (these of the first device),
#'   `driver_version`, `runtime_version`, and `devices`: a data frame with
#'   one row per visible device (`id`, the CUDA ordinal that argument
#'   `devices` of [gpu_cor()] and option `gpucor.devices` take; `name`;
#'   `memory_total`; `compute_capability`; `multiprocessors`), read without
#'   creating a context on any device.
#' @export
gpu_info <- function() {
  .Call(C_gpucor_gpu_info)
}

.gpucor_state <- new.env(parent = emptyenv())

#' Options that control gpucor
#'
#' \describe{
#'   \item{`gpucor.backend`}{Default `backend` of [gpu_cor()] and
#'     [gpu_dist()]: `"auto"` (the default) uses the GPU when
#'     [gpu_available()] and the CPU otherwise, silently; `"cpu"` always uses
#'     the CPU engine; `"gpu"` requires the GPU and errors, saying why, when
#'     the package was built without CUDA or no device is usable.}
#'   \item{`gpucor.threads`}{Number of CPU threads of the CPU engine (OpenMP),
#'     and of the host side of the GPU engine (copying results into R
#'     memory).  Results do not depend on it.  Without the option, the
#'     OpenMP environment variables `OMP_THREAD_LIMIT` and `OMP_NUM_THREADS`
#'     decide (the smaller of the two when both are set), and without them
#'     every core the system reports.  `OMP_THREAD_LIMIT` also caps the
#'     option, and so does `R CMD check`'s `_R_CHECK_LIMIT_CORES_` (at most
#'     2 threads, as CRAN asks); counts above the number of cores are capped
#'     there.  In a forked child (`parallel::mclapply()`,
#'     `BiocParallel::MulticoreParam()`, a FORK cluster) every call runs on
#'     one thread: OpenMP's threads do not survive `fork()`, and more would
#'     hang.  With option `gpucor.profile = TRUE` a CPU result carries the
#'     number of threads that ran as attribute `"threads"`.}
#'   \item{`gpucor.hdf5_buffer`}{Bytes of finished column bands that may
#'     wait for the writer of a [gpu_hdf5()] output before the engine waits
#'     (a size as for `gpucor.gpu_memory`; default 512 MiB).  The engine's
#'     bands are kept for reuse up to this much.}
#'   \item{`gpucor.block_memory`}{Bytes of an on-disk input (a
#'     `DelayedArray` such as an `HDF5Matrix`, a `bigmemory::big.matrix`, or
#'     a `SummarizedExperiment` holding one) that [gpu_cor()], [gpu_cov()]
#'     and [gpu_dist()] hold dense at a time (a size as for
#'     `gpucor.gpu_memory`).  An input that fits is read once, in reads of
#'     whole chunks of the file, and computed as the same matrix in memory
#'     would be; a larger one is read in blocks of columns (rows for
#'     [gpu_dist()]) of half this size, two at a time, which reads each
#'     block more than once (`verbose = TRUE` says how many reads).  The
#'     engine's working copy of what it is given comes on top, as for an
#'     input in memory.  Default (`NULL`): a quarter of the memory available
#'     when the call starts (see `gpucor.memory_guard`), at most 2 GiB and
#'     at least 64 MiB.  DelayedArray's block size
#'     (`DelayedArray::setAutoBlockSize()`) is the size of one read.}
#'   \item{`gpucor.bp_file_bytes`}{With `BPPARAM`, an input matrix of at
#'     least this many bytes (a size as for `gpucor.gpu_memory`, or `Inf`
#'     for never; default 8 MiB) reaches workers on this machine
#'     (`SnowParam()` with a number of workers, `MulticoreParam()`,
#'     `BatchtoolsParam()` on its local clusters) through one file in
#'     [tempdir()] (in pieces of at least 16 MiB, one a thread), written
#'     once and read by each worker, instead of inside every job's message;
#'     and each worker's result vectors of this size come back the same way
#'     instead of through BiocParallel's connections.  The files are removed
#'     when the call returns.  Workers on other machines always get the
#'     input and return their results in the messages.}
#'   \item{`gpucor.memory_guard`}{Before a result is allocated, its size (and
#'     the engine's working copy of the input) is compared with the memory
#'     available (`MemAvailable` in `/proc/meminfo`, on Linux), and the call
#'     stops with the size needed, the size available and what to do
#'     instead, rather than failing after a long pause or being killed by
#'     the operating system.  `FALSE` turns the check off (default `TRUE`).}
#'   \item{`gpucor.devices`}{The default of argument `devices` of
#'     [gpu_cor()] and [gpu_dist()]: which GPUs the GPU engine uses, as CUDA
#'     ordinals (`gpu_info()$devices$id`), or `"all"`.  Default `0`, the
#'     first visible GPU (`CUDA_VISIBLE_DEVICES` decides which that is).
#'     Each GPU gets its own worker (stream, cuBLAS handle, staging buffers,
#'     memory budget of `gpucor.gpu_memory`); the workers take panels of
#'     result columns as they finish the last, and R's thread writes every
#'     panel into the result.  A GPU that fails with a CUDA or memory error
#'     is left out with a warning, and the others make its panels.  An
#'     ordinal given twice runs two workers on that GPU.}
#'   \item{`gpucor.gpu_memory`}{GPU memory one call may use: a number of
#'     bytes, or a string with a unit, such as `"8GB"` or `"512 MiB"` (units
#'     B, KB, MB, GB, TB in powers of 1000; KiB, MiB, GiB, TiB in powers of
#'     1024).  Default (or 0): 90% of the memory free when the call starts.
#'     Results larger than this are produced in panels of columns.}
#'   \item{`gpucor.progress`}{Show a progress bar for calls longer than two
#'     seconds in interactive sessions, on either engine (default `TRUE`);
#'     `"always"` shows it in any session (a log of `Rscript`, for
#'     instance), `FALSE` never.  A call has one bar across all its steps,
#'     written to the console's error stream (where [message()] goes), such
#'     as `gpu_tom: TOM (2/2) |=========           |  45% 0:09 ETA 0:11`.
#'     It names the function and the step (with its number where there
#'     are several: the adjacency and the TOM of [gpu_tom()], the
#'     histogram and collecting passes of [gpu_cor_edges()], the copy of
#'     `d` and the merges of [gpu_hclust()], the blocks of an on-disk
#'     input, the TOM, tree and modules of [gpu_blockwise_modules()]),
#'     the fraction of the whole call done (steps are weighted by their
#'     expected work, so 100% comes only at the end of the last), the time
#'     taken and an estimate of the time left (the time taken scaled by the
#'     fraction left: as good as those weights).  Internal, for tests:
#'     option `gpucor.progress_delay` (seconds, default 2) is how long a
#'     call runs before its bar shows.}
#'   \item{`gpucor.verbose`}{The default of the `verbose` argument: say which
#'     engine ran, on which device or how many threads, and how long it took
#'     (default `FALSE`).}
#'   \item{`gpucor.gpu_min_work`}{The size (pairs times observations) from
#'     which `backend = "auto"` uses the GPU (see the weights below); default 1e8 (e.g. 800 columns of
#'     300 observations).  Measured on an H100 with 16 cores: below it both
#'     engines take a few milliseconds, and the first GPU call of a session
#'     also pays for creating the GPU context.}
#'   \item{`gpucor.gpu_slab`}{For testing: force the number of result columns
#'     per panel of the GPU engine (default: from the memory budget).}
#'   \item{`gpucor.cpu_tile`}{For testing: force the side of the CPU engine's
#'     tiles (default: 128 for product methods, 64 for distances, 32 for
#'     Kendall).}
#' }
#'
#' The `precision` argument (`"double"` or `"single"`) applies to the GPU
#' engine; the CPU engine always computes in double precision.  In single
#' precision, correlations are within about 1e-5 of the double-precision
#' values; distances carry float's relative error (about 1e-6), so
#' near-duplicate rows with large offsets need `"double"`.  Single-precision
#' distances are scaled so that float's narrow range is not a limit: no
#' distance that a double can hold becomes `Inf` or 0 (data spanning more
#' than float's range is computed in double).
#'
#' Every method and `use` mode runs on both engines: Pearson, Spearman and
#' Kendall correlations (pairwise-complete included), the six
#' [stats::dist()] metrics and the correlation distances, with or without
#' missing values.  For `"auto"`, the size is weighted by the CPU's cost per
#' pair-observation: 100 for Kendall, 50 for pairwise Spearman and 10 for
#' other pairwise work when the data have `NA`.
#'
#' Every option is checked when a call reads it: a value that makes no
#' sense stops the call with an error naming the option and what it
#' accepts.
#'
#' @name gpucor_options
#' @aliases gpucor-options
NULL

# "cpu" or "gpu" for a requested backend.  'work' is pairs x observations
# (weighted by .cpu_cost for the slower CPU paths), below which "auto" stays
# on the CPU (the GPU's fixed costs -- handle, uploads, pinned buffers -- are
# larger than the CPU's whole run there).
.resolve_backend <- function(backend, work = Inf) {
  if (!is.character(backend) || length(backend) != 1L || is.na(backend) ||
      is.na(pmatch(backend, c("auto", "cpu", "gpu")))) {
    # the default comes from the option: name it
    if (identical(backend, getOption("gpucor.backend"))) .opt("gpucor.backend")
    stop("'backend' must be one of \"auto\", \"cpu\", \"gpu\"", call. = FALSE)
  }
  backend <- match.arg(backend, c("auto", "cpu", "gpu"))
  if (backend == "cpu") return("cpu")
  # "auto" with a problem that stays on the CPU anyway: do not touch CUDA
  # (creating a context costs time, and a forked child could not use it)
  min_work <- .opt("gpucor.gpu_min_work")
  if (backend == "auto" && work < (if (is.null(min_work)) .gpu_min_work else min_work))
    return("cpu")
  ok <- gpu_available()
  if (backend == "gpu") {
    if (!ok)
      stop("backend = \"gpu\" is not usable: ", attr(ok, "reason"), call. = FALSE)
    return("gpu")
  }
  if (ok) "gpu" else "cpu"
}

# After a failed GPU call the device may be in an unusable (sticky) error
# state: .engine_call() calls it when a GPU call fails, so that the cached
# answer of gpu_available() is dropped and asked again next time.
.gpu_forget <- function() .gpucor_state$available <- NULL

# bench/gpu.R "crossover" on an H100 with 16 cores (2026-11-22): once the
# session's GPU context exists the GPU is faster from about 1e7
# pair-observations on (1 vs 3 ms), but the first GPU call of a session pays
# for creating the context; below 1e8 both engines take milliseconds, so
# "auto" keeps such problems on the CPU.
.gpu_min_work <- 1e8

# gpu_cor()'s backend for p columns against q (NULL: x against itself,
# half the pairs) over nobs rows; shared with the BiocParallel tiles.
.cor_backend <- function(backend, p, q, nobs, method, pairwise_na)
  .resolve_backend(backend, work = as.double(p) * (if (is.null(q)) p / 2 else q) * nobs *
                     .cpu_cost(method, pairwise_na))

# CPU time per pair-observation of a measure relative to Pearson's product
# path (src/engine/measure.c's table: its costs, and with pairwise NA);
# "auto" weighs the work with it before comparing it with .gpu_min_work.
.cpu_cost <- function(method, pairwise_na, space = "columns") {
  tb <- .measures()
  k <- which(tb$name == method & tb$space == space)
  if (pairwise_na) tb$cost_pairwise[k] else tb$cost[k]
}

# The table of measures (names, name spaces, costs) from C, read once.
.measures <- function() {
  if (is.null(.gpucor_state$measures)) .gpucor_state$measures <- .Call(C_gpucor_measures)
  .gpucor_state$measures
}

# The engine options, one named list that src/options.c reads: the backend
# and precision of this call, the CPU threads (.threads()), the device
# memory cap (bytes, 0 = free memory), the forced GPU panel width and CPU
# tile side (0 = automatic; for tests), the progress bar, and stage timing
# (bench/gpu.R reads it from attribute "timing"); 'fun', where not NULL, is
# the user's function that engine errors and warnings name (gpu_bicor()
# runs gpu_cor()'s entry).
.engine_opts <- function(backend, precision, verbose = FALSE,
                         devices = .opt("gpucor.devices"), cols = NULL, fun = NULL,
                         mul = NULL) {
  list(gpu = backend == "gpu",
       devices = devices,
       single = precision == "single",
       threads = .threads(),
       gpu_memory = .opt("gpucor.gpu_memory"),
       gpu_panel = .opt("gpucor.gpu_slab"),
       cpu_tile = .opt("gpucor.cpu_tile"),
       # a BiocParallel worker's share, c(from1, to1, from2, to2, ...):
       # the tiles or panels whose first column (0-based) is in a [from, to)
       cols = if (!is.null(cols)) as.double(cols),
       # the bar (R/progress.R): its delay, or the enclosing call's bar
       progress = .progress_opt(),
       # verbose reads the engine's team size from the profiling attributes
       profile = .opt("gpucor.profile") || verbose,
       fun = fun,
       # gpu_cov's spreads, list(sx, sy, round): the engine multiplies the
       # correlations into covariances as they land (src/cor.c)
       mul = mul)
}
