/* status.h -- shared by the .Call entry points (R-aware side only). */
#ifndef GPUCOR_STATUS_H
#define GPUCOR_STATUS_H
#include <Rinternals.h>

int gpucor_interrupted(void);
/* Raises the R condition for a non-OK status; call after freeing. */
void gpucor_raise(int status, const char *what);
/* ... with the engine's message (GPU errors name the failing call). */
void gpucor_raise_msg(int status, const char *what, const char *msg);

typedef struct { int show, shown; double start; } gpucor_progress;
void gpucor_progress_init(gpucor_progress *pr, int show);
void gpucor_progress_update(void *ctx, double frac);
/* With option gpucor.profile, attach the GPU pipeline's stage times
 * (wait for GPU, copy into R memory, pipeline total) as attribute "timing". */
void gpucor_set_timing(SEXP ans, SEXP opts, const double *seconds);
/* threads.c: the thread count an engine call gets (1 in a forked child),
 * and the pthread_atfork registration R_init_gpucor makes. */
int gpucor_nthreads(SEXP threads);
int gpucor_forked_child(void);
void gpucor_threads_init(void);
/* With option gpucor.profile, attach the CPU engine's team size as
 * attribute "threads" (the thread-limit tests read it). */
void gpucor_set_threads(SEXP ans, SEXP opts, int threads);
/* Unpacks the 'gpu' options vector; returns use_gpu. */
int gpucor_gpu_opts(SEXP opts, int *single, double *mem_cap, size_t *slab,
                    int *progress);
#endif
