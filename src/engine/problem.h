/*
 * problem.h -- one computation, as both engines take it: the input (a view
 * of R's columns), the measure (a row of measure.c's table) and stats' 'use'
 * mode.  The dispatch (algo/dispatch.c) hands the same problem to the CPU
 * engine (cpu/cpu.h) or the CUDA engine (cuda/engine.h); each derives its
 * own private context from it.  R-free: it compiles as C and as CUDA C++.
 */
#ifndef GPUCOR_PROBLEM_H
#define GPUCOR_PROBLEM_H

#include <stddef.h>
#include "measure.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    const double *x, *y;         /* n x p and n x q, column-major (y NULL: x
                                    against itself); knnmi between rows
                                    (gpu_knnmi(y =)): y is q x p, q
                                    variables of the same p samples */
    size_t n, p, q;
    const int *rows;             /* complete modes: the rows used (0-based);
                                    NULL: all n */
    size_t nobs;
    const gc_measure *measure;
    int use;                     /* USE_*: pairwise, a pair uses the rows
                                    both have */
    int between_rows;            /* the items are the n rows of x (the
                                    measure's space is MEASURE_ROWS: gpu_dist,
                                    gpu_knn, gpu_hclust); a correlation then
                                    follows stats' rules of 1 - cor(t(x)) */
    double power;                /* Minkowski's p */
    size_t k;                    /* knnmi: the neighbours (Kraskov's k) */
    const double *jitter;        /* knnmi: n x p, added to the rows after
                                    their normalisation (NULL: none) */
    const double *jitter_y;      /* knnmi: the same for y (q x p) */
} gc_problem;

/* What a pass reports besides its sink's result. */
typedef struct {
    int sd0;                     /* "the standard deviation is zero" (stats'
                                    rule for the problem) */
    int nonfinite;               /* binary distance met a non-finite value */
    int threads_used;            /* the CPU's team size (0: the GPU ran) */
    unsigned char *col_flags;    /* in, optional: room for the p (+ q) column
                                    flags (COL_*), which the GPU's
                                    correlations outside pairwise mode fill */
} gc_pass;

#ifdef __cplusplus
}
#endif
#endif
