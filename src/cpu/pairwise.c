/*
 * pairwise.c -- one correlation over the rows two columns both observe,
 * for use = "pairwise.complete.obs" and for rows with NA in the correlation
 * distances.  The arithmetic follows stats' cov.c step for step (long-double
 * sums, the same means and divisions) so that the rare pairs whose answer
 * hangs on rounding -- a column constant on the shared rows, say -- come out
 * as stats' do.
 */
#include <math.h>
#include <stdlib.h>
#include "cpu.h"

static inline double clamp1(long double r)
{
    return (double) (r >= 1.0L ? 1.0L : (r <= -1.0L ? -1.0L : r));
}

/* COV_PAIRWISE_BODY's sums: one-pass long-double means over the shared
 * rows, then the centred cross product (and the squares when sq != NULL);
 * returns the number of shared rows (the sums are unset below two). */
static size_t pair_sums(const double *x, const double *y, size_t n,
                        long double *sum, long double sq[2])
{
    long double xmean = 0.0L, ymean = 0.0L, s = 0.0L, xsd = 0.0L, ysd = 0.0L;
    size_t nobs = 0;
    for (size_t k = 0; k < n; k++)
        if (!isnan(x[k]) && !isnan(y[k])) {
            nobs++;
            xmean += x[k];
            ymean += y[k];
        }
    if (nobs < 2) return nobs;
    xmean /= (long double) nobs;
    ymean /= (long double) nobs;
    for (size_t k = 0; k < n; k++)
        if (!isnan(x[k]) && !isnan(y[k])) {
            long double xm = x[k] - xmean, ym = y[k] - ymean;
            s += xm * ym;
            if (sq) {
                xsd += xm * xm;
                ysd += ym * ym;
            }
        }
    *sum = s;
    if (sq) { sq[0] = xsd; sq[1] = ysd; }
    return nobs;
}

double cpu_pearson_pair(const double *x, const double *y, size_t n, int *sd0)
{
    long double sum, sq[2];
    size_t nobs = pair_sums(x, y, n, &sum, sq);
    if (nobs < 2) return gpucor_na_real;
    if (sq[0] == 0.0L || sq[1] == 0.0L) {
        *sd0 = 1;
        return gpucor_na_real;
    }
    long double n1 = (long double) (nobs - 1);
    return clamp1((sum / n1) / (sqrtl(sq[0] / n1) * sqrtl(sq[1] / n1)));
}

double cpu_cov_pair(const double *x, const double *y, size_t n)
{
    long double sum;
    size_t nobs = pair_sums(x, y, n, &sum, NULL);
    if (nobs < 2) return gpucor_na_real;
    return (double) (sum / (long double) (nobs - 1));
}

double cpu_spearman_pair(const double *x, const double *y, size_t n,
                         double *work, size_t *idx, int *sd0)
{
    /* stats re-ranks each pair over its shared rows, then calls its C
     * cor() with use = "all.obs", i.e. cov_complete2 on the two rank
     * vectors.  work holds 4n doubles, idx 2n size_t. */
    double *xo = work, *yo = work + n, *xr = work + 2 * n, *yr = work + 3 * n;
    size_t nobs = 0;
    for (size_t k = 0; k < n; k++)
        if (!isnan(x[k]) && !isnan(y[k])) {
            xo[nobs] = x[k];
            yo[nobs] = y[k];
            nobs++;
        }
    if (nobs < 2) return gpucor_na_real;
    cpu_rank(xo, nobs, xr, idx);
    cpu_rank(yo, nobs, yr, idx);
    long double xm = cpu_r_mean(xr, nobs), ym = cpu_r_mean(yr, nobs);
    long double sum = 0.0L, xs = 0.0L, ys = 0.0L, n1 = (long double) (nobs - 1);
    for (size_t k = 0; k < nobs; k++) {
        sum += (long double) (xr[k] - xm) * (yr[k] - ym);
        xs += (long double) (xr[k] - xm) * (xr[k] - xm);
        ys += (long double) (yr[k] - ym) * (yr[k] - ym);
    }
    double cv = (double) (sum / n1);
    double sx = (double) sqrtl(xs / n1), sy = (double) sqrtl(ys / n1);
    if (sx == 0.0 || sy == 0.0) {
        *sd0 = 1;
        return gpucor_na_real;
    }
    return clamp1(cv / (sx * sy));
}

double cpu_cosine_pair(const double *x, const double *y, size_t n, int *sd0)
{
    long double sxy = 0.0L, sxx = 0.0L, syy = 0.0L;
    size_t nobs = 0;
    for (size_t k = 0; k < n; k++)
        if (!isnan(x[k]) && !isnan(y[k])) {
            nobs++;
            sxy += (long double) x[k] * y[k];
            sxx += (long double) x[k] * x[k];
            syy += (long double) y[k] * y[k];
        }
    if (nobs < 1) return gpucor_na_real;
    if (sxx == 0.0L || syy == 0.0L) {
        *sd0 = 1;
        return gpucor_na_real;
    }
    return clamp1(sxy / (sqrtl(sxx) * sqrtl(syy)));
}

int cpu_self_pairs_sd0(const double *x, size_t nvar, size_t nobs,
                       size_t var_stride, size_t obs_stride, int method,
                       int cosine)
{
    /* a copy of one variable; the pair code wants contiguous vectors */
    double *v = malloc((nobs ? nobs : 1) * sizeof(double));
    if (!v) return -1;
    int sd0 = 0;
    for (size_t i = 0; i < nvar && !sd0; i++) {
        size_t cnt = 0;
        for (size_t k = 0; k < nobs; k++) {
            double a = x[i * var_stride + k * obs_stride];
            if (!isnan(a)) v[cnt++] = a;
        }
        if (cosine) {
            (void) cpu_cosine_pair(v, v, cnt, &sd0);
        } else if (method == COR_PEARSON) {
            (void) cpu_pearson_pair(v, v, cnt, &sd0);
        } else if (cnt >= 2) {
            /* re-ranked on its own rows, x against itself is all ties
             * exactly when its values are (Spearman and Kendall alike) */
            size_t k = 1;
            while (k < cnt && v[k] == v[0]) k++;
            sd0 = k == cnt;
        }
    }
    free(v);
    return sd0;
}
