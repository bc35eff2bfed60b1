# Load-time set-up.

.onLoad <- function(libname, pkgname) {
  # The GPU context gpucor keeps between calls (stream, cuBLAS handle,
  # pinned staging buffers) is released when R exits, not left to the
  # driver: a session that ends with quit() is then clean under
  # compute-sanitizer's leak check.  (In a forked child it is only
  # forgotten; see src/init.c.)
  .gpucor_state$unloaded <- FALSE
  reg.finalizer(.gpucor_state, function(e) {
    if (!isTRUE(e$unloaded)) .Call(C_gpucor_gpu_release)
  }, onexit = TRUE)
  # GpucorParam's S4 class and BiocNeighbors methods (R/neighbors.R), when
  # BiocNeighbors is loaded (now, or later by a hook)
  .bn_hook()
}

.onUnload <- function(libpath) {
  # R_unload_gpucor releases the context; the finalizer must not call into
  # the unloaded library afterwards
  .gpucor_state$unloaded <- TRUE
  library.dynam.unload("gpucor", libpath)
}
