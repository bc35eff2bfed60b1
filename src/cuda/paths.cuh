/*
 * paths.cuh -- the GPU paths beside the product one (cor.cu): pairwise
 * complete observations (pairwise.cu) and Kendall's tau-b (kendall.cu).
 *
 * cor.cu uploads the data and hands over its columns on the device; a path
 * plans panels of result columns, fills each panel with its canonical tile
 * (stats' rules applied) and runs them through the sink (run.cuh).
 */
#ifndef GPUCOR_PATHS_CUH
#define GPUCOR_PATHS_CUH

#include "run.cuh"

/* x is m x v and y m x q on the device, column-major doubles, NaN for NA;
 * y == x (and q == v) when symmetric.  The variables are the columns. */
typedef struct {
    double *x, *y;
    size_t m, v, q;
    int symmetric;
    int dist;                 /* stats' rules of a distance between v items */
    int tri;                  /* the pairs i > j only (a 'dist' in memory, a
                                 selection; a file takes whole columns) */
    int method;               /* COR_PEARSON / COR_SPEARMAN / COR_KENDALL */
    int cosine;               /* uncentred (a distance) */
    int pairwise;             /* every pair over the rows both observe */
    gc_host *host;
    gpucor_ctx *gc;
    const gc_sink *sink;
    int sd0;                  /* out: a pair met stats' zero-sd rule */
    unsigned char *flags_out; /* out, Kendall outside pairwise: v then q */
} dev_problem;

template <typename T> int gpucor_pairwise(dev_problem *d, char *msg, size_t msgcap);
template <typename T> int gpucor_kendall(dev_problem *d, char *msg, size_t msgcap);

/* The panels of a path: result columns [j0, j1), each with the rows i >= i0
 * (i0 = j0 for a triangle: its pairs are i > j; 0 otherwise), so a panel
 * buffer holds (v - i0) x (j1 - j0) values.  per_col: device bytes a panel
 * column needs besides its values; used: bytes already allocated; max_w:
 * the widest panel the path's launch can take; split: each value comes
 * from its own pair's arithmetic, whatever the panel (gc_plan.split). */
int gpucor_plan_panels(const dev_problem *d, size_t elt, size_t per_col,
                       size_t used, size_t max_w, int split, gc_plan *pl,
                       char *msg, size_t msgcap);
__host__ __device__ inline size_t panel_i0(const dev_problem &d, size_t j0)
{
    return d.tri ? j0 : 0;
}
/* The canonical tile of the panel [j0, j1) in val. */
void gpucor_panel_tile(const dev_problem *d, size_t j0, size_t j1,
                       const void *val, int is_float, gc_tile *t);

/* Whether the sink keeps pair (i, j) (a triangle keeps i > j only). */
__device__ inline bool kept(const dev_problem &d, size_t i, size_t j)
{
    return !d.tri || i > j;
}

/* Whether pair (i, j) counts toward the zero-sd warning: every pair of a
 * matrix; of a distance, each pair once (i > j), whatever the sink keeps. */
__device__ inline bool counted(const dev_problem &d, size_t i, size_t j)
{
    return !d.dist || i > j;
}

/* Stores r (NA when na) with stats' clamp to [-1, 1] into the panel of
 * columns from j0.  NA is written as such: arithmetic on NaN does not keep
 * R's payload, while a NaN from the data (Inf - Inf) stays NaN as in
 * stats. */
template <typename T>
__device__ inline void put_value(T *panel, const dev_problem &d, size_t j0,
                                 size_t i, size_t j, T r, bool na)
{
    if (!kept(d, i, j)) return;
    size_t i0 = panel_i0(d, j0);
    T *e = panel + (i - i0) + (j - j0) * (d.v - i0);
    if (na) { *e = na_value<T>(); return; }
    *e = r >= (T) 1 ? (T) 1 : (r <= (T) -1 ? (T) -1 : r);
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
