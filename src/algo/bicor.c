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
#include "../gpucor.h"
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

static int prep_pearson(const double *col, size_t n, const unsigned char *skip,
                        double *out)
{
    long double s = 0;
    size_t cnt = 0;
    for (size_t k = 0; k < n; k++)
        if (!isnan(col[k]) && !(skip && skip[k])) { s += col[k]; cnt++; }
    if (cnt == 0) { memset(out, 0, n * sizeof *out); return BICOR_COL_NA; }
    long double mean = s / cnt, r = 0;
    for (size_t k = 0; k < n; k++)
        if (!isnan(col[k]) && !(skip && skip[k])) r += col[k] - mean;
    mean += r / cnt;
    long double ss = 0;
    for (size_t k = 0; k < n; k++) {
        if (isnan(col[k]) || (skip && skip[k])) { out[k] = 0; continue; }
        out[k] = (double) (col[k] - mean);
        ss += (long double) out[k] * out[k];
    }
    if (ss == 0 || !isfinite((double) ss)) {
        memset(out, 0, n * sizeof *out);
        return BICOR_COL_NA;
    }
    long double nrm = sqrtl(ss);
    for (size_t k = 0; k < n; k++) out[k] = (double) (out[k] / nrm);
    return BICOR_COL_PEARSON;
}

int gc_bicor_prep_col(const double *col, size_t n, const unsigned char *skip,
                      const gc_bicor_opts *o, double *out, double *work)
{
    if (o->pearson) return prep_pearson(col, n, skip, out);
    double *v = work, *u = work + n;
    size_t m = 0;
    for (size_t k = 0; k < n; k++)
        if (!isnan(col[k]) && !(skip && skip[k])) v[m++] = col[k];
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
        return prep_pearson(col, n, skip, out) | BICOR_COL_ZERO_MAD;
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
    if (ss == 0 || !isfinite((double) ss)) {
        memset(out, 0, n * sizeof *out);
        return BICOR_COL_NA;
    }
    long double nrm = sqrtl(ss);
    for (size_t k = 0; k < n; k++) out[k] = (double) (out[k] / nrm);
    return 0;
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
        for (size_t c = 0; c < p; c++)
            flags[c] = prep_pearson(x + c * n, n, NULL, z + c * n) |
                       (flags[c] & BICOR_COL_ZERO_MAD);
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

int gc_bicor_pairs(const double *x, size_t n, size_t p, const int *fx,
                   const gc_bicor_opts *ox, const double *y, size_t q,
                   const int *fy, const gc_bicor_opts *oy, double quick,
                   double *r, size_t *nna, int *zmad, int nthreads,
                   int (*interrupted)(void))
{
    int sym = y == NULL;
    if (sym) { y = x; q = p; fy = fx; oy = ox; }
    size_t maxdiff = (size_t) (quick * (double) n);
    size_t *nax = calloc(p + q, sizeof(size_t)), *nay = nax + p;
    double *zx = malloc((p + (sym ? 0 : q)) * n * sizeof(double) + 1);
    int stop = 0, failed = 0, zx_mad = 0, zy_mad = 0;
    size_t count = 0;
    *nna = 0;
    if (!nax || !zx) { free(nax); free(zx); return 2; }
    double *zy = sym ? zx : zx + p * n;
    for (size_t c = 0; c < p; c++)
        for (size_t k = 0; k < n; k++) nax[c] += isnan(x[c * n + k]);
    for (size_t c = 0; c < q; c++)
        for (size_t k = 0; k < n; k++) nay[c] += isnan(y[c * n + k]);
    if (nthreads < 1) nthreads = 1;
#ifdef _OPENMP
#pragma omp parallel num_threads(nthreads)
#endif
    {
        /* own preparations, again (cheap next to the pairs) */
        double *work = malloc((7 * n + 1) * sizeof(double));
        unsigned char *skip = malloc(n + 1);
        int master = 1;
#ifdef _OPENMP
        master = omp_get_thread_num() == 0;
#endif
        if (!work || !skip) {
#ifdef _OPENMP
#pragma omp atomic write
#endif
            failed = 1;
        }
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
        for (size_t c = 0; c < p + (sym ? 0 : q); c++) {
            if (!work) continue;
            if (c < p) gc_bicor_prep_col(x + c * n, n, NULL, ox, zx + c * n, work);
            else gc_bicor_prep_col(y + (c - p) * n, n, NULL, oy, zy + (c - p) * n, work);
        }
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 1) reduction(+ : count) reduction(| : zx_mad, zy_mad)
#endif
        for (size_t j = 0; j < q; j++) {
            int s, f;
#ifdef _OPENMP
#pragma omp atomic read
#endif
            s = stop;
#ifdef _OPENMP
#pragma omp atomic read
#endif
            f = failed;
            if (s || f || !work || !skip) continue;
            if (master && interrupted && interrupted()) {
#ifdef _OPENMP
#pragma omp atomic write
#endif
                stop = 1;
                continue;
            }
            if (fy[j] & BICOR_COL_NA) continue;
            for (size_t i = sym ? j + 1 : 0; i < p; i++) {
                if (fx[i] & BICOR_COL_NA) continue;
                if (nax[i] <= maxdiff && nay[j] <= maxdiff) continue;
                const double *xi = x + i * n, *yj = y + j * n;
                size_t un = 0;
                for (size_t k = 0; k < n; k++) {
                    skip[k] = isnan(xi[k]) || isnan(yj[k]);
                    un += skip[k];
                }
                int nai, naj;
                const double *a = pair_col(x, n, i, nax[i], un, maxdiff, skip, ox,
                                           work + 2 * n, work + 4 * n, zx + i * n, &nai,
                                           &zx_mad);
                const double *b = pair_col(y, n, j, nay[j], un, maxdiff, skip, oy,
                                           work, work + 4 * n, zy + j * n, &naj,
                                           sym ? &zx_mad : &zy_mad);
                if (a == zx + i * n && b == zy + j * n) continue;   /* as the product has it */
                double v;
                if (nai || naj) {
                    v = gpucor_na_real;
                    count++;
                } else {
                    long double d = 0;
                    for (size_t k = 0; k < n; k++) d += (long double) a[k] * b[k];
                    v = (double) d;
                    v = v > 1 ? 1 : (v < -1 ? -1 : v);
                }
                r[i + j * p] = v;
                if (sym) r[j + i * p] = v;
            }
        }
        free(work);
        free(skip);
    }
    free(nax);
    free(zx);
    *nna = count;
    zmad[0] = zx_mad;
    zmad[1] = zy_mad;
    if (failed) return 2;
    return stop ? 1 : 0;
}
