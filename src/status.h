/* status.h -- shared by the .Call entry points (R-aware side only). */
#ifndef GPUCOR_STATUS_H
#define GPUCOR_STATUS_H
#include <Rinternals.h>
#include "engine/engine.h"

int gpucor_interrupted(void);
/* Raises the R condition for a non-OK status; call after freeing. */
void gpucor_raise(int status, const char *what);
/* ... with the engine's message (GPU errors name the failing call). */
void gpucor_raise_msg(int status, const char *what, const char *msg);

typedef struct { int show, shown, pct, ended; double start; } gpucor_progress;
void gpucor_progress_init(gpucor_progress *pr, int show);
void gpucor_progress_update(void *ctx, double frac);
/* threads.c: the thread count an engine call gets (1 in a forked child),
 * and the pthread_atfork registration R_init_gpucor makes. */
int gpucor_nthreads(int requested);
int gpucor_forked_child(void);
void gpucor_threads_init(void);
/* options.c: the engine options from R's named list (.engine_opts()), and
 * the host hooks of an engine call (pr is the progress bar they drive). */
void gpucor_opts(SEXP list, gc_opts *o);
/* The engine option 'cols': a BiocParallel worker's ranges of result
 * columns, c(from1, to1, from2, to2, ...) (0-based, 'to' exclusive), in
 * *r; returns how many (0: none, the whole result).  The entry points
 * that take shares run the engine once per range, with gc_opts.col0 and
 * col1 set to it, into the same sink. */
size_t gpucor_ranges(SEXP list, const double **r);
/* The element 'name' of a named list from R (an internal error if none). */
SEXP gpucor_field(SEXP list, const char *name);
SEXP gpucor_field_or_null(SEXP list, const char *name);
void gpucor_host_init(gc_host *h, const gc_opts *o, gpucor_progress *pr);
/* With option gpucor.profile: the GPU's stage times (waiting for the
 * device, committing into R memory, total) as attribute "timing", and the
 * CPU engine's team size as attribute "threads" (the thread tests read it). */
void gpucor_set_timing(SEXP ans, const gc_opts *o, const double *seconds);
void gpucor_set_threads(SEXP ans, const gc_opts *o, int threads);
#endif
