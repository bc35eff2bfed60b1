/*
 * select.cu -- the device half of the selecting sink (engine/select.h):
 * what can be selected on the device is, so that only the kept pairs cross
 * PCIe.
 *
 *  - A collecting pass (threshold; the last pass of a density or an FDR
 *    selection) compacts the pairs whose key reaches the cut into gc_pair
 *    records.  When more pairs pass than the buffer holds (a threshold of
 *    0, say), the panel's values are staged instead and the host selects.
 *  - A heap pass over whole columns of a symmetric result (top_k), or of
 *    a query's result (gpu_knn(query =): the columns' heaps only), keeps
 *    each column's k best partners: every thread of a column's block keeps
 *    its own sorted best k in registers, then k rounds of a block-wide
 *    arg-max take the column's best k from the threads' heads.
 *  - Anything else (histograms; p-value keys; k > SEL_DEVICE_TOPK) stages
 *    the values for the host.
 * The host half (sink_select.c) takes the records where it would have
 * taken the values.
 */
#include <stdint.h>
#include "run.cuh"
#include "../engine/select.h"

template <typename T>
__device__ static inline int tile_value(const T *val, size_t a, size_t b, size_t ld,
                                        int epi, double scale, double *v)
{
    T raw = val[a + b * ld];
    if (isnan(raw)) return 0;
    *v = gc_epilogue(epi, 0.0, (double) raw * scale);   /* no adjacency here */
    return 1;
}

template <typename T>
__global__ static void sel_compact(const T *val, size_t ld, size_t i0, size_t ni,
                                   size_t j0, size_t nj, int symmetric, int epi,
                                   double scale, int skind, int key_abs,
                                   uint64_t lower, gc_pair *out,
                                   unsigned long long cap,
                                   unsigned long long *count)
{
    size_t len = ni * nj;
    for (size_t k = blockIdx.x * (size_t) blockDim.x + threadIdx.x; k < len;
         k += (size_t) gridDim.x * blockDim.x) {
        size_t a = k % ni, b = k / ni, i = i0 + a, j = j0 + b;
        if (symmetric && i <= j) continue;
        double v;
        if (!tile_value(val, a, b, ld, epi, scale, &v)) continue;
        double key = key_abs ? fabs(v) : sel_strength(skind, v);
        if (sel_code(key) < lower) continue;
        unsigned long long at = atomicAdd(count, 1ULL);
        if (at < cap) {
            gc_pair r;
            r.v = v;
            r.i = (uint32_t) i;
            r.j = (uint32_t) j;
            out[at] = r;
        }
    }
}

/* Histogram of the keys under (prefix, bits).  At the first level the
 * keys of correlations, |r| in [2^-255, 2), fall in a window of 4096 bins
 * (the codes' top 16 bits are the sign, the exponent and 4 bits of the
 * mantissa): each block counts those in shared memory and adds its nonzero
 * bins at the end.  Other keys (refined levels, negative strengths) go to
 * global memory, lanes of a warp that hit one bin adding once
 * (__match_any_sync). */
#define HIST_WINDOW 4096
#define HIST_WLO (0xBFF0u + 16u - HIST_WINDOW)
#define HIST_BLOCKS 1024

template <typename T>
__global__ static void sel_hist(const T *val, size_t ld, size_t i0, size_t ni,
                                size_t j0, size_t nj, int symmetric, int epi,
                                double scale, int skind, int key_abs,
                                uint64_t prefix, int bits,
                                unsigned long long *hist)
{
    const unsigned NONE = 0xffffffffu, ABOVE = 0xfffffffeu;
    __shared__ unsigned sh[HIST_WINDOW];
    __shared__ unsigned long long nvalid;
    for (int e = threadIdx.x; e < HIST_WINDOW; e += blockDim.x) sh[e] = 0;
    if (threadIdx.x == 0) nvalid = 0;
    __syncthreads();
    size_t len = ni * nj;
    unsigned long long myvalid = 0;
    for (size_t k = blockIdx.x * (size_t) blockDim.x + threadIdx.x; k < len;
         k += (size_t) gridDim.x * blockDim.x) {
        size_t a = k % ni, b = k / ni, i = i0 + a, j = j0 + b;
        unsigned bin = NONE;
        double v;
        if (!(symmetric && i <= j) && tile_value(val, a, b, ld, epi, scale, &v)) {
            uint64_t c = sel_code(key_abs ? fabs(v) : sel_strength(skind, v));
            if (bits == 0) bin = (unsigned) (c >> (64 - SEL_BIN_BITS));
            else if ((c >> (64 - bits)) == prefix)
                bin = (unsigned) ((c << bits) >> (64 - SEL_BIN_BITS));
            else if ((c >> (64 - bits)) > prefix) bin = ABOVE;
        }
        if (bin != NONE) myvalid++;
        if (bits == 0 && bin != NONE && bin - HIST_WLO < HIST_WINDOW) {
            atomicAdd(&sh[bin - HIST_WLO], 1u);
            bin = NONE;
        }
        unsigned act = __activemask();
        unsigned same = __match_any_sync(act, bin);
        int lane = threadIdx.x % 32;
        if (bin != NONE && lane == __ffs(same) - 1)
            atomicAdd(&hist[bin == ABOVE ? SEL_NBINS : bin], (unsigned long long) __popc(same));
    }
    atomicAdd(&nvalid, myvalid);
    __syncthreads();
    for (int e = threadIdx.x; e < HIST_WINDOW; e += blockDim.x)
        if (sh[e]) atomicAdd(&hist[HIST_WLO + e], (unsigned long long) sh[e]);
    if (threadIdx.x == 0 && nvalid) atomicAdd(&hist[SEL_NBINS + 1], nvalid);
}

/* (s, i) before (t, j): stronger, or as strong with the smaller index */
__device__ static inline int better(double s, uint32_t i, double t, uint32_t j)
{
    return s > t || (s == t && i < j);
}

#define TOPK_THREADS 512
#define FULLMASK 0xffffffffu

/* A warp's sorted best k (k <= 32) in registers: lane l holds entry l
 * (best first).  The lanes whose candidate beats the warp's k-th are
 * inserted one by one (a ballot for the position, a shuffle for the
 * shift), so a column costs about k log(n / k) insertions per warp. */
typedef struct {
    double s, v;       /* this lane's entry */
    uint32_t i;
    int has;
    double ws;         /* warp-uniform: the k-th entry, when full */
    uint32_t wi;
    int full;
} warp_list;

__device__ static void warp_offer(warp_list *L, int k, int take, double s, double v,
                                  uint32_t i)
{
    int lane = threadIdx.x % 32;
    take = take && (!L->full || better(s, i, L->ws, L->wi));
    unsigned m = __ballot_sync(FULLMASK, take);
    while (m) {
        int src = __ffs(m) - 1;
        m &= m - 1;
        double cs = __shfl_sync(FULLMASK, s, src), cv = __shfl_sync(FULLMASK, v, src);
        uint32_t ci = __shfl_sync(FULLMASK, i, src);
        if (L->full && !better(cs, ci, L->ws, L->wi)) continue;   /* warp-uniform */
        int pos = __popc(__ballot_sync(FULLMASK, lane < k && L->has && better(L->s, L->i, cs, ci)));
        double us = __shfl_up_sync(FULLMASK, L->s, 1), uv = __shfl_up_sync(FULLMASK, L->v, 1);
        uint32_t ui = __shfl_up_sync(FULLMASK, L->i, 1);
        int uh = __shfl_up_sync(FULLMASK, L->has, 1);
        if (lane > pos && lane < k) { L->s = us; L->v = uv; L->i = ui; L->has = uh; }
        if (lane == pos) { L->s = cs; L->v = cv; L->i = ci; L->has = 1; }
        L->full = __shfl_sync(FULLMASK, L->has, k - 1);
        L->ws = __shfl_sync(FULLMASK, L->s, k - 1);
        L->wi = __shfl_sync(FULLMASK, L->i, k - 1);
    }
}

template <typename T>
__global__ static void __launch_bounds__(TOPK_THREADS)
sel_topk(const T *val, size_t ld, size_t i0, size_t ni, size_t j0, int epi,
         double scale, int skind, int has_thr, double thr, int k, int self, gc_pair *out)
{
    __shared__ double sh_s[TOPK_THREADS], sh_v[TOPK_THREADS];
    __shared__ uint32_t sh_i[TOPK_THREADS];
    __shared__ int sh_h[TOPK_THREADS];
    size_t b = blockIdx.x, j = j0 + b;
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32, nw = blockDim.x / 32;
    warp_list L = {0, 0, 0, 0, 0, 0, 0};
    for (size_t base = (size_t) warp * 32; base < ni; base += (size_t) nw * 32) {
        size_t a = base + lane, i = i0 + a;
        double v = 0, s = 0;
        /* self: rows and columns are the same items, a column is not its
         * own partner (without, a query's column against reference rows) */
        int ok = a < ni && !(self && i == j) && tile_value(val, a, b, ld, epi, scale, &v);
        if (ok) {
            s = sel_strength(skind, v);
            ok = !has_thr || s >= thr;
        }
        warp_offer(&L, k, ok, s, v, (uint32_t) i);
    }
    /* the warps' lists, then warp 0 takes the best k of them */
    sh_s[threadIdx.x] = L.s; sh_v[threadIdx.x] = L.v;
    sh_i[threadIdx.x] = L.i; sh_h[threadIdx.x] = L.has && lane < k;
    __syncthreads();
    if (warp != 0) return;
    warp_list M = {0, 0, 0, 0, 0, 0, 0};
    for (int e = lane; e < (int) blockDim.x; e += 32)
        warp_offer(&M, k, sh_h[e], sh_s[e], sh_v[e], sh_i[e]);
    if (lane < k) {
        gc_pair rec;
        rec.v = M.has ? M.v : 0;
        rec.i = M.has ? M.i : UINT32_MAX;
        rec.j = (uint32_t) j;
        out[b * k + lane] = rec;
    }
}

int gc_cuda_select_topk(const gc_sink *sink, size_t elt)
{
    const gc_select *s = sink->sel;
    /* a symmetric result's columns, or a query's (cols_only: each column's
     * own heap is all there is) */
    return s->mode == SEL_HEAPS && (s->symmetric || s->cols_only) &&
           s->k >= 1 && s->k <= SEL_DEVICE_TOPK && s->k * sizeof(gc_pair) <= sink->p * elt;
}

int gc_cuda_select(const gc_sink *sink, gc_tile *t, void *buf, const void **dst,
                   size_t *count, cudaStream_t st, char *msg, size_t msgcap)
{
    int status = GPUCOR_OK;
    const gc_select *s = sink->sel;
    size_t esz = t->is_float ? sizeof(float) : sizeof(double);
    /* the values as they are, for the host */
    *dst = t->val;
    *count = t->ni * t->nj;
    if (t->ld != t->ni && t->nj > 1) {
        snprintf(msg, msgcap, "internal error: a staged tile must be contiguous");
        return GPUCOR_ERR_INVALID;
    }
    if (*count == 0) return GPUCOR_OK;
    if (s->mode == SEL_COLLECT && s->key != KEY_PVALUE) {
        size_t cap = (sink->p * t->nj * esz) / sizeof(gc_pair);
        unsigned long long *dcount = (unsigned long long *) buf;
        gc_pair *out = (gc_pair *) ((char *) buf + 64);
        unsigned long long hcount = 0;
        CU(cudaMemsetAsync(dcount, 0, sizeof *dcount, st));
        size_t len = t->ni * t->nj, blocks = (len + 255) / 256;
        if (blocks > 65536) blocks = 65536;
        if (t->is_float)
            sel_compact<float><<<(unsigned) blocks, 256, 0, st>>>(
                (const float *) t->val, t->ld, t->i0, t->ni, t->j0, t->nj, s->symmetric,
                sink->epilogue, t->scale, s->strength, s->key == KEY_ABS, s->lower, out,
                cap, dcount);
        else
            sel_compact<double><<<(unsigned) blocks, 256, 0, st>>>(
                (const double *) t->val, t->ld, t->i0, t->ni, t->j0, t->nj, s->symmetric,
                sink->epilogue, t->scale, s->strength, s->key == KEY_ABS, s->lower, out,
                cap, dcount);
        LAUNCHED("sel_compact");
        CU(cudaMemcpyAsync(&hcount, dcount, sizeof hcount, cudaMemcpyDeviceToHost, st));
        CU(cudaStreamSynchronize(st));
        if (hcount <= cap) {
            t->rec = TILE_PAIRS;
            t->nrec = (size_t) hcount;
            *dst = out;
            *count = (hcount * sizeof(gc_pair) + esz - 1) / esz;
        }
    } else if (s->mode == SEL_HIST && s->key != KEY_PVALUE &&
               (SEL_NBINS + 2) * sizeof(uint64_t) <= sink->p * t->nj * esz) {
        unsigned long long *hist = (unsigned long long *) buf;
        CU(cudaMemsetAsync(hist, 0, (SEL_NBINS + 2) * sizeof *hist, st));
        size_t len = t->ni * t->nj, blocks = (len + 255) / 256;
        if (blocks > HIST_BLOCKS) blocks = HIST_BLOCKS;
        if (t->is_float)
            sel_hist<float><<<(unsigned) blocks, 256, 0, st>>>(
                (const float *) t->val, t->ld, t->i0, t->ni, t->j0, t->nj, s->symmetric,
                sink->epilogue, t->scale, s->strength, s->key == KEY_ABS, s->prefix,
                s->prefix_bits, hist);
        else
            sel_hist<double><<<(unsigned) blocks, 256, 0, st>>>(
                (const double *) t->val, t->ld, t->i0, t->ni, t->j0, t->nj, s->symmetric,
                sink->epilogue, t->scale, s->strength, s->key == KEY_ABS, s->prefix,
                s->prefix_bits, hist);
        LAUNCHED("sel_hist");
        t->rec = TILE_HIST;
        t->nrec = SEL_NBINS + 2;
        *dst = hist;
        *count = ((SEL_NBINS + 2) * sizeof(uint64_t) + esz - 1) / esz;
    } else if (gc_cuda_select_topk(sink, esz) && !t->tri && t->i0 == 0 &&
               t->ni == sink->p) {
        gc_pair *out = (gc_pair *) buf;
        if (t->is_float)
            sel_topk<float><<<(unsigned) t->nj, TOPK_THREADS, 0, st>>>(
                (const float *) t->val, t->ld, t->i0, t->ni, t->j0, sink->epilogue,
                t->scale, s->strength, s->has_thr, s->thr, (int) s->k, s->symmetric, out);
        else
            sel_topk<double><<<(unsigned) t->nj, TOPK_THREADS, 0, st>>>(
                (const double *) t->val, t->ld, t->i0, t->ni, t->j0, sink->epilogue,
                t->scale, s->strength, s->has_thr, s->thr, (int) s->k, s->symmetric, out);
        LAUNCHED("sel_topk");
        t->rec = TILE_TOPK;
        t->nrec = t->nj * s->k;
        *dst = out;
        *count = (t->nrec * sizeof(gc_pair) + esz - 1) / esz;
    }
cleanup:
    return status;
}
