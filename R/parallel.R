# BiocParallel: every function's work shared by BiocParallel's workers.
# The engine's scheme: each worker makes the tiles or panels of its shares
# of the result's columns (.bp_shares(), the engine option 'cols') and the
# main process joins the parts (gpu_cor, gpu_dist, gpu_cor_edges' passes,
# gpu_knn, output = files).  Inputs read in blocks (R/blocks.R) have their
# block pairs dealt to the workers instead (.bp_cor()).  The inputs and
# results travel through files on this machine (R/shipfile.R).

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
