/*
 * kendall.c -- Kendall's tau-b for one pair of columns in O(n log n)
 * (Knight 1966): sort the pairs by (x, y), count the ties in x and the
 * joint ties, then count the discordant pairs as the exchanges a stable
 * merge sort of y needs.  With n0 = n(n-1)/2, n1 / n2 the pairs tied in
 * x / y and n3 those tied in both,
 *   tau_b = (n0 - n1 - n2 + n3 - 2 * discordant) / sqrt((n0 - n1)(n0 - n2)),
 * the same number stats' O(n^2) sum of sign products gives.  All counts are
 * exact 64-bit integers.
 *
 * Inputs are dense integer ranks (cpu_dense_rank: ties equal, NA = -1), so
 * the sort by (x, y) is two linear counting sorts.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "cpu.h"

/* Stable counting sort of (key, val) pairs on key in [0, n). */
static void counting_sort(const int *key, const int *val, size_t m, size_t n,
                          int *count, int *okey, int *oval)
{
    memset(count, 0, (n + 1) * sizeof(int));
    for (size_t k = 0; k < m; k++) count[key[k] + 1]++;
    for (size_t v = 0; v < n; v++) count[v + 1] += count[v];
    for (size_t k = 0; k < m; k++) {
        int pos = count[key[k]]++;
        okey[pos] = key[k];
        oval[pos] = val[k];
    }
}

/* Sorts a[0..m-1] ascending, returns the number of exchanges (pairs i < j
 * with a[i] > a[j]); equal values are not exchanged. */
static int64_t merge_count(int *a, int *tmp, size_t m)
{
    int64_t swaps = 0;
    int *src = a, *dst = tmp;
    for (size_t w = 1; w < m; w *= 2) {
        for (size_t lo = 0; lo < m; lo += 2 * w) {
            size_t mid = lo + w < m ? lo + w : m;
            size_t hi = lo + 2 * w < m ? lo + 2 * w : m;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) {
                if (src[j] < src[i]) {
                    swaps += (int64_t) (mid - i);
                    dst[k++] = src[j++];
                } else
                    dst[k++] = src[i++];
            }
            while (i < mid) dst[k++] = src[i++];
            while (j < hi) dst[k++] = src[j++];
        }
        int *t = src; src = dst; dst = t;
    }
    if (src != a) memcpy(a, src, m * sizeof(int));
    return swaps;
}

static int64_t tied_pairs(const int *a, size_t m)
{
    int64_t t = 0;
    size_t i = 0;
    while (i < m) {
        size_t j = i + 1;
        while (j < m && a[j] == a[i]) j++;
        t += (int64_t) (j - i) * (int64_t) (j - i - 1) / 2;
        i = j;
    }
    return t;
}

/* work: 6n + 2 ints */
double cpu_kendall_dense(const int *xr, const int *yr, size_t n, int *work,
                         int *sd0)
{
    int *xs = work, *ys = work + n, *x2 = work + 2 * n, *y2 = work + 3 * n,
        *tmp = work + 4 * n, *count = work + 5 * n;
    size_t m = 0;
    for (size_t k = 0; k < n; k++)
        if (xr[k] >= 0 && yr[k] >= 0) {
            xs[m] = xr[k];
            ys[m] = yr[k];
            m++;
        }
    if (m < 2) return gpucor_na_real;
    /* sort by (x, y): by y, then stably by x */
    counting_sort(ys, xs, m, n, count, y2, x2);
    counting_sort(x2, y2, m, n, count, xs, ys);

    int64_t n0 = (int64_t) m * (int64_t) (m - 1) / 2;
    int64_t n1 = 0, n3 = 0;
    size_t i = 0;
    while (i < m) {
        size_t j = i + 1;
        while (j < m && xs[j] == xs[i]) j++;
        n1 += (int64_t) (j - i) * (int64_t) (j - i - 1) / 2;
        n3 += tied_pairs(ys + i, j - i);   /* ys sorted within the x run */
        i = j;
    }
    int64_t disc = merge_count(ys, tmp, m);
    int64_t n2 = tied_pairs(ys, m);        /* ys now fully sorted */
    if (n0 == n1 || n0 == n2) {
        *sd0 = 1;
        return gpucor_na_real;
    }
    double s = (double) (n0 - n1 - n2 + n3 - 2 * disc);
    double r = s / (sqrt((double) (n0 - n1)) * sqrt((double) (n0 - n2)));
    return r >= 1.0 ? 1.0 : (r <= -1.0 ? -1.0 : r);
}
