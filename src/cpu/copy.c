/*
 * copy.c -- the host end of the GPU pipeline: move a slab from pinned
 * staging memory into the R result.  The R result is fresh memory, so the
 * cost is dominated by first-touch page faults (about 2 GB/s for one thread
 * on the GPU machine); splitting the slab over threads takes those faults in
 * parallel.  Chunks are page multiples so no two threads fault the same page.
 */
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include <stdint.h>
#include "cpu.h"
#include "../cuda/engine.h"   /* GPUCOR_FLOAT_NA_BITS */

void cpu_copy_out(double *dst, const void *src, size_t count, int is_float,
                  double scale, int nthreads)
{
    const size_t chunk = 1u << 16;   /* 512 KiB of doubles */
    size_t nchunks = (count + chunk - 1) / chunk;
    if (nthreads < 1) nthreads = 1;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nthreads) schedule(static) if (nchunks > 1)
#endif
    for (size_t c = 0; c < nchunks; c++) {
        size_t lo = c * chunk, hi = lo + chunk < count ? lo + chunk : count;
        if (is_float) {
            /* the float NA marker becomes R's NA, other NaNs stay NaN */
            const float *s = (const float *) src;
            for (size_t k = lo; k < hi; k++) {
                uint32_t bits;
                memcpy(&bits, s + k, sizeof bits);
                dst[k] = bits == GPUCOR_FLOAT_NA_BITS ? gpucor_na_real
                                                      : (double) s[k] * scale;
            }
        } else {
            memcpy(dst + lo, (const double *) src + lo, (hi - lo) * sizeof(double));
        }
    }
}
