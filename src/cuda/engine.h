/*
 * engine.h -- the C interface of the CUDA engine (R-free).  The entry points
 * in cor.c / dist.c fill the arguments of a producer family, name the sink
 * and call the engine; every function returns a gpucor_status and writes a
 * message into msg on error, after freeing every device buffer, pinned
 * buffer, stream, event and handle it created.
 */
#ifndef GPUCOR_CUDA_ENGINE_H
#define GPUCOR_CUDA_ENGINE_H

#include <stddef.h>
#include "../gpucor.h"
#include "../engine/engine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The correlation producers (cor.cu; pairwise.cu and kendall.cu): columns
 * (variables) of x [n x p] against those of y [n x q] (or of x).
 * rows_are_items: the ROWS of x are the variables (gpu_dist's correlation
 * distances); the engine transposes x on the device.  dist_rules: stats'
 * rules of 1 - cor(t(x)), pairs i > j only (the sink is a 'dist'). */
typedef struct {
    const double *x; size_t n, p;
    const double *y; size_t q;               /* NULL: symmetric */
    const int *rows; size_t nobs;            /* NULL: every row */
    int method;                              /* COR_PEARSON / _SPEARMAN / _KENDALL */
    int pairwise;                            /* use = "pairwise.complete.obs" */
    int cosine;                              /* uncentred */
    int single;                              /* float arithmetic */
    int rows_are_items;
    int dist_rules;
    int sd0;                                 /* out: zero-sd pair met (see cpu) */
    unsigned char *flags_out;                /* out (optional, p then q): column flags */
} gpu_cor_args;

int gpucor_cuda_cor(gpu_cor_args *a, const gc_sink *sink, gc_host *host,
                    char *msg, size_t msgcap);

/* stats::dist()'s metrics between the rows of x [n x p, column-major]. */
typedef struct {
    const double *x; size_t n, p;
    int method;                              /* DIST_EUCLIDEAN .. DIST_MINKOWSKI */
    double power;
    int single;
} gpu_dist_args;

int gpucor_cuda_dist(const gpu_dist_args *a, const gc_sink *sink, gc_host *host,
                     char *msg, size_t msgcap);

/* Frees the cached stream, cuBLAS handle and pinned buffers (at exit and
 * unload). */
void gpucor_cuda_release(void);
/* Forgets them without any CUDA call (in a forked child, where the
 * parent's context cannot be used). */
void gpucor_cuda_forget(void);

#ifdef __cplusplus
}
#endif
#endif
