# The progress bar (src/progress.c): one bar per call, across its passes,
# naming the function and the step, with the time taken and an estimate of
# the time left.  An engine call makes its own bar from option 'progress'
# of .engine_opts(): the delay before it shows, or -1 for none.  A call
# made of several engine calls and steps in R holds one bar for all of
# them (.progress_begin()): while it runs, the engine calls it makes
# receive the bar's state in option 'progress' and report into the step
# ("frame", .progress_frame()) the caller has set for them, so that the
# user sees one bar, never a bar per engine call.

# Seconds a call runs before its bar shows: 2, or the internal option
# gpucor.progress_delay (for tests: 0 shows every bar at once).
.progress_delay <- function() {
  d <- getOption("gpucor.progress_delay", 2)
  if (!is.numeric(d) || length(d) != 1L || is.na(d) || d < 0)
    stop("option 'gpucor.progress_delay' must be a non-negative number of seconds",
         call. = FALSE)
  as.double(d)
}

# Option 'progress' of an engine call: the bar of the enclosing call, the
# delay of the call's own bar, or -1 (none): bars show in interactive
# sessions, or in any session with gpucor.progress = "always".
.progress_opt <- function() {
  o <- .opt("gpucor.progress")
  if (isFALSE(o)) return(-1)
  if (!is.null(.gpucor_state$bar)) return(.gpucor_state$bar)
  if (identical(o, "always") || interactive()) .progress_delay() else -1
}

# A bar named 'label' over the engine calls and steps of the calling
# function, which the engine calls it makes report into; NULL when there
# is no bar (or an enclosing call's bar goes on: then every helper below
# does nothing, and the engine calls report into that bar).  The bar ends
# when the caller returns: with .progress_end(st, TRUE) at 100%, else (an
# error, an interrupt) on a new line.
.progress_begin <- function(label, env = parent.frame()) {
  d <- .progress_opt()
  if (!is.numeric(d) || d < 0) return(NULL)
  st <- .Call(C_gpucor_progress_new, d, label)
  .gpucor_state$bar <- st
  do.call(base::on.exit, list(bquote(.progress_end(.(st), FALSE)), add = TRUE), envir = env)
  st
}

# Step k of npass of the bar ('step' its name), taking the share 'weight'
# of the whole (0: an equal share of what is left; the last step ends the
# bar at 1).
.progress_frame <- function(st, step, k, npass, weight = 0) {
  if (!is.null(st)) .Call(C_gpucor_progress_frame, st, step, as.integer(k),
                          as.integer(npass), as.double(weight))
  invisible()
}

# The fraction done of the present step (work done in R).
.progress_step <- function(st, frac) {
  if (!is.null(st)) .Call(C_gpucor_progress_step, st, as.double(frac))
  invisible()
}

.progress_end <- function(st, ok = TRUE) {
  if (is.null(st)) return(invisible())
  .Call(C_gpucor_progress_end, st, ok)
  if (identical(.gpucor_state$bar, st)) .gpucor_state$bar <- NULL
  invisible()
}

# The bar over a loop of n engine calls of the calling function, one step
# each (named 'step'): returns the function to call after each of them.
.loop_progress <- function(n, label, step = "blocks", env = parent.frame()) {
  st <- .progress_begin(label, env)
  k <- 1
  .progress_frame(st, step, 1L, n)
  function() {
    if (k >= n) {
      .progress_end(st, TRUE)
    } else {
      k <<- k + 1
      .progress_frame(st, step, k, n)
    }
  }
}
