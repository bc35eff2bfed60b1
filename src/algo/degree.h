/*
 * degree.h -- the cut of a degree centrality at a density (gpu_degree_centrality()).
 */
#ifndef GPUCOR_ALGO_DEGREE_H
#define GPUCOR_ALGO_DEGREE_H

#include <stddef.h>
#include "../engine/engine.h"

typedef struct {
    /* one pass over every pair of the symmetric p x p result into sink */
    int (*run)(void *ctx, const gc_sink *sink, char *msg, size_t msgcap);
    void *run_ctx;
    size_t p;
    int absolute;        /* pairs ranked by |r| (else by r) */
    int nslots;          /* threads that may write the sink at once */
    double D;            /* the number of strongest pairs wanted (>= 1) */
} gc_degree_job;

/* The value v of the D-th strongest pair, exactly, by histogram passes of
 * the selecting sink (at most four: 16 bits of the 64-bit keys a pass).
 * The kept pairs are those at least as strong as v -- every pair tied with
 * the D-th one too, so the choice never depends on the order of the
 * nodes: *kept of them (>= D; all pairs with a value when fewer than D).
 * *cut is the largest double below v (the degree sink keeps a > cut), or
 * -Inf when every pair is kept.  Returns a status. */
int gc_degree_cut(const gc_degree_job *job, double *cut, double *kept, char *msg,
                  size_t msgcap);

#endif
