/*
 * dispatch.h -- one pass of an engine over every pair, into any sink: the
 * GPU's when the options ask for it and it takes the problem, else the
 * CPU's.  Shared by the entry points (src/*.c) and the multi-pass drivers
 * (edges, TOM).  R-free; they never raise: a status and a message come
 * back.
 */
#ifndef GPUCOR_DISPATCH_H
#define GPUCOR_DISPATCH_H

#include "../engine/engine.h"
#include "../engine/measure.h"

/* a correlation's input, as R prepared it (R/cor.R) */
typedef struct {
    const double *x, *y;         /* n x p and n x q (y NULL: x against itself) */
    size_t n, p, q;
    const int *rows;             /* complete modes: the rows used (0-based) */
    size_t nobs;
    const gc_measure *measure;   /* a measure between columns */
    int use;                     /* USE_* */
} gc_cor_input;

/* Correlations into sink; *sd0: stats' "the standard deviation is zero";
 * *used: the CPU's team size (0: the GPU ran). */
int gc_run_cor(const gc_cor_input *in, const gc_sink *sink, gc_host *host, int *sd0,
               int *used, char *msg, size_t msgcap);

/* The measure m (between rows) of the n rows of x (n x p) into sink;
 * anyna: x has NA (the correlation distances then go pairwise); *flag:
 * stats' warning (m->warning). */
int gc_run_dist(const double *x, size_t n, size_t p, const gc_measure *m, double pw,
                int anyna, const gc_sink *sink, gc_host *host, int *flag, int *used,
                char *msg, size_t msgcap);

/* A GPU run asked of a build without CUDA: the message, and the status. */
int gc_no_cuda(char *msg, size_t msgcap);

/* Whether x[0 .. len) holds a NaN (NA). */
int gc_any_nan(const double *x, size_t len);

#endif
