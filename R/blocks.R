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

# The engine's progress bar (src/progress.c) over a loop of n engine calls,
# whose own bars are off meanwhile (the caller sets gpucor.progress):
# shown in interactive sessions once the loop has taken two seconds.
# Returns the function to call after each of the n steps.
.loop_progress <- function(n) {
  st <- .Call(C_gpucor_progress_new, .opt("gpucor.progress") && interactive())
  k <- 0
  function() {
    k <<- k + 1
    invisible(.Call(C_gpucor_progress_step, st, k / n))
  }
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
                         else length(bx) * length(by))
  old <- options(gpucor.progress = FALSE)
  on.exit(options(old), add = TRUE)
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
  f <- if (cov) gpu_cov else gpu_cor
  val <- withCallingHandlers(
    f(A, B, u, method, backend, precision, devices, FALSE),
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
  step <- .loop_progress(K * (K - 1) / 2)
  old <- options(gpucor.progress = FALSE)
  on.exit(options(old), add = TRUE)
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
  if (u == "pairwise.complete.obs" || method == "kendall") return(logical(ncol(A)))
  vapply(seq_len(ncol(A)), function(j) {
    v <- if (method == "spearman") stats::var(rank(A[, j], na.last = "keep"))
         else stats::var(A[, j])
    !is.na(v) && v == 0
  }, logical(1))
}

# .blocked_cor() on BiocParallel's workers: the block pairs (for a
# symmetric result the tiles a <= b of the upper triangle, numbered row by
# row) are dealt round-robin into one group per worker; worker g runs its
# group with the GPU devs[g mod length(devs)] (the visible GPUs, or those
# 'devices' names), or the CPU engine with its share of the threads; the
# main process puts the tiles together.  The backend is chosen once, for
# the whole result.
.bp_cor <- function(x, y, bx, by, rows, u, method, backend, precision, devices, verbose,
                    cov, BPPARAM, cx, cy, t0) {
  p <- ncol(x)
  q <- if (is.null(y)) p else ncol(y)
  nobs <- if (is.null(rows)) nrow(x) else length(rows)
  backend <- .cor_backend(backend, p, if (!is.null(y)) q, nobs, method,
                          u == "pairwise.complete.obs")
  .bp_gpu_check(BPPARAM, backend)
  tiles <- if (is.null(y)) {
    do.call(rbind, lapply(seq_along(bx), function(a) cbind(a, a:length(bx))))
  } else {
    as.matrix(expand.grid(b = seq_along(by), a = seq_along(bx))[, 2:1])
  }
  nw <- BiocParallel::bpnworkers(BPPARAM)
  ng <- min(nw, nrow(tiles))
  groups <- split(seq_len(nrow(tiles)), (seq_len(nrow(tiles)) - 1L) %% ng)
  devs <- .bp_devices(devices)
  jobs <- lapply(seq_along(groups), function(g)
    list(tiles = tiles[groups[[g]], , drop = FALSE],
         device = devs[(g - 1L) %% length(devs) + 1L]))
  args <- .bp_ship(list(x = x, y = y), BPPARAM)
  on.exit(.bp_unlink(args))
  res <- .bp_apply(jobs, .bp_tiles, BPPARAM, x = args$x, y = args$y, bx = bx, by = by,
                   rows = rows, u = u, method = method, backend = backend,
                   precision = precision, cov = cov, threads = .bp_threads(BPPARAM))
  r <- matrix(NA_real_, p, q)
  sd0 <- FALSE
  zero_var <- nafree <- logical(p)
  for (g in seq_along(jobs)) {
    tl <- jobs[[g]]$tiles
    for (k in seq_len(nrow(tl))) {
      a <- tl[k, 1L]
      b <- tl[k, 2L]
      out <- res[[g]][[k]]
      sd0 <- sd0 || out$sd0
      if (!is.null(y)) {
        r[bx[[a]], by[[b]]] <- out$val
      } else {
        r[bx[[a]], bx[[b]]] <- out$val
        if (a != b) r[bx[[b]], bx[[a]]] <- t(out$val)
        else if (!cov) {
          zero_var[bx[[a]]] <- out$zero_var
          nafree[bx[[a]]] <- out$nafree
        }
      }
    }
  }
  if (verbose)
    message(sprintf("%s: %d tiles on %d BiocParallel workers (%s engine), %.3f s",
                    if (cov) "gpu_cov" else "gpu_cor", nrow(tiles), ng, toupper(backend),
                    proc.time()[["elapsed"]] - t0))
  .tiles_finish(r, zero_var, nafree, sd0, cx, cy)
}

# One BiocParallel worker's tiles (job$tiles: rows a, b) on its device or
# its share of the CPU's threads: for each, the block pair's values,
# whether stats' zero-sd warning came, and (a diagonal tile, .diag_tile())
# the columns of stats' zero-variance rule and the NA-free columns.
.bp_tiles <- function(job, x, y, bx, by, rows, u, method, backend, precision, cov,
                      threads) {
  old <- options(gpucor.threads = threads, gpucor.progress = FALSE)
  on.exit(options(old))
  xy <- .bp_unship(list(x = x, y = y))
  x <- xy$x
  y <- xy$y
  lapply(seq_len(nrow(job$tiles)), function(k) {
    a <- job$tiles[k, 1L]
    b <- job$tiles[k, 2L]
    A <- .read_block(x, bx[[a]], rows)
    if (is.null(y) && a == b)
      return(.diag_tile(A, a, u, method, backend, precision, job$device, cov))
    B <- if (!is.null(y)) .read_block(y, by[[b]], rows) else .read_block(x, bx[[b]], rows)
    .tile_value(A, B, u, method, backend, precision, job$device, cov)
  })
}

# gpu_cor()/gpu_cov() with BPPARAM: x and y as the tiles read them (a
# DelayedArray or big.matrix as it is, a SummarizedExperiment's assay with
# features as columns, anything else as the checked dense matrix), then
# .blocked_cor() on the workers; NULL when a side is a vector (the caller
# goes on without BPPARAM).
.bp_entry <- function(x, y, use, method, backend, precision, devices, verbose, assay,
                      cov, BPPARAM) {
  .bp_check(BPPARAM)
  side <- function(v, what) {
    if (is.null(v)) return(NULL)
    b <- if (isS4(v)) .block_source(v, assay)
    if (!is.null(b)) return(b)
    v <- .as_input(v, what, assay, TRUE)
    if (is.data.frame(v)) v <- as.matrix(v)
    v
  }
  .blocked_cor(side(x, "x"), side(y, "y"), use, method, backend, match.arg(precision, c("double", "single")),
               devices, verbose, cov = cov, BPPARAM = BPPARAM)
}

# The GPUs BiocParallel's workers take in turn: worker g the ordinal
# devs[(g - 1) %% length(devs) + 1]; "all" (-1L once .check_devices() has
# read it): every visible one, one a worker.
.bp_devices <- function(devices)
  if (identical(devices, -1L) || identical(devices, "all"))
    seq_len(max(1L, gpu_info()$device_count)) - 1L else devices

.bp_check <- function(BPPARAM) {
  if (!requireNamespace("BiocParallel", quietly = TRUE))
    stop("'BPPARAM' needs the BiocParallel package", call. = FALSE)
  if (!inherits(BPPARAM, "BiocParallelParam"))
    stop("'BPPARAM' must be NULL or a BiocParallel::BiocParallelParam", call. = FALSE)
}

# The workers' shares of a result of ncols columns, for the engine option
# 'cols' (each runs the tiles or panels whose first column is in its
# ranges, so that the shares cover the result once, whatever the engine's
# tile or panel width): 2 x workers equal ranges, worker g taking ranges g
# and 2 x workers + 1 - g -- the long and the short columns of a lower
# triangle together, so that a symmetric result's CPU tiles balance as
# the GPU's panels of whole columns do.  Each job: list(ranges, device).
.bp_shares <- function(ncols, BPPARAM, devices) {
  nw <- BiocParallel::bpnworkers(BPPARAM)
  nch <- max(1L, min(2L * nw, ncols))
  cuts <- round(seq(0, ncols, length.out = nch + 1L))
  devs <- .bp_devices(devices)
  lapply(seq_len(ceiling(nch / 2)), function(g)
    list(ranges = lapply(unique(c(g, nch + 1L - g)), function(c) cuts[c:(c + 1L)]),
         device = devs[(g - 1L) %% length(devs) + 1L]))
}

# .part(ranges, device, ...) for each job, on the workers (each with its
# share of the threads, no progress bar), .part running the engine over
# the job's ranges (the engine option 'cols': c(from1, to1, ...)); the
# results in one list.  (Dotted names: no argument in '...' matches them
# partially.)
.bp_share_run <- function(.jobs, .part, .bp, ..., .join = .bp_unstash) {
  given <- list(...)
  args <- .bp_ship(given, .bp)
  # the files shipped here (the caller's own, if any, stay for its next run)
  on.exit(.bp_unlink(args[!vapply(given, inherits, NA, "gpucor_shipped")]))
  .bp_apply(.jobs, .bp_share_job, .bp, .part = .part, .nthreads = .bp_threads(.bp),
            .args = args, .join = .join)
}

.bp_share_job <- function(.job, .part, .nthreads, .args) {
  old <- options(gpucor.threads = .nthreads, gpucor.progress = FALSE)
  on.exit(options(old))
  .call_with(.part, list(as.double(unlist(.job$ranges)), .job$device), .bp_unship(.args))
}

# f(lead[[1]], lead[[2]], ..., name = args$name, ...), the values passed
# by name from an environment (do.call() would put them into the call,
# which an error's traceback then deparses, however large).
.call_with <- function(f, lead, args) {
  ln <- paste0("..gpucor_lead", seq_along(lead), "..")
  if (length(args) && (is.null(names(args)) || !all(nzchar(names(args))) ||
                       any(names(args) %in% c("..gpucor_f..", ln))))
    stop("internal error: .call_with() takes named arguments only")
  env <- list2env(c(list(..gpucor_f.. = f), stats::setNames(lead, ln), args),
                  parent = emptyenv())
  cl <- as.call(c(list(as.name("..gpucor_f..")), lapply(ln, as.name),
                  sapply(names(args), as.name, simplify = FALSE)))
  eval(cl, env)
}

# Large inputs reach BiocParallel's workers on this machine through a
# file: the main process writes each double matrix of at least option
# gpucor.bp_file_bytes (default 8 MiB) once, into tempdir(), and every
# worker reads it, instead of BiocParallel serializing it into every job's
# message (sequentially, in the main process).  Workers elsewhere (hosts
# named in SnowParam, a BatchtoolsParam scheduler) get the matrix in the
# message, as does any matrix that could not be written.  args: a named
# list of arguments; the shipped ones become "gpucor_shipped" records.
.bp_ship <- function(args, bp) {
  min <- .opt("gpucor.bp_file_bytes")
  if (!is.finite(min) || !.bp_local(bp)) return(args)
  paths <- character()
  done <- FALSE
  on.exit(if (!done) unlink(paths))   # interrupted: the files begun so far
  for (a in seq_along(args)) {
    v <- args[[a]]
    if (!is.double(v) || !is.matrix(v) || 8 * as.double(length(v)) < min) next
    path <- .ship_paths("gpucor-input-", tempdir(), 8 * as.double(length(v)), .threads())
    paths <- c(paths, path)
    rec <- .ship_write(v, path, .threads(), "gpucor_shipped")
    if (!is.null(rec)) args[a] <- list(rec)
  }
  done <- TRUE
  args
}

# The shipped arguments read back (on the worker).
.bp_unship <- function(args) {
  for (a in seq_along(args))
    if (inherits(args[[a]], "gpucor_shipped")) args[a] <- list(.ship_read(args[[a]]))
  args
}

# BiocParallel::bplapply(.X, .FUN, ...) on .bp, the workers' large
# results coming back through files when they run on this machine: each
# worker writes every double, integer or logical vector of its result of
# at least option gpucor.bp_file_bytes into a directory of this call, and
# its result carries records of them instead (.bp_stash()); they are read
# back here, and the directory is removed when the call returns, on error
# too.  BiocParallel would serialize them into its sockets, at a few
# hundred MB/s.  (Dotted names: no argument in '...' matches them.)
.bp_apply <- function(.X, .FUN, .bp, ..., .join = .bp_unstash) {
  min <- .opt("gpucor.bp_file_bytes")
  dir <- NULL
  if (is.finite(min) && .bp_local(.bp)) {
    dir <- tempfile("gpucor-parts-")
    if (!dir.create(dir, showWarnings = FALSE)) dir <- NULL
    else on.exit(unlink(dir, recursive = TRUE))
  }
  res <- BiocParallel::bplapply(.X, .bp_stashed, .FUN = .FUN, .dir = dir, .min = min,
                                .iothreads = .bp_threads(.bp), ..., BPPARAM = .bp)
  .join(res)
}

.bp_stashed <- function(.x, .FUN, .dir, .min, .iothreads, ...)
  .bp_stash(.FUN(.x, ...), .dir, .min, .iothreads)

# v with each double, integer or logical vector of at least min bytes in
# it (v itself, or in its lists, at any depth) written to files in dir
# (.ship_paths(), with up to 'threads' threads) and replaced by a
# "gpucor_stashed" record of them; v as it is when dir is NULL, and any
# vector whose files could not be written.
.bp_stash <- function(v, dir, min, threads = 1L) {
  if (is.null(dir)) return(v)
  if (is.double(v) || is.integer(v) || is.logical(v)) {
    bytes <- (if (is.double(v)) 8 else 4) * as.double(length(v))
    if (bytes < min) return(v)
    rec <- .ship_write(v, .ship_paths("part-", dir, bytes, threads), threads, "gpucor_stashed")
    return(if (is.null(rec)) v else rec)
  }
  if (is.list(v) && !inherits(v, "gpucor_stashed"))
    v[] <- lapply(v, .bp_stash, dir, min, threads)
  v
}

# New names for the files of a vector of 'bytes' in 'dir': one a piece of
# at least 16 MiB, at most one a thread (each piece is written and read by
# a thread of its own: shipfile.c).
.ship_paths <- function(prefix, dir, bytes, threads) {
  k <- max(1L, min(as.integer(threads), ceiling(bytes / 2^24)))
  tempfile(rep(prefix, k), tmpdir = dir, fileext = ".bin")
}

# v (a double, integer or logical vector) written to the files 'path'
# (.ship_paths(), with 'threads' threads): a record of them of class cls,
# which .ship_read() turns back into v; NULL when they could not be
# written (none is left).
.ship_write <- function(v, path, threads, cls) {
  if (!isTRUE(.Call(C_gpucor_ship_write, v, path, threads))) return(NULL)
  structure(list(path = path, type = typeof(v), length = length(v),
                 attributes = attributes(v)), class = cls)
}

.ship_read <- function(rec) {
  out <- .Call(C_gpucor_ship_gather, list(rec), rec$type, .threads())
  attributes(out) <- rec$attributes
  out
}

# The records of .bp_stash() read back, each file removed once read.
.bp_unstash <- function(v) {
  if (inherits(v, "gpucor_stashed")) {
    out <- .ship_read(v)
    unlink(v$path)
    return(out)
  }
  if (is.list(v)) v[] <- lapply(v, .bp_unstash)
  v
}

# The files of .bp_ship() removed (in the main process, once the workers
# have returned).
.bp_unlink <- function(args)
  for (v in args) if (inherits(v, "gpucor_shipped")) unlink(v$path)

# Whether BiocParallel's workers run on this machine, as processes of
# their own: SnowParam() with a number of workers (or this host's names),
# MulticoreParam(), BatchtoolsParam() on the local clusters.  Not
# SerialParam() (nothing is sent) nor any other; a running cluster only
# when all its nodes are on this host.
.bp_local <- function(bp) {
  here <- c("localhost", "127.0.0.1", Sys.info()[["nodename"]])
  if (inherits(bp, "MulticoreParam")) return(TRUE)
  if (inherits(bp, "SnowParam")) {
    if (!isTRUE(bp$.clusterargs$type %in% c("SOCK", "FORK"))) return(FALSE)
    if (BiocParallel::bpisup(bp)) {
      # a running cluster (started by the param, or one of the user's
      # wrapped with as(cl, "SnowParam")): where its nodes are
      hosts <- vapply(BiocParallel::bpbackend(bp), function(nd)
        if (is.character(nd$host) && length(nd$host) == 1L) nd$host else NA_character_, "")
      return(length(hosts) > 0L && all(hosts %in% here))
    }
    if (!isTRUE(bp$.controlled)) return(FALSE)
    w <- BiocParallel::bpworkers(bp)
    return(is.numeric(w) || all(w %in% here))
  }
  if (inherits(bp, "BatchtoolsParam"))
    return(isTRUE(bp$cluster %in% c("multicore", "socket", "interactive")))
  FALSE
}

# CUDA does not work in a fork of a process that has used it, and the main
# process has (choosing the backend): no GPU work for forked workers.
.bp_gpu_check <- function(BPPARAM, backend) {
  if (backend == "gpu" && inherits(BPPARAM, "MulticoreParam"))
    stop("BiocParallel's MulticoreParam forks this process, and CUDA does not work in a ",
         "fork of a process that has used the GPU: use SnowParam() for GPU workers, or ",
         "backend = \"cpu\"", call. = FALSE)
}

# Each worker's share of the CPU's threads (no oversubscription).
.bp_threads <- function(BPPARAM) max(1L, .threads() %/% BiocParallel::bpnworkers(BPPARAM))

# verbose = TRUE with BPPARAM: what ran where (jobs: .bp_shares()').
.bp_report <- function(fun, npass, jobs, backend, BPPARAM, seconds) {
  th <- .bp_threads(BPPARAM)
  where <- if (backend == "gpu")
    sprintf("GPU engine, GPU %s", paste(vapply(jobs, `[[`, 0L, "device"), collapse = ", "))
  else sprintf("CPU engine, %d thread%s each", th, if (th == 1L) "" else "s")
  message(sprintf("%s: %d pass%s on %d BiocParallel worker%s (%s), %.3f s", fun, npass,
                  if (npass == 1L) "" else "es", length(jobs),
                  if (length(jobs) == 1L) "" else "s", where, seconds))
}
