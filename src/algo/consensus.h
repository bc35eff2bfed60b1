/*
 * consensus.h -- the consensus TOM of gpu_blockwise_consensus_modules()
 * (R/consensus.R): WGCNA's consensusTOM() elementwise over the pairs of
 * genes, from the sets' dissimilarities 1 - TOM as gpu_tom(dist = TRUE)
 * gives them.  R-free: the .Call entry point is src/consensus.c.
 */
#ifndef GPUCOR_ALGO_CONSENSUS_H
#define GPUCOR_ALGO_CONSENSUS_H
#include <stddef.h>

/* how the sets' TOMs make the consensus (R/consensus.R's .cs_modes, in
 * this order) */
enum { CS_MIN = 0, CS_QUANTILE = 1, CS_MEAN = 2 };

/* For each of the len pairs: the sets' TOMs t_s = (1 - d[s][i])^pw[s]
 * (with from_tom, d holds the TOMs themselves), their consensus c (the
 * minimum; the quantile q of type 7, R's default; or the weighted sum with
 * weights w), out[i] = 1 - c, and count[s] += (t_s <= c).  The same arithmetic, in the same
 * order, as R's 1 - d, ^, pmin() and quantile(), so the same doubles.
 * nsets at most CS_MAX_SETS.  Returns 0, or -1 for too many sets. */
#define CS_MAX_SETS 64
int gc_consensus_tom(const double *const *d, int from_tom, size_t nsets, size_t len,
                     const double *pw, int mode, double q, const double *w, double *out, double *count,
                     int nthreads);

#endif
