/*
 * host_mem.c -- the host memory that results land in.
 *
 * A dense result is fresh memory, so writing it costs first-touch page
 * faults: on the GPU machine (2026-11-22, 16 threads) fresh memory takes
 * 20.9 GB/s on 4 KiB pages and 33.4 GB/s on 2 MiB huge pages, and one
 * thread only ~2 GB/s.  So the sinks advise huge pages for the result
 * (transparent huge pages in "madvise" mode, as there, need it; harmless
 * where they are "always" or absent), and the GPU's commits split every
 * range over threads in chunks that are whole huge pages of the
 * destination, so that no two threads fault the same page.
 */
#include <string.h>
#include <stdint.h>
#include <math.h>
#if defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#endif
#include "engine.h"

#define HUGE_PAGE ((uintptr_t) 2 << 20)

void gc_advise_huge(void *p, size_t bytes)
{
#ifdef MADV_HUGEPAGE
    uintptr_t lo = ((uintptr_t) p + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
    uintptr_t hi = ((uintptr_t) p + bytes) & ~(HUGE_PAGE - 1);
    if (hi > lo) (void) madvise((void *) lo, hi - lo, MADV_HUGEPAGE);
#else
    (void) p; (void) bytes;
#endif
}

static void copy_range(double *dst, const void *src, size_t lo, size_t hi,
                       int is_float, double scale)
{
    if (!is_float) {
        memcpy(dst + lo, (const double *) src + lo, (hi - lo) * sizeof(double));
        return;
    }
    /* the float NA marker becomes R's NA, other NaNs stay NaN */
    const float *s = (const float *) src;
    for (size_t k = lo; k < hi; k++)
        dst[k] = gc_float_is_na(s[k]) ? gpucor_na_real : (double) s[k] * scale;
}

/* Values lo .. hi - 1 of a range that starts at element 'offset' of a
 * p-row matrix: read from src (src NULL: from out itself), times
 * mr[i] * mc[j] -- s_i s_j first, so that (i, j) and (j, i) get the same
 * product -- and written in the same pass (a copy and then a second pass
 * over the chunk cost gpu_cov a third of gpu_cor's time on the H100). */
static void mul_range(double *out, const void *src, size_t offset, size_t lo, size_t hi,
                      int is_float, double scale, size_t p, const double *mr,
                      const double *mc, int round_int)
{
    double *d = out + offset;
    const double *sd = src ? (const double *) src : d;
    const float *sf = (const float *) src;
    size_t g = offset + lo, i = g % p, j = g / p;
    for (size_t k = lo; k < hi; k++) {
        double v = is_float ? (gc_float_is_na(sf[k]) ? gpucor_na_real : (double) sf[k] * scale)
                            : sd[k];
        v *= mr[i] * mc[j];
        d[k] = round_int ? nearbyint(v) : v;
        if (++i == p) { i = 0; j++; }
    }
}

/* The values into out[offset .. offset + count - 1], copied (mr NULL) or
 * multiplied (mul_range), split over nthreads in chunks of whole huge pages
 * of the destination, so that no two threads fault the same page. */
static void copy_out(double *out, const void *src, size_t offset, size_t count,
                     int is_float, double scale, size_t p, const double *mr,
                     const double *mc, int round_int, int nthreads)
{
    if (!count) return;
    const size_t per = HUGE_PAGE / sizeof(double);
    double *dst = out + offset;
    /* chunk c covers the destination's huge page c (the first and the last
     * partly) */
    size_t head = (size_t) (((uintptr_t) dst + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE
                            - (uintptr_t) dst) / sizeof(double);
    if (head > count) head = count;
    size_t nchunks = 1 + (count - head + per - 1) / per;
    if (nthreads < 1) nthreads = 1;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nthreads) schedule(static) if (nchunks > 2)
#endif
    for (size_t c = 0; c < nchunks; c++) {
        size_t lo = c == 0 ? 0 : head + (c - 1) * per;
        size_t hi = c == 0 ? head : lo + per;
        if (hi > count) hi = count;
        if (lo >= hi) continue;
        if (mr) mul_range(out, src, offset, lo, hi, is_float, scale, p, mr, mc, round_int);
        else copy_range(dst, src, lo, hi, is_float, scale);
    }
}

void gc_copy_out(double *dst, const void *src, size_t count, int is_float,
                 double scale, int nthreads)
{
    copy_out(dst, src, 0, count, is_float, scale, 0, NULL, NULL, 0, nthreads);
}

void gc_copy_out_mul(double *out, const void *src, size_t offset, size_t count,
                     int is_float, double scale, size_t p, const double *mr,
                     const double *mc, int round_int, int nthreads)
{
    if (p) copy_out(out, src, offset, count, is_float, scale, p, mr, mc, round_int, nthreads);
}

void gc_mirror(double *a, size_t n, int lower, int nthreads)
{
    const size_t T = 64, nb = (n + T - 1) / T;
    (void) nthreads;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nthreads > 0 ? nthreads : 1) schedule(dynamic, 1)
#endif
    for (size_t bj = 0; bj < nb; bj++)
        for (size_t bi = bj; bi < nb; bi++)
            for (size_t j = bj * T; j < (bj + 1) * T && j < n; j++)
                for (size_t i = bi * T > j + 1 ? bi * T : j + 1; i < (bi + 1) * T && i < n; i++) {
                    if (lower) a[i + j * n] = a[j + i * n];
                    else a[j + i * n] = a[i + j * n];
                }
}

void gc_dist_expand(const double *d, size_t n, double diag, double *out, int nthreads)
{
    (void) nthreads;
    /* the columns' lower parts (first touched by every thread), then the
     * upper parts mirrored */
#ifdef _OPENMP
#pragma omp parallel for num_threads(nthreads > 0 ? nthreads : 1) schedule(dynamic, 16)
#endif
    for (size_t j = 0; j < n; j++) {
        out[j + j * n] = diag;
        if (j + 1 < n)
            memcpy(out + j + 1 + j * n, d + dist_offset(n, j), (n - j - 1) * sizeof *out);
    }
    gc_mirror(out, n, 0, nthreads);
}

int gc_copy_columns(double *dst, size_t ld, const double *src, size_t lds, size_t nrow,
                    size_t ncol, int nthreads, const gc_host *host)
{
    size_t per = GC_COPY_CHUNK / sizeof(double) / (nrow ? nrow : 1);
    if (per < 1) per = 1;
    for (size_t j0 = 0; j0 < ncol; j0 += per) {
        size_t j1 = j0 + per < ncol ? j0 + per : ncol;
        if (gc_host_interrupted(host)) return GPUCOR_ERR_INTERRUPT;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nthreads) schedule(static) if (j1 - j0 > 1)
#endif
        for (size_t j = j0; j < j1; j++) memcpy(dst + j * ld, src + j * lds, nrow * sizeof *dst);
    }
    (void) nthreads;
    return GPUCOR_OK;
}
