/*
 * rank.cu -- Spearman's ranking on the GPU.
 *
 * Columns are sorted with CUB's segmented sort (keys = values, payload =
 * row), in chunks of columns so no sort sees more than 2^27 items.  Then one
 * thread per element finds its tie group in the sorted column by two binary
 * searches, lower and upper bound, and writes the mid-rank (lo + 1 + hi) / 2
 * to the element's row.  That is O(log m) per element with no scan and no
 * limit on m or on the size of tie groups.
 *
 * The keys are not the doubles but order-preserving 64-bit integers, with
 * every NaN (R's NA too) the largest key: CUB sorts small segments with a
 * comparison sort, where NaN would land anywhere; as integers NaN sorts
 * after +Inf in every path.  NaNs keep NaN as rank.
 */
#include <cub/cub.cuh>
#include <math.h>
#include "prep.cuh"

#define NAN_KEY 0xffffffffffffffffULL

/* -0 ties +0; negative values have every bit flipped, the others the sign
 * bit set, so unsigned order is the doubles' order. */
__device__ static inline unsigned long long order_key(double v)
{
    if (isnan(v)) return NAN_KEY;
    if (v == 0.0) v = 0.0;
    unsigned long long b = (unsigned long long) __double_as_longlong(v);
    return (b >> 63) ? ~b : (b | 0x8000000000000000ULL);
}

__global__ static void make_keys(const double *a, size_t len,
                                 unsigned long long *key, int *row, size_t m)
{
    size_t k = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (k >= len) return;
    key[k] = order_key(a[k]);
    row[k] = (int) (k % m);
}

__global__ static void seg_offsets(int *off, size_t nseg, size_t m)
{
    size_t k = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (k <= nseg) off[k] = (int) (k * m);
}

__device__ static size_t first_nan(const unsigned long long *c, size_t m)
{
    size_t lo = 0, hi = m;          /* NaNs are a suffix */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (c[mid] == NAN_KEY) hi = mid; else lo = mid + 1;
    }
    return lo;
}

__global__ static void midranks(const unsigned long long *sorted,
                                const int *row, double *out, size_t m,
                                size_t ncols)
{
    size_t k = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (k >= m * ncols) return;
    size_t col = k / m;
    const unsigned long long *c = sorted + col * m;
    unsigned long long v = sorted[k];
    double r;
    if (v == NAN_KEY) {
        r = __longlong_as_double(0x7ff8000000000000LL);
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

/* Tie groups of each sorted column, for re-ranking on subsets: the group of
 * sorted position t spans [gs[t], ge[t]); obs[c] = non-NaN values. */
__global__ static void tie_groups(const unsigned long long *sorted, size_t m,
                                  size_t ncols, int *gs, int *ge, int *obs)
{
    size_t k = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (k >= m * ncols) return;
    size_t col = k / m, t = k % m;
    const unsigned long long *c = sorted + col * m;
    unsigned long long v = sorted[k];
    if (v == NAN_KEY) {
        if (t == 0) obs[col] = 0;
        gs[k] = ge[k] = (int) t;
        return;
    }
    if (t == m - 1 || c[t + 1] == NAN_KEY) obs[col] = (int) (t + 1);
    size_t nv = first_nan(c, m), lo = 0, hi = nv;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (c[mid] < v) lo = mid + 1; else hi = mid;
    }
    gs[k] = (int) lo;
    hi = nv;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (c[mid] <= v) lo = mid + 1; else hi = mid;
    }
    ge[k] = (int) lo;
}

/* Sorts the v columns of a (m rows) in chunks of at most 2^27 values.  With
 * ord == NULL the mid-ranks replace the values; otherwise a keeps its values
 * and ord / gs / ge / obs receive the sorted rows and the tie groups
 * (tie_groups). */
int gpucor_sort_columns(double *a, size_t m, size_t v, int *ord, int *gs,
                        int *ge, int *obs, cudaStream_t st, char *msg,
                        size_t msgcap)
{
    int status = GPUCOR_OK;
    unsigned long long *keys_in = NULL, *keys = NULL;
    int *rows_in = NULL, *rows_out = NULL, *off = NULL;
    void *temp = NULL;
    size_t temp_bytes = 0;
    if (m == 0 || v == 0) return GPUCOR_OK;
    /* about 40 bytes of keys, rows and sort workspace per value */
    size_t chunk = ((size_t) 1 << 27) / m;
    if (chunk < 1) chunk = 1;
    if (chunk > v) chunk = v;
    size_t len = chunk * m;
    DALLOC(keys_in, len * sizeof(*keys_in), "rank keys");
    DALLOC(keys, len * sizeof(*keys), "rank keys");
    DALLOC(rows_in, len * sizeof(int), "rank rows");
    if (!ord) DALLOC(rows_out, len * sizeof(int), "rank rows");
    DALLOC(off, (chunk + 1) * sizeof(int), "rank offsets");
    CU(cub::DeviceSegmentedSort::SortPairs(NULL, temp_bytes, keys_in, keys, rows_in,
                                           ord ? ord : rows_out, (int) len,
                                           (int) chunk, off, off + 1, st));
    DALLOC(temp, temp_bytes, "rank sort workspace");
    for (size_t c0 = 0; c0 < v; c0 += chunk) {
        size_t nc = v - c0 < chunk ? v - c0 : chunk, n = nc * m;
        double *col = a + c0 * m;
        int *out_rows = ord ? ord + c0 * m : rows_out;
        unsigned blocks = (unsigned) ((n + 255) / 256);
        make_keys<<<blocks, 256, 0, st>>>(col, n, keys_in, rows_in, m);
        LAUNCHED("make_keys");
        seg_offsets<<<(unsigned) ((nc + 256) / 256), 256, 0, st>>>(off, nc, m);
        LAUNCHED("seg_offsets");
        size_t tb = temp_bytes;
        CU(cub::DeviceSegmentedSort::SortPairs(temp, tb, keys_in, keys, rows_in,
                                               out_rows, (int) n, (int) nc,
                                               off, off + 1, st));
        if (ord) {
            tie_groups<<<blocks, 256, 0, st>>>(keys, m, nc, gs + c0 * m,
                                               ge + c0 * m, obs + c0);
            LAUNCHED("tie_groups");
        } else {
            midranks<<<blocks, 256, 0, st>>>(keys, rows_out, col, m, nc);
            LAUNCHED("midranks");
        }
    }
    CU(cudaStreamSynchronize(st));

cleanup:
    cudaStreamSynchronize(st);
    cudaFree(keys_in);
    cudaFree(keys);
    cudaFree(rows_in);
    cudaFree(rows_out);
    cudaFree(off);
    cudaFree(temp);
    return status;
}

int gpucor_rank_columns(double *a, size_t m, size_t v, cudaStream_t st,
                        char *msg, size_t msgcap)
{
    return gpucor_sort_columns(a, m, v, NULL, NULL, NULL, NULL, st, msg, msgcap);
}
