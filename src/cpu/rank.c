/*
 * rank.c -- ordering and ranking of one column.
 *
 * Mid-ranks match rank(x, na.last = "keep", ties.method = "average"): the
 * ranks of a tie group are the mean of the positions it spans, NaN/NA stay
 * NaN and take no position.  A merge sort is used because it is stable and
 * O(n log n) on every input (columns are often heavily tied).
 */
#include <math.h>
#include <string.h>
#include "cpu.h"

/* NaN sorts last: "a before b" is a < b, or b NaN while a is not. */
static inline int before(double a, double b)
{
    return a < b || (isnan(b) && !isnan(a));
}

void cpu_order(const double *x, size_t *idx, size_t n, size_t *tmp)
{
    for (size_t i = 0; i < n; i++) idx[i] = i;
    /* Bottom-up merge sort: runs of 16 by insertion, then merges. */
    const size_t run = 16;
    for (size_t lo = 0; lo < n; lo += run) {
        size_t hi = lo + run < n ? lo + run : n;
        for (size_t i = lo + 1; i < hi; i++) {
            size_t v = idx[i], j = i;
            while (j > lo && before(x[v], x[idx[j - 1]])) {
                idx[j] = idx[j - 1];
                j--;
            }
            idx[j] = v;
        }
    }
    size_t *src = idx, *dst = tmp;
    for (size_t w = run; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n;
            size_t hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t a = lo, b = mid, k = lo;
            while (a < mid && b < hi)
                dst[k++] = before(x[src[b]], x[src[a]]) ? src[b++] : src[a++];
            while (a < mid) dst[k++] = src[a++];
            while (b < hi) dst[k++] = src[b++];
        }
        size_t *t = src; src = dst; dst = t;
    }
    if (src != idx) memcpy(idx, src, n * sizeof(size_t));
}

void cpu_rank(const double *x, size_t n, double *rank, size_t *idx)
{
    /* idx holds 2n entries: the order, then merge workspace. */
    cpu_order(x, idx, n, idx + n);
    size_t i = 0;
    while (i < n && !isnan(x[idx[i]])) {
        size_t j = i + 1;
        while (j < n && x[idx[j]] == x[idx[i]]) j++;
        /* positions i+1 .. j (1-based) share the rank (i + 1 + j) / 2 */
        double r = ((double) (i + 1) + (double) j) / 2.0;
        for (size_t k = i; k < j; k++) rank[idx[k]] = r;
        i = j;
    }
    for (; i < n; i++) rank[idx[i]] = x[idx[i]]; /* NA/NaN kept as is */
}

void cpu_dense_rank(const double *x, size_t n, int *out, size_t *idx,
                    size_t *tmp)
{
    cpu_order(x, idx, n, tmp);
    int r = -1;
    for (size_t i = 0; i < n; i++) {
        double v = x[idx[i]];
        if (isnan(v)) { out[idx[i]] = -1; continue; }
        if (i == 0 || v != x[idx[i - 1]]) r++;
        out[idx[i]] = r;
    }
}
