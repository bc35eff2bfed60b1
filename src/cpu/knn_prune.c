/*
 * knn_prune.c -- exact k nearest neighbours by a pruned search (the idea of
 * Wang's k-means for k-nearest neighbours, "KMKNN", as BiocNeighbors'
 * KmknnParam uses it; our own code): the rows of x are grouped into about
 * sqrt(n) k-means clusters, each cluster's rows sorted by their distance to
 * its center; a searched row visits the clusters nearest center first and,
 * by the triangle inequality, skips a cluster whose every row is farther
 * than its current k-th nearest (d(q, c) - radius > T) and, inside a
 * cluster, the rows whose distance to the center differs from the row's by
 * more than T.
 *
 * Why this and not a VP or ball tree: it is flat (one level of clusters,
 * rows stored cluster after cluster, so the distances of a run of
 * candidates are one call of the brute force's own 4-row block), its index
 * costs a few k-means passes, and on data with clusters (single-cell PCs)
 * it skips nearly everything.  Where nothing can be skipped (a high
 * intrinsic dimension: Gaussian noise in 50 dimensions) no tree helps
 * either, and the brute force (distance.c's tiles) is faster; the rule
 * below measures which case it is.
 *
 * Exactness.  The distances of the rows kept are computed by
 * cpu_dist_rows(), the brute force's arithmetic, so they are the brute
 * force's bit for bit; the heap orders by (distance, row) as the selecting
 * sink does (ties to the smaller row), so the k kept are the same.  Only
 * the skipping uses other computed distances (to the centers), and it is
 * conservative under rounding: a computed distance d' of true d has
 * |d' - d| <= eps d + tiny, with eps = (p + 8) DBL_EPSILON, twice or more
 * the first-order bound of a sum of p rounded squares or absolute values
 * (gamma_{p+2}, halved by the square root, plus a rounding of the root:
 * (p / 2 + 2) u for Euclidean, (p + 1) u for Manhattan, u = DBL_EPSILON /
 * 2), and tiny = sqrt((p + 2) 2^-1074), which covers the products that
 * underflow (at most 2^-1075 each, square-rooted).  Then |D' - r'| - s >
 * T with s = 4 eps (D' + r' + T) + 4 tiny implies that the row's computed
 * distance exceeds T (see slack()).  The data must be finite and at most
 * 2^500 in absolute value, so that no square or sum overflows (p < 2^20);
 * otherwise the caller runs the brute force.
 *
 * Determinism: no R RNG; the k-means sample and its first centers come from
 * a fixed-seed splitmix64; assignments and sums do not depend on the
 * threads, and each searched row's answer depends on the index only.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include "cpu.h"
#include "simd.h"
#include <stdio.h>

#define KNN_CHUNK 16          /* candidates per cpu_dist_rows() call: the
                                 bound is tightened between calls */
#define KNN_SAMPLE_PER_CENTER 24   /* k-means runs on this many rows per center */
#define KNN_KMEANS_ITER 8     /* Lloyd iterations on the sample, at most */
#define KNN_MAX_ABS 0x1p500   /* larger values could overflow a square */
#define KNN_RULE_SAMPLE 256   /* rows searched first to measure the pruning */
#define KNN_PARTIAL 16        /* coordinates of the partial distances, when
                                 the rows have at least twice as many */

typedef struct {
    size_t n, p, ld, nc;
    int method;
    double *xs;        /* n x ld: x's rows cluster after cluster, each
                          cluster's by rad ascending (ties: row) */
    double *rad;       /* n: distance of each to its cluster's center */
    uint32_t *orig;    /* n: x's row (0-based) of each */
    double *centers;   /* nc x ld */
    double *crad;      /* nc: each cluster's largest rad */
    size_t *cstart;    /* nc + 1 */
    double rmax;       /* largest crad */
    size_t lp;         /* coordinates of the partial distances (0: none) */
    uint32_t *pcol;    /* lp: which (the columns of largest variance) */
    double *xp;        /* n x lp: those coordinates of xs's rows */
    double eps, tiny;  /* the slack of a computed distance (see top) */
} kindex;

static void kindex_free(kindex *ix)
{
    free(ix->xs); free(ix->rad); free(ix->orig); free(ix->centers);
    free(ix->crad); free(ix->cstart); free(ix->pcol); free(ix->xp);
    memset(ix, 0, sizeof *ix);
}

/* How much computed distances D' (to a center), r' (of a row to it) and T
 * (the k-th kept) may hide: |D' - r'| - slack > T means the row's computed
 * distance is > T (top of file). */
static inline double slack(const kindex *ix, double D, double r, double T)
{
    return 4 * ix->eps * (D + r + T) + 4 * ix->tiny;
}

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* The nearest of the nc centers to row (ties: the smaller center), its
 * distance in *d; dbuf holds nc. */
static uint32_t nearest_center(const kindex *ix, const double *row, double *dbuf, double *d)
{
    cpu_dist_rows(ix->method, ix->centers, ix->ld, 0, ix->nc, row, dbuf);
    uint32_t best = 0;
    for (size_t c = 1; c < ix->nc; c++)
        if (dbuf[c] < dbuf[best]) best = (uint32_t) c;
    *d = dbuf[best];
    return best;
}

typedef struct { double r; uint32_t i; } rad_ent;

static int rad_cmp(const void *a, const void *b)
{
    const rad_ent *x = a, *y = b;
    if (x->r != y->r) return x->r < y->r ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

/* The index of the n x p, column-major x (GPUCOR_OK or GPUCOR_ERR_ALLOC). */
static int kindex_build(kindex *ix, const double *x, size_t n, size_t p, int method, int nth)
{
    memset(ix, 0, sizeof *ix);
    size_t ld = (p + 3) & ~(size_t) 3, nc = (size_t) ceil(sqrt((double) n));
    if (nc < 1) nc = 1;
    if (nc > n) nc = n;
    size_t m = KNN_SAMPLE_PER_CENTER * nc;
    if (m > n) m = n;
    ix->n = n; ix->p = p; ix->ld = ld; ix->nc = nc; ix->method = method;
    ix->eps = (double) (p + 8) * DBL_EPSILON;
    ix->tiny = sqrt((double) (p + 2) * 0x1p-1074);
    int status = GPUCOR_OK, failed = 0;
    double *xt = malloc(n * ld * sizeof(double)), *sums = calloc(nc * ld, sizeof(double));
    uint32_t *perm = malloc(n * sizeof *perm), *assign = malloc(n * sizeof *assign);
    size_t *cnt = calloc(nc + 1, sizeof *cnt);
    rad_ent *re = malloc(n * sizeof *re);
    ix->centers = malloc(nc * ld * sizeof(double));
    ix->xs = malloc(n * ld * sizeof(double));
    ix->rad = malloc(n * sizeof(double));
    ix->orig = malloc(n * sizeof(uint32_t));
    if (!xt || !sums || !perm || !assign || !cnt || !re || !ix->centers || !ix->xs ||
        !ix->rad || !ix->orig) {
        status = GPUCOR_ERR_ALLOC;
        goto cleanup;
    }
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(static)
#endif
    for (size_t i = 0; i < n; i++) {
        double *row = xt + i * ld;
        for (size_t k = 0; k < p; k++) row[k] = x[i + k * n];
        for (size_t k = p; k < ld; k++) row[k] = 0.0;
    }
    /* the sample: a partial Fisher-Yates shuffle; its first nc rows are the
     * first centers (copies of rows give empty clusters, dropped below) */
    uint64_t seed = 0x5EED5EEDULL;
    for (size_t i = 0; i < n; i++) perm[i] = (uint32_t) i;
    for (size_t s = 0; s < m; s++) {
        size_t t = s + (size_t) (splitmix64(&seed) % (uint64_t) (n - s));
        uint32_t tmp = perm[s]; perm[s] = perm[t]; perm[t] = tmp;
    }
    for (size_t c = 0; c < nc; c++)
        memcpy(ix->centers + c * ld, xt + (size_t) perm[c] * ld, ld * sizeof(double));
    /* Lloyd's iterations on the sample, then every row to its nearest */
    for (int it = 0; it <= KNN_KMEANS_ITER && !failed; it++) {
        int last = it == KNN_KMEANS_ITER;
        size_t nrows = last ? n : m;
        int changed = 0;
#ifdef _OPENMP
#pragma omp parallel num_threads(nth)
#endif
        {
            double *dbuf = malloc(nc * sizeof(double));
            if (!dbuf) {
#ifdef _OPENMP
#pragma omp atomic write
#endif
                failed = 1;
            }
#ifdef _OPENMP
#pragma omp for schedule(static) reduction(|:changed)
#endif
            for (size_t s = 0; s < nrows; s++) {
                if (!dbuf) continue;
                size_t i = last ? s : perm[s];
                double d;
                uint32_t a = nearest_center(ix, xt + i * ld, dbuf, &d);
                if (last) {
                    assign[i] = a;
                    ix->rad[i] = d;   /* by row for now */
                } else {
                    if (it == 0 || assign[s] != a) changed = 1;
                    assign[s] = a;
                }
            }
            free(dbuf);
        }
        if (last || failed) break;
        if (!changed) {
            it = KNN_KMEANS_ITER - 1;   /* converged: the final assignment next */
            continue;
        }
        memset(sums, 0, nc * ld * sizeof(double));
        memset(cnt, 0, (nc + 1) * sizeof *cnt);
        for (size_t s = 0; s < m; s++) {
            const double *row = xt + (size_t) perm[s] * ld;
            double *sm = sums + (size_t) assign[s] * ld;
            for (size_t k = 0; k < p; k++) sm[k] += row[k];
            cnt[assign[s]]++;
        }
        for (size_t c = 0; c < nc; c++)
            if (cnt[c])
                for (size_t k = 0; k < p; k++)
                    ix->centers[c * ld + k] = sums[c * ld + k] / (double) cnt[c];
    }
    if (failed) {
        status = GPUCOR_ERR_ALLOC;
        goto cleanup;
    }
    /* rows by cluster (empty clusters dropped), then by distance to the
     * center */
    memset(cnt, 0, (nc + 1) * sizeof *cnt);
    for (size_t i = 0; i < n; i++) cnt[assign[i] + 1]++;
    size_t used = 0;
    for (size_t c = 0; c < nc; c++) {
        if (cnt[c + 1] == 0) continue;
        if (used != c) memmove(ix->centers + used * ld, ix->centers + c * ld, ld * sizeof(double));
        perm[c] = (uint32_t) used;   /* old -> new cluster (perm is free now) */
        cnt[used + 1] = cnt[c + 1];  /* (used <= c: read before written) */
        used++;
    }
    for (size_t i = 0; i < n; i++) assign[i] = perm[assign[i]];
    nc = ix->nc = used;
    ix->cstart = malloc((nc + 1) * sizeof *ix->cstart);
    ix->crad = malloc(nc * sizeof(double));
    if (!ix->cstart || !ix->crad) {
        status = GPUCOR_ERR_ALLOC;
        goto cleanup;
    }
    ix->cstart[0] = 0;
    for (size_t c = 0; c < nc; c++) ix->cstart[c + 1] = ix->cstart[c] + cnt[c + 1];
    memcpy(cnt, ix->cstart, nc * sizeof *cnt);   /* next free place of each */
    for (size_t i = 0; i < n; i++) {
        rad_ent e = {ix->rad[i], (uint32_t) i};
        re[cnt[assign[i]]++] = e;
    }
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(dynamic, 1)
#endif
    for (size_t c = 0; c < nc; c++)
        qsort(re + ix->cstart[c], ix->cstart[c + 1] - ix->cstart[c], sizeof *re, rad_cmp);
    ix->rmax = 0;
    for (size_t c = 0; c < nc; c++) {
        ix->crad[c] = re[ix->cstart[c + 1] - 1].r;
        if (ix->crad[c] > ix->rmax) ix->rmax = ix->crad[c];
    }
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(static)
#endif
    for (size_t s = 0; s < n; s++) {
        ix->rad[s] = re[s].r;
        ix->orig[s] = re[s].i;
        memcpy(ix->xs + s * ld, xt + (size_t) re[s].i * ld, ld * sizeof(double));
    }
    /* the partial distances' coordinates: those of largest variance in
     * the sample (PCs: the first), which carry most of a distance */
    if (ld >= 2 * KNN_PARTIAL) {
        size_t lp = KNN_PARTIAL;
        double *var = calloc(p, sizeof(double));
        ix->pcol = malloc(lp * sizeof *ix->pcol);
        ix->xp = malloc(n * lp * sizeof(double));
        if (!var || !ix->pcol || !ix->xp) {
            free(var);
            status = GPUCOR_ERR_ALLOC;
            goto cleanup;
        }
        for (size_t k = 0; k < p; k++) {
            double mean = 0, ss = 0;
            for (size_t s = 0; s < m; s++) mean += x[re[s].i + k * n];
            mean /= (double) m;
            for (size_t s = 0; s < m; s++) {
                double d = x[re[s].i + k * n] - mean;
                ss += d * d;
            }
            var[k] = ss;
        }
        /* lp times the largest left (ties: the first column) */
        for (size_t a = 0; a < lp; a++) {
            size_t best = p;
            for (size_t k = 0; k < p; k++)
                if (var[k] >= 0 && (best == p || var[k] > var[best])) best = k;
            ix->pcol[a] = (uint32_t) best;
            var[best] = -1;
        }
        free(var);
        ix->lp = lp;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(static)
#endif
        for (size_t s = 0; s < n; s++)
            for (size_t a = 0; a < lp; a++)
                ix->xp[s * lp + a] = ix->xs[s * ld + ix->pcol[a]];
    }
cleanup:
    free(xt); free(sums); free(perm); free(assign); free(cnt); free(re);
    if (status != GPUCOR_OK) kindex_free(ix);
    return status;
}

/* Distances of rows i0 .. i0 + ni - 1 of xp (rows of lp, a multiple of 4)
 * to yp over those lp coordinates only: never more than the whole
 * distance (in exact arithmetic; see slack() for the rounding). */
GPUCOR_MULTIVERSION
static void partial_rows(int method, const double *xp, size_t lp, size_t i0, size_t ni,
                         const double *yp, double *res)
{
    for (size_t a = 0; a < ni; a++) {
        const double *x0 = xp + (i0 + a) * lp;
        v4d c = {0};
        for (size_t k = 0; k < lp; k += 4) {
            v4d d, yk;
            V4_LOAD(d, x0 + k);
            V4_LOAD(yk, yp + k);
            d -= yk;
            if (method == DIST_MANHATTAN) c += V4_ABS(d);
            else c += d * d;
        }
        res[a] = method == DIST_MANHATTAN ? V4_SUM(c) : sqrt(V4_SUM(c));
    }
}

/* ---- one searched row ----------------------------------------------------- */
typedef struct { double d; uint32_t i; } kent;

/* a is worse than b: farther, or as far with the larger row (the selecting
 * sink's order) */
static inline int kworse(double ad, uint32_t ai, double bd, uint32_t bi)
{
    return ad > bd || (ad == bd && ai > bi);
}

typedef struct {
    double *cd;        /* nc: distances to the centers */
    uint32_t *cheap;   /* nc: a min-heap of clusters by (cd, cluster) */
    kent *heap;        /* k: a max-heap, the worst kept at the root */
    double res[KNN_CHUNK], part[KNN_CHUNK];
    double yp[KNN_PARTIAL];   /* the searched row's partial coordinates */
    double *gath;      /* KNN_CHUNK x ld: rows gathered */
    uint32_t gi[KNN_CHUNK];
    size_t evals;      /* distances computed */
    size_t partials;   /* partial distances computed */
} kwork;

static inline int cless(const double *cd, uint32_t a, uint32_t b)
{
    return cd[a] < cd[b] || (cd[a] == cd[b] && a < b);
}

static void csift(const double *cd, uint32_t *h, size_t n, size_t c)
{
    uint32_t e = h[c];
    for (;;) {
        size_t l = 2 * c + 1, m = c;
        uint32_t mv = e;
        if (l < n && cless(cd, h[l], mv)) { m = l; mv = h[l]; }
        if (l + 1 < n && cless(cd, h[l + 1], mv)) { m = l + 1; mv = h[l + 1]; }
        if (m == c) break;
        h[c] = h[m];
        c = m;
    }
    h[c] = e;
}

static void koffer(kent *h, size_t *hn, size_t k, double d, uint32_t i)
{
    size_t n = *hn, c;
    if (n < k) {
        c = n;
        while (c > 0) {
            size_t par = (c - 1) / 2;
            if (!kworse(d, i, h[par].d, h[par].i)) break;
            h[c] = h[par];
            c = par;
        }
        h[c].d = d;
        h[c].i = i;
        *hn = n + 1;
        return;
    }
    if (!kworse(h[0].d, h[0].i, d, i)) return;
    c = 0;
    for (;;) {
        size_t l = 2 * c + 1, m = c;
        double md = d;
        uint32_t mi = i;
        if (l < k && kworse(h[l].d, h[l].i, md, mi)) { m = l; md = h[l].d; mi = h[l].i; }
        if (l + 1 < k && kworse(h[l + 1].d, h[l + 1].i, md, mi)) { m = l + 1; }
        if (m == c) break;
        h[c] = h[m];
        c = m;
    }
    h[c].d = d;
    h[c].i = i;
}

static int kent_cmp(const void *a, const void *b)
{
    const kent *x = a, *y = b;
    if (x->d != y->d) return x->d < y->d ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

/* The k nearest rows of x to y (self: x's row left out, or SIZE_MAX),
 * into row 'out' of the nq x k idx and dist. */
static void ksearch(const kindex *ix, const double *y, size_t self, size_t k, kwork *w,
                    int *idx, double *dist, size_t nq, size_t out)
{
    size_t nc = ix->nc, hn = 0;
    double *cd = w->cd, T = INFINITY;
    uint32_t *ch = w->cheap;
    kent *h = w->heap;
    cpu_dist_rows(ix->method, ix->centers, ix->ld, 0, nc, y, cd);
    w->evals += nc;
    for (size_t a = 0; a < ix->lp; a++) w->yp[a] = y[ix->pcol[a]];
    for (size_t c = 0; c < nc; c++) ch[c] = (uint32_t) c;
    for (size_t c = nc / 2; c-- > 0;) csift(cd, ch, nc, c);
    for (size_t left = nc; left > 0;) {
        uint32_t c = ch[0];
        ch[0] = ch[--left];
        if (left) csift(cd, ch, left, 0);
        double D = cd[c], R = ix->crad[c];
        /* the clusters come nearest center first: none left can hold a
         * row within T when even the widest cannot */
        if (D - ix->rmax - slack(ix, D, ix->rmax, T) > T) break;
        double s = slack(ix, D, R, T);
        if (D - R - s > T) continue;
        size_t b = ix->cstart[c], e = ix->cstart[c + 1];
        /* the first row with rad >= D - T - s */
        double lo = D - T - s;
        if (ix->rad[b] < lo) {
            size_t l = b, u = e;
            while (l < u) {
                size_t mid = l + (u - l) / 2;
                if (ix->rad[mid] < lo) l = mid + 1; else u = mid;
            }
            b = l;
        }
        while (b < e) {
            double hi = D + T + s;
            size_t m = 0;
            while (m < KNN_CHUNK && b + m < e && ix->rad[b + m] <= hi) m++;
            if (m == 0) break;
            if (ix->lp && hn == k) {
                /* a row whose partial distance already exceeds T is
                 * farther than T: its whole distance is not needed */
                partial_rows(ix->method, ix->xp, ix->lp, b, m, w->yp, w->part);
                w->partials += m;
                /* the others' rows gathered, for the 4-row block */
                size_t ng = 0;
                for (size_t a = 0; a < m; a++) {
                    uint32_t i = ix->orig[b + a];
                    if ((size_t) i == self ||
                        w->part[a] - (4 * ix->eps * (w->part[a] + T) + 4 * ix->tiny) > T)
                        continue;
                    memcpy(w->gath + ng * ix->ld, ix->xs + (b + a) * ix->ld,
                           ix->ld * sizeof(double));
                    w->gi[ng++] = i;
                }
                if (ng) {
                    cpu_dist_rows(ix->method, w->gath, ix->ld, 0, ng, y, w->res);
                    w->evals += ng;
                    for (size_t a = 0; a < ng; a++) koffer(h, &hn, k, w->res[a], w->gi[a]);
                }
            } else {
                cpu_dist_rows(ix->method, ix->xs, ix->ld, b, m, y, w->res);
                w->evals += m;
                for (size_t a = 0; a < m; a++) {
                    uint32_t i = ix->orig[b + a];
                    if ((size_t) i == self) continue;
                    koffer(h, &hn, k, w->res[a], i);
                }
            }
            if (hn == k) {
                T = h[0].d;
                s = slack(ix, D, R, T);
            }
            b += m;
        }
    }
    qsort(h, hn, sizeof *h, kent_cmp);
    for (size_t a = 0; a < k; a++) {
        idx[out + a * nq] = a < hn ? (int) h[a].i + 1 : -1;
        dist[out + a * nq] = a < hn ? h[a].d : NAN;
    }
}

/* ---- the driver ------------------------------------------------------------ */
/* Whether every value is finite and at most KNN_MAX_ABS in size. */
static int knn_values_ok(const double *x, size_t len)
{
    for (size_t a = 0; a < len; a++)
        if (!(fabs(x[a]) <= KNN_MAX_ABS)) return 0;   /* NaN too */
    return 1;
}

/* The rule (KNN_PRUNE_AUTO).  The search's work is counted in whole
 * distances (a partial distance as lp / ld of one; the distances to the
 * centers included), measured on KNN_RULE_SAMPLE searched rows spread over
 * the data, and the pruned search runs when that work per row, times
 * KNN_COST_RATIO, is below the brute force's (n - 1) / 2 distances per row
 * without a query (its tiles make each distance once for two rows) or n
 * with one.  The ratio is the pruned search's time per unit of work over
 * the brute force's time per distance, measured on one thread at n =
 * 10,000 to 20,000 x 50, k = 20: 1.0 on Gaussian noise, 1.4 on clustered
 * data with a flat tail of noise, 1.75 on clustered data whose variance
 * decays fast (the k-means index and each row's visit of the clusters
 * weigh more where few distances are made); 1.5 keeps the brute force
 * wherever the pruning is marginal.  Below KNN_MIN_ROWS rows, or with k
 * above n / KNN_MAX_K_FRACTION, the brute force runs without trying. */
#define KNN_COST_RATIO 1.5
#define KNN_MIN_ROWS 500
#define KNN_MAX_K_FRACTION 8

int cpu_knn_prune(const double *x, size_t n, size_t p, const double *y, size_t q,
                  int method, size_t k, int mode, const gc_host *host, int *idx,
                  double *dist, int *ran, cpu_knn_info *info)
{
    cpu_knn_info dummy;
    if (!info) info = &dummy;
    memset(info, 0, sizeof *info);
    *ran = 0;
    int symmetric = y == NULL;
    size_t nq = symmetric ? n : q;
    info->brute_evals = symmetric ? ((double) n - 1) / 2 : (double) n;
    if (method != DIST_EUCLIDEAN && method != DIST_MANHATTAN) {
        info->why = "not a Euclidean or Manhattan distance";
        return GPUCOR_OK;
    }
    if (n == 0 || nq == 0 || p == 0 || k == 0 || k > n - symmetric || n > UINT32_MAX ||
        p >= ((size_t) 1 << 20)) {
        info->why = "an empty or degenerate search";
        return GPUCOR_OK;
    }
    if (mode == KNN_PRUNE_AUTO && n < KNN_MIN_ROWS) {
        info->why = "few rows";
        return GPUCOR_OK;
    }
    if (mode == KNN_PRUNE_AUTO && k > n / KNN_MAX_K_FRACTION) {
        info->why = "k is large against the rows";
        return GPUCOR_OK;
    }
    if (!knn_values_ok(x, n * p) || (y && !knn_values_ok(y, q * p))) {
        info->why = "values that are not finite or beyond 2^500";
        return GPUCOR_OK;
    }
    int nth = host->opts->nthreads > 0 ? host->opts->nthreads : 1;
    gpucor_interrupt_fn interrupted = host->interrupted;
    kindex ix;
    int status = kindex_build(&ix, x, n, p, method, nth);
    if (status != GPUCOR_OK) return status;
    info->centers = ix.nc;
    size_t ld = ix.ld;
    double *yt = NULL;
    unsigned char *done = calloc(nq, 1);
    if (!done) { status = GPUCOR_ERR_ALLOC; goto cleanup; }
    if (!symmetric) {
        yt = malloc(q * ld * sizeof(double));
        if (!yt) { status = GPUCOR_ERR_ALLOC; goto cleanup; }
        for (size_t j = 0; j < q; j++) {
            double *row = yt + j * ld;
            for (size_t a = 0; a < p; a++) row[a] = y[j + a * q];
            for (size_t a = p; a < ld; a++) row[a] = 0.0;
        }
    }
    /* searched row t (in the order searched: without a query, x's rows by
     * cluster, so neighbouring searches read the same clusters): its
     * vector, the row left out, where its answer goes */
#define ROW_VEC(t) (symmetric ? ix.xs + (t) * ld : yt + (t) * ld)
#define ROW_SELF(t) (symmetric ? (size_t) ix.orig[t] : SIZE_MAX)
#define ROW_OUT(t) (symmetric ? (size_t) ix.orig[t] : (t))
    int stop = 0, failed = 0, team = 1;
    double evals_total = 0;
    size_t nsearched = 0;
    for (int pass = mode == KNN_PRUNE_AUTO ? 0 : 1; pass < 2 && !stop && !failed; pass++) {
        /* pass 0: the rule's sample; pass 1: every row not yet searched */
        size_t ns = pass == 0 ? (nq < KNN_RULE_SAMPLE ? nq : KNN_RULE_SAMPLE) : nq;
        double evals = 0;
#ifdef _OPENMP
#pragma omp parallel num_threads(nth) reduction(+:evals)
#endif
        {
            kwork w;
            w.cd = malloc(ix.nc * sizeof(double));
            w.cheap = malloc(ix.nc * sizeof(uint32_t));
            w.heap = malloc(k * sizeof(kent));
            w.gath = malloc(KNN_CHUNK * ld * sizeof(double));
            w.evals = w.partials = 0;
            int ok = w.cd && w.cheap && w.heap && w.gath, master = 1;
#ifdef _OPENMP
            master = omp_get_thread_num() == 0;
            if (master) team = omp_get_num_threads();
#endif
            if (!ok) {
#ifdef _OPENMP
#pragma omp atomic write
#endif
                failed = 1;
            }
            size_t since = 0;
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 32)
#endif
            for (size_t s = 0; s < ns; s++) {
                int st, f;
#ifdef _OPENMP
#pragma omp atomic read
#endif
                st = stop;
#ifdef _OPENMP
#pragma omp atomic read
#endif
                f = failed;
                if (st || f || !ok) continue;
                size_t t = pass == 0 ? (size_t) (((double) s + 0.5) * (double) nq / (double) ns)
                                     : s;
                if (t >= nq) t = nq - 1;
                if (pass == 1 && done[t]) continue;
                if (master && interrupted && ++since >= 64) {
                    since = 0;
                    if (interrupted()) {
#ifdef _OPENMP
#pragma omp atomic write
#endif
                        stop = 1;
                        continue;
                    }
                }
                ksearch(&ix, ROW_VEC(t), ROW_SELF(t), k, &w, idx, dist, nq, ROW_OUT(t));
                if (pass == 0) done[t] = 1;   /* (rows of the sample are distinct) */
            }
            /* the work in whole distances */
            evals += (double) w.evals + (double) w.partials * (double) ix.lp / (double) ld;
            free(w.cd); free(w.cheap); free(w.heap); free(w.gath);
        }
        if (pass == 0) {
            size_t nd = 0;
            for (size_t t = 0; t < nq; t++) nd += done[t];
            evals_total += evals;
            nsearched += nd;
            info->evals = (double) evals / (double) (nd ? nd : 1);
            if (info->evals * KNN_COST_RATIO >= info->brute_evals) {
                info->why = "pruning would not pay (measured)";
                goto cleanup;   /* *ran stays 0 */
            }
        } else {
            evals_total += evals;
            nsearched = nq;
        }
    }
#undef ROW_VEC
#undef ROW_SELF
#undef ROW_OUT
    if (failed) status = GPUCOR_ERR_ALLOC;
    else if (stop) status = GPUCOR_ERR_INTERRUPT;
    else {
        *ran = 1;
        info->evals = (double) evals_total / (double) (nsearched ? nsearched : 1);
        info->team = team;
    }
cleanup:
    free(done);
    free(yt);
    kindex_free(&ix);
    return status;
}
