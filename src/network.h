/*
 * network.h -- the engine runs that cor.c and dist.c share with the
 * network entry points (network.c): one pass of an engine over every pair,
 * into any sink.  R-aware (R_alloc) but they never raise: a status and a
 * message come back.
 */
#ifndef GPUCOR_NETWORK_H
#define GPUCOR_NETWORK_H

#include "engine/engine.h"

/* gpu_cor()'s input, as R/cor.R prepared it */
typedef struct {
    const double *x, *y;     /* n x p and n x q (y NULL: x against itself) */
    size_t n, p, q;
    const int *rows;         /* complete modes: the rows used (0-based) */
    size_t nobs;
    int method, use;         /* COR_*, USE_* */
    int cosine;              /* uncentred (gpu_bicor's prepared columns) */
    int cov;                 /* pairwise Pearson, CPU: pairs with NA give
                                their covariance (gpu_cov) */
} gc_cor_input;

/* Correlations into sink on the GPU (host->opts->gpu) or the CPU; *sd0:
 * stats' "the standard deviation is zero"; *used: the CPU's team size
 * (0: the GPU ran). */
int gpucor_cor_engine(const gc_cor_input *in, const gc_sink *sink, gc_host *host,
                      int *sd0, int *used, char *msg, size_t msgcap);

/* Whether x[0 .. len) holds a NaN (NA). */
int gpucor_any_nan(const double *x, size_t len);

/* gpu_dist()'s metric m (DIST_*) between the n rows of x (n x p) into
 * sink; *flag: stats' warning (binary's non-finite values, or a zero sd). */
int gpucor_dist_engine(const double *x, size_t n, size_t p, int m, double pw,
                       int anyna, const gc_sink *sink, gc_host *host, int *flag,
                       int *used, char *msg, size_t msgcap);

#endif
