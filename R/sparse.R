# gpu_cor() of a sparse matrix (Matrix's dgCMatrix, or a
# SummarizedExperiment whose assay is one) without making it dense:
# src/cpu/sparse.c computes G = X'X from each row's stored values and the
# covariances as G - n m m' in long double.

# The dgCMatrix whose columns are the variables, or NULL when x is not
# sparse in that form.
.sparse_of <- function(x, assay, features_are_variables) {
  if (inherits(x, "SummarizedExperiment")) {
    m <- SummarizedExperiment::assay(x, assay, withDimnames = TRUE)
    if (!inherits(m, "dgCMatrix")) return(NULL)
    return(if (features_are_variables) Matrix::t(m) else m)
  }
  if (inherits(x, "dgCMatrix")) x else NULL
}

# The correlation matrix of sparse x, or NULL where the sparse route does
# not apply and the caller makes x dense: Kendall, NA among the values,
# fewer than two rows, backend = "gpu" (asked for by name), or a column
# whose mean is too large against its spread for the sparse formula.
.sparse_cor <- function(x, use, method, backend, verbose) {
  if (!method %in% c("pearson", "spearman") || anyNA(x@x) || nrow(x) < 2L ||
      ncol(x) == 0L || !identical(backend, "auto") && !identical(backend, "cpu"))
    return(NULL)
  # every 'use' is "everything" without NA; all.obs has nothing to refuse
  .stats_use(use)
  p <- ncol(x)
  .memory_guard(8 * as.double(p) * p + 16 * as.double(length(x@x)) + 8 * nrow(x),
                sprintf("gpu_cor(): the %d x %d result", p, p),
                "Compute it in blocks of columns of 'y'.")
  r <- .engine_call(.Call(C_gpucor_sparse_cor, x@p, x@i, x@x, nrow(x), method == "spearman",
                          .engine_opts("cpu", "double", verbose, 0L)),
                    "gpu_cor", "cpu", verbose = verbose,
                    report = function(s, th) if (!is.null(th))   # NULL: not taken
                      message(sprintf("gpu_cor: CPU engine (sparse columns), %d thread%s, %.3f s",
                                      th, if (identical(th, 1L)) "" else "s", s)))
  if (is.null(r)) return(NULL)
  sd0 <- isTRUE(attr(r, "sd0"))
  attributes(r) <- list(dim = c(p, p))
  cn <- colnames(x)
  if (!is.null(cn)) dimnames(r) <- list(cn, cn)
  if (sd0) warning("the standard deviation is zero")
  r
}
