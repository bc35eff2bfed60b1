/*
 * hclust.h -- agglomerative hierarchical clustering behind gpu_hclust():
 * stats::hclust()'s eight methods on a packed 'dist' (stats' layout,
 * engine/layout.h), on the CPU (hclust.c) or with the distances resident
 * on one GPU (cuda/hclust.cu).  R-free: the .Call entry point is
 * src/hclust.c.
 *
 * The reducible methods (single, complete, average, mcquitty, ward.D,
 * ward.D2) run the nearest-neighbour chain: grow a chain of nearest
 * neighbours from any cluster until two clusters are each other's nearest
 * neighbour, merge them (a Lance-Williams update of one row of distances),
 * go on from what is left of the chain.  That is n - 1 merges and at most
 * about 3n row scans, O(n^2) in all, and every step is the same on both
 * engines, so they give the same bits.  The merges come out of the chain
 * in no particular order; sorted by height (stably) they are those of
 * stats' greedy algorithm wherever no two distances tie.
 *
 * Centroid and median are not reducible (a merge can bring two other
 * clusters closer), so the chain does not apply: they run stats' own
 * algorithm (a nearest-neighbour list, Fortran hclust.f), with its order
 * of operations, on the CPU.
 *
 * Ties.  A row scan takes the smallest distance; among equal ones the
 * chain's previous cluster if it is one of them (the chain's rule, which
 * makes it stop), else the cluster of smallest index.  A merged cluster
 * takes the smaller of the two indices.  Merges of equal height keep the
 * order the chain made them in.  With ties the result is a valid
 * clustering for the method but may differ from stats' (which picks the
 * pair of smallest first index among the tied minimum).
 */
#ifndef GPUCOR_HCLUST_H
#define GPUCOR_HCLUST_H

#include <stddef.h>
#include "../engine/engine.h"

/* The linkage methods, in the order of stats::hclust()'s METHODS (its
 * Fortran numbers them 1, 2, 3, 4, 5, 7, 6, 8); gc_hclust_names[] holds
 * their R names, which R passes. */
enum {
    HC_WARD_D = 0, HC_SINGLE, HC_COMPLETE, HC_AVERAGE, HC_MCQUITTY,
    HC_MEDIAN, HC_CENTROID, HC_WARD_D2, HC_COUNT
};
extern const char *const gc_hclust_names[HC_COUNT];
/* HC_* of an R name, or -1. */
int gc_hclust_find(const char *name);

/* Whether the nearest-neighbour chain applies to the method. */
static inline int gc_hclust_reducible(int method)
{
    return method != HC_MEDIAN && method != HC_CENTROID;
}

/* The Lance-Williams update: the distance from cluster k to the union of
 * i and j, from d(k, i) = dki, d(k, j) = dkj, d(i, j) = dij and the sizes.
 * Written as stats' Fortran writes it, one rounding per operation (no
 * fused multiply-add: the CUDA engine writes the same with _rn
 * intrinsics), so both engines and stats agree to the bit where they
 * merge in the same order.  Ward's methods take squared distances. */
static inline double gc_hclust_lw(int method, double dki, double dkj, double dij,
                                  double ni, double nj, double nk)
{
    switch (method) {
    case HC_SINGLE: return dki < dkj ? dki : dkj;
    case HC_COMPLETE: return dki > dkj ? dki : dkj;
    case HC_AVERAGE: return (ni * dki + nj * dkj) / (ni + nj);
    case HC_MCQUITTY: return 0.5 * dki + 0.5 * dkj;
    case HC_MEDIAN: return 0.5 * dki + 0.5 * dkj - 0.25 * dij;
    case HC_CENTROID: return (ni * dki + nj * dkj - ni * nj * dij / (ni + nj)) / (ni + nj);
    default:   /* ward.D, ward.D2 */
        return ((ni + nk) * dki + (nj + nk) * dkj - nk * dij) / (ni + nj + nk);
    }
}

/* The raw merges of a run: merge m joined the clusters represented by
 * a[m] and b[m] (0-based object indices; a cluster is represented by the
 * smallest object index it holds... as the chain keeps it: the smaller of
 * the two merged representatives) at height h[m].  n - 1 of them. */
typedef struct {
    int *a, *b;
    double *h;
} gc_hclust_merges;

/* The CPU engines.  D: the packed distances of n objects, overwritten
 * (squared first for ward.D2); members: the initial cluster sizes (NULL:
 * 1 each).  The chain's merges are in chain order (sort them with
 * gc_hclust_finish(sorted = 0)); stats' algorithm's in stats' order.
 * Heights of ward.D2 are the square roots. */
int gc_hclust_chain_cpu(double *D, size_t n, int method, const double *members,
                        gc_hclust_merges *out, gc_host *host, int *threads_used,
                        char *msg, size_t msgcap);
int gc_hclust_generic_cpu(double *D, size_t n, int method, const double *members,
                          gc_hclust_merges *out, gc_host *host, char *msg, size_t msgcap);

/* stats' hclust object from the raw merges: merge (n - 1 x 2, column-
 * major, R's convention: -i a singleton, +m the cluster of merge m; a
 * singleton before a cluster, two clusters or two singletons in increasing
 * order), height, and order (the leaves left to right, 1-based).  sorted:
 * the merges are already in order (else sorted stably by height, a merge
 * never before the ones that made its clusters).  Returns GPUCOR_ERR_ALLOC
 * or GPUCOR_OK. */
int gc_hclust_finish(size_t n, const gc_hclust_merges *in, int sorted, int *merge,
                     double *height, int *order);

/* The share of the chain's work done after 'merges' of the n - 1 merges,
 * for the progress bar: a step scans the clusters still active, n - m
 * after m merges, so the work done is about 1 - ((n - 1 - m) / (n - 1))^2
 * (the merges' count alone runs ahead: the first half of them takes three
 * quarters of the time). */
static inline double gc_hclust_chain_done(size_t merges, size_t n)
{
    double left = n > 1 ? (double) (n - 1 - merges) / (double) (n - 1) : 0;
    return 1 - left * left;
}

/* src[0 .. len) into dst as doubles or (single) floats, over nthreads;
 * returns the index of the first value that is not finite, or len. */
size_t gc_hclust_stage(const double *src, size_t len, void *dst, int single, int nthreads);

#ifdef GPUCOR_CUDA
/* The CUDA engine (cuda/hclust.cu): the chain with the packed distances
 * resident on one device, in double or (single) float.  open() checks that
 * they fit and allocates them (*dev_d: the device pointer, for a
 * SINK_DIST_DEVICE that computes them there); upload() fills them from a
 * host 'dist' instead (1 in *bad, with *at, when a value is not finite),
 * in chunks, with Ctrl-C and host's progress between them;
 * run() clusters (1 in *bad when a distance is NA or NaN); close() frees
 * everything, also after an error. */
typedef struct gc_hclust_dev gc_hclust_dev;
int gc_hclust_cuda_open(size_t n, int device, int single, double gpu_memory,
                        gc_hclust_dev **h, void **dev_d, char *msg, size_t msgcap);
int gc_hclust_cuda_upload(gc_hclust_dev *h, const double *d, int nthreads,
                          const gc_host *host, int *bad, size_t *at, char *msg,
                          size_t msgcap);
int gc_hclust_cuda_run(gc_hclust_dev *h, int method, const double *members,
                       gc_hclust_merges *out, gc_host *host, int *bad, char *msg,
                       size_t msgcap);
void gc_hclust_cuda_close(gc_hclust_dev *h);
#endif

#endif
