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

# Number of CPU threads: option gpucor.threads, default every core; more
# threads than cores are never useful, so larger values are capped there.
.threads <- function() {
  cores <- .Call(C_gpucor_max_threads)
  t <- getOption("gpucor.threads")
  if (is.null(t)) return(cores)
  if (!is.numeric(t) || length(t) != 1L || is.na(t) || t < 1 || t != floor(t))
    stop("option 'gpucor.threads' must be a positive whole number", call. = FALSE)
  as.integer(min(t, cores))
}
