/*
 * kendall.cu -- Kendall's tau-b on the GPU as integer matrix products.
 *
 * For each pair of rows k < l and each column let s = sign(x_l - x_k), 0
 * when tied or when either value is NA.  stats' tau-b of two columns is
 * sum(s_x s_y) / sqrt(sum(s_x^2) sum(s_y^2)) over the row pairs, so with S
 * the K x v matrix of signs (K = m(m-1)/2 row pairs) every numerator at
 * once is S_x^T S_y: an int8 GEMM with int32 accumulation, exact, on the
 * tensor cores.  O(m^2 v^2) work, but at int8 tensor rates that beats
 * Knight's O(m log m) per pair for the shapes users have (m up to tens of
 * thousands of rows).
 *
 * K is cut into chunks that fit the device; each chunk is cut into nb equal
 * slices run as one strided-batched GEMM, so that a small result (200 x
 * 200, a handful of GEMM tiles) still fills the GPU.  The int32 slices are
 * summed into double accumulators (exact below 2^53).
 *
 * Several GPUs: a result of one panel (2000 columns of 50000 rows) would
 * keep one GPU busy, and cutting it into narrower panels makes every GPU
 * build every chunk.  So each worker sums its share of the chunks (chunk
 * ch goes to worker ch mod n) for the whole panel, the shares are added on
 * the host (gc_worker_allreduce: integers, exact in any order, so the
 * values are those of one GPU), and the worker that takes the panel
 * finishes it from the sum.  If a worker fails before its share arrived,
 * the one that takes the panel makes it whole on its own.
 *
 * Outside pairwise mode a column with NA is NA throughout (or its rows are
 * already dropped) and the denominators are per column: the untied pairs,
 * summed from S.  Pairwise, a pair's denominators depend on both columns'
 * NA: with U = |S| (untied, both rows observed) and W (both rows observed),
 * sum(s_x^2) over the row pairs both columns observe is U_x^T W_y,
 * sum(s_y^2) is W_x^T U_y, and W_x^T W_y counts the shared row pairs (0:
 * fewer than two shared rows, stats' silent NA).
 */
#include <math.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "paths.cuh"
#include "worker.cuh"

#define CB 32          /* columns per thread when building a chunk */
#define MIN_SLICE 4096 /* rows of K per GEMM slice, at least */

/* Row pair (k, l), k < l, of index g = l(l-1)/2 + k. */
__device__ static inline void row_pair(unsigned long long g, size_t *k,
                                       size_t *l)
{
    unsigned long long L =
        (unsigned long long) ((1.0 + sqrt(8.0 * (double) g + 1.0)) / 2.0);
    while (L * (L - 1) / 2 > g) L--;
    while (L * (L + 1) / 2 <= g) L++;
    *l = (size_t) L;
    *k = (size_t) (g - L * (L - 1) / 2);
}

/* Rows q < count of the chunk are row pairs g0 + q; rows up to ld are 0
 * (padding to whole slices).  U and W only when pairwise. */
__global__ static void build_signs(const double *x, size_t m, size_t nc,
                                   unsigned long long g0, size_t count,
                                   size_t ld, signed char *S, signed char *U,
                                   signed char *W)
{
    size_t q = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (q >= ld) return;
    size_t k = 0, l = 0;
    bool real = q < count;
    if (real) row_pair(g0 + q, &k, &l);
    size_t c0 = blockIdx.y * (size_t) CB, c1 = c0 + CB < nc ? c0 + CB : nc;
    for (size_t c = c0; c < c1; c++) {
        signed char s = 0, w = 0;
        if (real) {
            double a = x[l + c * m], b = x[k + c * m];
            if (!isnan(a) && !isnan(b)) {
                w = 1;
                s = (signed char) ((a > b) - (a < b));
            }
        }
        S[q + c * ld] = s;
        if (U) {
            U[q + c * ld] = s != 0;
            W[q + c * ld] = w;
        }
    }
}

/* t[c] += untied row pairs of column c in this chunk (one block a column).
 * 16 signs per load (ld is a multiple of 16): byte by byte, this pass over
 * the chunk cost as much as the GEMMs. */
__global__ static void count_untied(const signed char *S, size_t ld, double *t)
{
    __shared__ long long sh[32];
    const int4 *col = (const int4 *) (S + blockIdx.x * ld);
    long long s = 0;
    for (size_t q = threadIdx.x; q < ld / 16; q += 256) {
        int4 w = col[q];
        /* __vcmpne4: 0xff in each nonzero byte, so 8 bits per untied pair */
        s += (__popc(__vcmpne4((unsigned) w.x, 0u)) + __popc(__vcmpne4((unsigned) w.y, 0u)) +
              __popc(__vcmpne4((unsigned) w.z, 0u)) + __popc(__vcmpne4((unsigned) w.w, 0u))) / 8;
    }
    s = block_sum(s, sh);
    if (threadIdx.x == 0) t[blockIdx.x] += (double) s;
}

__global__ static void na_flags(const double *x, size_t m, unsigned char *f)
{
    __shared__ int any;
    if (threadIdx.x == 0) any = 0;
    __syncthreads();
    const double *col = x + blockIdx.x * m;
    for (size_t k = threadIdx.x; k < m; k += blockDim.x)
        if (isnan(col[k])) any = 1;
    __syncthreads();
    if (threadIdx.x == 0) f[blockIdx.x] = any ? COL_HAS_NA : 0;
}

__global__ static void zero_flags(const double *t, size_t n, unsigned char *f)
{
    size_t c = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (c < n && t[c] == 0) f[c] |= COL_ZERO_SD;
}

/* acc[e] (+)= the nb int32 slices of entry e */
__global__ static void add_slices(const int *c, int nb, size_t len, double *acc,
                                  int first)
{
    size_t e = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (e >= len) return;
    long long s = 0;
    for (int b = 0; b < nb; b++) s += c[(size_t) b * len + e];
    acc[e] = (first ? 0.0 : acc[e]) + (double) s;
}

/* acc holds C (and, pairwise, A, B, D) for the panel's v x w pairs. */
template <typename T>
__global__ static void kendall_finish(const double *acc, const double *tx,
                                      const double *ty, const unsigned char *fx,
                                      const unsigned char *fy, dev_problem d,
                                      size_t j0, size_t w, T *out, int *sd0)
{
    size_t vw = d.v * w, e = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (e >= vw) return;
    size_t i = e % d.v, j = j0 + e / d.v;
    bool warns = counted(d, i, j);
    double c = acc[e];
    if (d.pairwise) {
        double a = acc[vw + e], b = acc[2 * vw + e], n = acc[3 * vw + e];
        bool few = n == 0, zero = !few && (a == 0 || b == 0);
        if (zero && warns) *sd0 = 1;
        put_value(out, d, j0, i, j, (T) (c / (sqrt(a) * sqrt(b))), few || zero);
        return;
    }
    unsigned f = fx[i] | fy[j];
    /* a matrix's zero-sd warning follows stats' column rule (on the host) */
    if (d.dist && (f & COL_ZERO_SD) && warns) *sd0 = 1;
    if (d.symmetric && !d.dist && i == j) {
        put_value(out, d, j0, i, j, (T) 1, false);
        return;
    }
    put_value(out, d, j0, i, j, (T) (c / (sqrt(tx[i]) * sqrt(ty[j]))),
              (f & (COL_HAS_NA | COL_ZERO_SD)) != 0);
}

static cublasStatus_t gemm_i8(cublasHandle_t h, const signed char *a,
                              const signed char *b, int *c, size_t v, size_t w,
                              size_t ks, size_t ld, int nb)
{
    const int one = 1, zero = 0;
    return cublasGemmStridedBatchedEx(
        h, CUBLAS_OP_T, CUBLAS_OP_N, (int) v, (int) w, (int) ks, &one, a,
        CUDA_R_8I, (int) ld, (long long) ks, b, CUDA_R_8I, (int) ld,
        (long long) ks, &zero, c, CUDA_R_32I, (int) v, (long long) (v * w), nb,
        CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT);
}

template <typename T>
struct kd_ctx {
    dev_problem *d;
    gc_plan pl;
    T *buf;                  /* the panel: v x w */
    size_t K, ld, ks, nchunks, nmat;
    int nb;
    signed char *sx, *sy;    /* S (U, W) of a chunk: nmat matrices of ld x v (x q) */
    int *c32;                /* ngemm x nb slices of v x w */
    double *acc;             /* ngemm x v x w */
    double *tx, *ty;         /* untied pairs per column (not pairwise) */
    unsigned char *fx, *fy;
    int *sd0;
    int built;               /* the single chunk is already on the device */
    int summed;              /* acc (and tx) hold the workers' summed shares */
    int counted;             /* the per-column counts are made (by this
                                worker's first panel, whichever it is) */
};

/* Builds the chunk of row pairs [g0, g0 + cnt) (cnt <= ld) of x (and y)
 * into c->sx / c->sy; counts untied pairs when 'count' (the first panel:
 * every column is built every panel). */
template <typename T>
static int build_chunk(kd_ctx<T> *c, unsigned long long g0, size_t cnt, int count,
                       cudaStream_t st, char *msg, size_t msgcap)
{
    dev_problem *d = c->d;
    int status = GPUCOR_OK;
    for (int side = 0; side < (d->symmetric ? 1 : 2); side++) {
        size_t nc = side ? d->q : d->v;
        signed char *S = side ? c->sy : c->sx;
        dim3 grid((unsigned) ((c->ld + 255) / 256), (unsigned) ((nc + CB - 1) / CB));
        build_signs<<<grid, 256, 0, st>>>(side ? d->y : d->x, d->m, nc, g0, cnt,
                                          c->ld, S, d->pairwise ? S + nc * c->ld : NULL,
                                          d->pairwise ? S + 2 * nc * c->ld : NULL);
        LAUNCHED("build_signs");
        if (count && !d->pairwise) {
            count_untied<<<(unsigned) nc, 256, 0, st>>>(S, c->ld, side ? c->ty : c->tx);
            LAUNCHED("count_untied");
        }
    }
cleanup:
    return status;
}

/* acc (+)= the products of the row pairs [k0, k1), chunk by chunk, for the
 * panel [j0, j0 + w) (acc set afresh by the first chunk unless 'add');
 * count: the per-column untied pairs are summed too. */
template <typename T>
static int kd_chunks(kd_ctx<T> *c, size_t j0, size_t w, size_t k0, size_t k1,
                     int add, int count, cudaStream_t st, char *msg, size_t msgcap)
{
    dev_problem *d = c->d;
    int status = GPUCOR_OK;
    size_t v = d->v, q = d->symmetric ? v : d->q, vw = v * w;
    size_t ngemm = d->pairwise ? 4 : 1;
    unsigned eb = (unsigned) ((vw + 255) / 256);
    cublasHandle_t h = d->gc->h;
    for (size_t g0 = k0; g0 < k1; g0 += c->ld) {
        if (!c->built) {
            size_t cnt = k1 - g0 < c->ld ? k1 - g0 : c->ld;
            status = build_chunk(c, g0, cnt, count, st, msg, msgcap);
            if (status != GPUCOR_OK) goto cleanup;
        }
        const signed char *Sx = c->sx, *Sy = c->sy + j0 * c->ld;
        size_t xs = v * c->ld, ys = q * c->ld;   /* S -> U -> W */
        /* C = Sx' Sy; pairwise also A = Ux' Wy, B = Wx' Uy, D = Wx' Wy */
        const signed char *a[4] = {Sx, Sx + xs, Sx + 2 * xs, Sx + 2 * xs};
        const signed char *b[4] = {Sy, Sy + 2 * ys, Sy + ys, Sy + 2 * ys};
        for (size_t g = 0; g < ngemm; g++) {
            CUBLAS(gemm_i8(h, a[g], b[g], c->c32 + g * c->nb * vw, v, w, c->ks,
                           c->ld, c->nb));
            add_slices<<<eb, 256, 0, st>>>(c->c32 + g * c->nb * vw, c->nb, vw,
                                           c->acc + g * vw, !add && g0 == k0);
            LAUNCHED("add_slices");
        }
        /* a long chunk loop stays interruptible */
        if (c->nchunks > 1) {
            CU(cudaStreamSynchronize(st));
            if (d->host->interrupted && d->host->interrupted()) {
                snprintf(msg, msgcap, "interrupted");
                status = GPUCOR_ERR_INTERRUPT;
                goto cleanup;
            }
        }
    }
cleanup:
    return status;
}

template <typename T>
static int kd_produce(void *vctx, size_t j0, size_t j1, gc_tile *t,
                      cudaStream_t st, char *msg, size_t msgcap)
{
    kd_ctx<T> *c = (kd_ctx<T> *) vctx;
    dev_problem *d = c->d;
    int status = GPUCOR_OK;
    int first = !c->counted;   /* the first panel builds the per-column counts */
    gpucor_panel_tile(d, j0, j1, c->buf, sizeof(T) == sizeof(float), t);
    size_t v = d->v, q = d->symmetric ? v : d->q, w = j1 - j0, vw = v * w;
    unsigned eb = (unsigned) ((vw + 255) / 256);
    if (!c->summed) {
        status = kd_chunks(c, j0, w, 0, c->K, 0, first, st, msg, msgcap);
        if (status != GPUCOR_OK) goto cleanup;
    }
    if (first && !c->built && !d->pairwise) {
        zero_flags<<<(unsigned) ((v + 255) / 256), 256, 0, st>>>(c->tx, v, c->fx);
        LAUNCHED("zero_flags");
        if (!d->symmetric) {
            zero_flags<<<(unsigned) ((q + 255) / 256), 256, 0, st>>>(c->ty, q, c->fy);
            LAUNCHED("zero_flags");
        }
    }
    kendall_finish<T><<<eb, 256, 0, st>>>(c->acc, c->tx, c->ty, c->fx, c->fy, *d,
                                          j0, w, c->buf, c->sd0);
    LAUNCHED("kendall_finish");
    c->counted = 1;
cleanup:
    return status;
}

/* This worker's share of the one panel's row pairs (the rank-th of nw
 * equal ranges, each cut into this worker's own chunks: the ranges, not
 * the chunks, are common to the workers), the shares summed over the
 * workers into acc and tx (c->summed), or acc and tx left to the worker
 * that takes the panel when a share is missing. */
template <typename T>
static int kd_share(kd_ctx<T> *c, size_t rank, size_t nw, size_t cols,
                    cudaStream_t st, char *msg, size_t msgcap)
{
    dev_problem *d = c->d;
    int status = GPUCOR_OK;
    size_t nacc = (d->pairwise ? 4 : 1) * d->v * c->pl.w;
    size_t nt = d->pairwise ? 0 : cols, len = nacc + nt;
    int sum;
    double *hb = (double *) malloc(len * sizeof(double));
    if (!hb) {
        snprintf(msg, msgcap, "out of host memory");
        return GPUCOR_ERR_ALLOC;
    }
    CU(cudaMemsetAsync(c->acc, 0, nacc * sizeof(double), st));
    status = kd_chunks(c, 0, c->pl.w, c->K * rank / nw, c->K * (rank + 1) / nw, 1,
                       !d->pairwise, st, msg, msgcap);
    if (status != GPUCOR_OK) goto cleanup;
    CU(cudaMemcpyAsync(hb, c->acc, nacc * sizeof(double), cudaMemcpyDeviceToHost, st));
    if (nt) CU(cudaMemcpyAsync(hb + nacc, c->tx, nt * sizeof(double),
                               cudaMemcpyDeviceToHost, st));
    CU(cudaStreamSynchronize(st));
    sum = gc_worker_allreduce(hb, len);
    if (sum < 0) {
        snprintf(msg, msgcap, "injected failure (GPUCOR_TEST_FAIL_WORKER)");
        status = GPUCOR_ERR_CUDA;
        goto cleanup;
    }
    if (sum) {
        CU(cudaMemcpyAsync(c->acc, hb, nacc * sizeof(double), cudaMemcpyHostToDevice, st));
        if (nt) CU(cudaMemcpyAsync(c->tx, hb + nacc, nt * sizeof(double),
                                   cudaMemcpyHostToDevice, st));
        c->summed = 1;
    } else if (nt) {
        /* the panel is made whole: its counts start again */
        CU(cudaMemsetAsync(c->tx, 0, nt * sizeof(double), st));
    }
    CU(cudaStreamSynchronize(st));
cleanup:
    free(hb);
    return status;
}

template <typename T>
int gpucor_kendall(dev_problem *d, char *msg, size_t msgcap)
{
    int status = GPUCOR_OK, rank = 0, nw = 1, share = 0;
    cudaStream_t st = d->gc->st;
    size_t m = d->m, v = d->v, q = d->symmetric ? d->v : d->q;
    size_t cols = v + (d->symmetric ? 0 : q);
    size_t ngemm = d->pairwise ? 4 : 1;
    size_t used = m * cols * sizeof(double);
    kd_ctx<T> c;
    memset(&c, 0, sizeof c);
    c.d = d;
    c.nmat = d->pairwise ? 3 : 1;
    c.K = m * (m - 1) / 2;

    /* per column flags and untied counts */
    DALLOC(c.fx, cols, "flags");
    c.fy = d->symmetric ? c.fx : c.fx + v;
    DALLOC(c.tx, cols * sizeof(double), "untied pairs");
    c.ty = d->symmetric ? c.tx : c.tx + v;
    CU(cudaMemsetAsync(c.tx, 0, cols * sizeof(double), st));
    na_flags<<<(unsigned) v, 256, 0, st>>>(d->x, m, c.fx);
    LAUNCHED("na_flags");
    if (!d->symmetric) {
        na_flags<<<(unsigned) q, 256, 0, st>>>(d->y, m, c.fy);
        LAUNCHED("na_flags");
    }
    DALLOC(c.sd0, sizeof(int), "flag");
    CU(cudaMemsetAsync(c.sd0, 0, sizeof(int), st));

    {
        /* panels: the accumulators and one int32 slice per GEMM per column.
         * Several workers cut a narrow result into narrower panels when
         * the signs are one chunk (built once per worker); with more
         * chunks they share the chunks of the panel instead (kd_share) */
        size_t room0 = gpucor_device_budget(d->host, used);
        if (room0 > ((size_t) 4 << 30)) room0 = (size_t) 4 << 30;
        int one_chunk = (double) c.K * c.nmat * cols <= (double) room0;
        status = gpucor_plan_panels(d, sizeof(T), v * ngemm * (sizeof(double) + sizeof(int)),
                                   used, (size_t) INT_MAX / (v ? v : 1), one_chunk, &c.pl,
                                   msg, msgcap);
        if (status != GPUCOR_OK) goto cleanup;
        size_t w = c.pl.w;
        /* slices: enough GEMM tiles (128 x 128 or so) for two waves */
        size_t tiles = ((v + 127) / 128) * ((w + 127) / 128);
        size_t nb = 2 * (size_t) d->gc->sms / tiles;
        if (nb > 64) nb = 64;
        if (nb > c.K / MIN_SLICE) nb = c.K / MIN_SLICE;
        if (nb < 1) nb = 1;
        c.nb = (int) nb;
        DALLOC(c.acc, ngemm * v * w * sizeof(double), "accumulators");
        DALLOC(c.c32, ngemm * nb * v * w * sizeof(int), "product slices");
        used += ngemm * v * w * (sizeof(double) + nb * sizeof(int)) + cols * 9 +
                v * w * sizeof(T) + gc_cuda_sink_col_bytes(d->sink, sizeof(T), 0) * w;
        /* chunk of K: what is left, at most 4 GiB (enough to hide every
         * fixed cost) and 2^30 rows (int32 sums of +-1 stay exact) */
        size_t per_row = c.nmat * cols;
        size_t room = gpucor_device_budget(d->host, used);
        if (room > ((size_t) 4 << 30)) room = (size_t) 4 << 30;
        size_t kmax = room / per_row;
        if (kmax > ((size_t) 1 << 30)) kmax = (size_t) 1 << 30;
        size_t want = c.K < kmax ? c.K : kmax;
        size_t ks = ((want + nb - 1) / nb + 15) & ~(size_t) 15;
        if (ks * nb > kmax) ks = (kmax / nb) & ~(size_t) 15;
        if (ks < 16) {
            snprintf(msg, msgcap, "out of GPU memory: %.1f MiB free for "
                     "Kendall's sign matrices", room / 1048576.0);
            status = GPUCOR_ERR_ALLOC;
            goto cleanup;
        }
        c.ks = ks;
        c.ld = ks * nb;
        c.nchunks = (c.K + c.ld - 1) / c.ld;
        DALLOC(c.sx, c.nmat * cols * c.ld, "sign matrices");
        c.sy = d->symmetric ? c.sx : c.sx + c.nmat * v * c.ld;
    }
    /* several workers and one panel of several chunks (as the agreed plan
     * says, so every worker decides alike): each sums its share */
    gc_worker_rank(&rank, &nw);
    share = nw > 1 && c.pl.npanels == 1 && !c.pl.split;
    if (c.nchunks == 1 && !share) {
        /* every panel reuses the one chunk */
        status = build_chunk(&c, 0, (size_t) c.K, 1, st, msg, msgcap);
        if (status != GPUCOR_OK) goto cleanup;
        if (!d->pairwise) {
            zero_flags<<<(unsigned) ((cols + 255) / 256), 256, 0, st>>>(c.tx, cols, c.fx);
            LAUNCHED("zero_flags");
        }
        c.built = 1;
    }
    if (share) {
        status = kd_share<T>(&c, (size_t) rank, (size_t) nw, cols, st, msg, msgcap);
        if (status != GPUCOR_OK) goto cleanup;
    }
    if (c.pl.npanels) DALLOC(c.buf, v * c.pl.w * sizeof(T), "panel");
    status = gc_cuda_run(kd_produce<T>, &c, &c.pl, sizeof(T) == sizeof(float),
                         d->sink, d->host, d->gc, msg, msgcap);
    if (status != GPUCOR_OK) goto cleanup;
    CU(cudaMemcpy(&d->sd0, c.sd0, sizeof(int), cudaMemcpyDeviceToHost));
    if (d->flags_out && !d->pairwise)
        CU(cudaMemcpy(d->flags_out, c.fx, cols, cudaMemcpyDeviceToHost));

cleanup:
    cudaStreamSynchronize(st);
    cudaFree(c.fx); cudaFree(c.tx); cudaFree(c.sd0);
    cudaFree(c.acc); cudaFree(c.c32); cudaFree(c.sx); cudaFree(c.buf);
    return status;
}

template int gpucor_kendall<double>(dev_problem *, char *, size_t);
template int gpucor_kendall<float>(dev_problem *, char *, size_t);
