/*
 * knnmi.h -- Kraskov's second mutual-information estimator as parmigene's
 * knnmi.all() computes it, shared by the CPU producer (cpu/knnmi.c) and the
 * GPU producer (cuda/knnmi.cu): the variables prepared once on the host
 * (knnmi.c), and the estimate of one pair (gc_knnmi_pair), one definition
 * for host and device, so both engines do the same double arithmetic in the
 * same order and agree to the bit.  R-free: it compiles as C and as CUDA C++.
 *
 * The items are the n rows of the problem's x (variables), its p columns the
 * samples (gpu_knnmi, between rows); between columns (gpu_cor_edges) the
 * p columns are the variables and the n rows the samples.  With a y
 * (gpu_knnmi(y =)) its q variables follow x's in the prepared block, so
 * that the pair of x's i and y's j is the pair (i, nx + j) of the
 * variables of rbind(x, y), computed alike (the larger index as X: y's).
 * Each variable is normalised as parmigene's normalize() does it:
 * mean (a plain double sum over n), sd with divisor n - 1, (x - mean) / sd,
 * then its minimum subtracted; a variable of zero sd is left as it is; one
 * whose mean or sd is infinite gives NaN against every other (parmigene's
 * 0 from normalize()).  The problem's jitter, if any, is then added (where
 * parmigene adds its noise).
 *
 * For a pair (X, Y) and each sample i: the k nearest other samples in the
 * max norm, max(|x_i - x_j|, |y_i - y_j|), ties at the k-th distance broken
 * by the smaller sample index j; eps_x(i), eps_y(i) the largest |x_i - x_j|,
 * |y_i - y_j| over those k; n_x(i) the number of samples j != i with
 * |x_i - x_j| <= eps_x(i) (n_y alike).  The estimate is
 *   psi(k) + psi(m) - 1/k - mean_i(psi(n_x(i)) + psi(n_y(i)))
 * with m samples and psi parmigene's table (psi(1) = -Euler's gamma,
 * psi(j + 1) = psi(j) + 1/j, summed in double).
 *
 * The search walks the samples in the order of X or of Y (each variable
 * sorted once by prepare) outwards from sample i: the k nearest in that
 * variable, then each side while its gap does not exceed the k-th distance
 * found: about sqrt(k m) samples a point on continuous data, O(m sqrt(k m))
 * a pair instead of O(m^2); the counts walk the sorted X and Y.
 */
#ifndef GPUCOR_KNNMI_H
#define GPUCOR_KNNMI_H

#include <stddef.h>
#include <math.h>
#include "layout.h"
#include "problem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The prepared variables (host or device pointers), n variables of m
 * samples each: variable v's values at val + v * m, the same ascending at
 * sorted + v * m (ties by sample index), the sample at each rank in ord, the
 * rank of each sample in rank. */
typedef struct {
    size_t n, m, k;
    const double *val, *sorted;
    const int *ord, *rank;
    const unsigned char *ok;   /* 0: mean or sd infinite (NaN pairs) */
    const double *psi;         /* psi[j - 1] = psi(j), j = 1 .. m */
} gc_knnmi_view;

/* The host arrays behind a view: one block of 'bytes', which the GPU
 * copies as it is and lays out alike (gc_knnmi_layout). */
typedef struct {
    gc_knnmi_view v;
    void *mem;
    size_t bytes;
} gc_knnmi_prep;

/* The bytes of the block of n variables of m samples ... */
size_t gc_knnmi_bytes(size_t n, size_t m);
/* ... and the view of such a block at mem (host or device memory). */
gc_knnmi_view gc_knnmi_layout(void *mem, size_t n, size_t m, size_t k);

/* Prepares the problem's variables (pb->n rows of pb->p samples, then, with
 * pb->y, its pb->q rows; pb->k neighbours; pb->jitter and pb->jitter_y
 * added after the normalisation) into *out.  Checks
 * 2 <= k < m.  Returns a status (and a message); gc_knnmi_free releases. */
int gc_knnmi_prepare(const gc_problem *pb, gc_knnmi_prep *out, char *msg, size_t msgcap);
void gc_knnmi_free(gc_knnmi_prep *prep);

#ifdef __cplusplus
}
#endif

/* Whether (d, j) comes before (e, l): nearer, or as near with a smaller
 * index (the tie rule). */
GC_HOST_DEVICE static inline int gc_knnmi_before(double d, int j, double e, int l)
{
    return d < e || (d == e && j < l);
}

/* Sample j, at distance d, into the list nd/nj of the cnt nearest so far
 * (ascending by (distance, index), at most k kept). */
GC_HOST_DEVICE static inline void gc_knnmi_offer(double d, int j, double *nd, int *nj,
                                                 size_t stride, size_t k, size_t *cnt)
{
    size_t t;
    if (*cnt == k) {
        if (!gc_knnmi_before(d, j, nd[(k - 1) * stride], nj[(k - 1) * stride])) return;
        t = k - 1;
    } else {
        t = (*cnt)++;
    }
    while (t > 0 && gc_knnmi_before(d, j, nd[(t - 1) * stride], nj[(t - 1) * stride])) {
        nd[t * stride] = nd[(t - 1) * stride];
        nj[t * stride] = nj[(t - 1) * stride];
        t--;
    }
    nd[t * stride] = d;
    nj[t * stride] = j;
}

/* The k nearest samples to sample i (whose value in A is ai, in B bi, at
 * rank r of A), into nd/nj: walking the samples in the order of A (sA
 * sorted, oA the samples; their values in B are bA[q], or B[oA[q]] where
 * bA is NULL) outwards from r. */
GC_HOST_DEVICE static inline void gc_knnmi_walk(double ai, double bi, size_t r,
                                                const double *sA, const int *oA,
                                                const double *bA, const double *B,
                                                size_t m, size_t k, double *nd, int *nj,
                                                size_t stride)
{
    size_t cnt = 0, lo = r, hi = r + 1;   /* the next below is lo - 1 */
#define GC_KNNMI_OFFER(q)                                                     \
    do {                                                                      \
        double g_ = fabs(ai - sA[q]);                                         \
        double db_ = fabs(bi - (bA ? bA[q] : B[oA[q]]));                      \
        gc_knnmi_offer(g_ > db_ ? g_ : db_, oA[q], nd, nj, stride, k, &cnt);  \
    } while (0)
    /* the k nearest in A first (k < m: there are enough) ... */
    while (cnt < k) {
        int take_lo = lo > 0 && (hi >= m || ai - sA[lo - 1] <= sA[hi] - ai);
        size_t q = take_lo ? --lo : hi++;
        GC_KNNMI_OFFER(q);
    }
    /* ... then each side outwards while its gap in A, a bound on the
     * distance of every sample further along, can still beat the k-th */
    for (size_t q = lo; q > 0 && ai - sA[q - 1] <= nd[(k - 1) * stride]; q--)
        GC_KNNMI_OFFER(q - 1);
    for (size_t q = hi; q < m && sA[q] - ai <= nd[(k - 1) * stride]; q++)
        GC_KNNMI_OFFER(q);
#undef GC_KNNMI_OFFER
}

/* The number of samples other than the one of value ai at rank r of the
 * sorted s[0 .. m - 1] within e of it (ai - s[q] <= e below, s[q] - ai <=
 * e above, as parmigene's region_count), given a sample at rank rj as far
 * as e: every rank between the two is within e (rounding is monotone), so
 * only the ties beyond rj and the other side are walked. */
GC_HOST_DEVICE static inline size_t gc_knnmi_count(double ai, double e, size_t r, size_t rj,
                                                   const double *s, size_t m)
{
    size_t c = 0, lo = r, hi = r + 1;   /* the next below is lo - 1 */
    if (rj < r) {
        c = r - rj;
        lo = rj;
    } else if (rj > r) {
        c = rj - r;
        hi = rj + 1;
    }
    for (; lo > 0 && ai - s[lo - 1] <= e; lo--) c++;
    for (; hi < m && s[hi] - ai <= e; hi++) c++;
    return c;
}

/* The term psi(n_x(i)) + psi(n_y(i)) of sample i for the pair of X (values,
 * sorted, the samples in order, their ranks) and Y.  nd, nj: room for k
 * neighbours (distance, sample), element t at [t * stride] (a GPU thread
 * may interleave its list with its neighbours').  yx, xy: NULL, or Y's
 * values in the order of X and X's in the order of Y (the CPU lays them
 * out once per pair so that the walks read memory in order), else they
 * are gathered.  The sample's walk goes along the variable in which it
 * sits sparser (the wider span of its 2k neighbours in rank): the band it
 * walks then holds fewer samples.  The neighbours found, and so the
 * arithmetic, are the same whichever way it walks. */
GC_HOST_DEVICE static inline double gc_knnmi_term(const double *X, const double *Y,
                                                  const double *sX, const double *sY,
                                                  const int *oX, const int *oY,
                                                  const int *rX, const int *rY,
                                                  const double *psi, size_t m, size_t k,
                                                  size_t i, double *nd, int *nj,
                                                  size_t stride, const double *yx,
                                                  const double *xy)
{
    const double xi = X[i], yi = Y[i];
    const size_t rx = (size_t) rX[i], ry = (size_t) rY[i];
    double wx = sX[rx + k < m ? rx + k : m - 1] - sX[rx > k ? rx - k : 0];
    double wy = sY[ry + k < m ? ry + k : m - 1] - sY[ry > k ? ry - k : 0];
    if (wx >= wy) gc_knnmi_walk(xi, yi, rx, sX, oX, yx, Y, m, k, nd, nj, stride);
    else gc_knnmi_walk(yi, xi, ry, sY, oY, xy, X, m, k, nd, nj, stride);
    /* the ranges in x and in y of those k (parmigene's find_range), and a
     * neighbour at each */
    double ex = 0, ey = 0;
    int jx = nj[0], jy = nj[0];
    for (size_t t = 0; t < k; t++) {
        int j = nj[t * stride];
        double dx = fabs(xi - X[j]), dy = fabs(yi - Y[j]);
        if (dx > ex) { ex = dx; jx = j; }
        if (dy > ey) { ey = dy; jy = j; }
    }
    /* the other samples within them (parmigene's region_count) */
    size_t nx = gc_knnmi_count(xi, ex, rx, (size_t) rX[jx], sX, m);
    size_t ny = gc_knnmi_count(yi, ey, ry, (size_t) rY[jy], sY, m);
    return psi[nx - 1] + psi[ny - 1];
}

/* The estimate from the m terms' sum (added in sample order). */
GC_HOST_DEVICE static inline double gc_knnmi_estimate(const double *psi, size_t m, size_t k,
                                                      double accum)
{
    return psi[k - 1] + psi[m - 1] - 1.0 / (double) k - accum / (double) m;
}

/* The estimate for variables a and b (a != b, both ok); nd, nj, stride, yx,
 * xy as gc_knnmi_term's. */
GC_HOST_DEVICE static inline double gc_knnmi_pair(const gc_knnmi_view *v, size_t a,
                                                  size_t b, double *nd, int *nj,
                                                  size_t stride, const double *yx,
                                                  const double *xy)
{
    const size_t m = v->m, k = v->k;
    double accum = 0;
    for (size_t i = 0; i < m; i++)
        accum += gc_knnmi_term(v->val + a * m, v->val + b * m, v->sorted + a * m,
                               v->sorted + b * m, v->ord + a * m, v->ord + b * m,
                               v->rank + a * m, v->rank + b * m, v->psi, m, k, i, nd, nj,
                               stride, yx, xy);
    return gc_knnmi_estimate(v->psi, m, k, accum);
}

#endif
