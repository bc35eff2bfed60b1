#' gpucor: exact correlation and distance matrices on GPUs and CPUs
#'
#' [gpu_cor()] and [gpu_dist()] compute what [stats::cor()] and
#' [stats::dist()] compute, with the same values and semantics, on an NVIDIA
#' GPU when one is usable and otherwise with a tiled, multi-threaded C
#' engine.  See [gpucor-options] for the backend and thread options and
#' [gpu_available()] for the device.
#'
#' @useDynLib gpucor, .registration = TRUE, .fixes = "C_"
#' @keywords internal
"_PACKAGE"
