# The file transport of BiocParallel's work (R/parallel.R): large inputs
# written once for the workers on this machine, large parts returned
# through files (src/shipfile.c reads and writes them).

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
