/*
 * prune.h -- network inference from a mutual-information matrix, as
 * parmigene 1.1.0 does it: ARACNE (additive and multiplicative tolerance),
 * CLR and MRNET.  R-free: the .Call entry points are in prune.c.
 *
 * ARACNE.  parmigene visits every triangle i > j > k once, reading the
 * input (never its own removals: it marks, then the marks are the result)
 * with x = mi[i, j], y = mi[j, k], z = mi[i, k] and f(v) = v * eta - eps
 * (aracne.a: eta = 1; aracne.m: eta = 1 - tau, eps = 0), and removes at
 * most one edge of it by a decision tree (gc_aracne_tree()).  Where f is
 * non-decreasing and f(v) <= v for every value -- aracne.a always (eps > 0);
 * aracne.m when no value off the diagonal is negative -- the tree removes
 * exactly the edges e < f(a) and e < f(b), a and b the triangle's other two
 * (at most one edge can be), so
 *
 *     (i, j) is removed  iff  mi_ij < f(m_ij),  m_ij = max_{k != i, j} min(mi_ik, mi_jk)
 *
 * (f monotone: e < f(a) && e < f(b) iff e < f(min(a, b)); the max over k
 * passes through f as well).  m is a max-min "product" of mi with itself,
 * computed in tiles (CPU: gc_aracne_cpu; GPU: cuda/prune.cu) with the
 * diagonal read as -Inf so that k = i and k = j drop out.  Otherwise
 * (aracne.m with a negative value: there f(v) > v, and the tree removes
 * by the index order of the triangle) each pair runs the tree over every
 * k, exactly parmigene's decisions (gc_aracne_tree_pairs, slower).
 *
 * CLR and MRNET follow parmigene's arithmetic operation by operation
 * (same sums in the same order), so the values agree to the bit.
 */
#ifndef GPUCOR_PRUNE_H
#define GPUCOR_PRUNE_H

#include <stddef.h>
#include "../engine/engine.h"
#include "../engine/layout.h"   /* GC_HOST_DEVICE */

/* What gc_prune_check() found. */
enum { PRUNE_OK = 0, PRUNE_NONFINITE, PRUNE_ASYMMETRIC };

/* mi: n x n, column-major.  Returns PRUNE_NONFINITE (a value that is NA,
 * NaN or infinite) or PRUNE_ASYMMETRIC (mi[i, j] != mi[j, i]) with the
 * first such pair (column-major) in *bi, *bj, or PRUNE_OK; *negative: a
 * value off the diagonal is below zero. */
int gc_prune_check(const double *mi, size_t n, size_t *bi, size_t *bj, int *negative,
                   int nthreads);

typedef struct {
    const double *mi;   /* n x n, column-major, symmetric and finite */
    size_t n;
    double eps, eta;    /* parmigene's f(v) = v * eta - eps */
    int maxmin;         /* 1: the max-min rule is exact (see above); 0: the tree */
    size_t block;       /* CPU tile side (0: automatic); tests force small ones */
    double *out;        /* n x n: mi with the removed edges set to 0 */
} gc_aracne_job;

/* parmigene's decision for the triangle i > j > k with x = mi[i, j],
 * y = mi[j, k], z = mi[i, k]: 0 none, 1 x, 2 y, 3 z is removed.  (Where a
 * compiler contracts v * eta - eps into one fused multiply-add the value
 * is the same: either eta = 1 or eps = 0.) */
GC_HOST_DEVICE
static inline int gc_aracne_tree(double x, double y, double z, double eps, double eta)
{
    if (x <= y) {
        if (z < x * eta - eps) return 3;
        if (x < y * eta - eps && x < z * eta - eps) return 1;
    } else if (x <= z) {
        if (y < x * eta - eps) return 2;
        if (x < y * eta - eps && x < z * eta - eps) return 1;
    } else {
        if (y < z * eta - eps) return 2;
        if (z < x * eta - eps && z < y * eta - eps) return 3;
    }
    return 0;
}

/* Whether parmigene removes the pair (p, q), p > q, in some triangle: the
 * tree over every k != p, q (mi: ld rows per column). */
GC_HOST_DEVICE
static inline int gc_aracne_pair_removed(const double *mi, size_t ld, size_t n, size_t p, size_t q,
                                         double eps, double eta)
{
    const double *cp = mi + p * ld, *cq = mi + q * ld;
    double e = cp[q];
    for (size_t k = 0; k < n; k++) {
        if (k == p || k == q) continue;
        if (k < q) {            /* p > q > k: (p, q) is x */
            if (gc_aracne_tree(e, cq[k], cp[k], eps, eta) == 1) return 1;
        } else if (k < p) {     /* p > k > q: (p, q) is z */
            if (gc_aracne_tree(cp[k], cq[k], e, eps, eta) == 3) return 1;
        } else {                /* k > p > q: (p, q) is y */
            if (gc_aracne_tree(cp[k], e, cq[k], eps, eta) == 2) return 1;
        }
    }
    return 0;
}

/* The CPU engine: job->out made whole.  *threads_used: the team's size. */
int gc_aracne_cpu(const gc_aracne_job *job, gc_host *host, int *threads_used, char *msg,
                  size_t msgcap);

/* For the columns i of the 64-column blocks bi0 .. bi1 - 1 and the rows and
 * columns j < i: out = mi, then out[j, i] = out[i, j] = 0 for the pairs
 * j < i whose mask[j + (i - 64 bi0) ldm] is nonzero (a band of the GPU's
 * decisions; mask NULL: none).  The bands of 0 .. ceil(n / 64) make out
 * whole. */
#define GC_ARACNE_BAND 64
void gc_aracne_apply_mask(const double *mi, size_t n, const unsigned char *mask, size_t ldm,
                          size_t bi0, size_t bi1, double *out, int nthreads);

/* parmigene's clr(): out (n x n) from mi.  Row moments with divisor n over
 * the whole row (diagonal included); z = (m - mean)^2 / var, 0 where
 * m < mean or var = 0; out = sqrt(z_i^2 + z_j^2), 0 on the diagonal. */
int gc_clr_cpu(const double *mi, size_t n, double *out, gc_host *host, int *threads_used,
               char *msg, size_t msgcap);

/* parmigene's mrnet(): per target, greedy maximum relevance minimum
 * redundancy selection; out = the larger of the two directions' scores. */
int gc_mrnet_cpu(const double *mi, size_t n, double *out, gc_host *host, int *threads_used,
                 char *msg, size_t msgcap);

#ifdef GPUCOR_CUDA
/* The CUDA engine of ARACNE (cuda/prune.cu): mi resident on the first
 * device of host->opts; the decisions come back as a mask. */
int gc_aracne_cuda(const gc_aracne_job *job, gc_host *host, char *msg, size_t msgcap);
#endif

#endif
