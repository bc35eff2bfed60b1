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
#' The measure is a row of the engine's table (`"mim.pearson"`, ...), so
#' what [gpu_cor()] does for Pearson it does here: `y` (the block between
#' the columns of `dataset` and those of `y`, over the rows complete in
#' both; no diagonal is set to 0 there), `devices`, `BPPARAM` and
#' `output = gpu_hdf5()` (the matrix written as it is made, its diagonal 0).
#'
#' @param dataset a numeric matrix or data frame, samples in rows and
#'   variables in columns (as minet); or any input [gpu_cor()] takes as a
#'   matrix (a `SummarizedExperiment`, a `DelayedArray`, ...).
#' @param estimator `"spearman"` (minet's default), `"pearson"` or `"kendall"`.
#' @param disc,nbins minet's discretization: `disc` must be `"none"` (its
#'   default; the data are not discretized here), and `nbins`, which only
#'   a discretization uses, is accepted and not used.  They are here so
#'   that minet's calls, positions and all, run.
#' @param backend,precision,devices,verbose,BPPARAM,output as in [gpu_cor()].
#' @param y `NULL` (default), or a second matrix with the same rows
#'   (samples): the mutual information between the columns of `dataset`
#'   and those of `y` (not in minet).
#' @return The p x p mutual information matrix (p x q with `y`), dimnames
#'   from the column names; with `output`, an `HDF5Array`.
#' @seealso [gpu_knnmi()], [gpu_aracne_a()], [gpu_clr()], [gpu_mrnet()]
#' @examples
#' x <- matrix(rnorm(100 * 5), 100, 5)
#' x[, 2] <- x[, 1] + rnorm(100)
#' round(gpu_build_mim(x, "pearson"), 3)
#' @export
gpu_build_mim <- function(dataset, estimator = "spearman", disc = "none",
                          nbins = sqrt(NROW(dataset)),
                          backend = getOption("gpucor.backend", "auto"),
                          precision = c("double", "single"),
                          devices = getOption("gpucor.devices", 0L),
                          verbose = getOption("gpucor.verbose", FALSE),
                          y = NULL, BPPARAM = NULL, output = NULL) {
  .check_common()
  if (!is.character(estimator) || length(estimator) != 1L ||
      !estimator %in% c("pearson", "spearman", "kendall"))
    stop("'estimator' must be \"pearson\", \"spearman\" or \"kendall\" (gpu_knnmi() estimates mutual information without a model)",
         call. = FALSE)
  if (!identical(disc, "none"))
    stop("'disc' must be \"none\": gpu_build_mim() does not discretize the data (minet's discretized correlations are not computed here)",
         call. = FALSE)
  if (is.null(dim(dataset)) && !isS4(dataset))
    stop("'dataset' must be a matrix or data frame", call. = FALSE)
  # the diagonal (a symmetric result's) is 0 from the engine (the row's
  # zero_diag)
  .cor_run(dataset, y, "complete.obs", paste0("mim.", estimator), backend,
           precision, devices, verbose, 1L, BPPARAM, output,
           fun = "gpu_build_mim")
}
