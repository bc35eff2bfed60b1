# gpu_cor() of an input larger than one block -- a DelayedArray (HDF5Array
# and friends), a big.matrix, or a SummarizedExperiment holding a
# DelayedArray -- without making it dense whole: whole columns are read in
# blocks of DelayedArray's block size (DelayedArray::getAutoBlockSize(),
# 100 MB unless set), and the result is made block pair by block pair, so
# at most two blocks of the input are dense at a time.  Whole columns make
# every column's mean and spread exact as for the dense input; the
# complete-case modes read the blocks once first to find the complete rows.

# The source to read in blocks (variables in columns), or NULL.
.block_source <- function(x, assay) {
  if (inherits(x, "SummarizedExperiment")) {
    m <- SummarizedExperiment::assay(x, assay, withDimnames = TRUE)
    if (!inherits(m, "DelayedArray")) return(NULL)
    return(getExportedValue("BiocGenerics", "t")(m))   # lazy: genes become columns
  }
  if (inherits(x, c("DelayedArray", "big.matrix"))) x else NULL
}

.block_bytes <- function()
  if (requireNamespace("DelayedArray", quietly = TRUE)) DelayedArray::getAutoBlockSize() else 1e8

# The correlation matrix of x (and y) read in column blocks, or NULL when
# both fit one block or a side is not a matrix (the caller then reads them
# whole).  A side that is an ordinary matrix is cut into the same blocks.
.blocked_cor <- function(x, y, use, method, backend, precision, devices, verbose) {
  ok_side <- function(v) is.null(v) || is.matrix(v) || isS4(v)
  if (!ok_side(x) || !ok_side(y)) return(NULL)
  n <- nrow(x)
  if (!is.null(y) && nrow(y) != n) stop("incompatible dimensions")
  p <- ncol(x)
  q <- if (is.null(y)) p else ncol(y)
  w <- max(1, floor(.block_bytes() / (8 * max(n, 1))))
  if ((p <= w && q <= w) || n < 2L) return(NULL)
  use_name <- .stats_use(use)
  read <- function(v, cols) {
    b <- v[, cols, drop = FALSE]
    .as_double_matrix(.check_cor_input(if (is.matrix(b)) b else as.matrix(b), "x"))
  }
  cut <- function(m) lapply(seq(1, m, by = w), function(s) s:min(m, s + w - 1))
  bx <- cut(p)
  by <- if (is.null(y)) bx else cut(q)
  sides <- if (is.null(y)) list(list(x, bx)) else list(list(x, bx), list(y, by))
  cx <- colnames(x)
  cy <- if (is.null(y)) cx else colnames(y)
  rows <- NULL
  if (use_name == "all.obs")
    for (sd in sides) for (b in sd[[2]])
      if (anyNA(read(sd[[1]], b))) stop("missing observations in cov/cor")
  if (use_name %in% c("complete.obs", "na.or.complete")) {
    ok <- rep(TRUE, n)
    for (sd in sides) for (b in sd[[2]]) ok <- ok & stats::complete.cases(read(sd[[1]], b))
    if (!any(ok)) {
      if (use_name == "complete.obs") stop("no complete element pairs")
      r <- matrix(NA_real_, p, q)
      if (!is.null(cx) || !is.null(cy)) dimnames(r) <- list(cx, cy)
      return(r)
    }
    if (!all(ok)) rows <- which(ok)
  }
  .memory_guard(8 * (as.double(p) * q + 4 * as.double(n) * w),
                sprintf("gpu_cor(): the %d x %d result", p, q),
                "Compute it in blocks of columns of 'y'.")
  get <- function(v, b) {
    m <- read(v, b)
    if (is.null(rows)) m else m[rows, , drop = FALSE]
  }
  # the complete rows hold no NA: from here every mode is "everything"
  # there, except pairwise, which is per pair anyway
  u <- if (use_name %in% c("complete.obs", "na.or.complete", "all.obs")) "everything" else use_name
  t0 <- proc.time()[["elapsed"]]
  r <- matrix(NA_real_, p, q)
  sd0 <- FALSE
  zero_var <- logical(p)
  one <- function(A, B) withCallingHandlers(
    gpu_cor(A, B, u, method, backend, precision, devices, FALSE),
    warning = function(w) if (identical(conditionMessage(w), "the standard deviation is zero")) {
      sd0 <<- TRUE
      invokeRestart("muffleWarning")
    })
  for (a in seq_along(bx)) {
    A <- get(x, bx[[a]])
    if (!is.null(y)) {
      for (b in seq_along(by)) r[bx[[a]], by[[b]]] <- one(A, get(y, by[[b]]))
      next
    }
    r[bx[[a]], bx[[a]]] <- one(A, NULL)
    # stats' rule without y (a variance that is 0 in a double): the block
    # pairs below are made with y, whose rule looks at the sd instead
    if (u != "pairwise.complete.obs" && method != "kendall")
      zero_var[bx[[a]]] <- vapply(seq_len(ncol(A)), function(j) {
        v <- if (method == "spearman") stats::var(rank(A[, j], na.last = "keep"))
             else stats::var(A[, j])
        !is.na(v) && v == 0
      }, logical(1))
    for (b in seq_along(bx)[-seq_len(a)]) {
      val <- one(A, get(x, bx[[b]]))
      r[bx[[a]], bx[[b]]] <- val
      r[bx[[b]], bx[[a]]] <- t(val)
    }
  }
  if (any(zero_var)) {
    d <- diag(r)
    r[zero_var, ] <- NA_real_
    r[, zero_var] <- NA_real_
    diag(r) <- d
    sd0 <- TRUE
  }
  if (verbose)
    message(sprintf("gpu_cor: %d x %d blocks of up to %d columns, %.3f s", length(bx),
                    length(by), w, proc.time()[["elapsed"]] - t0))
  if (!is.null(cx) || !is.null(cy)) dimnames(r) <- list(cx, cy)
  if (sd0) warning("the standard deviation is zero")
  r
}
