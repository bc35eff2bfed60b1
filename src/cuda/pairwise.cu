/*
 * pairwise.cu -- use = "pairwise.complete.obs" on the GPU, and correlation
 * distances of data with NA: every pair of columns over the rows both
 * observe, as stats' cov.c and cor() compute it.
 *
 * Pearson (and the cosine distance): one tiled kernel, 32 x 32 pairs per
 * block and 2 x 2 per thread, observations staged through shared memory.
 * Each pair is two-pass, as COV_PAIRWISE_BODY: its own means over its
 * shared rows, then centred sums.  Not the masked-GEMM shortcut (sums of
 * x, x^2 and xy over indicator matrices): that is sum(x^2) - n mean^2 per
 * pair, which cancels.  Each pair is first shifted by its first shared
 * value -- exact for values near an offset (Sterbenz) -- so 1e8 offsets
 * keep their digits and a column constant on a pair's shared rows gives a
 * sum of squares of exactly 0 and stats' NA, not rounding noise.
 *
 * Nothing is done to a column as a whole but a scale by a power of two
 * (exact), so that values near 1e300 or subnormal ones neither overflow
 * nor underflow in the sums: what a pair sees depends on its shared rows
 * only.  (Centring each column by its mean first, as this file once did,
 * rounded a column's small values against its large ones -- a constant
 * -1e8 beside N(0, 1) values, scales from 1e-15 to 1e15 in one item of a
 * distance -- and the pairs that did not share the large ones came out
 * wrong, or constant.)  Both precisions compute in double and round the
 * result: float cannot hold a column's values at once for every pair
 * (1e8 + N(0, 1), or 1e8 beside 1), and this path is bound by its
 * per-pair arithmetic, not by memory.
 *
 * Spearman: stats re-ranks every pair on its shared rows.  One block per
 * pair walks each column in its presorted order (rank.cu), counts with a
 * block scan which of those rows the other column observes, and reads each
 * mid-rank off the counts at the ends of its tie group.  Twice the ranks are
 * integers, so the sums are exact.
 */
#include <math.h>
#include <float.h>
#include <string.h>
#include "paths.cuh"

/* ---- columns scaled by a power of two: the largest finite |value| in [1, 2) */

__global__ static void scale_cols(const double *a, size_t m, double *z)
{
    __shared__ double sh[32];
    const double *col = a + blockIdx.x * m;
    double *zc = z + blockIdx.x * m;
    double amax = 0;
    for (size_t k = threadIdx.x; k < m; k += blockDim.x) {
        double d = fabs(col[k]);
        if (isfinite(d) && d > amax) amax = d;
    }
    for (int o = 16; o > 0; o >>= 1) amax = fmax(amax, __shfl_down_sync(0xffffffffu, amax, o));
    if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = amax;
    __syncthreads();
    amax = 0;
    for (int w = 0; w < (int) (blockDim.x >> 5); w++) amax = fmax(amax, sh[w]);
    int e = amax > 0 ? ilogb(amax) : 0;
    for (size_t k = threadIdx.x; k < m; k += blockDim.x)
        zc[k] = ldexp(col[k], -e);
}

/* ---- Pearson / cosine: the tiled two-pass kernel */

#define PT 32   /* pairs per tile side: 2 x 2 per thread keeps the 7 sums per pair in registers */
#define PK 32   /* observations per stage: one 256-byte run of a column per warp */

__device__ static void stage(const double *x, size_t m, size_t ncol, size_t c0,
                             size_t k0, double (*s)[PT + 1])
{
#pragma unroll
    for (int e = 0; e < PT * PK / 256; e++) {
        int idx = threadIdx.x + 256 * e, c = idx / PK, kk = idx % PK;
        size_t col = c0 + c, k = k0 + kk;
        s[kk][c] = (col < ncol && k < m) ? x[k + col * m] : NAN;
    }
}

template <typename T, bool CENTER>
__global__ static void __launch_bounds__(256)
pearson_pairs(const double *x, const double *y, dev_problem d, size_t j0, size_t j1,
              T *out, int *sd0)
{
    __shared__ double sa[PK][PT + 1], sb[PK][PT + 1];
    size_t ib = blockIdx.x * (size_t) PT, jb = j0 + blockIdx.y * (size_t) PT;
    if (d.tri && ib + PT - 1 <= jb) return;   /* no pair i > j in this tile */
    int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    size_t m = d.m;
    int n[2][2];
    double shx[2][2], shy[2][2], sx[2][2], sy[2][2], sxx[2][2], syy[2][2], sxy[2][2];
#pragma unroll
    for (int a = 0; a < 2; a++)
#pragma unroll
        for (int b = 0; b < 2; b++) {
            n[a][b] = 0;
            shx[a][b] = shy[a][b] = sx[a][b] = sy[a][b] = 0;
            sxx[a][b] = syy[a][b] = sxy[a][b] = 0;
        }
    /* pass 0 (centred only): count, first shared values, shifted sums;
     * pass 1: centred (or plain) sums of products, sx / sy then the means */
    for (int pass = CENTER ? 0 : 1; pass < 2; pass++) {
        if (pass == 1 && CENTER) {
#pragma unroll
            for (int a = 0; a < 2; a++)
#pragma unroll
                for (int b = 0; b < 2; b++)
                    if (n[a][b] > 0) {
                        sx[a][b] /= n[a][b];
                        sy[a][b] /= n[a][b];
                    }
        }
        for (size_t k0 = 0; k0 < m; k0 += PK) {
            stage(x, m, d.v, ib, k0, sa);
            stage(y, m, j1, jb, k0, sb);
            __syncthreads();
#pragma unroll 4
            for (int kk = 0; kk < PK; kk++) {
                double av[2] = {sa[kk][tx], sa[kk][tx + 16]};
                double bv[2] = {sb[kk][ty], sb[kk][ty + 16]};
#pragma unroll
                for (int a = 0; a < 2; a++)
#pragma unroll
                    for (int b = 0; b < 2; b++) {
                        if (isnan(av[a]) || isnan(bv[b])) continue;
                        double dx = av[a], dy = bv[b];
                        if (pass == 0) {
                            if (n[a][b] == 0) { shx[a][b] = dx; shy[a][b] = dy; }
                            n[a][b]++;
                            sx[a][b] += dx - shx[a][b];
                            sy[a][b] += dy - shy[a][b];
                            continue;
                        }
                        if (CENTER) {
                            dx = (dx - shx[a][b]) - sx[a][b];
                            dy = (dy - shy[a][b]) - sy[a][b];
                        } else {
                            n[a][b]++;
                        }
                        sxy[a][b] += dx * dy;
                        sxx[a][b] += dx * dx;
                        syy[a][b] += dy * dy;
                    }
            }
            __syncthreads();
        }
    }
#pragma unroll
    for (int a = 0; a < 2; a++)
#pragma unroll
        for (int b = 0; b < 2; b++) {
            size_t i = ib + tx + 16 * a, j = jb + ty + 16 * b;
            if (i >= d.v || j >= j1) continue;
            /* stats: too few shared rows is a silent NA, a zero sum of
             * squares an NA with the zero-sd warning */
            bool few = n[a][b] < (CENTER ? 2 : 1);
            bool zero = !few && (sxx[a][b] == 0 || syy[a][b] == 0);
            if (zero && counted(d, i, j)) *sd0 = 1;
            double r = sxy[a][b] / (sqrt(sxx[a][b]) * sqrt(syy[a][b]));
            put_value(out, d, j0, i, j, (T) r, few || zero);
        }
}

/* ---- Spearman: one block per pair, re-ranked on the shared rows */

#define SP 128   /* threads per pair: a few tie-group lookups per row, little else */

/* P[t] = how many of the sorted positions < t hold a row that 'other'
 * observes, for t <= cnt; returns P[cnt] (the pair's shared rows). */
__device__ static int scan_shared(const int *ord, int cnt, const double *other,
                                  int *P, int *wsum)
{
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, carry = 0;
    for (int base = 0; base < cnt; base += SP) {
        int t = base + threadIdx.x;
        bool f = t < cnt && !isnan(other[ord[t]]);
        unsigned bal = __ballot_sync(0xffffffffu, f);
        if (lane == 0) wsum[warp] = __popc(bal);
        __syncthreads();
        int off = 0, tot = 0;
        for (int w = 0; w < SP / 32; w++) {
            if (w < warp) off += wsum[w];
            tot += wsum[w];
        }
        if (t < cnt) P[t] = carry + off + __popc(bal & ((1u << lane) - 1u));
        carry += tot;
        __syncthreads();
    }
    if (threadIdx.x == 0) P[cnt] = carry;
    __syncthreads();
    return carry;
}

typedef struct {
    const int *ord, *gs, *ge, *obs;   /* gpucor_sort_columns */
} sorted_cols;

template <typename T>
__global__ static void __launch_bounds__(SP)
spearman_pairs(const double *x, const double *y, sorted_cols sx, sorted_cols sy,
               dev_problem d, size_t j0, size_t w, int *scratch, int in_shared,
               T *out, int *sd0)
{
    extern __shared__ int dyn[];
    __shared__ int wsum[SP / 32];
    __shared__ double red[32];
    size_t m = d.m;
    int *P = in_shared ? dyn : scratch + blockIdx.x * (2 * m + 2);
    int *R = P + m + 1;                       /* twice the x rank, by row */
    size_t npairs = d.v * w;
    for (size_t pr = blockIdx.x; pr < npairs; pr += gridDim.x) {
        size_t i = pr % d.v, j = j0 + pr / d.v;
        if (d.tri && i <= j) continue;
        const double *xi = x + i * m, *yj = y + j * m;
        const int *oi = sx.ord + i * m, *gi = sx.gs + i * m, *hi = sx.ge + i * m;
        const int *oj = sy.ord + j * m, *gj = sy.gs + j * m, *hj = sy.ge + j * m;
        int ci = sx.obs[i], cj = sy.obs[j];
        /* x's ranks among the rows y observes */
        int n = scan_shared(oi, ci, yj, P, wsum);
        double c = (double) n + 1;            /* twice the mean rank */
        double sxx = 0, syy = 0, sxy = 0;
        for (int t = threadIdx.x; t < ci; t += SP) {
            int row = oi[t];
            if (isnan(yj[row])) continue;
            int r2 = P[gi[t]] + P[hi[t]] + 1;
            R[row] = r2;
            sxx += (r2 - c) * (r2 - c);
        }
        __syncthreads();
        /* y's ranks among the rows x observes, against x's */
        scan_shared(oj, cj, xi, P, wsum);
        for (int t = threadIdx.x; t < cj; t += SP) {
            int row = oj[t];
            if (isnan(xi[row])) continue;
            double dy = P[gj[t]] + P[hj[t]] + 1 - c;
            sxy += (R[row] - c) * dy;
            syy += dy * dy;
        }
        sxx = block_sum(sxx, red);
        syy = block_sum(syy, red);
        sxy = block_sum(sxy, red);
        if (threadIdx.x == 0) {
            /* as stats' loop: fewer than two shared rows is a silent NA,
             * all ranks tied the zero-sd NA */
            bool few = n < 2, zero = !few && (sxx == 0 || syy == 0);
            if (zero && counted(d, i, j)) *sd0 = 1;
            put_value(out, d, j0, i, j, (T) (sxy / (sqrt(sxx) * sqrt(syy))),
                      few || zero);
        }
        __syncthreads();                      /* P and R are reused */
    }
}

/* ---- the path */

template <typename T>
struct pw_ctx {
    dev_problem *d;
    gc_plan pl;
    T *buf;                  /* the panel: v x w */
    const double *zx, *zy;            /* Pearson / cosine: scaled columns */
    sorted_cols sx, sy;               /* Spearman */
    int *scratch, in_shared;
    size_t smem, blocks;
    int *sd0;
};

template <typename T>
static int pw_produce(void *vctx, size_t j0, size_t j1, gc_tile *t,
                      cudaStream_t st, char *msg, size_t msgcap)
{
    pw_ctx<T> *c = (pw_ctx<T> *) vctx;
    dev_problem *d = c->d;
    int status = GPUCOR_OK;
    T *out = c->buf;
    gpucor_panel_tile(d, j0, j1, out, sizeof(T) == sizeof(float), t);
    if (d->method == COR_SPEARMAN && !d->cosine) {
        size_t npairs = d->v * (j1 - j0);
        unsigned blocks = (unsigned) (npairs < c->blocks ? npairs : c->blocks);
        spearman_pairs<T><<<blocks, SP, c->smem, st>>>(
            d->x, d->y, c->sx, c->sy, *d, j0, j1 - j0, c->scratch,
            c->in_shared, out, c->sd0);
        LAUNCHED("spearman_pairs");
    } else {
        dim3 grid((unsigned) ((d->v + PT - 1) / PT),
                  (unsigned) ((j1 - j0 + PT - 1) / PT));
        if (d->cosine)
            pearson_pairs<T, false><<<grid, 256, 0, st>>>(c->zx, c->zy, *d, j0, j1,
                                                          out, c->sd0);
        else
            pearson_pairs<T, true><<<grid, 256, 0, st>>>(c->zx, c->zy, *d, j0, j1,
                                                         out, c->sd0);
        LAUNCHED("pearson_pairs");
    }
cleanup:
    return status;
}

template <typename T>
int gpucor_pairwise(dev_problem *d, char *msg, size_t msgcap)
{
    int status = GPUCOR_OK;
    cudaStream_t st = d->gc->st;
    double *zx = NULL, *zy = NULL;
    int *ordx = NULL, *ordy = NULL, *scratch = NULL, *dsd0 = NULL;
    size_t m = d->m, v = d->v, q = d->q, used = 0;
    int spearman = d->method == COR_SPEARMAN && !d->cosine;
    pw_ctx<T> c;
    memset(&c, 0, sizeof c);
    c.d = d;

    if (spearman) {
        /* ord, gs, ge (m ints each) and obs per column, x then y */
        size_t per = 3 * m + 1;
        DALLOC(ordx, per * v * sizeof(int), "sorted columns");
        status = gpucor_sort_columns(d->x, m, v, ordx, ordx + m * v,
                                     ordx + 2 * m * v, ordx + 3 * m * v, st, msg,
                                     msgcap);
        if (status != GPUCOR_OK) goto cleanup;
        c.sx.ord = ordx; c.sx.gs = ordx + m * v; c.sx.ge = ordx + 2 * m * v;
        c.sx.obs = ordx + 3 * m * v;
        c.sy = c.sx;
        if (!d->symmetric) {
            DALLOC(ordy, per * q * sizeof(int), "sorted columns");
            status = gpucor_sort_columns(d->y, m, q, ordy, ordy + m * q,
                                         ordy + 2 * m * q, ordy + 3 * m * q, st,
                                         msg, msgcap);
            if (status != GPUCOR_OK) goto cleanup;
            c.sy.ord = ordy; c.sy.gs = ordy + m * q; c.sy.ge = ordy + 2 * m * q;
            c.sy.obs = ordy + 3 * m * q;
        }
        used = per * (v + (d->symmetric ? 0 : q)) * sizeof(int);
        /* P and R per block: in shared memory while they fit the default
         * 48 KiB, else in global scratch (L2-resident for moderate m) */
        size_t bytes = (2 * m + 2) * sizeof(int);
        c.blocks = (size_t) d->gc->sms * 16;
        c.in_shared = bytes <= 48 * 1024;
        if (c.in_shared) {
            c.smem = bytes;
        } else {
            size_t cap = gpucor_device_budget(d->host, used) / 2 / bytes;
            if (cap < c.blocks) c.blocks = cap;
            if (c.blocks < 1) {
                snprintf(msg, msgcap, "out of GPU memory for re-ranking %zu rows", m);
                status = GPUCOR_ERR_ALLOC;
                goto cleanup;
            }
            DALLOC(scratch, c.blocks * bytes, "re-ranking scratch");
            used += c.blocks * bytes;
        }
        c.scratch = scratch;
    } else {
        DALLOC(zx, m * v * sizeof(double), "scaled columns");
        scale_cols<<<(unsigned) v, 256, 0, st>>>(d->x, m, zx);
        LAUNCHED("scale_cols");
        c.zx = c.zy = zx;
        if (!d->symmetric) {
            DALLOC(zy, m * q * sizeof(double), "scaled columns");
            scale_cols<<<(unsigned) q, 256, 0, st>>>(d->y, m, zy);
            LAUNCHED("scale_cols");
            c.zy = zy;
        }
        used = m * (v + (d->symmetric ? 0 : q)) * sizeof(double);
    }
    DALLOC(dsd0, sizeof(int), "flag");
    CU(cudaMemsetAsync(dsd0, 0, sizeof(int), st));
    c.sd0 = dsd0;
    /* the tile grid has at most 65535 x 32 panel columns */
    status = gpucor_plan_panels(d, sizeof(T), 0, used, (size_t) 65535 * PT, 1, &c.pl,
                                msg, msgcap);
    if (status != GPUCOR_OK) goto cleanup;
    if (c.pl.npanels) DALLOC(c.buf, v * c.pl.w * sizeof(T), "panel");
    status = gc_cuda_run(pw_produce<T>, &c, &c.pl, sizeof(T) == sizeof(float),
                         d->sink, d->host, d->gc, msg, msgcap);
    if (status != GPUCOR_OK) goto cleanup;
    CU(cudaMemcpy(&d->sd0, dsd0, sizeof(int), cudaMemcpyDeviceToHost));

cleanup:
    cudaStreamSynchronize(st);
    cudaFree(zx); cudaFree(zy);
    cudaFree(ordx); cudaFree(ordy);
    cudaFree(scratch); cudaFree(dsd0); cudaFree(c.buf);
    return status;
}

template int gpucor_pairwise<double>(dev_problem *, char *, size_t);
template int gpucor_pairwise<float>(dev_problem *, char *, size_t);
