/*
 * cutree.h -- the hybrid dynamic tree cut behind gpu_cutree_dynamic()
 * (R/cutree.R): dynamicTreeCut::cutreeHybrid()'s labels (dynamicTreeCut
 * 1.63) computed in C.  R-free: the .Call entry point is src/cutree.c.
 *
 * The algorithm is Langfelder's.  A pass over the merges below the cut
 * grows "basic" branches (lists of singletons, the first ones joined
 * first) and "composite" branches (lists of basic ones); when two branches
 * meet, a basic one that is too small, too scattered (the mean distance
 * within its core, the first CoreSize singletons), too close to the merge
 * (gap) or too low joins the other; otherwise the two stay apart under a
 * composite.  Top-level basic branches that pass the same tests are the
 * clusters.  The PAM stage then gives unlabelled objects (and "small
 * clusters", branches that joined for their size only) the label of the
 * nearest cluster (mean distance to its members, or to its medoid) if it
 * is close enough, within their own branch when pamRespectsDendro.
 *
 * Exactness.  Every decision compares a mean of distances with a bound, so
 * the labels equal the reference's only if every mean is the same double.
 * R sums a column (colSums, colMeans, sum) in long double in row order and
 * mean() adds a second pass (the mean of the residuals); this code sums
 * the same values, in the same order, the same way.  It also keeps the
 * reference's handling of labels 0 within a branch (unlabelled basic
 * clusters) and of medoids, where the reference errs, errs too.
 */
#ifndef GPUCOR_CUTREE_H
#define GPUCOR_CUTREE_H

#include <math.h>
#include <stddef.h>

/* R's mean() of k doubles, as R 4.2's summary.c computes it: the sum in
 * long double divided by k, then the long double mean of the residuals
 * added when the first mean is finite.  Both cuts (the hybrid's core
 * scatters, the tree method's levels) compare such means with bounds. */
static inline double gc_r_mean(const double *x, size_t k)
{
    long double s = 0;
    for (size_t i = 0; i < k; i++) s += x[i];
    s /= (long double) k;
    if (isfinite((double) s)) {
        long double t = 0;
        for (size_t i = 0; i < k; i++) t += x[i] - s;
        s += t / (long double) k;
    }
    return (double) s;
}

/* The distances: a dense n x n matrix (column-major, row i, column j) or a
 * packed 'dist' (stats' layout).  The diagonal reads as 0, as the
 * reference sets it. */
typedef struct {
    const double *x;
    size_t n;
    int packed;
} gc_distm;

/* The thresholds, computed in R exactly as cutreeHybrid() computes them. */
typedef struct {
    double cut_height, max_abs_core_scatter, min_abs_gap, min_abs_split_height,
        max_pam_dist, min_cluster_size;
    int pam_stage, pam_respects_dendro, use_medoids, respect_small_clusters;
    int nthreads;
    /* External branch splits (the reference's externalBranchSplitFnc),
     * or NULL: asked when two basic branches would stay apart, with the
     * larger's and the smaller's objects (0-based); sets *merge.  Returns
     * 0, or nonzero if the function failed. */
    int (*external)(void *ctx, const int *b1, size_t n1, const int *b2, size_t n2,
                    int *merge);
    void *external_ctx;
} gc_cutree_params;

/* merge: R's hclust merge matrix (n_merge x 2, column-major, negative =
 * singleton); height: the merge heights.  colors (n_merge + 1 values): the
 * labels before the reference's final renumbering by size (0 unlabelled,
 * -1 rejected by the PAM stage).  Returns GPUCOR_OK or a status, with a
 * message in msg. */
int gc_cutree_hybrid(const int *merge, const double *height, size_t n_merge,
                     const gc_distm *d, const gc_cutree_params *p, int *colors,
                     char *msg, size_t msglen);

#endif
