/*
 * rank.cu -- Spearman's ranking on the GPU.
 *
 * Columns are sorted with CUB's segmented sort (keys = values, payload =
 * row), in chunks of columns so no sort sees more than 2^30 items.  Then one
 * thread per element finds its tie group in the sorted column by two binary
 * searches, lower and upper bound, and writes the mid-rank (lo + 1 + hi) / 2
 * to the element's row.  That is O(log m) per element with no scan and no
 * limit on m or on the size of tie groups.  NaN (R's NA too) is made one
 * canonical NaN first, so the radix sort puts every NaN after +Inf; NaNs
 * keep NaN as rank.
 */
#include <cub/cub.cuh>
#include <math.h>
#include "prep.cuh"

__global__ static void canonicalize(double *a, size_t len, int *row, size_t m)
{
    size_t k = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (k >= len) return;
    double v = a[k];
    if (isnan(v)) v = __longlong_as_double(0x7ff8000000000000LL);
    else if (v == 0.0) v = 0.0;   /* -0 and +0 tie */
    a[k] = v;
    row[k] = (int) (k % m);
}

__global__ static void seg_offsets(int *off, size_t nseg, size_t m)
{
    size_t k = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (k <= nseg) off[k] = (int) (k * m);
}

__device__ static size_t first_nan(const double *c, size_t m)
{
    size_t lo = 0, hi = m;          /* NaNs are a suffix */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (isnan(c[mid])) hi = mid; else lo = mid + 1;
    }
    return lo;
}

__global__ static void midranks(const double *sorted, const int *row,
                                double *out, size_t m, size_t ncols)
{
    size_t k = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (k >= m * ncols) return;
    size_t col = k / m;
    const double *c = sorted + col * m;
    double v = sorted[k];
    double r;
    if (isnan(v)) {
        r = v;
    } else {
        size_t nv = first_nan(c, m);
        size_t lo = 0, hi = nv;
        while (lo < hi) {             /* first index with c >= v */
            size_t mid = (lo + hi) / 2;
            if (c[mid] < v) lo = mid + 1; else hi = mid;
        }
        size_t a = lo;
        hi = nv;
        while (lo < hi) {             /* first index with c > v */
            size_t mid = (lo + hi) / 2;
            if (c[mid] <= v) lo = mid + 1; else hi = mid;
        }
        r = ((double) (a + 1) + (double) lo) / 2.0;
    }
    out[col * m + row[k]] = r;
}

int gpucor_rank_columns(double *a, size_t m, size_t v, cudaStream_t st,
                        char *msg, size_t msgcap)
{
    int status = GPUCOR_OK;
    double *keys = NULL;
    int *rows_in = NULL, *rows_out = NULL, *off = NULL;
    void *temp = NULL;
    size_t temp_bytes = 0;
    if (m == 0 || v == 0) return GPUCOR_OK;
    size_t chunk = ((size_t) 1 << 30) / m;
    if (chunk < 1) chunk = 1;
    if (chunk > v) chunk = v;
    size_t len = chunk * m;
    DALLOC(keys, len * sizeof(double), "rank keys");
    DALLOC(rows_in, len * sizeof(int), "rank rows");
    DALLOC(rows_out, len * sizeof(int), "rank rows");
    DALLOC(off, (chunk + 1) * sizeof(int), "rank offsets");
    CU(cub::DeviceSegmentedSort::SortPairs(NULL, temp_bytes, a, keys, rows_in,
                                           rows_out, (int) len, (int) chunk,
                                           off, off + 1, st));
    DALLOC(temp, temp_bytes, "rank sort workspace");
    for (size_t c0 = 0; c0 < v; c0 += chunk) {
        size_t nc = v - c0 < chunk ? v - c0 : chunk, n = nc * m;
        double *col = a + c0 * m;
        unsigned blocks = (unsigned) ((n + 255) / 256);
        canonicalize<<<blocks, 256, 0, st>>>(col, n, rows_in, m);
        LAUNCHED("canonicalize");
        seg_offsets<<<(unsigned) ((nc + 256) / 256), 256, 0, st>>>(off, nc, m);
        LAUNCHED("seg_offsets");
        size_t tb = temp_bytes;
        CU(cub::DeviceSegmentedSort::SortPairs(temp, tb, col, keys, rows_in,
                                               rows_out, (int) n, (int) nc,
                                               off, off + 1, st));
        midranks<<<blocks, 256, 0, st>>>(keys, rows_out, col, m, nc);
        LAUNCHED("midranks");
    }
    CU(cudaStreamSynchronize(st));

cleanup:
    cudaStreamSynchronize(st);
    cudaFree(keys);
    cudaFree(rows_in);
    cudaFree(rows_out);
    cudaFree(off);
    cudaFree(temp);
    return status;
}
