/*
 * knnmi.cu -- the GPU producer of Kraskov's mutual information between rows
 * (FAMILY_KNNMI), parmigene's knnmi.all().  The variables are prepared once
 * on the host (engine/knnmi.c: normalised, jittered, sorted, the psi table)
 * and copied whole to each device; then each pair of a panel runs the CPU's
 * arithmetic (engine/knnmi.h) in double: a block per pair over shared
 * copies of its two variables where they fit (knnmi_pair_block), else a
 * thread per pair (gc_knnmi_pair): the values equal the CPU engine's to the
 * bit.  The block kernel keeps a sample's k nearest in registers for the
 * usual k (knnmi_term_k, a kernel per k: 1.7x at k = 3), in local memory
 * otherwise.
 *
 * The thread-per-pair kernel's list of a thread's k nearest lives in
 * device memory, interleaved with the other threads' of the panel (element
 * t of thread s at [s + t * total]) so that neighbouring threads touch
 * neighbouring words; the planner counts
 * it among a panel column's bytes.  A 'dist' takes the pairs i > j of its
 * panels (rows j0 .. n - 1); other sinks whole columns, whose pairs (i, j)
 * and (j, i) are the same computation (the larger index as X), so the
 * matrix is exactly symmetric.  With y (gpu_knnmi(y =)) the result is x's
 * nx variables against y's, which follow x's in the prepared block: its
 * column j is variable nx + j ('off'), and its panels are whole columns of
 * nx rows, the pairs of rbind(x, y) to the bit.
 */
#include <math.h>
#include <limits.h>
#include "run.cuh"
#include "worker.cuh"
#include "../engine/knnmi.h"

#define KNNMI_THREADS 128

/* The pairs (i0 + a, j0 + b) of a panel of the result's rows i0 .. rows - 1
 * and columns j0 .. j1 - 1, variables i and off + j: 0 on the diagonal
 * (and, in a 'dist' panel, the unused i < j), NaN with a variable whose
 * mean or sd is infinite. */
__global__ static void knnmi_panel(gc_knnmi_view v, size_t rows, size_t off, size_t i0,
                                   size_t j0, size_t j1, int tri, double *out, double *nd,
                                   int *nj)
{
    size_t ni = rows - i0, total = ni * (j1 - j0);
    size_t s = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (s >= total) return;
    size_t a = s % ni, b = s / ni;
    size_t i = i0 + a, j = off + j0 + b;
    double r;
    if (i == j || (tri && i < j)) r = 0;
    else if (!v.ok[i] || !v.ok[j]) r = nan("");
    else r = gc_knnmi_pair(&v, i > j ? i : j, i > j ? j : i, nd + s, nj + s, total, NULL,
                               NULL);
    out[s] = r;
}

/* The same pairs, one block each, for samples few enough that the pair's
 * two variables fit in shared memory (KNNMI_SHARED_MAX bytes) and k at
 * most KNNMI_KMAX: the block's threads take the samples, each walking the
 * shared copies with its list in registers / local memory, and one thread
 * adds the terms in sample order, so the value is gc_knnmi_pair's to the
 * bit.  (The thread-per-pair kernel above gathers through global memory
 * with its list there too: latency-bound, about 6x slower at 300 samples.) */
#define KNNMI_KMAX 32
#define KNNMI_SHARED_MAX (48 * 1024)
#define KNNMI_BLOCK 128

static size_t knnmi_shared_bytes(size_t m)
{
    return m * (5 * sizeof(double) + 4 * sizeof(int));
}

/* A sample's term for a k known at compile time (K): gc_knnmi_term's
 * search, ranges and counts with the list of the K nearest in registers
 * (gc_knnmi_term's list, indexed by a run-time k, lives in local memory).
 * The list starts as K sentinels (+Inf, INT_MAX) that every sample beats,
 * and a sample that beats the K-th is put last and sifted down: after the
 * same offers in the same order it holds what gc_knnmi_offer's list holds,
 * so the term is gc_knnmi_term's to the bit. */
template <int K>
__device__ static inline void knnmi_offer_k(double d, int j, double (&nd)[K], int (&nj)[K])
{
    if (!gc_knnmi_before(d, j, nd[K - 1], nj[K - 1])) return;
    nd[K - 1] = d;
    nj[K - 1] = j;
#pragma unroll
    for (int t = K - 1; t > 0; t--)
        if (gc_knnmi_before(nd[t], nj[t], nd[t - 1], nj[t - 1])) {
            double td = nd[t]; nd[t] = nd[t - 1]; nd[t - 1] = td;
            int tj = nj[t]; nj[t] = nj[t - 1]; nj[t - 1] = tj;
        }
}

template <int K>
__device__ static inline void knnmi_walk_k(double ai, double bi, size_t r, const double *sA,
                                           const int *oA, const double *B, size_t m,
                                           double (&nd)[K], int (&nj)[K])
{
    size_t lo = r, hi = r + 1;   /* as gc_knnmi_walk */
#define KNNMI_OFFER_K(q)                                                      \
    do {                                                                      \
        double g_ = fabs(ai - sA[q]), db_ = fabs(bi - B[oA[q]]);              \
        knnmi_offer_k<K>(g_ > db_ ? g_ : db_, oA[q], nd, nj);                 \
    } while (0)
#pragma unroll
    for (int c = 0; c < K; c++) {
        int take_lo = lo > 0 && (hi >= m || ai - sA[lo - 1] <= sA[hi] - ai);
        size_t q = take_lo ? --lo : hi++;
        KNNMI_OFFER_K(q);
    }
    for (size_t q = lo; q > 0 && ai - sA[q - 1] <= nd[K - 1]; q--) KNNMI_OFFER_K(q - 1);
    for (size_t q = hi; q < m && sA[q] - ai <= nd[K - 1]; q++) KNNMI_OFFER_K(q);
#undef KNNMI_OFFER_K
}

template <int K>
__device__ static inline double knnmi_term_k(const double *X, const double *Y,
                                             const double *sX, const double *sY,
                                             const int *oX, const int *oY, const int *rX,
                                             const int *rY, const double *psi, size_t m,
                                             size_t i)
{
    const double xi = X[i], yi = Y[i];
    const size_t rx = (size_t) rX[i], ry = (size_t) rY[i], k = K;
    double wx = sX[rx + k < m ? rx + k : m - 1] - sX[rx > k ? rx - k : 0];
    double wy = sY[ry + k < m ? ry + k : m - 1] - sY[ry > k ? ry - k : 0];
    double nd[K];
    int nj[K];
#pragma unroll
    for (int t = 0; t < K; t++) {
        nd[t] = INFINITY;
        nj[t] = INT_MAX;
    }
    if (wx >= wy) knnmi_walk_k<K>(xi, yi, rx, sX, oX, Y, m, nd, nj);
    else knnmi_walk_k<K>(yi, xi, ry, sY, oY, X, m, nd, nj);
    double ex = 0, ey = 0;
    int jx = nj[0], jy = nj[0];
#pragma unroll
    for (int t = 0; t < K; t++) {
        double dx = fabs(xi - X[nj[t]]), dy = fabs(yi - Y[nj[t]]);
        if (dx > ex) { ex = dx; jx = nj[t]; }
        if (dy > ey) { ey = dy; jy = nj[t]; }
    }
    size_t nx = gc_knnmi_count(xi, ex, rx, (size_t) rX[jx], sX, m);
    size_t ny = gc_knnmi_count(yi, ey, ry, (size_t) rY[jy], sY, m);
    return psi[nx - 1] + psi[ny - 1];
}

/* K > 0: the terms by knnmi_term_k<K> (k == K); 0: by gc_knnmi_term. */
template <int K>
__global__ static void knnmi_pair_block(gc_knnmi_view v, size_t rows, size_t off,
                                        size_t i0, size_t j0, size_t j1, int tri, size_t s0,
                                        double *out)
{
    extern __shared__ double sh[];
    size_t ni = rows - i0, s = s0 + blockIdx.x;
    if (s >= ni * (j1 - j0)) return;
    size_t i = i0 + s % ni, j = off + j0 + s / ni;
    if (i == j || (tri && i < j) || !v.ok[i] || !v.ok[j]) {
        if (threadIdx.x == 0) out[s] = i == j || (tri && i < j) ? 0 : nan("");
        return;
    }
    const size_t m = v.m, k = v.k, a = i > j ? i : j, b = i > j ? j : i;
    double *X = sh, *Y = X + m, *sX = Y + m, *sY = sX + m, *term = sY + m;
    int *oX = (int *) (term + m), *oY = oX + m, *rX = oY + m, *rY = rX + m;
    for (size_t q = threadIdx.x; q < m; q += blockDim.x) {
        X[q] = v.val[a * m + q];
        Y[q] = v.val[b * m + q];
        sX[q] = v.sorted[a * m + q];
        sY[q] = v.sorted[b * m + q];
        oX[q] = v.ord[a * m + q];
        oY[q] = v.ord[b * m + q];
        rX[q] = v.rank[a * m + q];
        rY[q] = v.rank[b * m + q];
    }
    __syncthreads();
    if constexpr (K > 0) {
        for (size_t q = threadIdx.x; q < m; q += blockDim.x)
            term[q] = knnmi_term_k<K>(X, Y, sX, sY, oX, oY, rX, rY, v.psi, m, q);
    } else {
        double nd[KNNMI_KMAX];
        int nj[KNNMI_KMAX];
        for (size_t q = threadIdx.x; q < m; q += blockDim.x)
            term[q] = gc_knnmi_term(X, Y, sX, sY, oX, oY, rX, rY, v.psi, m, k, q, nd, nj, 1,
                                    NULL, NULL);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        double accum = 0;
        for (size_t q = 0; q < m; q++) accum += term[q];
        out[s] = gc_knnmi_estimate(v.psi, m, k, accum);
    }
}

/* knnmi_pair_block for the view's k: its register-list form for the
 * usual small k, else the general one. */
static void knnmi_pair_block_launch(const gc_knnmi_view &v, size_t rows, size_t off,
                                    size_t i0, size_t j0, size_t j1, int tri, size_t s0,
                                    unsigned nb, cudaStream_t st, double *out)
{
    size_t sm = knnmi_shared_bytes(v.m);
#define KNNMI_LAUNCH(K)                                                                 \
    knnmi_pair_block<K><<<nb, KNNMI_BLOCK, sm, st>>>(v, rows, off, i0, j0, j1, tri, s0, out)
    switch (v.k) {
    case 2: KNNMI_LAUNCH(2); break;
    case 3: KNNMI_LAUNCH(3); break;
    case 4: KNNMI_LAUNCH(4); break;
    case 5: KNNMI_LAUNCH(5); break;
    case 6: KNNMI_LAUNCH(6); break;
    case 8: KNNMI_LAUNCH(8); break;
    case 10: KNNMI_LAUNCH(10); break;
    default: KNNMI_LAUNCH(0); break;
    }
#undef KNNMI_LAUNCH
}

/* Whether the block kernel takes the view's pairs: its two variables fit
 * in shared memory and k its register or local lists. */
static int knnmi_block_fits(const gc_knnmi_view &v)
{
    return v.k <= KNNMI_KMAX && knnmi_shared_bytes(v.m) <= KNNMI_SHARED_MAX;
}

/* The values of a panel (its pairs as knnmi_panel numbers them) into buf:
 * the block kernel where it fits, at most 2^30 blocks a launch (the grid's
 * x limit is 2^31 - 1), else a thread per pair with its list in nd, nj. */
static int knnmi_panel_values(const gc_knnmi_view &v, size_t rows, size_t off, size_t i0,
                              size_t j0, size_t j1, int tri, double *buf, double *nd, int *nj,
                              cudaStream_t st, char *msg, size_t msgcap)
{
    int status = GPUCOR_OK;
    const size_t total = (rows - i0) * (j1 - j0), most = (size_t) 1 << 30;
    if (total && knnmi_block_fits(v)) {
        for (size_t s0 = 0; s0 < total; s0 += most) {
            knnmi_pair_block_launch(v, rows, off, i0, j0, j1, tri, s0,
                                    (unsigned) (total - s0 < most ? total - s0 : most), st,
                                    buf);
            LAUNCHED("knnmi_pair_block");
        }
    } else if (total) {
        knnmi_panel<<<(unsigned) ((total + KNNMI_THREADS - 1) / KNNMI_THREADS),
                      KNNMI_THREADS, 0, st>>>(v, rows, off, i0, j0, j1, tri, buf, nd, nj);
        LAUNCHED("knnmi_panel");
    }
cleanup:
    return status;
}

typedef struct {
    gc_knnmi_view v;     /* device */
    size_t rows, off;    /* the result's rows (n, or x's nx with y) and its
                            column j's variable off + j (0, or nx) */
    int whole;           /* panels of whole columns */
    double *buf;         /* the panel: (rows - i0) x w */
    double *nd;          /* the threads' lists: rows x w x k */
    int *nj;
} knnmi_ctx;

static int produce(void *vctx, size_t j0, size_t j1, gc_tile *t, cudaStream_t st,
                   char *msg, size_t msgcap)
{
    knnmi_ctx *c = (knnmi_ctx *) vctx;
    size_t i0 = c->whole ? 0 : j0;
    int status = knnmi_panel_values(c->v, c->rows, c->off, i0, j0, j1, !c->whole, c->buf,
                                    c->nd, c->nj, st, msg, msgcap);
    if (status == GPUCOR_OK) gc_cuda_panel_tile(i0, c->rows, j0, j1, c->buf, 0, 1.0, !c->whole, t);
    return status;
}

/* What a worker gets: the prepared variables, and y's count among them
 * (0: the symmetric result of them all). */
typedef struct {
    const gc_knnmi_prep *prep;
    size_t ny;
} knnmi_arg;

/* A worker's job: its copy of the prepared variables, then the panels. */
static int run(const gc_knnmi_prep *prep, size_t ny, const gc_sink *sink, gc_host *host,
               char *msg, size_t msgcap)
{
    int status = GPUCOR_OK;
    gpucor_ctx *gc = NULL;
    cudaStream_t st = NULL;
    void *dmem = NULL;
    double *buf = NULL, *nd = NULL;
    int *nj = NULL;
    /* the result: rows x ncols, n x n without y, else nx x ny */
    size_t n = prep->v.n, k = prep->v.k, rows = n - ny, ncols = ny ? ny : n;
    gc_plan pl;
    if (ny ? rows == 0 : n < 2) return GPUCOR_OK;

    status = gpucor_ctx_get(&gc, GPUCOR_PANEL_BYTES, msg, msgcap);
    if (status != GPUCOR_OK) return status;
    st = gc->st;
    DALLOC(dmem, prep->bytes, "variables");
    CU(cudaMemcpyAsync(dmem, prep->mem, prep->bytes, cudaMemcpyHostToDevice, st));
    {
        knnmi_ctx c;
        c.v = gc_knnmi_layout(dmem, n, prep->v.m, k);
        c.rows = rows;
        c.off = ny ? rows : 0;
        /* a 'dist' (symmetric only) packs panels of its pairs i > j */
        c.whole = ny || !(gc_sink_needs(sink) & GC_SINK_PACKED);
        /* a column of the panel: its values and its threads' lists */
        status = gc_cuda_plan(sink, c.whole ? ncols : ncols - 1, rows, sizeof(double),
                              rows * k * (sizeof(double) + sizeof(int)), prep->bytes, 1,
                              (size_t) -1, c.whole ? GC_PLAN_WHOLE : 0, host, &pl, msg,
                              msgcap);
        if (status != GPUCOR_OK) goto cleanup;
        DALLOC(buf, rows * pl.w * sizeof(double), "panel");
        DALLOC(nd, rows * pl.w * k * sizeof(double), "neighbour lists");
        DALLOC(nj, rows * pl.w * k * sizeof(int), "neighbour lists");
        c.buf = buf;
        c.nd = nd;
        c.nj = nj;
        status = gc_cuda_run(produce, &c, &pl, 0, sink, host, gc, msg, msgcap);
    }

cleanup:
    if (st) cudaStreamSynchronize(st);
    cudaFree(dmem);
    cudaFree(buf);
    cudaFree(nd);
    cudaFree(nj);
    if (status != GPUCOR_OK && status != GPUCOR_ERR_INTERRUPT) gpucor_ctx_drop();
    return status;
}

static int knnmi_job(void *arg, const gc_sink *sink, gc_host *host, char *msg,
                     size_t msgcap)
{
    const knnmi_arg *a = (const knnmi_arg *) arg;
    return run(a->prep, a->ny, sink, host, msg, msgcap);
}

extern "C" int gpucor_cuda_knnmi(const gc_problem *pb, const gc_sink *sink, gc_host *host,
                                 gc_pass *out, char *msg, size_t msgcap)
{
    gc_knnmi_prep prep;
    knnmi_arg wa[GC_MAX_WORKERS];
    gc_worker_result res[GC_MAX_WORKERS];
    int n = 0;
    msg[0] = '\0';
    out->threads_used = 0;
    /* a y of no variable: no pair (and ny == 0 would read as no y) */
    if (pb->y && pb->q == 0) return GPUCOR_OK;
    int status = gc_cuda_worker_count(host, &n, msg, msgcap);
    if (status != GPUCOR_OK) return status;
    /* once on the host; every worker copies the same block */
    status = gc_knnmi_prepare(pb, &prep, msg, msgcap);
    if (status != GPUCOR_OK) return status;
    for (int w = 0; w < n; w++) {
        wa[w].prep = &prep;
        wa[w].ny = pb->y ? pb->q : 0;
    }
    status = gc_cuda_workers(knnmi_job, wa, sizeof *wa, n, sink, host, res, msg, msgcap);
    gc_knnmi_free(&prep);
    return status;
}

/* ---- the MI into a resident device matrix (algo/prune.h) ----------------- */
/* ARACNE, CLR and MRNET from the data (cuda/prune.cu) keep the MI on the
 * device: the panels of knnmi_pair_block / knnmi_panel above, pairs i > j
 * only (a 'dist' panel: rows from the panel's first column on), each value
 * then written to (i, j) and (j, i) of the matrix.  The same kernels, the
 * same arithmetic: gpu_knnmi()'s values to the bit. */
extern "C" {
#include "../algo/prune.h"
}

/* The panel's values (rows j0 .. n - 1 of the columns j0 .. j1 - 1, ld
 * n - j0) into D: pair i > j at (i, j) and (j, i), the diagonal 0.  A cell
 * of D is written by the one panel that holds its pair's smaller index. */
__global__ static void knnmi_scatter(const double *buf, size_t n, size_t j0, size_t j1,
                                     double *D, size_t ld)
{
    const size_t ni = n - j0, total = ni * (j1 - j0);
    for (size_t s = blockIdx.x * (size_t) blockDim.x + threadIdx.x; s < total;
         s += (size_t) gridDim.x * blockDim.x) {
        size_t i = j0 + s % ni, j = j0 + s / ni;
        if (i > j) {
            double v = buf[s];
            D[i + j * ld] = v;
            D[j + i * ld] = v;
        } else if (i == j) {
            D[i + i * ld] = 0;
        }
    }
}

extern "C" int gc_knnmi_cuda_fill(const gc_knnmi_prep *prep, double *D, size_t ld,
                                  cudaStream_t st, size_t budget, gc_host *host, double p0,
                                  double p1, char *msg, size_t msgcap)
{
    int status = GPUCOR_OK;
    const size_t n = prep->v.n, m = prep->v.m, k = prep->v.k;
    const int shared = knnmi_block_fits(prep->v);
    /* a pair's device bytes: its value and, for the thread-per-pair kernel,
     * its thread's list */
    const size_t per = sizeof(double) + (shared ? 0 : k * (sizeof(double) + sizeof(int)));
    const double pairs = (double) n * (double) (n - 1) / 2;
    void *dmem = NULL;
    double *buf = NULL, *nd = NULL;
    int *nj = NULL;
    gc_knnmi_view v;
    size_t w = n ? budget / per / n : 0;
    if (n == 0) return GPUCOR_OK;
    if (host->opts->gpu_panel) w = host->opts->gpu_panel;   /* the tests' narrow panels */
    if (w > n) w = n;
    if (w < 1) w = 1;
    DALLOC(dmem, prep->bytes, "variables");
    CU(cudaMemcpyAsync(dmem, prep->mem, prep->bytes, cudaMemcpyHostToDevice, st));
    v = gc_knnmi_layout(dmem, n, m, k);
    DALLOC(buf, n * w * sizeof(double), "panel");
    if (!shared) {
        DALLOC(nd, n * w * k * sizeof(double), "neighbour lists");
        DALLOC(nj, n * w * k * sizeof(int), "neighbour lists");
    }
    for (size_t j0 = 0; j0 < n; j0 += w) {
        size_t j1 = j0 + w < n ? j0 + w : n;
        status = knnmi_panel_values(v, n, 0, j0, j0, j1, 1, buf, nd, nj, st, msg, msgcap);
        if (status != GPUCOR_OK) goto cleanup;
        knnmi_scatter<<<1024, 256, 0, st>>>(buf, n, j0, j1, D, ld);
        LAUNCHED("knnmi_scatter");
        CU(cudaStreamSynchronize(st));
        if (host->interrupted && host->interrupted()) {
            status = GPUCOR_ERR_INTERRUPT;
            goto cleanup;
        }
        if (host->progress && pairs > 0) {
            double r = (double) (n - j1), left = r > 0 ? r * (r - 1) / 2 : 0;
            host->progress(host->progress_ctx, p0 + (p1 - p0) * (pairs - left) / pairs);
        }
    }
cleanup:
    cudaStreamSynchronize(st);
    cudaFree(dmem);
    cudaFree(buf);
    cudaFree(nd);
    cudaFree(nj);
    return status;
}
