/* output.h -- results written to files (output.c); R-aware. */
#ifndef GPUCOR_OUTPUT_H
#define GPUCOR_OUTPUT_H
#include <Rinternals.h>
#include "engine/engine.h"
#include "engine/file.h"

/* Opens the file of R's output specification (R/hdf5.R, .hdf5_spec) for a
 * p x q result and makes 'sink' a SINK_FILE writing it; the host's
 * interrupt hook then also stops the engine when a write fails.  A spec
 * with a window (a BiocParallel worker's range of columns [c0, c1)) makes
 * the dataset those columns only, and o the share that meets them.
 * Raises an R error (with nothing left open) when the file cannot be
 * written. */
gc_file *gpucor_file_open(SEXP spec, size_t p, size_t q, int symmetric, int zero_diag,
                          gc_opts *o, gc_sink *sink, gc_host *host, const char *what);
/* Closes f after the engine returned 'status' (the dataset is kept only
 * when both went well), then raises the first error: the file's, else the
 * engine's (with msg). */
void gpucor_file_finish(gc_file *f, int status, const char *what, const char *msg);
#endif
