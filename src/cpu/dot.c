/*
 * dot.c -- dot products between two blocks of standardized columns: the
 * matrix-shaped part of Pearson, Spearman and cosine on the CPU.
 *
 * Columns are contiguous and zero padded to a multiple of 4, so the kernel
 * runs over k four at a time with no tail.  A 4 x 2 register block of
 * vector accumulators (8 accumulators + 6 loads fit the 16 AVX2 registers)
 * reuses each loaded A vector twice and each B vector four times.  k is cut
 * into chunks of KC rows so the B block of a chunk (nj x KC doubles, 256 KiB
 * at nj = 128) stays in L2 while every A quartet sweeps across it.
 *
 * We measured this against R's BLAS (dsyrk through crossprod()) in
 * bench/cpu.R: with the reference BLAS Debian's R uses by default it is
 * several times faster.
 */
#include "cpu.h"
#include "simd.h"

#define KC 256

GPUCOR_MULTIVERSION
void cpu_dot_tile(const double *A, const double *B, size_t ld, size_t m,
                  size_t ni, size_t nj, double *tile)
{
    size_t mpad = (m + 3) & ~(size_t) 3;
    for (size_t t = 0; t < ni * nj; t++) tile[t] = 0.0;
    for (size_t k0 = 0; k0 < mpad; k0 += KC) {
        size_t k1 = k0 + KC < mpad ? k0 + KC : mpad;
        size_t a = 0;
        for (; a + 4 <= ni; a += 4) {
            const double *a0 = A + a * ld, *a1 = a0 + ld, *a2 = a1 + ld,
                         *a3 = a2 + ld;
            size_t b = 0;
            for (; b + 2 <= nj; b += 2) {
                const double *b0 = B + b * ld, *b1 = b0 + ld;
                v4d c00 = {0}, c10 = {0}, c20 = {0}, c30 = {0};
                v4d c01 = {0}, c11 = {0}, c21 = {0}, c31 = {0};
                for (size_t k = k0; k < k1; k += 4) {
                    v4d x0, x1, x2, x3, y0, y1;
                    V4_LOAD(x0, a0 + k); V4_LOAD(x1, a1 + k);
                    V4_LOAD(x2, a2 + k); V4_LOAD(x3, a3 + k);
                    V4_LOAD(y0, b0 + k); V4_LOAD(y1, b1 + k);
                    c00 += x0 * y0; c10 += x1 * y0; c20 += x2 * y0; c30 += x3 * y0;
                    c01 += x0 * y1; c11 += x1 * y1; c21 += x2 * y1; c31 += x3 * y1;
                }
                double *t0 = tile + a + b * ni, *t1 = t0 + ni;
                t0[0] += V4_SUM(c00); t0[1] += V4_SUM(c10);
                t0[2] += V4_SUM(c20); t0[3] += V4_SUM(c30);
                t1[0] += V4_SUM(c01); t1[1] += V4_SUM(c11);
                t1[2] += V4_SUM(c21); t1[3] += V4_SUM(c31);
            }
            for (; b < nj; b++) {
                const double *b0 = B + b * ld;
                v4d c0 = {0}, c1 = {0}, c2 = {0}, c3 = {0};
                for (size_t k = k0; k < k1; k += 4) {
                    v4d x0, x1, x2, x3, y0;
                    V4_LOAD(y0, b0 + k);
                    V4_LOAD(x0, a0 + k); V4_LOAD(x1, a1 + k);
                    V4_LOAD(x2, a2 + k); V4_LOAD(x3, a3 + k);
                    c0 += x0 * y0; c1 += x1 * y0; c2 += x2 * y0; c3 += x3 * y0;
                }
                double *t0 = tile + a + b * ni;
                t0[0] += V4_SUM(c0); t0[1] += V4_SUM(c1);
                t0[2] += V4_SUM(c2); t0[3] += V4_SUM(c3);
            }
        }
        for (; a < ni; a++) {
            const double *a0 = A + a * ld;
            for (size_t b = 0; b < nj; b++) {
                const double *b0 = B + b * ld;
                v4d c = {0};
                for (size_t k = k0; k < k1; k += 4) {
                    v4d x0, y0;
                    V4_LOAD(x0, a0 + k); V4_LOAD(y0, b0 + k);
                    c += x0 * y0;
                }
                tile[a + b * ni] += V4_SUM(c);
            }
        }
    }
}
