/*
 * paths.cuh -- the GPU paths beside the product one (cor.cu): pairwise
 * complete observations (pairwise.cu) and Kendall's tau-b (kendall.cu).
 *
 * cor.cu uploads the data and hands over its columns on the device; a path
 * plans slabs of the result, fills each slab buffer in the result's final
 * layout (matrix columns, or the packed lower triangle of a 'dist') and runs
 * them through the output pipeline.
 */
#ifndef GPUCOR_PATHS_CUH
#define GPUCOR_PATHS_CUH

#include "pipeline.cuh"
#include "prep.cuh"

/* x is m x v and y m x q on the device, column-major doubles, NaN for NA;
 * y == x (and q == v) when symmetric.  The variables are the columns. */
typedef struct {
    double *x, *y;
    size_t m, v, q;
    int symmetric;
    int dist;                 /* packed 'dist' of v items instead of v x q */
    int transform;            /* dist: 0 1 - r, 1 1 - |r| */
    int method;               /* COR_PEARSON / COR_SPEARMAN / COR_KENDALL */
    int cosine;               /* uncentred (a distance) */
    int pairwise;             /* every pair over the rows both observe */
    gpu_host *host;
    gpucor_ctx *gc;
    double *out;              /* the R result */
    int sd0;                  /* out: a pair met stats' zero-sd rule */
    unsigned char *flags_out; /* out, Kendall outside pairwise: v then q */
} dev_problem;

template <typename T> int gpucor_pairwise(dev_problem *d, char *msg, size_t msgcap);
template <typename T> int gpucor_kendall(dev_problem *d, char *msg, size_t msgcap);

/* Slabs of result columns [j0, j1): for a matrix every row i of columns j,
 * for a dist the rows i > j.  per_col: device bytes a slab column needs
 * besides the output (the pipeline's); used: bytes already allocated;
 * max_w: the widest slab the path's launch can take. */
typedef struct { size_t w, nslabs, ncols; } slab_plan;
int gpucor_plan_slabs(const dev_problem *d, size_t elt, size_t per_col,
                      size_t used, size_t max_w, slab_plan *pl, char *msg,
                      size_t msgcap);
void gpucor_slab_range(const dev_problem *d, const slab_plan *pl, size_t s,
                       size_t *j0, size_t *j1, slab_info *info);

/* Where pair (i, j) goes in the buffer of the slab starting at column j0;
 * -1 when it is not stored (a dist keeps i > j only). */
__device__ inline long long slab_pos(int dist, size_t v, size_t j0, size_t i,
                                     size_t j)
{
    if (!dist) return (long long) (i + (j - j0) * v);
    if (i <= j) return -1;
    return (long long) (dist_offset(v, j) - dist_offset(v, j0) + (i - j - 1));
}

/* Stores r (NA when na) with stats' clamp to [-1, 1], as a distance for a
 * dist.  NA is written as such: arithmetic on NaN does not keep R's
 * payload, while a NaN from the data (Inf - Inf) stays NaN as in stats. */
template <typename T>
__device__ inline void put_value(T *out, const dev_problem &d, size_t j0,
                                 size_t i, size_t j, T r, bool na)
{
    long long k = slab_pos(d.dist, d.v, j0, i, j);
    if (k < 0) return;
    if (na) { out[k] = na_value<T>(); return; }
    r = r >= (T) 1 ? (T) 1 : (r <= (T) -1 ? (T) -1 : r);
    if (d.dist) r = d.transform ? (T) 1 - fabs(r) : (T) 1 - r;
    out[k] = r;
}

/* Sum over a block of whole warps; sh holds one value per warp.  Every
 * thread gets the sum. */
template <typename R>
__device__ inline R block_sum(R v, R *sh)
{
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) sh[warp] = v;
    __syncthreads();
    R s = 0;
    for (int w = 0; w < (int) (blockDim.x >> 5); w++) s += sh[w];
    __syncthreads();
    return s;
}

#endif
