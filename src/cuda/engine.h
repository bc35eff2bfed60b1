/*
 * engine.h -- the C interface of the CUDA engine (R-free).  The entry points
 * in cor.c / dist.c fill one of these problems and call the engine; every
 * function returns a gpucor_status and writes a message into msg on error,
 * after freeing every device buffer, pinned buffer, stream, event and
 * handle it created.
 */
#ifndef GPUCOR_CUDA_ENGINE_H
#define GPUCOR_CUDA_ENGINE_H

#include <stddef.h>
#include "../gpucor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Host-side hooks the engine calls between slabs, from the calling thread. */
typedef struct {
    gpucor_interrupt_fn interrupted;         /* nonzero: stop */
    void (*progress)(void *ctx, double frac); /* may be NULL */
    void *progress_ctx;
    int nthreads;                            /* host threads for the copy-out */
    double mem_cap;                          /* bytes of device memory to use; <= 0: free memory */
    size_t slab_cols;                        /* force the slab width (tests); 0: automatic */
    double seconds[3];                       /* out: host time waiting for the GPU,
                                                copying into R memory, total pipeline */
} gpu_host;

/* Correlations of columns (variables) of x [n x p, column stride ldx] with
 * those of y (or of x), into a p x q matrix or a packed 'dist' of p items.
 * dist_rows: x is the n x p matrix whose ROWS are the items (gpu_dist's
 * correlation distances); the engine transposes it on the device. */
typedef struct {
    const double *x; size_t n, p;
    const double *y; size_t q;               /* NULL: symmetric */
    const int *rows; size_t nobs;            /* NULL: every row */
    int method;                              /* COR_PEARSON / _SPEARMAN / _KENDALL */
    int pairwise;                            /* use = "pairwise.complete.obs" */
    int cosine;                              /* uncentred */
    int single;                              /* float arithmetic */
    int out_kind;                            /* 0 matrix, 1 dist */
    int dist_transform;                      /* 0: 1 - r, 1: 1 - |r| */
    int dist_rows;
    double *out;
    gpu_host host;
    int sd0;                                 /* out: zero-sd pair met (see cpu) */
    unsigned char *flags_out;                /* out (optional, p then q): column flags */
    char msg[512];
} gpu_cor_problem;

int gpucor_cuda_cor(gpu_cor_problem *pb);

/* stats::dist()'s metrics between the rows of x [n x p, column-major]. */
typedef struct {
    const double *x; size_t n, p;
    int method;                              /* DIST_EUCLIDEAN .. DIST_MINKOWSKI */
    double power;
    int single;
    double *out;                             /* n(n-1)/2 */
    gpu_host host;
    int nonfinite_binary;                    /* out */
    char msg[512];
} gpu_dist_problem;

int gpucor_cuda_dist(gpu_dist_problem *pb);

/* Frees the cached stream, cuBLAS handle and pinned buffers (at exit and
 * unload). */
void gpucor_cuda_release(void);
/* Forgets them without any CUDA call (in a forked child, where the
 * parent's context cannot be used). */
void gpucor_cuda_forget(void);

/* Bits of the float NaN that stands for NA in single-precision output. */
#define GPUCOR_FLOAT_NA_BITS 0x7fc007a2u

/* Host copy-out used by the pipeline (cpu/copy.c): dst[k] = src[k] for
 * count doubles, or src[k] * scale for count floats (scale an exact power of
 * two), split over nthreads so that first-touch page faults of fresh R
 * memory are taken in parallel. */
void cpu_copy_out(double *dst, const void *src, size_t count, int is_float,
                  double scale, int nthreads);

#ifdef __cplusplus
}
#endif
#endif
