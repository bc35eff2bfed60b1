# gpu_cor() of an input larger than one block -- a DelayedArray (HDF5Array
# and friends), a big.matrix, or a SummarizedExperiment holding a
# DelayedArray -- without making it dense whole: whole columns are read in
# blocks of DelayedArray's block size (DelayedArray::getAutoBlockSize(),
# 100 MB unless set), and the result is made block pair by block pair, so
# at most two blocks of the input are dense at a time.  Whole columns make
# every column's mean and spread exact as for the dense input; the
# complete-case modes read the blocks once first to find the complete rows.

# The source to read in blocks, or NULL: as it is (gpu_dist()'s items in
# rows), or with a SummarizedExperiment's features as columns (gpu_cor()'s
# variables).
.block_source <- function(x, assay, features_are_variables = TRUE) {
  if (inherits(x, "SummarizedExperiment")) {
    m <- SummarizedExperiment::assay(x, assay, withDimnames = TRUE)
    if (!inherits(m, "DelayedArray")) return(NULL)
    if (!features_are_variables) return(m)
    return(getExportedValue("BiocGenerics", "t")(m))   # lazy: genes become columns
  }
  if (inherits(x, c("DelayedArray", "big.matrix"))) x else NULL
}

.block_bytes <- function()
  if (requireNamespace("DelayedArray", quietly = TRUE)) DelayedArray::getAutoBlockSize() else 1e8

# The correlation matrix of x (and y) read in column blocks, or NULL when
# both fit one block or a side is not a matrix (the caller then reads them
# whole).  A side that is an ordinary matrix is cut into the same blocks.
# cov: the covariances instead (gpu_cov() of each block pair; stats' zero-sd
# rules and warning are cor()'s only).  BPPARAM: the block pairs are made by
# BiocParallel's workers (.bp_tiles()), whatever the input's size.
.blocked_cor <- function(x, y, use, method, backend, precision, devices, verbose,
                         cov = FALSE, BPPARAM = NULL) {
  ok_side <- function(v) is.null(v) || is.matrix(v) || isS4(v)
  if (!ok_side(x) || !ok_side(y)) return(NULL)
  n <- nrow(x)
  if (!is.null(y) && nrow(y) != n) stop("incompatible dimensions")
  p <- ncol(x)
  q <- if (is.null(y)) p else ncol(y)
  w <- max(1, floor(.block_bytes() / (8 * max(n, 1))))
  if (!is.null(BPPARAM)) {
    if (p == 0L || q == 0L || n < 2L) return(NULL)
    # at least two blocks a worker along x, so every worker has tiles
    nw <- BiocParallel::bpnworkers(BPPARAM)
    w <- min(w, max(1, ceiling(p / (2 * nw))))
  } else if ((p <= w && q <= w) || n < 2L) {
    return(NULL)
  }
  use_name <- .stats_use(use)
  read <- function(v, cols) .read_block(v, cols, NULL)
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
    # one complete row: stats' rules of that case are the whole input's
    if (sum(ok) < 2L) return(NULL)
  }
  .memory_guard(8 * (as.double(p) * q + 4 * as.double(n) * w),
                sprintf("%s(): the %d x %d result", if (cov) "gpu_cov" else "gpu_cor", p, q),
                "Compute it in blocks of columns of 'y'.")
  get <- function(v, b) .read_block(v, b, rows)
  # the complete rows hold no NA: from here every mode is "everything"
  # there, except pairwise, which is per pair anyway
  u <- if (use_name %in% c("complete.obs", "na.or.complete", "all.obs")) "everything" else use_name
  t0 <- proc.time()[["elapsed"]]
  if (!is.null(BPPARAM))
    return(.bp_cor(x, y, bx, by, rows, u, method, backend, precision, devices, verbose,
                   cov, BPPARAM, cx, cy, t0))
  step <- .loop_progress(if (is.null(y)) length(bx) * (length(bx) + 1) / 2
                         else length(bx) * length(by), if (cov) "gpu_cov" else "gpu_cor")
  r <- matrix(NA_real_, p, q)
  sd0 <- FALSE
  zero_var <- nafree <- logical(p)
  # a tile's value (.tile_value() or .diag_tile()) counted
  one <- function(v) {
    sd0 <<- sd0 || v$sd0
    step()
    v
  }
  tile <- function(A, B) one(.tile_value(A, B, u, method, backend, precision, devices, cov))$val
  for (a in seq_along(bx)) {
    A <- get(x, bx[[a]])
    if (!is.null(y)) {
      for (b in seq_along(by)) r[bx[[a]], by[[b]]] <- tile(A, get(y, by[[b]]))
      next
    }
    v <- one(.diag_tile(A, a, u, method, backend, precision, devices, cov))
    r[bx[[a]], bx[[a]]] <- v$val
    if (!cov) {
      zero_var[bx[[a]]] <- v$zero_var
      nafree[bx[[a]]] <- v$nafree
    }
    for (b in seq_along(bx)[-seq_len(a)]) {
      val <- tile(A, get(x, bx[[b]]))
      r[bx[[a]], bx[[b]]] <- val
      r[bx[[b]], bx[[a]]] <- t(val)
    }
  }
  if (verbose)
    message(sprintf("%s: %d x %d blocks of up to %d columns, %.3f s",
                    if (cov) "gpu_cov" else "gpu_cor", length(bx),
                    length(by), w, proc.time()[["elapsed"]] - t0))
  .tiles_finish(r, zero_var, nafree, sd0, cx, cy)
}

# The values of one block pair (B NULL: A against itself) and whether
# stats' zero-sd warning came (muffled).
.tile_value <- function(A, B, u, method, backend, precision, devices, cov) {
  sd0 <- FALSE
  val <- withCallingHandlers(
    if (cov) gpu_cov(A, B, u, method, backend, precision, devices, FALSE)
    else .cor_run(A, B, u, method, backend, precision, devices, FALSE, 1L, NULL, NULL),
    warning = function(w) if (identical(conditionMessage(w), "the standard deviation is zero")) {
      sd0 <<- TRUE
      invokeRestart("muffleWarning")
    })
  list(val = val, sd0 = sd0)
}

# A diagonal block pair (A, block a of x, against itself): its value and
# whether the warning of stats' rule of cor() without y comes from its
# columns as part of the whole x, not A alone.  That rule (cov_na_1, the
# engine's gc_sd0_rule()) warns for an NA-free column of zero spread
# anywhere but first, or one that an NA-free column follows; A's own call
# sees its first column as the first, so in a later block whether that
# column is NA-free with zero spread is asked of the engine's rule on the
# column twice.  (A zero-spread column of block 1 that NA-free columns of
# later blocks follow: the block pairs off the diagonal warn.)  Also its
# columns of zero variance and its NA-free columns (.tiles_finish()).
.diag_tile <- function(A, a, u, method, backend, precision, devices, cov) {
  v <- .tile_value(A, NULL, u, method, backend, precision, devices, cov)
  if (cov) return(v)
  if (a > 1L && !v$sd0 && u != "pairwise.complete.obs" && ncol(A) > 0L)
    v$sd0 <- suppressWarnings(.tile_value(A[, c(1L, 1L), drop = FALSE], NULL, u, method,
                                          backend, precision, devices, FALSE))$sd0
  v$zero_var <- .zero_var(A, u, method)
  v$nafree <- vapply(seq_len(ncol(A)), function(j) !anyNA(A[, j]), NA)
  v
}

# The assembled tiles with stats' zero-variance rule (columns zero_var, a
# variance 0 in a double, which the block pairs off the diagonal, made
# with y, do not see: their rule looks at the sd), dimnames and the
# zero-sd warning.  Such a column warns as in stats' rule without y
# (.diag_tile()): unless it is the first and no other column is NA-free
# (nafree).
.tiles_finish <- function(r, zero_var, nafree, sd0, cx, cy) {
  if (any(zero_var)) {
    d <- diag(r)
    r[zero_var, ] <- NA_real_
    r[, zero_var] <- NA_real_
    diag(r) <- d
    if (max(which(zero_var)) > 1L || sum(nafree) > 1L) sd0 <- TRUE
  }
  if (!is.null(cx) || !is.null(cy)) dimnames(r) <- list(cx, cy)
  if (sd0) warning("the standard deviation is zero", call. = FALSE)
  r
}

# gpu_dist() of such an input (items in rows) larger than one block: whole
# rows are read in blocks (a distance needs every coordinate of its two
# rows), and the 'dist' is made block pair by block pair, so at most two
# blocks are dense at a time.  The engine has no distances between two
# sets of rows, so the pairs of blocks a < b come from the 'dist' of their
# rows together, of which the pairs across are kept (and those within a
# block once): about twice the arithmetic of one call on the whole input,
# each pair with the same arithmetic as there.  Returns the packed
# distances with gpu_dist()'s attributes "sd0" and "nonfinite", or NULL
# when the input fits one block (the caller reads it whole).
.blocked_dist <- function(x, m, p, backend, precision, devices, verbose) {
  n <- nrow(x)
  k <- ncol(x)
  w <- max(1, floor(.block_bytes() / (8 * max(k, 1))))
  if (n <= w) return(NULL)
  w <- min(w, 8192)       # two blocks' 'dist' (2w)^2 / 2 doubles: up to 1 GiB
  len <- as.double(n) * (n - 1) / 2
  .memory_guard(8 * (len + 2 * (2 * w)^2 + 4 * as.double(w) * (k + 4)),
                sprintf("gpu_dist(): the 'dist' of %d rows", n),
                paste("Cluster a subset of the rows, or compute the distances",
                      "between blocks of rows."))
  backend <- .dist_backend(backend, NULL, m, n, k, FALSE)
  blocks <- lapply(seq(1, n, by = w), function(s) s:min(n, s + w - 1))
  K <- length(blocks)
  read <- function(b) .dist_input(x[blocks[[b]], , drop = FALSE], 1L)
  # where column i's pairs (i, j > i) start in the packed vector of size s
  start <- function(i, s) (i - 1) * s - i * (i - 1) / 2
  d <- numeric(len)
  sd0 <- nonfinite <- FALSE
  t0 <- proc.time()[["elapsed"]]
  step <- .loop_progress(K * (K - 1) / 2, "gpu_dist")
  for (a in seq_len(K - 1L)) {
    A <- read(a)
    ra <- blocks[[a]]
    for (b in (a + 1L):K) {
      rb <- blocks[[b]]
      dl <- .dist_run(rbind(A, read(b)), m, p, backend, precision, devices, FALSE)
      step()
      sd0 <- sd0 || isTRUE(attr(dl, "sd0"))
      nonfinite <- nonfinite || isTRUE(attr(dl, "nonfinite"))
      la <- length(ra)
      lb <- length(rb)
      s <- la + lb
      # within a block: once, from its first pair (the last block: its last)
      own_a <- b == a + 1L
      own_b <- b == K && a == K - 1L
      for (u in seq_len(s - 1L)) {
        lo <- start(u, s)
        if (u <= la) {
          i <- ra[u]
          g <- start(i, n)
          if (own_a && u < la)
            d[g + seq_len(la - u)] <- dl[lo + seq_len(la - u)]
          d[g + (rb[1L] - i) - 1 + seq_len(lb)] <- dl[lo + (la - u) + seq_len(lb)]
        } else if (own_b) {
          i <- rb[u - la]
          d[start(i, n) + seq_len(s - u)] <- dl[lo + seq_len(s - u)]
        }
      }
    }
  }
  if (verbose)
    message(sprintf("gpu_dist: %d blocks of up to %d rows (%d pairs of blocks), %.3f s",
                    K, w, K * (K - 1L) / 2L, proc.time()[["elapsed"]] - t0))
  if (sd0) attr(d, "sd0") <- TRUE
  if (nonfinite) attr(d, "nonfinite") <- TRUE
  d
}

# Columns [cols] of v (a matrix, DelayedArray or big.matrix) as a checked
# double matrix, of the rows 'rows' (NULL: all).
.read_block <- function(v, cols, rows) {
  b <- v[, cols, drop = FALSE]
  m <- .as_double_matrix(.check_cor_input(if (is.matrix(b)) b else as.matrix(b), "x"))
  if (is.null(rows)) m else m[rows, , drop = FALSE]
}

# stats' zero-sd rule of cor() without y, for the columns of a diagonal
# block A (a variance that is 0 in a double): the block pairs off the
# diagonal are made with y, whose rule looks at the sd instead.
.zero_var <- function(A, u, method) {
  method <- .cor_base(method)
  # (the shrinkage estimates' prepared columns have no such rule)
  if (u == "pairwise.complete.obs" || !method %in% c("pearson", "spearman"))
    return(logical(ncol(A)))
  vapply(seq_len(ncol(A)), function(j) {
    v <- if (method == "spearman") stats::var(rank(A[, j], na.last = "keep"))
         else stats::var(A[, j])
    !is.na(v) && v == 0
  }, logical(1))
}
