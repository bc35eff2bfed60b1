/*
 * edges.h -- the multi-pass driver behind gpu_cor_edges(): which pairs of
 * a correlation result are kept, without ever storing the result.
 *
 * Passes run the engine (CPU or GPU, through job->run) into the selecting
 * sink (engine/select.h):
 *  1. for a density or an FDR criterion, histogram passes find a cut: the
 *     weakest 16-bit bin of keys that may hold a kept pair (refined inside
 *     that bin while it holds more than GC_EDGES_BIN_LIMIT pairs);
 *  2. a collecting pass keeps every pair at or above the cut (or, for
 *     top-k alone, each variable's k best partners in heaps);
 *  3. on the host, the exact decision on these candidates: p-values, the
 *     Benjamini-Hochberg step-up cut as p.adjust() makes it, the density's
 *     D strongest pairs, each variable's top k, then the threshold.
 */
#ifndef GPUCOR_EDGES_H
#define GPUCOR_EDGES_H

#include <stdint.h>
#include "../engine/select.h"
#include "pvalue.h"

#define GC_EDGES_BIN_LIMIT ((uint64_t) 1 << 22)

typedef struct gc_edges_job {
    /* one pass over every pair of the result into sink */
    int (*run)(void *ctx, const gc_sink *sink, char *msg, size_t msgcap);
    void *run_ctx;
    int symmetric;
    size_t p, q;
    int strength;          /* STRENGTH_ABS (absolute = TRUE) or STRENGTH_RAW */
    int epilogue;          /* EPI_*: the measure's, applied by the sink */
    int nslots;            /* threads that may write the sink at once */
    /* the criteria (0 / absent when not given) */
    int has_thr; double thr;
    size_t top_k;
    double density, fdr;
    int want_p;            /* p-values of the kept pairs */
    /* p-values: with one n for every pair, a decreasing function of |r|
     * (pabs); otherwise per pair (pvalue) */
    int common_n;
    double (*pabs)(void *ctx, double absr);
    gc_pvalue_fn pvalue;
    void *pctx;
} gc_edges_job;

/* The kept pairs, sorted by row then column (0-based; row < col when
 * symmetric), with their values, p-values (want_p or fdr; else NULL) and
 * BH-adjusted p-values (fdr; else NULL).  malloc'd: gc_edges_free(). */
typedef struct {
    size_t n;
    uint32_t *row, *col;
    double *val, *p, *adj;
    /* where the time went (seconds; option gpucor.profile): the cut's
     * histogram passes, the collecting pass, gathering the candidates,
     * their p-values, the exact decisions, the result; then the number of
     * histogram passes and of candidates */
    double stage[8];
} gc_edges_out;

/* The driver as steps, for a caller that makes the passes itself (the
 * workers of BiocParallel, R/edges.R): begin; while next gives a sink,
 * make that pass over every pair into it (several shares' parts may be
 * merged into its selection: engine/select.h), then absorb; finish; end.
 * job->run is not called.  Every call returns a status and a message;
 * gc_edges_end frees the driver at any point (NULL: nothing). */
typedef struct gc_edges gc_edges;
int gc_edges_begin(const gc_edges_job *job, gc_edges **e, char *msg, size_t msgcap);
/* *sink: the selecting sink of the next pass, reset and described (its
 * sel's mode, prefix, lower, k, threshold); NULL when no pass is left. */
int gc_edges_next(gc_edges *e, const gc_sink **sink, char *msg, size_t msgcap);
int gc_edges_absorb(gc_edges *e, char *msg, size_t msgcap);
int gc_edges_finish(gc_edges *e, gc_edges_out *out, char *msg, size_t msgcap);
void gc_edges_end(gc_edges *e);

/* The steps with job->run making each pass. */
int gc_edges_run(const gc_edges_job *job, gc_edges_out *out, char *msg,
                 size_t msgcap);
void gc_edges_free(gc_edges_out *out);

#endif
