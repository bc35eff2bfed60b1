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

#include <math.h>
#include <stddef.h>
#include "../engine/engine.h"
#include "../engine/knnmi.h"
#include "../engine/layout.h"   /* GC_HOST_DEVICE */

/* What gc_prune_check() found. */
enum { PRUNE_OK = 0, PRUNE_NONFINITE, PRUNE_ASYMMETRIC, PRUNE_INTERRUPTED };

/* mi: n x n, column-major.  Returns PRUNE_NONFINITE (a value that is NA,
 * NaN or infinite) or PRUNE_ASYMMETRIC (mi[i, j] != mi[j, i]) with the
 * first such pair (column-major) in *bi, *bj, or PRUNE_OK; *negative: a
 * value off the diagonal is below zero.  PRUNE_INTERRUPTED: host said
 * Ctrl-C was pressed (checked between chunks of columns; host may be
 * NULL). */
int gc_prune_check(const double *mi, size_t n, size_t *bi, size_t *bj, int *negative,
                   int nthreads, const gc_host *host);

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

/* The arithmetic of CLR and MRNET that both engines do, one definition:
 * on the device each product and sum is rounded on its own (__dmul_rn,
 * __dadd_rn: nvcc would otherwise fuse x * x + y into one multiply-add),
 * as the C compiler does on the host's default targets (x86-64 without
 * -mfma).  A host build that fuses (-march with FMA, or aarch64, where
 * GCC contracts by default) can differ from the GPU in the last bit, as
 * parmigene built there would. */
#if defined(__CUDA_ARCH__)
#define GC_PRUNE_MUL(a, b) __dmul_rn(a, b)
#define GC_PRUNE_ADD(a, b) __dadd_rn(a, b)
#else
#define GC_PRUNE_MUL(a, b) ((a) * (b))
#define GC_PRUNE_ADD(a, b) ((a) + (b))
#endif

/* CLR's moments of one row of n values c[0], c[stride], ...: the mean and
 * the variance with divisor n, each a plain sum in index order (the CPU
 * reads column i, the GPU row i: the same values, mi being symmetric, and
 * neighbouring threads then read neighbouring words). */
GC_HOST_DEVICE
static inline void gc_clr_moments(const double *c, size_t stride, size_t n, double *mean,
                                  double *var)
{
    double acc = 0;
    for (size_t j = 0; j < n; j++) acc = GC_PRUNE_ADD(acc, c[j * stride]);
    const double m = acc / (double) n;
    acc = 0;
    for (size_t j = 0; j < n; j++) {
        const double v = c[j * stride] - m;
        acc = GC_PRUNE_ADD(acc, GC_PRUNE_MUL(v, v));
    }
    *mean = m;
    *var = acc / (double) n;
}

/* CLR's score of the pair (i, j), i != j, of value v: z of each row's
 * moments, then sqrt(zi^2 + zj^2) (parmigene adds z_larger^2 +
 * z_smaller^2: + commutes exactly). */
GC_HOST_DEVICE
static inline double gc_clr_z(double v, double mean, double var)
{
    const double z = v - mean;
    return (z < 0 || var == 0) ? 0 : GC_PRUNE_MUL(z, z) / var;
}

GC_HOST_DEVICE
static inline double gc_clr_pair(double v, double mean_i, double var_i, double mean_j,
                                 double var_j)
{
    const double zi = gc_clr_z(v, mean_i, var_i), zj = gc_clr_z(v, mean_j, var_j);
    return sqrt(GC_PRUNE_ADD(GC_PRUNE_MUL(zi, zi), GC_PRUNE_MUL(zj, zj)));
}

/* MRNET's score of a candidate at the given turn: relevance minus the mean
 * redundancy with the turn variables selected so far (red, their sum). */
GC_HOST_DEVICE
static inline double gc_mrnet_score(double rel, double red, size_t turn)
{
    return turn ? rel - red / (double) (int) turn : rel;
}

/* parmigene's clr(): out (n x n) from mi.  Row moments with divisor n over
 * the whole row (diagonal included); z = (m - mean)^2 / var, 0 where
 * m < mean or var = 0; out = sqrt(z_i^2 + z_j^2), 0 on the diagonal. */
int gc_clr_cpu(const double *mi, size_t n, double *out, gc_host *host, int *threads_used,
               char *msg, size_t msgcap);

/* parmigene's mrnet(): per target, greedy maximum relevance minimum
 * redundancy selection; out = the larger of the two directions' scores. */
int gc_mrnet_cpu(const double *mi, size_t n, double *out, gc_host *host, int *threads_used,
                 char *msg, size_t msgcap);
/* MRNET's last step, on the host for both engines: out (n x n, column i
 * target i's scores) made the larger of the two directions, by tiles. */
void gc_mrnet_symmetrize(double *out, size_t n, int nthreads);

/* The other GPU runs (cuda/prune.cu), the matrix resident on the first
 * device of host->opts: CLR or MRNET of a host mi, or any of the three
 * from the data, the Kraskov MI made on the device (gpu_knnmi()'s values)
 * and never in host memory, which then holds the n x n result only. */
enum { PRUNE_ARACNE = 0, PRUNE_CLR = 1, PRUNE_MRNET = 2 };
typedef struct {
    int algo;                       /* PRUNE_* (PRUNE_ARACNE: from prep only) */
    const double *mi;               /* n x n host MI (checked), or NULL: */
    const gc_knnmi_prep *prep;      /* the variables whose MI is made on the device */
    size_t n;
    double eps, eta;                /* ARACNE's f(v) = v * eta - eps */
    double *out;                    /* n x n, host */
} gc_prune_dev_job;

/* (nvcc does not see GPUCOR_CUDA: the prototypes for cuda/ as well) */
#if defined(GPUCOR_CUDA) || defined(__CUDACC__)
/* The CUDA engine of ARACNE (cuda/prune.cu): mi resident on the first
 * device of host->opts; the decisions come back as a mask. */
int gc_aracne_cuda(const gc_aracne_job *job, gc_host *host, char *msg, size_t msgcap);
/* The runs of gc_prune_dev_job (see above). */
int gc_prune_cuda(const gc_prune_dev_job *job, gc_host *host, char *msg, size_t msgcap);

#ifdef __CUDACC__
/* Defined at the end of cuda/knnmi.cu: the Kraskov MI of prep's n
 * variables into the device matrix D (leading dimension ld >= n), each
 * pair computed once by knnmi.cu's kernels and mirrored, 0 on the
 * diagonal (rows and columns from n on untouched), on the current device
 * and stream st, in panels whose scratch takes at most 'budget' bytes of
 * device memory (host->opts->gpu_panel: the tests' narrow panels).  Checks
 * for an interrupt between panels; progress from p0 to p1. */
int gc_knnmi_cuda_fill(const gc_knnmi_prep *prep, double *D, size_t ld, cudaStream_t st,
                       size_t budget, gc_host *host, double p0, double p1, char *msg,
                       size_t msgcap);
#endif
#endif

#endif
