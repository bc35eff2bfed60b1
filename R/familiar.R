# The arguments of the reference functions (WGCNA, stats, igraph) that
# gpucor's functions accept so that a call written for the reference runs
# unchanged.  Where gpucor applies such an argument the function does it;
# the ones it cannot apply, or that mean nothing to its engines, go
# through .ref_ignored(): one message per function and argument per
# session, saying why, never an error.

# fun: the user function's name; args: the names of the arguments the
# caller gave (the others are not mentioned); why: a reason per name.
.ref_ignored <- function(fun, args, why) {
  for (a in args) {
    key <- paste0("ignored:", fun, ":", a)
    if (isTRUE(.gpucor_state[[key]])) next
    .gpucor_state[[key]] <- TRUE
    message(sprintf("%s(): '%s' is ignored: %s. (Said once per session.)", fun, a, why[[a]]))
  }
  invisible()
}

# The reasons shared by several functions.
.why_ignored <- list(
  indent = "gpucor's messages are not indented",
  useInternalMatrixAlgebra = "it picks WGCNA's own matrix product; gpucor's engines make theirs",
  gcInterval = "gpucor never holds the n x n matrix, so there is no garbage to collect",
  blockSize = "gpucor never holds the n x n matrix, so it needs no blocks of it",
  weightArgNames = "gpucor applies 'weights' itself, with no correlation function to pass them to",
  distFnc = "only type = \"distance\" uses it, with gpu_dist()'s metrics")

# WGCNA's nThreads: 0 (WGCNA: all cores) leaves gpucor's thread count as
# it is; a positive number is the CPU engine's threads for the call
# (option gpucor.threads, set here and restored when the caller returns).
.ref_threads <- function(nThreads, env = parent.frame()) {
  if (is.null(nThreads)) return(invisible())
  if (!is.numeric(nThreads) || length(nThreads) != 1L || is.na(nThreads) || nThreads < 0)
    stop("'nThreads' must be 0 or a positive number", call. = FALSE)
  if (nThreads > 0) {
    old <- options(gpucor.threads = as.integer(nThreads))
    do.call(on.exit, list(substitute(options(old), list(old = old)), add = TRUE), envir = env)
  }
  invisible()
}

# The caller's arguments among 'args' that were given (not missing).
.ref_given <- function(args, env = parent.frame()) {
  args[vapply(args, function(a) !eval(call("missing", as.name(a)), env), NA)]
}
