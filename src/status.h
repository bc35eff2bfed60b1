/* status.h -- shared by the .Call entry points (R-aware side only). */
#ifndef GPUCOR_STATUS_H
#define GPUCOR_STATUS_H
#include <Rinternals.h>
#include "engine/engine.h"
#include "engine/measure.h"

int gpucor_interrupted(void);
/* Raises the R condition for a non-OK status; call after freeing. */
void gpucor_raise(int status, const char *what);
/* ... with the engine's message (GPU errors name the failing call). */
void gpucor_raise_msg(int status, const char *what, const char *msg);

/* progress.c: one progress bar per call, across its passes.  The bar
 * names the call ('label': the R function) and the pass ("gpu_tom:
 * adjacency (1/2)"), shows the fraction of the whole call, the time taken
 * and an estimate of the time left, and ends with one newline.  A loop of
 * engine calls in R (R/progress.R) holds one bar whose steps ("frames")
 * are those engine calls: each call's passes divide its frame. */
typedef struct {
    int show, shown, ended, dirty;
    int k, npass, fk, fnpass;   /* the pass, and the R loop's step (frame) */
    int len;                    /* characters of the last line printed */
    int loop, closing;          /* a loop's bar in R: only the loop ends it
                                   (gpucor_progress_end sets closing) */
    int over;                   /* the engine call's passes are over (those
                                   left were not needed: gpucor_progress_finish) */
    double delay, start, last;  /* seconds; the clock at start, at the last print */
    double lo, hi;              /* the frame: the share of the call it covers */
    double base, span;          /* the pass, as a share of the frame */
    double done;                /* the largest fraction shown (never goes back) */
    char label[48], fstep[32], step[32];
} gpucor_progress;
/* delay < 0: no bar */
void gpucor_progress_init(gpucor_progress *pr, double delay, const char *label);
void gpucor_progress_pass(void *ctx, const char *step, int k, int npass, double weight);
void gpucor_progress_update(void *ctx, double frac);
/* An engine call ends well (whatever passes its driver reported): its
 * bar at 100% with its newline, or, in a loop of R, at its frame's end.
 * gpucor_call_report() calls it. */
void gpucor_progress_finish(void *ctx);
/* An error is raised: a bar left mid-line gets its newline. */
void gpucor_progress_abort(void);
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
/* The measure named by the string 'name' in 'space' (MEASURE_*), and the
 * 'use' mode named by 'use' (USE_*): R passes names, never codes; an
 * unknown one is an internal error. */
const gc_measure *gpucor_measure_arg(SEXP name, int space);
int gpucor_use_arg(SEXP use);
/* gpu_cor_edges()'s criteria (R/edges.R: list(threshold, top_k, density,
 * fdr, absolute, p_value), NA where absent) into the driver's job. */
struct gc_edges_job;
/* One side of bicor's preparation (R/wgcna.R, .bicor_params(): list(
 * max_outliers, fallback: "none" / "individual" / "all", pearson)). */
struct gc_bicor_opts;
void gpucor_bicor_opts(SEXP list, struct gc_bicor_opts *o);
/* Both sides' (list(x, y, quick)): returns quick. */
double gpucor_bicor_sides(SEXP list, struct gc_bicor_opts *ox, struct gc_bicor_opts *oy);
void gpucor_criteria(SEXP list, struct gc_edges_job *job);
/* label: the bar's name when R gave none (o->fun); with o->bar (a loop in
 * R runs this call) the loop's bar is used and pr stays unused. */
void gpucor_host_init(gc_host *h, const gc_opts *o, gpucor_progress *pr, const char *label);
/* With option gpucor.profile: the GPU's stage times (waiting for the
 * device, committing into R memory, total) as attribute "timing", and the
 * CPU engine's team size as attribute "threads" (the thread tests read it). */
void gpucor_set_timing(SEXP ans, const gc_opts *o, const double *seconds);
void gpucor_set_threads(SEXP ans, const gc_opts *o, int threads);
/* The end of an engine call that made ans: the CPU's team size when the
 * CPU ran (used > 0), else the GPU's timings (both with option profile)
 * and the GPU's note as a warning, "fun: note" (fun NULL: the note). */
void gpucor_call_report(SEXP ans, const gc_opts *o, const gc_host *host, int used,
                        const char *fun);
/* A failed call raises: with a file sink, once the file is finished or
 * removed (output.c); else with the engine's message. */
void gpucor_call_status(gc_file *f, int status, const char *fun, const char *msg);
#endif
