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
  if (is.null(.gpucor_state$available)) {
    info <- gpu_info()
    .gpucor_state$available <- structure(isTRUE(info$available),
                                         reason = info$reason)
  }
  .gpucor_state$available
}

#' @rdname gpu_available
#' @return `gpu_info()`: a list with `built_with_cuda`, `available`,
#'   `reason`, `device_count`, `name`, `memory_total` and `memory_free`
#'   (bytes), `compute_capability`, `driver_version` and `runtime_version`.
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
#'   \item{`gpucor.threads`}{Number of CPU threads of the CPU engine (OpenMP).
#'     Default: every core the system reports.  Results do not depend on it.}
#' }
#'
#' The `precision` argument (`"double"` or `"single"`) applies to the GPU
#' engine; the CPU engine always computes in double precision.  This version
#' of gpucor has no GPU compute engine yet: `backend = "auto"` runs the CPU
#' engine, and `backend = "gpu"` is an error.
#'
#' @name gpucor-options
NULL

# "cpu" or "gpu" for a requested backend; errors say exactly why not.
.resolve_backend <- function(backend) {
  if (!is.character(backend) || length(backend) != 1L || is.na(backend))
    stop("'backend' must be one of \"auto\", \"cpu\", \"gpu\"", call. = FALSE)
  backend <- match.arg(backend, c("auto", "cpu", "gpu"))
  if (backend == "cpu") return("cpu")
  ok <- gpu_available()
  if (backend == "gpu") {
    if (!ok)
      stop("backend = \"gpu\" is not usable: ", attr(ok, "reason"), call. = FALSE)
    stop("backend = \"gpu\": the GPU compute engine is not part of this version ",
         "of gpucor yet; use backend = \"cpu\" or \"auto\"", call. = FALSE)
  }
  # "auto": the GPU engine does not exist yet, so the CPU runs everything.
  "cpu"
}
