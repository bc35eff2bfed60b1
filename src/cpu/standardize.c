/*
 * standardize.c -- turn each column into (x - mean) / sqrt(sum of squares),
 * so that correlations are plain dot products (Pearson; Spearman after
 * ranking; cosine without the centring).
 *
 * Centring first is what keeps 1e8 + noise exact: the one-pass
 * sum(x*y) - n*mx*my formula cancels every digit there.  The mean is
 * computed exactly as stats' cov.c does for the mode at hand (outside
 * pairwise mode a long-double sum, then a second pass adding the mean
 * residual, kept in a double; pairwise, a one-pass long-double mean kept in
 * long double), so that a constant column gives a sum of squares of exactly
 * 0 -- the test stats uses for "the standard deviation is zero" -- in the
 * same cases as stats, and 1e12 + noise carries stats' own mean.
 */
#include <math.h>
#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include "cpu.h"

double cpu_r_mean(const double *v, size_t n)
{
    long double s = 0.0L;
    for (size_t k = 0; k < n; k++) s += v[k];
    long double tmp = s / (long double) n;
    if (isfinite((double) tmp)) {
        s = 0.0L;
        for (size_t k = 0; k < n; k++) s += (v[k] - tmp);
        tmp = tmp + s / (long double) n;
    }
    return (double) tmp;   /* stats keeps the mean in a double */
}

int cpu_standardize(const double *x, size_t n, size_t p, size_t ldx,
                    size_t stride_obs, const int *rows, size_t nobs,
                    int rank, int mean_kind, double *z, size_t ldz,
                    unsigned char *flags, int nthreads)
{
    int failed = 0;
    (void) n;
#ifdef _OPENMP
#pragma omp parallel num_threads(nthreads)
#endif
    {
        double *v = malloc((nobs ? nobs : 1) * sizeof(double));
        size_t *idx = rank ? malloc(2 * (nobs ? nobs : 1) * sizeof(size_t)) : NULL;
        if (!v || (rank && !idx)) {
#ifdef _OPENMP
#pragma omp atomic write
#endif
            failed = 1;
        }
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
        for (size_t c = 0; c < p; c++) {
            if (!v || (rank && !idx)) continue;
            const double *col = x + c * ldx;
            double *zc = z + c * ldz;
            unsigned char f = 0;
            double amax = 0;
            for (size_t k = 0; k < nobs; k++) {
                double val = col[(rows ? (size_t) rows[k] : k) * stride_obs];
                if (isnan(val)) f |= COL_HAS_NA;
                v[k] = val;
                amax = fabs(val) > amax ? fabs(val) : amax;
            }
            for (size_t k = 0; k < ldz; k++) zc[k] = 0.0;
            if (f & COL_HAS_NA) { flags[c] = f; continue; }
            if (mean_kind == MEAN_RAW) {
                for (size_t k = 0; k < nobs; k++) zc[k] = v[k];
                flags[c] = f;
                continue;
            }
            if (rank) {
                cpu_rank(v, nobs, zc, idx);   /* zc as temporary */
                for (size_t k = 0; k < nobs; k++) v[k] = zc[k];
            }
            /* Near either end of the double range the column is scaled by a
             * power of two first: that is exact and commutes with every
             * rounding below, and the mean of subnormal values then keeps
             * its digits (stats rounds it to a subnormal double and loses
             * them).  Elsewhere scaling would change no bit, so it is
             * skipped.  (Ranks need none.) */
            int e = 0;
            if (!rank && isfinite(amax) && amax > 0) {
                e = ilogb(amax);
                if (e > -960 && e < 960) e = 0;
            }
            if (e != 0)
                for (size_t k = 0; k < nobs; k++) v[k] = ldexp(v[k], -e);
            long double mean = 0.0L;
            if (mean_kind == MEAN_R_TWO_PASS && nobs > 0) {
                mean = cpu_r_mean(v, nobs);
            } else if (mean_kind == MEAN_PAIRWISE && nobs > 0) {
                for (size_t k = 0; k < nobs; k++) mean += v[k];
                mean /= (long double) nobs;
            }
            long double ss = 0.0L;
            for (size_t k = 0; k < nobs; k++) {
                long double d = v[k] - mean;
                ss += d * d;
            }
            if (ss == 0.0L) {
                f |= COL_ZERO_SD;
                for (size_t k = 0; k < nobs; k++) zc[k] = 0.0;
            } else {
                long double s = sqrtl(ss);
                for (size_t k = 0; k < nobs; k++)
                    zc[k] = (double) ((v[k] - mean) / s);
                /* stats' cor() keeps the variance (no y) or the standard
                 * deviation (with y) in a double: below its range, that is
                 * stats' zero sd */
                if (nobs > 1) {
                    long double var = ldexpl(ss / (long double) (nobs - 1), 2 * e);
                    if (e < 0 && mean_kind == MEAN_R_TWO_PASS) {
                        /* at the bottom of the range stats' mean, kept in
                         * a double, is a subnormal that lost digits: its
                         * variance is about that mean (the values keep
                         * the exact one) */
                        double md = ldexp((double) mean, e);
                        long double s2 = 0.0L;
                        for (size_t k = 0; k < nobs; k++) {
                            long double d = (long double) ldexp(v[k], e) - md;
                            s2 += d * d;
                        }
                        var = s2 / (long double) (nobs - 1);
                    }
                    if ((double) var == 0.0) f |= COL_VAR_UNDERFLOW;
                    if ((double) sqrtl(var) == 0.0) f |= COL_SD_UNDERFLOW;
                }
            }
            flags[c] = f;
        }
        free(v);
        free(idx);
    }
    return failed ? GPUCOR_ERR_ALLOC : GPUCOR_OK;
}
