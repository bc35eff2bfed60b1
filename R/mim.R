# minet's build.mim with a correlation estimator: the Gaussian mutual
# information, an epilogue of the correlation measures (src/engine/engine.h,
# EPI_GAUSS_MI; the "mim.*" rows of src/engine/measure.c).

#' Gaussian mutual information matrix, as minet's build.mim computes it
#'
#' `gpu_build_mim()` computes what `minet::build.mim(dataset, estimator)`
#' computes for its correlation estimators: the mutual information of two
#' variables under a bivariate normal model, `-0.5 * log(1 - r^2)`, from
#' Pearson's, Spearman's or Kendall's correlation `r` over the complete
#' observations (`use = "complete.obs"`), with `r^2` capped at 0.999999
#' and a zero diagonal.  The correlations come from the GPU or CPU engine
#' and the transform is applied as each tile lands (no second p x p pass).
#'
#' Differences from minet: only the correlation estimators (`"pearson"`,
#' `"spearman"`, `"kendall"`); minet's discretizing estimators
#' (`"mi.empirical"`, `"mi.mm"`, `"mi.shrink"`, `"mi.sg"`) are not here —
#' [gpu_knnmi()] computes Kraskov's k-nearest-neighbour estimate instead.
#' A constant column gives `NA` (and stats' warning), as `cor()` does
#' inside minet.
#'
#' @param dataset a numeric matrix or data frame, samples in rows and
#'   variables in columns (as minet).
#' @param estimator `"spearman"` (minet's default), `"pearson"` or `"kendall"`.
#' @param backend,precision,devices as in [gpu_cor()].
#' @return The p x p mutual information matrix, dimnames from
#'   `colnames(dataset)`.
#' @seealso [gpu_knnmi()], [gpu_aracne_a()], [gpu_clr()], [gpu_mrnet()]
#' @examples
#' x <- matrix(rnorm(100 * 5), 100, 5)
#' x[, 2] <- x[, 1] + rnorm(100)
#' round(gpu_build_mim(x, "pearson"), 3)
#' @export
gpu_build_mim <- function(dataset, estimator = "spearman",
                          backend = getOption("gpucor.backend", "auto"),
                          precision = c("double", "single"),
                          devices = getOption("gpucor.devices", 0L)) {
  if (!is.character(estimator) || length(estimator) != 1L ||
      !estimator %in% c("pearson", "spearman", "kendall"))
    stop("'estimator' must be \"pearson\", \"spearman\" or \"kendall\" (gpu_knnmi() estimates mutual information without a model)",
         call. = FALSE)
  precision <- match.arg(precision)
  devices <- .check_devices(devices)
  inp <- .cor_input(dataset, NULL, "complete.obs", estimator, 1L)
  x <- inp$x
  if (!inp$matrix_result) stop("'dataset' must be a matrix or data frame", call. = FALSE)
  p <- ncol(x)
  .memory_guard(8 * as.double(p) * p, sprintf("gpu_build_mim(): the %d x %d result", p, p), "")
  method <- paste0("mim.", estimator)
  backend <- .resolve_backend(backend, work = as.double(p) * p / 2 * inp$nobs *
                                .cpu_cost(method, FALSE))
  opts <- .engine_opts(backend, precision, FALSE, devices, fun = "gpu_build_mim")
  r <- .engine_call(.Call(C_gpucor_cor, x, NULL, method, "complete.obs", inp$rows, opts, NULL),
                    "gpu_build_mim", backend, precision, devices, FALSE)
  sd0 <- isTRUE(attr(r, "sd0"))
  attributes(r) <- list(dim = c(p, p))
  diag(r) <- 0
  if (!is.null(inp$cx)) dimnames(r) <- list(inp$cx, inp$cx)
  if (sd0) warning("the standard deviation is zero")
  r
}
