/*
 * bicor.c -- see bicor.h.  The arithmetic follows WGCNA's prepareColBicor
 * (corFunctions-utils.c) step by step: the same quantiles, the same order
 * of the rescaling, the weights and the long-double norm.  Pearson's
 * preparation (the fallback) centres with a two-pass mean where WGCNA
 * uses a one-pass sum of squares: the same value except for columns whose
 * mean dwarfs their spread, where the two-pass one is the exact one.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include "../cpu/cpu.h"
#include "bicor.h"

static double kth(double *v, size_t m, size_t k)
{
    /* quickselect: v[k] of the sorted v, v reordered */
    size_t lo = 0, hi = m - 1;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        /* median of three as the pivot */
        double a = v[lo], b = v[mid], c = v[hi];
        double piv = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
        size_t i = lo, j = hi;
        while (i <= j) {
            while (v[i] < piv) i++;
            while (v[j] > piv) j--;
            if (i <= j) {
                double t = v[i]; v[i] = v[j]; v[j] = t;
                i++;
                if (j == 0) break;
                j--;
            }
        }
        if (k <= j) hi = j;
        else if (k >= i) lo = i;
        else return v[k];
    }
    return v[k];
}

double gc_quantile7(double *v, size_t m, double q)
{
    double t = (double) (m - 1) * q;
    size_t b = (size_t) floor(t);
    double f = t - (double) b;
    double lo = kth(v, m, b);
    if (f == 0 || b + 1 >= m) return lo;
    /* the next order statistic: the smallest value above position b */
    double hi = v[b + 1];
    for (size_t k = b + 2; k < m; k++) if (v[k] < hi) hi = v[k];
    return (1 - f) * lo + f * hi;
}

/* out[0 .. n) (sum of squares ss) to unit length; a zero or non-finite
 * length makes the column NA (zeros). */
static int unit_length(double *out, size_t n, long double ss)
{
    if (ss == 0 || !isfinite((double) ss)) {
        memset(out, 0, n * sizeof *out);
        return BICOR_COL_NA;
    }
    long double nrm = sqrtl(ss);
    for (size_t k = 0; k < n; k++) out[k] = (double) (out[k] / nrm);
    return 0;
}

/* Gathers the rows used of col (not NaN, not skipped) into v; their count. */
static size_t observed(const double *col, size_t n, const unsigned char *skip, double *v)
{
    size_t m = 0;
    for (size_t k = 0; k < n; k++)
        if (!isnan(col[k]) && !(skip && skip[k])) v[m++] = col[k];
    return m;
}

/* Pearson's preparation: centred on stats' two-pass mean; v: n doubles. */
static int prep_pearson(const double *col, size_t n, const unsigned char *skip,
                        double *out, double *v)
{
    size_t m = observed(col, n, skip, v);
    if (m == 0) { memset(out, 0, n * sizeof *out); return BICOR_COL_NA; }
    double mean = cpu_r_mean(v, m);
    long double ss = 0;
    for (size_t k = 0; k < n; k++) {
        if (isnan(col[k]) || (skip && skip[k])) { out[k] = 0; continue; }
        out[k] = col[k] - mean;
        ss += (long double) out[k] * out[k];
    }
    int f = unit_length(out, n, ss);
    return f ? f : BICOR_COL_PEARSON;
}

int gc_bicor_prep_col(const double *col, size_t n, const unsigned char *skip,
                      const gc_bicor_opts *o, double *out, double *work)
{
    double *v = work, *u = work + n;
    if (o->pearson) return prep_pearson(col, n, skip, out, v);
    size_t m = observed(col, n, skip, v);
    if (m == 0) { memset(out, 0, n * sizeof *out); return BICOR_COL_NA; }
    double med = gc_quantile7(v, m, 0.5);
    m = 0;
    for (size_t k = 0; k < n; k++)
        if (!isnan(col[k]) && !(skip && skip[k])) v[m++] = fabs(col[k] - med);
    double mad = gc_quantile7(v, m, 0.5);
    if (mad == 0) {
        if (o->fallback == BICOR_FB_NONE) {
            memset(out, 0, n * sizeof *out);
            return BICOR_COL_NA | BICOR_COL_ZERO_MAD;
        }
        return prep_pearson(col, n, skip, out, v) | BICOR_COL_ZERO_MAD;
    }
    double denom = 9.0 * mad;
    m = 0;
    for (size_t k = 0; k < n; k++)
        if (!isnan(col[k]) && !(skip && skip[k])) u[m++] = (col[k] - med) / denom;
    double lowq = 0.5, hiq = 0.5;
    if (o->max_outliers < 1) {
        memcpy(v, u, m * sizeof *v);
        lowq = gc_quantile7(v, m, o->max_outliers);
        hiq = gc_quantile7(v, m, 1 - o->max_outliers);
        if (lowq > -0.5) lowq = -0.5;
        if (hiq < 0.5) hiq = 0.5;
        lowq = fabs(lowq);
    }
    long double ss = 0;
    size_t a = 0;
    for (size_t k = 0; k < n; k++) {
        if (isnan(col[k]) || (skip && skip[k])) { out[k] = 0; continue; }
        double ux = u[a++];
        if (o->max_outliers < 1) ux = ux < 0 ? ux * 0.5 / lowq : ux * 0.5 / hiq;
        if (fabs(ux) > 1) ux = 1;
        double w = 1 - ux * ux;
        out[k] = (col[k] - med) * (w * w);
        ss += (long double) out[k] * out[k];
    }
    return unit_length(out, n, ss);
}

int gc_bicor_prep(const double *x, size_t n, size_t p, const gc_bicor_opts *o,
                  double *z, int *flags, int nthreads)
{
    int failed = 0, any_zero = 0;
    if (nthreads < 1) nthreads = 1;
#ifdef _OPENMP
#pragma omp parallel num_threads(nthreads)
#endif
    {
        double *work = malloc((2 * n + 1) * sizeof(double));
        if (!work) {
#ifdef _OPENMP
#pragma omp atomic write
#endif
            failed = 1;
        }
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 16)
#endif
        for (size_t c = 0; c < p; c++) {
            if (!work) continue;
            flags[c] = gc_bicor_prep_col(x + c * n, n, NULL, o, z + c * n, work);
            if (flags[c] & BICOR_COL_ZERO_MAD) {
#ifdef _OPENMP
#pragma omp atomic write
#endif
                any_zero = 1;
            }
        }
        free(work);
    }
    if (failed) return 1;
    if (any_zero && o->fallback == BICOR_FB_ALL && !o->pearson) {
        /* WGCNA: the whole variable as Pearson's */
        double *v = malloc((n + 1) * sizeof *v);
        if (!v) return 1;
        for (size_t c = 0; c < p; c++)
            flags[c] = prep_pearson(x + c * n, n, NULL, z + c * n, v) |
                       (flags[c] & BICOR_COL_ZERO_MAD);
        free(v);
    }
    return 0;
}

/* The prepared column c on the rows both columns observe, or its own
 * preparation when it lost at most maxdiff rows to the other one. */
static const double *pair_col(const double *x, size_t n, size_t c, size_t own_na,
                              size_t union_na, size_t maxdiff, const unsigned char *skip,
                              const gc_bicor_opts *o, double *buf, double *work,
                              const double *zown, int *na, int *zero_mad)
{
    *na = 0;
    if (union_na - own_na <= maxdiff) return zown;
    gc_bicor_opts o2 = *o;
    if (o2.fallback == BICOR_FB_ALL) o2.fallback = BICOR_FB_INDIVIDUAL;
    int f = gc_bicor_prep_col(x + c * n, n, skip, &o2, buf, work);
    *na = f & BICOR_COL_NA;
    if (f & BICOR_COL_ZERO_MAD) *zero_mad = 1;
    return buf;
}

struct gc_bicor_pairs_ctx {
    const double *x, *y, *zx, *zy, *r;
    size_t n, p, maxdiff;
    const size_t *nax, *nay;
    const int *fx, *fy;
    const gc_bicor_opts *ox, *oy;
    int sym, nthreads;
    size_t nna;
    int zmad[2];
    size_t *na;        /* owned: nax and nay */
    double *zown;      /* owned: the columns' own preparations */
};
typedef struct gc_bicor_pairs_ctx pairs_ctx;

/* Pair (i, j) on the rows both columns observe into *t, when it is one to
 * recompute (its columns not NA, one of them with more than maxdiff NAs);
 * else *t is left as it is.  'count': the pair counts towards nna (a
 * symmetric result's mirrored pairs do not, so each pair counts once).
 * work: 7 n doubles; skip: n bytes. */
static void pair_value(pairs_ctx *c, size_t i, size_t j, double *t, int count,
                       double *work, unsigned char *skip)
{
    size_t n = c->n;
    if ((c->fx[i] & BICOR_COL_NA) || (c->fy[j] & BICOR_COL_NA)) return;
    if (c->nax[i] <= c->maxdiff && c->nay[j] <= c->maxdiff) return;
    const double *xi = c->x + i * n, *yj = c->y + j * n;
    size_t un = 0;
    for (size_t k = 0; k < n; k++) {
        skip[k] = isnan(xi[k]) || isnan(yj[k]);
        un += skip[k];
    }
    int nai, naj, zi = 0, zj = 0;
    const double *u = pair_col(c->x, n, i, c->nax[i], un, c->maxdiff, skip, c->ox,
                               work + 2 * n, work + 4 * n, c->zx + i * n, &nai, &zi);
    const double *v = pair_col(c->y, n, j, c->nay[j], un, c->maxdiff, skip, c->oy,
                               work, work + 4 * n, c->zy + j * n, &naj, &zj);
    if (zi || zj) {
#ifdef _OPENMP
#pragma omp atomic write
#endif
        c->zmad[c->sym ? 0 : (zi ? 0 : 1)] = 1;
        if (!c->sym && zi && zj) {
#ifdef _OPENMP
#pragma omp atomic write
#endif
            c->zmad[1] = 1;
        }
    }
    if (u == c->zx + i * n && v == c->zy + j * n) return;   /* as the product has it */
    if (nai || naj) {
        *t = gpucor_na_real;
        if (count) {
#ifdef _OPENMP
#pragma omp atomic
#endif
            c->nna++;
        }
        return;
    }
    long double d = 0;
    for (size_t k = 0; k < n; k++) d += (long double) u[k] * v[k];
    double r = (double) d;
    *t = r > 1 ? 1 : (r < -1 ? -1 : r);
}

/* A tile of the result: the pairs to recompute on their common rows, the
 * others as the product made them (r).  Scratch: 7 n doubles, n bytes. */
static void pairs_fill(void *vctx, size_t i0, size_t ni, size_t j0, size_t nj,
                       double *tile, void *scratch)
{
    pairs_ctx *c = (pairs_ctx *) vctx;
    double *work = (double *) scratch;
    unsigned char *skip = (unsigned char *) (work + 7 * c->n);
    for (size_t b = 0; b < nj; b++) {
        size_t j = j0 + b;
        for (size_t a = 0; a < ni; a++) {
            size_t i = i0 + a;
            double *t = tile + a + b * ni;
            *t = c->r[i + j * c->p];
            if (c->sym && j >= i) continue;
            pair_value(c, i, j, t, 1, work, skip);
        }
    }
}

int gc_bicor_pairs_open(const double *x, size_t n, size_t p, const int *fx,
                        const gc_bicor_opts *ox, const double *y, size_t q,
                        const int *fy, const gc_bicor_opts *oy, double quick,
                        int nthreads, gc_bicor_pairs_ctx **out)
{
    int sym = y == NULL;
    if (sym) { y = x; q = p; fy = fx; oy = ox; }
    *out = NULL;
    pairs_ctx *c = calloc(1, sizeof *c);
    if (!c) return GPUCOR_ERR_ALLOC;
    c->na = calloc(p + q + 1, sizeof(size_t));
    c->zown = malloc((p + (sym ? 0 : q)) * n * sizeof(double) + 1);
    int *ftmp = malloc((p + q + 1) * sizeof(int));
    if (!c->na || !c->zown || !ftmp) goto fail;
    for (size_t k = 0; k < p * n; k++) c->na[k / n] += isnan(x[k]);
    for (size_t k = 0; k < q * n; k++) c->na[p + k / n] += isnan(y[k]);
    /* each column's own preparation, as the product had it */
    if (gc_bicor_prep(x, n, p, ox, c->zown, ftmp, nthreads) ||
        (!sym && gc_bicor_prep(y, n, q, oy, c->zown + p * n, ftmp + p, nthreads)))
        goto fail;
    free(ftmp);
    c->x = x; c->y = y; c->zx = c->zown; c->zy = sym ? c->zown : c->zown + p * n;
    c->n = n; c->p = p; c->maxdiff = (size_t) (quick * (double) n);
    c->nax = c->na; c->nay = c->na + p;
    c->fx = fx; c->fy = fy; c->ox = ox; c->oy = oy; c->sym = sym;
    c->nthreads = nthreads > 0 ? nthreads : 1;
    *out = c;
    return GPUCOR_OK;
fail:
    free(ftmp);
    gc_bicor_pairs_close(c, NULL, NULL);
    return GPUCOR_ERR_ALLOC;
}

int gc_bicor_pairs_columns(void *ctx, size_t j0, size_t nj, double *val, size_t ld)
{
    pairs_ctx *c = (pairs_ctx *) ctx;
    size_t n = c->n, p = c->p;
    int failed = 0, nt = c->nthreads;
#ifdef _OPENMP
    /* within the CPU engine's team (a tile completed the band) one thread;
     * on the GPU's committing thread, the CPU's threads */
    if (omp_in_parallel()) nt = 1;
#pragma omp parallel num_threads(nt) if (nt > 1)
#endif
    {
        double *work = malloc((7 * n + 1) * sizeof(double) + n + 1);
        unsigned char *skip = work ? (unsigned char *) (work + 7 * n + 1) : NULL;
        if (!work) {
#ifdef _OPENMP
#pragma omp atomic write
#endif
            failed = 1;
        }
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 1)
#endif
        for (size_t b = 0; b < nj; b++) {
            if (!work) continue;
            size_t j = j0 + b;
            for (size_t i = 0; i < p; i++) {
                if (c->sym && i == j) continue;
                /* a symmetric result's pair above the diagonal is its
                 * mirror's, computed as gc_bicor_pairs computes that one */
                if (c->sym && i < j) pair_value(c, j, i, val + i + b * ld, 0, work, skip);
                else pair_value(c, i, j, val + i + b * ld, 1, work, skip);
            }
        }
        free(work);
    }
    return failed;
}

void gc_bicor_pairs_close(gc_bicor_pairs_ctx *c, size_t *nna, int *zmad)
{
    if (nna) *nna = c ? c->nna : 0;
    if (zmad) {
        zmad[0] = c ? c->zmad[0] : 0;
        zmad[1] = c ? c->zmad[1] : 0;
    }
    if (!c) return;
    free(c->na);
    free(c->zown);
    free(c);
}

int gc_bicor_pairs(const double *x, size_t n, size_t p, const int *fx,
                   const gc_bicor_opts *ox, const double *y, size_t q,
                   const int *fy, const gc_bicor_opts *oy, double quick,
                   double *r, size_t *nna, int *zmad, const gc_host *host)
{
    int sym = y == NULL;
    pairs_ctx *c = NULL;
    *nna = 0;
    zmad[0] = zmad[1] = 0;
    int status = gc_bicor_pairs_open(x, n, p, fx, ox, y, q, fy, oy, quick,
                                     host->opts->nthreads, &c);
    if (status != GPUCOR_OK) return status;
    if (sym) q = p;
    c->r = r;
    gc_sink sink = {.kind = SINK_DENSE, .symmetric = sym, .p = p, .q = q, .out = r};
    status = cpu_tiles_run(p, q, sym, host->opts->cpu_tile ? host->opts->cpu_tile : 32,
                           pairs_fill, c, 7 * n * sizeof(double) + n + 1, &sink, host, NULL);
    gc_bicor_pairs_close(c, nna, zmad);
    return status;
}
