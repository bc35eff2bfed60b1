/*
 * layout.h -- where a pair goes in a packed 'dist' (stats' order: the
 * columns of the strict lower triangle one after the other, column j
 * holding rows j + 1 .. n - 1).  The one definition, for host and device.
 */
#ifndef GPUCOR_LAYOUT_H
#define GPUCOR_LAYOUT_H

#include <stddef.h>

#ifdef __CUDACC__
#define GC_HOST_DEVICE __host__ __device__
#else
#define GC_HOST_DEVICE
#endif

/* Start of column j of a 'dist' of n items. */
GC_HOST_DEVICE static inline size_t dist_offset(size_t n, size_t j)
{
    return j * n - j * (j + 1) / 2;
}

/* Pair (i, j), i > j, of a 'dist' of n items. */
GC_HOST_DEVICE static inline size_t dist_index(size_t n, size_t i, size_t j)
{
    return dist_offset(n, j) + (i - j - 1);
}

/* Length of a 'dist' of n items. */
GC_HOST_DEVICE static inline size_t dist_len(size_t n)
{
    return n > 1 ? n * (n - 1) / 2 : 0;
}

#endif
