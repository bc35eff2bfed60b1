# Inputs on disk or outside R's memory -- a DelayedArray (HDF5Array and
# friends), a big.matrix, or a SummarizedExperiment holding a DelayedArray --
# read at the disk's pace.  .read_dense() reads one rectangle of such an
# input into one double matrix, in reads of whole chunks of the file
# (chunkdim()) of at most DelayedArray's block size each, so every chunk is
# decompressed once.  An input that fits the memory budget
# (.read_budget(), option gpucor.block_memory) is read once and computed
# as an in-memory matrix; gpu_cor() of a larger one makes the result block
# pair by block pair from column blocks of half the budget (at most two
# blocks dense at a time), and gpu_dist() from row blocks.  Whole columns
# make every column's mean and spread exact as for the dense input; the
# complete-case modes read the blocks once first to find the complete rows.

# Bytes of an on-disk input held dense at a time: option
# gpucor.block_memory, else a quarter of the memory available (Linux), at
# most 2 GiB and no less than 64 MiB; 2 GiB where that is unknown.
.read_budget <- function() {
  v <- .opt("gpucor.block_memory")
  if (!is.null(v)) return(max(v, 8))
  a <- .mem_available()[[1L]]
  if (is.na(a)) 2^31 else max(2^26, min(2^31, a / 4))
}

# The ranges lo..hi cut at most 'step' long, each ending on a boundary of
# the grid of 'chunk' (from index 1) where it can: a read then covers whole
# chunks.
.grid_ranges <- function(lo, hi, step, chunk) {
  out <- list()
  s <- lo
  while (s <= hi) {
    e <- s - 1 + step
    if (e < hi && (a <- (e %/% chunk) * chunk) >= s) e <- a
    e <- min(e, hi)
    out[[length(out) + 1L]] <- c(s, e)
    s <- e + 1
  }
  out
}

# The rows 'rows' and columns 'cols' (ranges, NULL: all) of v, a 2-D
# DelayedArray or big.matrix, as one double matrix with v's dimnames,
# filled by reads of whole chunks of at most .block_bytes() each (a read
# larger than that only where one chunk is): bands of whole chunk rows
# across every column asked where one fits, else a row of chunks in groups
# of columns.  Without chunk geometry (an in-memory seed, a contiguous
# HDF5 dataset, a big.matrix: all column-major) groups of whole columns.
# A DelayedArray of another type (character, complex) comes back as
# as.matrix() makes it, for the caller's own checks to refuse.  Counts its
# reads in .gpucor_state$reads (verbose messages, bench/hdf5_read.R).
.read_dense <- function(v, rows = NULL, cols = NULL) {
  delayed <- inherits(v, "DelayedArray")
  if (is.null(rows)) rows <- seq_len(nrow(v))
  if (is.null(cols)) cols <- seq_len(ncol(v))
  if (delayed && !DelayedArray::type(v) %in% c("double", "integer", "logical"))
    return(as.matrix(v[rows, cols, drop = FALSE]))
  nr <- length(rows)
  nc <- length(cols)
  out <- matrix(0, nr, nc)
  if (nr > 0L && nc > 0L) {
    cd <- if (delayed) DelayedArray::chunkdim(v)
    if (is.null(cd)) cd <- c(nrow(v), 1L)
    cr <- min(cd[1L], nr)
    B <- .block_bytes()
    if (8 * as.double(cr) * nc <= B) {
      h <- cd[1L] * max(1, floor(B / (8 * as.double(cd[1L]) * nc)))
      w <- nc
    } else {
      h <- cd[1L]
      w <- cd[2L] * max(1, floor(B / (8 * as.double(cr) * cd[2L])))
    }
    i0 <- rows[1L] - 1L
    j0 <- cols[1L] - 1L
    for (ri in .grid_ranges(rows[1L], rows[nr], h, cd[1L]))
      for (cj in .grid_ranges(cols[1L], cols[nc], w, cd[2L])) {
        r <- ri[1L]:ri[2L]
        cc <- cj[1L]:cj[2L]
        # (big.matrix's `[` gives a matrix; base::as.matrix does not see its
        # S4 method from here)
        blk <- if (delayed) DelayedArray::extract_array(v, list(r, cc))
               else if (inherits(v, "big.matrix")) v[r, cc, drop = FALSE]
               else as.matrix(v[r, cc, drop = FALSE])
        # (whole columns without a row index: a faster assignment)
        if (length(r) == nr) out[, cc - j0] <- blk else out[r - i0, cc - j0] <- blk
        .count_reads(1)
      }
  }
  dn <- dimnames(v)
  if (!is.null(dn))
    dimnames(out) <- list(if (!is.null(dn[[1L]])) dn[[1L]][rows],
                          if (!is.null(dn[[2L]])) dn[[2L]][cols])
  out
}

# An n x n (or any 2-D) input of the functions that take a matrix whole
# (an adjacency, a weight or MI matrix): a DelayedArray (such as a
# gpu_hdf5() result, or a delayed operation on one) or a big.matrix read
# by .read_dense() into the one double matrix the engine is given, never
# densified whole by as.matrix(); anything else as it is.
.on_disk_matrix <- function(v) {
  if (inherits(v, c("DelayedArray", "big.matrix")) && length(dim(v)) == 2L) .read_dense(v)
  else v
}

# w rounded down to a multiple of v's chunk along dimension k, where it is
# at least one chunk (a block of whole chunks decompresses each chunk once).
.chunk_multiple <- function(w, v, k) {
  cd <- if (inherits(v, "DelayedArray")) DelayedArray::chunkdim(v)
  if (is.null(cd) || w < cd[k]) w else w %/% cd[k] * cd[k]
}

# The reads .read_dense() has made in this session (n = 0: just the count).
.count_reads <- function(n = 0) {
  k <- .gpucor_state$reads
  .gpucor_state$reads <- (if (is.null(k)) 0 else k) + n
}

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

# Bytes of one read of a file: DelayedArray's block size (100 MB unless
# DelayedArray::setAutoBlockSize() was called).
.block_bytes <- function()
  if (requireNamespace("DelayedArray", quietly = TRUE)) DelayedArray::getAutoBlockSize() else 1e8

# The correlation matrix of x (and y) read in column blocks, or NULL when
# the on-disk sides fit the budget together (.read_budget()) or a side is
# not a matrix (the caller then reads them whole, once: .as_input()).  A
# block is as wide as half the budget allows; a side that is an ordinary
# matrix is cut into the same blocks.
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
  budget <- .read_budget()
  w <- max(1, floor(budget / (16 * max(n, 1))))
  if (!is.null(BPPARAM)) {
    if (p == 0L || q == 0L || n < 2L) return(NULL)
    # at least two blocks a worker along x, so every worker has tiles
    nw <- BiocParallel::bpnworkers(BPPARAM)
    w <- min(w, max(1, ceiling(p / (2 * nw))))
  } else if (8 * as.double(n) * (isS4(x) * p + (!is.null(y) && isS4(y)) * q) <= budget ||
             n < 2L) {
    return(NULL)
  }
  # blocks of whole chunks of x's file where a block is as wide as a chunk
  w <- .chunk_multiple(w, x, 2L)
  reads0 <- .count_reads()
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
    message(sprintf("%s: %d x %d blocks of up to %d columns (%s of memory), %.0f reads, %.3f s",
                    if (cov) "gpu_cov" else "gpu_cor", length(bx), length(by), w,
                    .fmt_bytes(budget), .count_reads() - reads0,
                    proc.time()[["elapsed"]] - t0))
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

# gpu_dist() of such an input (items in rows) larger than the budget: whole
# rows are read in blocks (a distance needs every coordinate of its two
# rows), and the 'dist' is made block pair by block pair, so at most two
# blocks are dense at a time.  The engine has no distances between two
# sets of rows, so the pairs of blocks a < b come from the 'dist' of their
# rows together, of which the pairs across are kept (and those within a
# block once): about twice the arithmetic of one call on the whole input,
# each pair with the same arithmetic as there.  Returns the packed
# distances with gpu_dist()'s attributes "sd0" and "nonfinite", or NULL
# when the input fits the budget (the caller reads it whole, once).
.blocked_dist <- function(x, m, p, backend, precision, devices, verbose) {
  n <- nrow(x)
  k <- ncol(x)
  budget <- .read_budget()
  if (8 * as.double(n) * k <= budget) return(NULL)
  w <- max(1, floor(budget / (16 * max(k, 1))))
  w <- .chunk_multiple(min(w, 8192), x, 1L)   # two blocks' 'dist': up to 1 GiB
  reads0 <- .count_reads()
  len <- as.double(n) * (n - 1) / 2
  .memory_guard(8 * (len + 2 * (2 * w)^2 + 4 * as.double(w) * (k + 4)),
                sprintf("gpu_dist(): the 'dist' of %d rows", n),
                paste("Cluster a subset of the rows, or compute the distances",
                      "between blocks of rows."))
  backend <- .dist_backend(backend, NULL, m, n, k, FALSE)
  blocks <- lapply(seq(1, n, by = w), function(s) s:min(n, s + w - 1))
  K <- length(blocks)
  read <- function(b) .dist_input(.read_dense(x, rows = blocks[[b]]), 1L)
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
    message(sprintf("gpu_dist: %d blocks of up to %d rows (%d pairs of blocks; %s of memory), %.0f reads, %.3f s",
                    K, w, K * (K - 1L) / 2L, .fmt_bytes(budget), .count_reads() - reads0,
                    proc.time()[["elapsed"]] - t0))
  if (sd0) attr(d, "sd0") <- TRUE
  if (nonfinite) attr(d, "nonfinite") <- TRUE
  d
}

# Columns [cols] (a range) of v (a matrix, DelayedArray or big.matrix) as
# a checked double matrix, of the rows 'rows' (NULL: all).
.read_block <- function(v, cols, rows) {
  b <- if (is.matrix(v)) v[, cols, drop = FALSE] else .read_dense(v, cols = cols)
  m <- .as_double_matrix(.check_cor_input(b, "x"))
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
