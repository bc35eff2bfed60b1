/*
 * apsp.h -- all-pairs shortest paths (blocked Floyd-Warshall) behind
 * gpu_shortest_paths() and gpu_network_metrics(), and the metrics reduced
 * from the lengths.  R-free: the .Call entry point is paths.c.
 *
 * The cost matrix D (n x n, column-major, D[i + j n] the length of the
 * edge i -> j; +Inf: no edge; 0 on the diagonal) is cut into b x b blocks.
 * Round K of n / b:
 *  1. the pivot block (K, K) is closed by Floyd-Warshall inside it;
 *  2. the blocks of its row and column: D_KJ = min(D_KJ, D_KK (x) D_KJ)
 *     and D_IK = min(D_IK, D_IK (x) D_KK), with (x) the min-plus product
 *     (D_KK is closed, so one product is the whole update);
 *  3. every other block: D_IJ = min(D_IJ, D_IK (x) D_KJ), a min-plus
 *     "GEMM" over the b columns of the pivot.
 * The CPU engine (apsp.c) and the CUDA one (cuda/apsp.cu) run the same
 * rounds.  Lengths are made from the user's weights as columns are needed
 * (gc_apsp_fill), so the GPU never needs an n x n copy on the host.
 */
#ifndef GPUCOR_APSP_H
#define GPUCOR_APSP_H

#include <math.h>
#include <stddef.h>
#include "../engine/engine.h"

/* how the user's values become lengths (order of 'weights' in R/paths.R) */
enum { W_DISTANCE = 0, W_INVERSE, W_NEGLOG, W_ONE_MINUS };

/* The input and the conversion. */
typedef struct {
    const double *w;   /* n x n matrix, or a 'dist' (packed lower triangle) */
    int is_dist;
    size_t n;
    int weights;
    int has_thr;       /* values below thr are no edge */
    double thr;
} gc_apsp_src;

/* The length of the edge i -> j (i != j) from the value v: +Inf for no
 * edge (NA/NaN, 0, below the threshold); may be negative or NaN (the caller
 * refuses those). */
static inline double gc_apsp_length(const gc_apsp_src *s, double v)
{
    if (isnan(v) || v == 0 || (s->has_thr && v < s->thr)) return INFINITY;
    switch (s->weights) {
    case W_INVERSE: return 1 / v;
    case W_NEGLOG: return -log(v);
    case W_ONE_MINUS: return 1 - v;
    default: return v;
    }
}

/* Columns [j0, j1) of D into dst (ld >= n rows per column, the rows from n
 * on without edges; doubles, or floats when is_float).  Returns 0, or 1
 * when a length is negative or NaN (gc_apsp_first_bad() then says where). */
int gc_apsp_fill(const gc_apsp_src *s, size_t j0, size_t j1, void *dst, size_t ld,
                 int is_float, int nthreads);
/* The first (column-major) pair whose length is negative or NaN: 1 and
 * *i, *j, *v (the user's value) set; 0 if none. */
int gc_apsp_first_bad(const gc_apsp_src *s, size_t *i, size_t *j, double *v);
/* A matrix that is not symmetric (for an undirected graph): 1 and the
 * first pair (i < j, column-major) that differs; 0 if symmetric; -1 when
 * host says Ctrl-C was pressed (checked between chunks of columns). */
int gc_apsp_asymmetric(const gc_apsp_src *s, size_t *i, size_t *j, int nthreads,
                       const gc_host *host);

/* What a run returns: the lengths (out_matrix: n x n; out_dist: a 'dist';
 * or neither), and per source vertex i (row i of the lengths, j != i) the
 * sums the metrics need (each array NULL when not wanted). */
typedef struct {
    double *out_matrix;
    double *out_dist;
    double *inv_sum;    /* sum of 1 / d(i, j) (1 / Inf = 0) */
    double *len_sum;    /* sum of the finite d(i, j) */
    double *reach;      /* how many j have a finite d(i, j) */
    double *ecc;        /* the largest finite d(i, j) (0 if none) */
} gc_apsp_out;

typedef struct {
    gc_apsp_src src;
    int symmetric;      /* undirected: D is symmetric, the upper half is enough */
    size_t block;       /* CPU block side (0: automatic); tests force small ones */
    gc_apsp_out out;
    int *bad;           /* out: a negative or NaN length was met (the run
                           stops with GPUCOR_ERR_INVALID) */
} gc_apsp_job;

/* The CPU engine: D in host memory (n x n doubles, made here), the rounds
 * on the thread team, then the outputs.  *threads_used: the team's size. */
int gc_apsp_cpu(const gc_apsp_job *job, gc_host *host, int *threads_used, char *msg,
                size_t msgcap);

/* The metrics' sums of row i of D (column-major, ld) into out[i]: rows
 * [r0, r1) at once, every column. */
void gc_apsp_row_sums(const double *D, size_t n, size_t ld, size_t r0, size_t r1,
                      const gc_apsp_out *out);

/* D's columns [j0, j1) (at D, ld rows each; doubles, or floats when
 * is_float) into the lengths' outputs. */
void gc_apsp_take(const gc_apsp_out *out, size_t n, size_t j0, size_t j1, const void *D,
                  size_t ld, int is_float, int nthreads);

#ifdef GPUCOR_CUDA
/* The CUDA engine (cuda/apsp.cu): D resident on the first device of
 * host->opts, in double or (single) float. */
int gc_apsp_cuda(const gc_apsp_job *job, gc_host *host, char *msg, size_t msgcap);
#endif

#endif
