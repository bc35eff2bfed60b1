/*
 * standardize.cu -- each column to (x - mean) / sqrt(sum of squares), on
 * the device, one block per column.
 *
 * Two-pass in double, as stats does: the mean, then the mean of the
 * residuals added back, then the centred sum of squares.  (A one-pass
 * sum(x^2) - n mean^2 loses every digit on 1e8 + noise.)  A column whose
 * values are all equal is flagged zero-sd exactly by comparing min and max,
 * which is stats' own outcome for such columns; it does not depend on
 * rounding of the mean.  The z values are written as T (double or float):
 * single precision rounds only the standardized values and the product.
 */
#include <math.h>
#include <float.h>
#include "prep.cuh"

#define THREADS 256

template <typename R>
__device__ static R block_reduce(R v, R *sh, int op /* 0 sum, 1 min, 2 max */)
{
    int t = threadIdx.x;
    sh[t] = v;
    __syncthreads();
    for (int s = THREADS / 2; s > 0; s >>= 1) {
        if (t < s) {
            R a = sh[t], b = sh[t + s];
            sh[t] = op == 0 ? a + b : (op == 1 ? (b < a ? b : a) : (b > a ? b : a));
        }
        __syncthreads();
    }
    R r = sh[0];
    __syncthreads();
    return r;
}

template <typename T>
__global__ static void standardize_kernel(const double *a, size_t m, int center,
                                          int r_rule, T *z,
                                          unsigned char *flags)
{
    __shared__ double sh[THREADS];
    size_t c = blockIdx.x;
    const double *col = a + c * m;
    T *zc = z + c * m;
    double s = 0, mn = DBL_MAX, mx = -DBL_MAX, nan = 0;
    for (size_t k = threadIdx.x; k < m; k += THREADS) {
        double v = col[k];
        if (isnan(v)) { nan = 1; continue; }
        s += v;
        mn = v < mn ? v : mn;
        mx = v > mx ? v : mx;
    }
    nan = block_reduce(nan, sh, 2);
    if (nan > 0) {
        for (size_t k = threadIdx.x; k < m; k += THREADS) zc[k] = 0;
        if (threadIdx.x == 0) flags[c] = COL_HAS_NA;
        return;
    }
    if (center == STANDARDIZE_RAW) {   /* prepared by the caller */
        for (size_t k = threadIdx.x; k < m; k += THREADS) zc[k] = (T) col[k];
        if (threadIdx.x == 0) flags[c] = 0;
        return;
    }
    mn = block_reduce(mn, sh, 1);
    mx = block_reduce(mx, sh, 2);
    /* Scale by a power of two (exact) so the largest |value| is near 1:
     * without long double, squares of values near 1e154 overflow and those
     * near 1e-160 underflow.  Correlations do not change under scaling. */
    double amax = fmax(fabs(mn), fabs(mx));
    int e = (isfinite(amax) && amax > 0) ? ilogb(amax) : 0;
    s = 0;
    for (size_t k = threadIdx.x; k < m; k += THREADS) s += ldexp(col[k], -e);
    s = block_reduce(s, sh, 0);
    double mean = 0;
    if (center) {
        mean = s / (double) m;
        if (isfinite(mean)) {
            double r = 0;
            for (size_t k = threadIdx.x; k < m; k += THREADS) r += ldexp(col[k], -e) - mean;
            mean += block_reduce(r, sh, 0) / (double) m;
        }
    }
    double ss = 0;
    for (size_t k = threadIdx.x; k < m; k += THREADS) {
        double d = ldexp(col[k], -e) - mean;
        ss += d * d;
    }
    ss = block_reduce(ss, sh, 0);
    int zero = center ? (mn == mx && isfinite(mn)) : (mn == 0 && mx == 0);
    zero = zero || ss == 0;
    /* stats' cor() holds the variance (r_rule 1: no y) or the standard
     * deviation (r_rule 2: with y) in a double, so a spread below the double
     * range is its "zero sd" */
    double vs = ss;
    if (center && r_rule && m > 1 && e < -960) {
        /* at the bottom of the range stats' mean, kept in a double, is a
         * subnormal that lost digits: its variance is about that mean (the
         * values keep the exact one) */
        double md = ldexp(ldexp(mean, e), -e), s2 = 0;
        for (size_t k = threadIdx.x; k < m; k += THREADS) {
            double d = ldexp(col[k], -e) - md;
            s2 += d * d;
        }
        vs = block_reduce(s2, sh, 0);
    }
    if (r_rule == 1 && m > 1 && ldexp(vs / (double) (m - 1), 2 * e) == 0) zero = 1;
    if (r_rule == 2 && m > 1 && ldexp(sqrt(vs / (double) (m - 1)), e) == 0) zero = 1;
    double scale = zero ? 0.0 : 1.0 / sqrt(ss);
    for (size_t k = threadIdx.x; k < m; k += THREADS)
        zc[k] = zero ? (T) 0 : (T) ((ldexp(col[k], -e) - mean) * scale);
    if (threadIdx.x == 0) flags[c] = zero ? COL_ZERO_SD : 0;
}

template <typename T>
int gpucor_standardize(const double *a, size_t m, size_t v, int center,
                       int r_rule, T *z, unsigned char *flags, cudaStream_t st,
                       char *msg, size_t msgcap)
{
    int status = GPUCOR_OK;
    if (v == 0) return GPUCOR_OK;
    standardize_kernel<T><<<(unsigned) v, THREADS, 0, st>>>(a, m, center, r_rule,
                                                             z, flags);
    LAUNCHED("standardize");
cleanup:
    return status;
}

template int gpucor_standardize<double>(const double *, size_t, size_t, int,
                                        int, double *, unsigned char *,
                                        cudaStream_t, char *, size_t);
template int gpucor_standardize<float>(const double *, size_t, size_t, int, int,
                                       float *, unsigned char *, cudaStream_t,
                                       char *, size_t);
