# Voxel-wise degree centrality (functional connectivity density) from time
# series, without the n x n matrix: the engine's SINK_POWSUM in its degree
# mode (src/cor.c gpucor_degree, src/engine/sink_powsum.c, cuda/pack.cu).

#' Degree centrality of every node from its time series, never n x n
#'
#' For every column of `x` (a voxel or a region; time points in rows, as
#' in [gpu_cor()]), the number of other columns whose correlation with it
#' is above `threshold` -- binary degree centrality, or functional
#' connectivity density -- and the sum of those correlations -- weighted
#' degree centrality -- as AFNI's `3dDegreeCentrality` and BCT's
#' `degrees_und()`/`strengths_und()` of the thresholded network report
#' them.  The correlations are made in tiles and reduced where they are
#' made (on the GPU, in device memory); the `ncol(x)` x `ncol(x)` matrix is
#' never held, so 200,000 voxels take the memory of the data.
#'
#' The values are those of thresholding `gpu_cor(x, method = method, use =
#' use)` (the same engine, bit for bit on the CPU engine): a pair counts
#' when its correlation `r` is strictly above `threshold` (`negative =
#' "exclude"`, AFNI's rule) or when `abs(r)` is (`negative = "include"`;
#' then the weighted degree sums `abs(r)`).  A pair whose correlation is
#' `NA` (a constant column, or too few common observations) counts for
#' neither node.  The diagonal is left out.  Differences from AFNI:
#' Spearman and Kendall are available (AFNI disables Spearman), and the
#' threshold is exact: ties with `threshold` are resolved by the value
#' itself, never approximately, and a `density` is met exactly up to ties.
#'
#' @param x A numeric matrix or data frame: time points (observations) in
#'   rows, nodes (voxels, regions) in columns; or any container
#'   [gpu_cor()] takes.
#' @param threshold The cut: a pair is an edge when its correlation is
#'   above it; a number in `[-1, 1)`, and in `[0, 1)` with `negative =
#'   "include"`.  Give it or `density`.
#' @param density Instead of `threshold`, a fraction in `(0, 1]` of the
#'   `p (p - 1) / 2` pairs: the `round(density * p (p - 1) / 2)` strongest
#'   are edges (as [gpu_cor_edges()]`(density =)` counts them), found
#'   exactly by histogram passes over the correlations (up to four passes
#'   before the counting one), and every pair tied with the weakest of them
#'   is an edge too, so that ties never depend on the order of the nodes
#'   (AFNI's sparsity is approximate under ties; [gpu_cor_edges()] breaks
#'   them by position).  The result then has attributes `cut` (the weakest
#'   value kept) and `edges` (how many pairs were kept).
#' @param method `"pearson"` (default), `"spearman"` or `"kendall"`.
#' @param negative `"exclude"` (default): only correlations above
#'   `threshold` count; `"include"`: absolute values are compared and summed.
#' @param use As in [stats::cor()].
#' @inheritParams gpu_cor
#' @return A data frame with one row per column of `x`: `node` (its name,
#'   or its number), `degree` (the number of edges, a double) and
#'   `strength` (the sum of their weights); with `density`, attributes
#'   `cut` and `edges`.
#' @seealso [gpu_cor_edges()] for the edges themselves, [gpu_network_metrics()]
#' @examples
#' x <- matrix(rnorm(100 * 30), 100, 30)
#' x[, 2:4] <- x[, 2:4] + x[, 1]
#' gpu_degree_centrality(x, threshold = 0.5)[1:5, ]
#' @export
gpu_degree_centrality <- function(x, threshold = NULL, density = NULL,
                                  method = c("pearson", "spearman", "kendall"),
                                  negative = c("exclude", "include"), use = "everything",
                                  backend = getOption("gpucor.backend", "auto"),
                                  precision = c("double", "single"),
                                  devices = getOption("gpucor.devices", 0L),
                                  verbose = getOption("gpucor.verbose", FALSE), assay = 1L) {
  .check_common()
  method <- match.arg(method)
  negative <- match.arg(negative)
  if (is.null(threshold) == is.null(density))
    stop("give one of 'threshold' and 'density'", call. = FALSE)
  lo <- if (negative == "include") 0 else -1
  if (!is.null(threshold) &&
      (!is.numeric(threshold) || length(threshold) != 1L || is.na(threshold) ||
       threshold < lo || threshold >= 1))
    stop(sprintf("'threshold' must be one number in [%g, 1)%s", lo,
                 if (negative == "include") " with negative = \"include\"" else ""),
         call. = FALSE)
  if (!is.null(density) &&
      (!is.numeric(density) || length(density) != 1L || is.na(density) || density <= 0 ||
       density > 1))
    stop("'density' must be one number in (0, 1]", call. = FALSE)
  if (is.atomic(x) && is.null(dim(x)))
    stop("'x' must be a matrix (time points in rows, nodes in columns)", call. = FALSE)
  inp <- .cor_input(x, NULL, use, method, assay)
  x <- inp$x
  pairwise_na <- inp$use == "pairwise.complete.obs" && anyNA(x)
  backend <- .cor_backend(backend, ncol(x), NULL, inp$nobs, method, pairwise_na)
  fun <- "gpu_degree_centrality"
  r <- .engine_call(
    .Call(C_gpucor_degree, x, method, inp$use, inp$rows,
          if (is.null(threshold)) NA_real_ else as.double(threshold),
          if (is.null(density)) NA_real_ else as.double(density),
          negative == "include", .engine_opts(backend, precision, verbose, devices, fun = fun)),
    fun, backend, precision, devices, verbose)
  if (isTRUE(attr(r, "sd0"))) warning("the standard deviation is zero", call. = FALSE)
  node <- if (is.null(inp$cx)) seq_len(ncol(x)) else inp$cx
  out <- data.frame(node = node, degree = r[, 1L], strength = r[, 2L],
                    stringsAsFactors = FALSE)
  if (!is.null(density)) {
    attr(out, "cut") <- attr(r, "cut")
    attr(out, "edges") <- attr(r, "edges")
  }
  out
}
