# Internal argument checks and coercion.  No computation happens here: the
# aim is that every bad input stops with base R's wording before .Call.

# stats::cor's checks on x / y, in stats' order and wording.
.check_cor_input <- function(v, name) {
  if (!(is.numeric(v) || is.logical(v)))
    stop(sprintf("'%s' must be numeric", name), call. = FALSE)
  if (!is.atomic(v))
    stop(sprintf("'%s' must be an atomic vector or matrix", name), call. = FALSE)
  invisible(v)
}

# A double matrix (vectors become one column), dimnames kept.  Integer and
# logical data are coerced; doubles are passed through without a copy.
.as_double_matrix <- function(v) {
  if (!is.matrix(v)) v <- matrix(v, ncol = 1L)
  if (!is.double(v)) storage.mode(v) <- "double"
  v
}

# Number of CPU threads an engine call uses, following R's conventions, in
# this order: option gpucor.threads; else the OpenMP environment variables
# OMP_THREAD_LIMIT / OMP_NUM_THREADS (the smaller, when both are set); else
# every core.  OMP_THREAD_LIMIT is also a ceiling for the option (OpenMP
# enforces it anyway), and so is R CMD check's _R_CHECK_LIMIT_CORES_ (at
# most 2 threads, as CRAN asks).  More threads than cores are never useful,
# so the count is capped there; in a forked child it is 1 (see
# src/threads.c).
.threads <- function() {
  cores <- .Call(C_gpucor_max_threads)
  limit <- .env_threads("OMP_THREAD_LIMIT")
  t <- .opt("gpucor.threads")
  if (!is.null(t)) {
    n <- t
  } else {
    n <- .env_threads("OMP_NUM_THREADS")   # Inf when unset: every core
  }
  n <- min(n, limit, cores)
  chk <- tolower(Sys.getenv("_R_CHECK_LIMIT_CORES_", ""))
  if (nzchar(chk) && chk != "false") n <- min(n, 2)
  as.integer(max(1, n))
}

# A thread count from an OpenMP environment variable, Inf when unset or not
# a positive whole number (as libgomp, which ignores such values).
# OMP_NUM_THREADS may list one count per nesting level: the first counts.
.env_threads <- function(name) {
  v <- trimws(strsplit(Sys.getenv(name, ""), ",", fixed = TRUE)[[1L]][1L])
  if (is.na(v) || !grepl("^[0-9]+$", v)) return(Inf)
  n <- as.numeric(v)
  if (n < 1) Inf else n
}

# Stops before the engine runs when its result (and working memory) would
# not fit in the memory available, instead of R's "cannot allocate vector"
# after a long pause or the OS killing the process.  Linux only (MemAvailable
# in /proc/meminfo); elsewhere, or with options(gpucor.memory_guard =
# FALSE), nothing is checked.  'what' names the result, 'advice' says what
# to do instead.
.memory_guard <- function(bytes, what, advice) {
  if (!.opt("gpucor.memory_guard")) return(invisible())
  # below 64 MiB no check: reading /proc and the cgroup files costs
  # milliseconds, and pipelines make many small calls (R's own allocation
  # error covers a machine without 64 MiB)
  if (bytes < 2^26) return(invisible())
  lim <- .mem_available()
  avail <- lim[[1L]]
  if (is.na(avail) || bytes <= avail) return(invisible())
  stop(sprintf(paste0("%s needs %s of memory, but only %s is available ",
                      "(%s).  %s  ",
                      "options(gpucor.memory_guard = FALSE) skips this check."),
               what, .fmt_bytes(bytes), .fmt_bytes(avail), attr(lim, "source"), advice),
       call. = FALSE)
}

# Bytes of memory a new allocation can have (Linux), NA elsewhere, with
# the attribute "source" saying which limit that is: the smallest of
# MemAvailable, each cgroup's memory limit less its usage (its inactive
# page cache not counted; v2 memory.max,
# v1 memory.limit_in_bytes, for the process's cgroup and those above it:
# Slurm, Docker) and the address-space limit (ulimit -v) less this
# process's address space.  'root' prefixes the /proc and /sys paths (tests).
.mem_available <- function(root = "") {
  rd <- function(f, n = -1L) {
    f <- paste0(root, f)
    if (!file.exists(f)) return(character())
    tryCatch(readLines(f, n = n, warn = FALSE), error = function(e) character())
  }
  num <- function(v) if (length(v) == 1L) suppressWarnings(as.numeric(v)) else NA_real_
  kb <- function(lines, key) {
    a <- grep(paste0("^", key, ":"), lines, value = TRUE)
    if (length(a) == 1L) num(gsub("[^0-9]", "", a)) * 1024 else NA_real_
  }
  cand <- c("MemAvailable in /proc/meminfo" = kb(rd("/proc/meminfo", 60L), "MemAvailable"))
  # cgroups: "0::/path" (v2), "N:memory:/path" or "N:...,memory,...:/path" (v1)
  cg <- rd("/proc/self/cgroup")
  parts <- strsplit(cg, ":", fixed = TRUE)
  for (pp in parts) {
    if (length(pp) < 3L) next
    path <- paste(pp[-(1:2)], collapse = ":")
    v2 <- pp[1L] == "0" && pp[2L] == ""
    if (!v2 && !"memory" %in% strsplit(pp[2L], ",", fixed = TRUE)[[1L]]) next
    base <- if (v2) "/sys/fs/cgroup" else "/sys/fs/cgroup/memory"
    files <- if (v2) c("memory.max", "memory.current")
             else c("memory.limit_in_bytes", "memory.usage_in_bytes")
    # the cgroup and every one above it (a container sees its own as "/")
    dirs <- unique(c(path, if (path != "/") {
      segs <- strsplit(sub("^/", "", path), "/", fixed = TRUE)[[1L]]
      vapply(rev(seq_along(segs)) - 1L, function(k)
        paste0("/", paste(segs[seq_len(k)], collapse = "/")), "")
    }, "/"))
    for (d in dirs) {
      dir <- sub("/+$", "", paste0(base, d))
      lim <- num(rd(file.path(dir, files[1L]), 1L))   # "max" (v2): NA, no limit
      use <- num(rd(file.path(dir, files[2L]), 1L))
      # the page cache the kernel would reclaim is not in use (as docker
      # stats counts it)
      st <- strsplit(rd(file.path(dir, "memory.stat")), " ", fixed = TRUE)
      cache <- Filter(function(f) length(f) == 2L &&
                        f[1L] == (if (v2) "inactive_file" else "total_inactive_file"), st)
      if (length(cache) == 1L) use <- use - num(cache[[1L]][2L])
      if (!is.na(lim) && lim < 2^60 && !is.na(use))
        cand[sprintf("the limit of cgroup %s (%s) less its usage", d, files[1L])] <-
          max(0, lim - use)
    }
  }
  # the address-space limit (soft), less this process's address space
  lims <- grep("^Max address space", rd("/proc/self/limits"), value = TRUE)
  if (length(lims) == 1L) {
    as_lim <- num(strsplit(trimws(sub("^Max address space", "", lims)), "[[:space:]]+")[[1L]][1L])
    vm <- kb(rd("/proc/self/status"), "VmSize")
    if (!is.na(as_lim) && !is.na(vm))
      cand["the address-space limit (ulimit -v) less this process's"] <- max(0, as_lim - vm)
  }
  cand <- cand[!is.na(cand)]
  if (!length(cand)) return(structure(NA_real_, source = NA_character_))
  k <- which.min(cand)
  structure(unname(cand[k]), source = names(cand)[k])
}

.fmt_bytes <- function(b) {
  u <- c("bytes", "KiB", "MiB", "GiB", "TiB", "PiB")
  k <- if (b < 1024) 1L else min(length(u), floor(log(b, 1024)) + 1L)
  if (k == 1L) sprintf("%.0f bytes", b) else sprintf("%.1f %s", b / 1024^(k - 1L), u[k])
}

# The containers users hold, as a plain matrix for the engines.
# SummarizedExperiment (its assay 'assay', default the first) and
# ExpressionSet (exprs()) hold features in rows: features are the
# variables of gpu_cor() (so the assay is transposed) and the items of
# gpu_dist() (rows, as they are).  Matrix (sparse or dense), DelayedArray /
# HDF5Array and bigmemory's big.matrix are read into a dense matrix, after
# the memory guard (a 2-D DelayedArray or big.matrix by .read_dense(): in
# reads of whole chunks into one double matrix; gpu_cor() and gpu_dist()
# read those larger than the memory budget in blocks before they get here:
# R/blocks.R).  Other S4
# objects stop with their class named; everything else passes unchanged to
# stats' own checks.
.as_input <- function(x, what, assay, features_are_variables) {
  if (!isS4(x)) {
    # S3 objects: data frames, and classed numeric vectors and matrices
    # (table, ts, AsIs, dist) go on to stats' checks; any other (a list
    # such as an lm fit, a factor, an igraph graph) stops naming its class
    if (is.object(x) && !is.data.frame(x) &&
        !(is.atomic(x) && (is.numeric(x) || is.logical(x))))
      .unknown_class(x, what)
    return(x)
  }
  if (inherits(x, "SummarizedExperiment") || inherits(x, "ExpressionSet")) {
    m <- if (inherits(x, "ExpressionSet")) Biobase::exprs(x)
         else SummarizedExperiment::assay(x, assay, withDimnames = TRUE)
    m <- .as_input(m, what, assay, FALSE)
    return(if (features_are_variables) t(m) else m)
  }
  if (inherits(x, c("Matrix", "DelayedArray", "big.matrix"))) {
    cls <- class(x)[1L]
    .memory_guard(8 * as.double(nrow(x)) * ncol(x),
                  sprintf("the dense copy of '%s' (a %s, %d x %d)", what, cls, nrow(x), ncol(x)),
                  paste("gpu_cor() and gpu_dist() read a DelayedArray or big.matrix",
                        "in blocks; pass a sparse matrix as one of those, or a subset."))
    if (length(dim(x)) == 2L && !inherits(x, "Matrix")) return(.read_dense(x))
    return(as.matrix(x))
  }
  .unknown_class(x, what)
}

.unknown_class <- function(x, what)
  stop(sprintf(paste("'%s' is an object of class \"%s\": pass a numeric matrix,",
                     "data frame or vector, or a SummarizedExperiment, ExpressionSet,",
                     "Matrix, DelayedArray or big.matrix"), what, class(x)[1L]),
       call. = FALSE)

# The items of gpu_dist(), gpu_knn() and gpu_range() for a
# SingleCellExperiment: its cells (columns), as scater's runUMAP(),
# bluster's clusterRows() and scran's buildSNNGraph() take them.  With
# 'use.dimred' (a name or number of reducedDims(x)), that matrix as it is
# (cells x dimensions); else the assay 'assay' transposed, cells becoming
# rows (lazily for a DelayedArray, so the block reader of gpu_dist() still
# reads it in blocks).  Any other x comes back as it is, and a 'use.dimred'
# with it is an error (a plain SummarizedExperiment keeps its features as
# the items: .as_input()).
.cells_as_rows <- function(x, what, assay, use.dimred) {
  if (!inherits(x, "SingleCellExperiment")) {
    if (!is.null(use.dimred))
      stop(sprintf("'use.dimred' needs a SingleCellExperiment as '%s', not an object of class \"%s\"",
                   what, class(x)[1L]), call. = FALSE)
    return(x)
  }
  if (!is.null(use.dimred)) {
    nms <- SingleCellExperiment::reducedDimNames(x)
    shown <- if (length(nms)) paste0("\"", nms, "\"", collapse = ", ") else "none"
    if (length(use.dimred) != 1L || is.na(use.dimred) ||
        !(is.character(use.dimred) || is.numeric(use.dimred)))
      stop("'use.dimred' must be one name or number of reducedDims(x)", call. = FALSE)
    if (is.character(use.dimred) && !use.dimred %in% nms)
      stop(sprintf("'use.dimred' = \"%s\" is not among reducedDimNames(%s): %s",
                   use.dimred, what, shown), call. = FALSE)
    if (is.numeric(use.dimred) && (use.dimred != floor(use.dimred) || use.dimred < 1 ||
                                   use.dimred > length(nms)))
      stop(sprintf("'use.dimred' = %s is not a number of reducedDims(%s), which has %d: %s",
                   format(use.dimred), what, length(nms), shown), call. = FALSE)
    return(SingleCellExperiment::reducedDim(x, use.dimred, withDimnames = TRUE))
  }
  m <- SummarizedExperiment::assay(x, assay, withDimnames = TRUE)
  if (isS4(m)) getExportedValue("BiocGenerics", "t")(m) else t(m)
}
