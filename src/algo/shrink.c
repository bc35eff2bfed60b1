/*
 * shrink.c -- see shrink.h.  The products go through the CPU engine's dot
 * tile kernel (cpu/dot.c) over padded copies, one tile per task.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include "../cpu/cpu.h"
#include "shrink.h"

int gc_shrink_scale(const double *x, size_t n, size_t p, const double *w,
                    double *z, int *zero, double *er2, double *z4, int nthreads)
{
    long double w2 = 0;
    for (size_t k = 0; k < n; k++) w2 += (long double) w[k] * w[k];
    double h1 = (double) (1.0L / (1.0L - w2));
    /* row sums of xs^2 and xs^4, per thread, for er2 */
    int nt = nthreads > 0 ? nthreads : 1;
    long double *rs = calloc((size_t) nt * 2 * (n ? n : 1), sizeof(long double));
    if (!rs) return 1;
    long double tz4 = 0;
#ifdef _OPENMP
#pragma omp parallel num_threads(nt) reduction(+ : tz4)
#endif
    {
        int t = 0;
#ifdef _OPENMP
        t = omp_get_thread_num();
#endif
        long double *s2 = rs + (size_t) t * 2 * n, *s4 = s2 + n;
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
        for (size_t i = 0; i < p; i++) {
            const double *col = x + i * n;
            double *zc = z + i * n;
            /* the mean as a double mh and a correction c, kept apart: a
             * long double holds a mean of 1e12 to 6e-8 only, which would
             * shift every standardized value by that much (and lambda,
             * through the fourth moments, with it); col[k] - mh is exact
             * in double where the column sits far from 0 (Sterbenz) */
            long double m = 0;
            for (size_t k = 0; k < n; k++) m += (long double) w[k] * col[k];
            const double mh = (double) m;
            long double c = 0;
            for (size_t k = 0; k < n; k++) c += (long double) w[k] * (col[k] - mh);
#define GC_SHRINK_DEV(k) ((long double) (col[k] - mh) - c)
            long double ss = 0;
            for (size_t k = 0; k < n; k++) {
                long double d = GC_SHRINK_DEV(k);
                ss += (long double) w[k] * d * d;
            }
            double v = (double) (h1 * ss);
            zero[i] = !(v >= DBL_EPSILON);
            if (zero[i]) {
                memset(zc, 0, n * sizeof(double));
                continue;
            }
            long double sd = sqrtl((long double) v), nz = 0;
            for (size_t k = 0; k < n; k++) {
                long double xs = GC_SHRINK_DEV(k) / sd, q = xs * xs;
                zc[k] = (double) (sqrtl((long double) w[k]) * xs);
                s2[k] += q;
                s4[k] += q * q;
                nz += (long double) w[k] * q;
            }
            tz4 += nz * nz;
        }
#undef GC_SHRINK_DEV
    }
    long double e = 0;
    for (size_t k = 0; k < n; k++) {
        long double a = 0, b = 0;
        for (int t = 0; t < nt; t++) {
            a += rs[(size_t) t * 2 * n + k];
            b += rs[(size_t) t * 2 * n + n + k];
        }
        e += (long double) w[k] * (a * a - b);
    }
    free(rs);
    *er2 = (double) e;
    *z4 = (double) tz4;
    return 0;
}

#define CP_TILE 64

/* The na vectors of length m (columns of an m x na matrix, or rows of an
 * na x m one) into columns of stride ld; rows are copied in 64 x 64 blocks
 * so that the strided reads stay in cache. */
static void pad_copy(const double *a, size_t na, size_t m, int rows, double *pa, size_t ld,
                     int nthreads)
{
    size_t bi = (na + CP_TILE - 1) / CP_TILE, bk = (m + CP_TILE - 1) / CP_TILE;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(nthreads > 0 ? nthreads : 1)
#endif
    for (size_t t = 0; t < bi * bk; t++) {
        size_t i0 = (t % bi) * CP_TILE, k0 = (t / bi) * CP_TILE;
        size_t i1 = i0 + CP_TILE < na ? i0 + CP_TILE : na;
        size_t k1 = k0 + CP_TILE < m ? k0 + CP_TILE : m;
        for (size_t i = i0; i < i1; i++) {
            for (size_t k = k0; k < k1; k++) pa[i * ld + k] = rows ? a[i + k * na] : a[k + i * m];
            if (k1 == m)
                for (size_t k = m; k < ld; k++) pa[i * ld + k] = 0.0;   /* cpu_dot_tile's pad */
        }
    }
}

int gc_crossprod(const double *a, size_t na, const double *b, size_t nb, size_t m,
                 int rows, double *c, int nthreads)
{
    int sym = b == NULL;
    if (sym) nb = na;
    if (na == 0 || nb == 0) return 0;
    /* padded columns for cpu_dot_tile: the operands' columns (or rows) */
    size_t ld = (m + 3) & ~(size_t) 3;
    /* fresh memory is first touched by the copying threads (pad_copy) */
    double *pa = malloc(na * ld * sizeof(double));
    double *pb = sym ? pa : malloc(nb * ld * sizeof(double));
    if (!pa || !pb) {
        free(pa);
        if (!sym) free(pb);
        return 1;
    }
    pad_copy(a, na, m, rows, pa, ld, nthreads);
    if (!sym) pad_copy(b, nb, m, rows, pb, ld, nthreads);
    size_t ti = (na + CP_TILE - 1) / CP_TILE, tj = (nb + CP_TILE - 1) / CP_TILE;
    int failed = 0;
#ifdef _OPENMP
#pragma omp parallel num_threads(nthreads > 0 ? nthreads : 1)
#endif
    {
        double *tile = malloc(CP_TILE * CP_TILE * sizeof(double));
        if (!tile) {
#ifdef _OPENMP
#pragma omp atomic write
#endif
            failed = 1;
        }
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 1)
#endif
        for (size_t t = 0; t < ti * tj; t++) {
            size_t bi = t % ti, bj = t / ti;
            if (!tile || (sym && bj > bi)) continue;
            size_t i0 = bi * CP_TILE, j0 = bj * CP_TILE;
            size_t ni = na - i0 < CP_TILE ? na - i0 : CP_TILE;
            size_t nj = nb - j0 < CP_TILE ? nb - j0 : CP_TILE;
            cpu_dot_tile(pa + i0 * ld, pb + j0 * ld, ld, m, ni, nj, tile);
            for (size_t q = 0; q < nj; q++)
                for (size_t r = 0; r < ni; r++) {
                    c[(i0 + r) + (j0 + q) * na] = tile[r + q * ni];
                    /* t(a) a: the mirror is the same double */
                    if (sym) c[(j0 + q) + (i0 + r) * na] = tile[r + q * ni];
                }
        }
        free(tile);
    }
    free(pa);
    if (!sym) free(pb);
    return failed;
}

void gc_scale_copy(const double *a, size_t len, double f, double *out, int nthreads)
{
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(nthreads > 0 ? nthreads : 1)
#endif
    for (size_t k = 0; k < len; k++) out[k] = a[k] * f;
}

int gc_shrink_partial(const double *m, size_t r, const double *z, size_t n, size_t p,
                      double *v, double *u2, int nthreads)
{
    if (gc_crossprod(m, r, z, p, n, 0, v, nthreads)) return 1;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(nthreads > 0 ? nthreads : 1)
#endif
    for (size_t i = 0; i < p; i++) {
        double *vi = v + i * r;
        long double s = 0;
        for (size_t k = 0; k < r; k++) s += (long double) vi[k] * vi[k];
        u2[i] = (double) s;
        double f = 1.0 / sqrt(1.0 - u2[i]);
        for (size_t k = 0; k < r; k++) vi[k] *= f;
    }
    return 0;
}
