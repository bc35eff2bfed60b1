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
  avail <- .mem_available()
  if (is.na(avail) || bytes <= avail) return(invisible())
  stop(sprintf(paste0("%s needs %s of memory, but only %s is available ",
                      "(MemAvailable in /proc/meminfo).  %s  ",
                      "options(gpucor.memory_guard = FALSE) skips this check."),
               what, .fmt_bytes(bytes), .fmt_bytes(avail), advice), call. = FALSE)
}

# Bytes of memory available to a new allocation (Linux), NA elsewhere.
.mem_available <- function() {
  if (!file.exists("/proc/meminfo")) return(NA_real_)
  m <- tryCatch(readLines("/proc/meminfo", n = 40L, warn = FALSE),
                error = function(e) character())
  a <- grep("^MemAvailable:", m, value = TRUE)
  if (length(a) != 1L) return(NA_real_)
  kb <- suppressWarnings(as.numeric(gsub("[^0-9]", "", a)))
  if (is.na(kb)) NA_real_ else kb * 1024
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
# the memory guard (those larger than a block were read in blocks before
# they got here: R/blocks.R).  Other S4
# objects stop with their class named; everything else passes unchanged to
# stats' own checks.
.as_input <- function(x, what, assay, features_are_variables) {
  if (!isS4(x)) return(x)
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
    # big.matrix's as.matrix() is an S4 method base::as.matrix does not see
    # from here; its `[` is
    return(if (inherits(x, "big.matrix")) x[, , drop = FALSE] else as.matrix(x))
  }
  stop(sprintf(paste("'%s' is an object of class \"%s\": pass a numeric matrix,",
                     "data frame or vector, or a SummarizedExperiment, ExpressionSet,",
                     "Matrix, DelayedArray or big.matrix"), what, class(x)[1L]),
       call. = FALSE)
}
