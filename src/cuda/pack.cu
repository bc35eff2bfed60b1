/*
 * pack.cu -- the device half of the sinks: a canonical tile becomes
 * the contiguous range of the result it covers.  A dense panel of whole
 * columns already is that range (after its epilogue, in place); a 'dist'
 * panel is packed (its pairs i > j, column after column) with the sink's
 * epilogue; the resident sinks (SINK_DIST_DEVICE, SINK_DENSE_DEVICE) take
 * the panel into device memory and stage nothing; SINK_POWSUM stages the
 * columns' sums of powers; the selecting sink takes the panel as it is.
 */
#include <stdlib.h>
#include "run.cuh"
#include "../engine/select.h"

template <typename T>
__global__ static void pack_dist(const T *val, size_t ld, size_t i0, size_t ni,
                                 size_t j0, size_t p, int epi, double beta, double scale,
                                 T *out)
{
    size_t b = blockIdx.y, j = j0 + b;
    size_t i = j + 1 + blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (i >= p || i < i0 || i >= i0 + ni) return;
    T r = val[(i - i0) + b * ld];
    /* NA and NaN pass as they are (arithmetic would lose R's NA payload) */
    if (!isnan(r)) r = (T) (gc_epilogue(epi, beta, r) * scale);
    out[dist_offset(p, j) - dist_offset(p, j0) + (i - j - 1)] = r;
}

/* A dense panel of whole columns (p rows, leading dimension ld_in) after
 * the epilogue, into out (leading dimension ld_out; may be val itself). */
template <typename T>
__global__ static void dense_epilogue(const T *val, size_t ld_in, size_t p, size_t nj,
                                      int epi, double beta, double scale, T *out,
                                      size_t ld_out)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x, b = blockIdx.y;
    if (i >= p || b >= nj) return;
    T r = val[i + b * ld_in];
    if (!isnan(r)) r = (T) (gc_epilogue(epi, beta, (double) r * scale));
    out[i + b * ld_out] = r;
}

/* The device half of SINK_POWSUM: per column b of the panel, the sums over
 * rows i != j0 + b of the powers of the adjacency (engine.h's order of
 * multiplications), npow doubles per column into out; with 'degree', the
 * count and the sum of the values above 'cut' instead.  One block per
 * column; each thread keeps POWCHUNK partial sums, a chunk of powers at a
 * time. */
#define POWCHUNK 16
template <typename T>
__global__ static void powsum(const T *val, size_t ld, size_t p, size_t j0, int epi,
                              double beta, double scale, const double *w, int npow,
                              int degree, double cut, double *out)
{
    __shared__ double sh[POWCHUNK][32];
    __shared__ double steps[POWCHUNK];
    size_t b = blockIdx.x, j = j0 + b;
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarp = blockDim.x >> 5;
    for (int t0 = 0; t0 < npow; t0 += POWCHUNK) {
        double acc[POWCHUNK];
#pragma unroll
        for (int u = 0; u < POWCHUNK; u++) acc[u] = 0;
        if (threadIdx.x < POWCHUNK && t0 + (int) threadIdx.x < npow) {
            int t = t0 + threadIdx.x;
            steps[threadIdx.x] = w[t] - (t ? w[t - 1] : 0.0);
        }
        __syncthreads();
        for (size_t i = threadIdx.x; i < p; i += blockDim.x) {
            if (i == j) continue;
            T raw = val[i + b * ld];
            if (isnan(raw)) continue;
            double a = gc_epilogue(epi, beta, (double) raw * scale), cur = 1.0, prev = 0.0;
            if (a != a) continue;
            if (degree) {          /* the count and the sum above the cut (npow == 2) */
                if (a > cut) {
                    acc[0] += 1;
                    acc[1] += a;
                }
                continue;
            }
            for (int t = 0; t < t0; t++) {      /* the powers of earlier chunks */
                cur *= gc_rpow(a, w[t] - prev);
                prev = w[t];
            }
#pragma unroll
            for (int u = 0; u < POWCHUNK; u++)
                if (t0 + u < npow) {
                    cur *= gc_rpow(a, steps[u]);
                    acc[u] += cur;
                }
        }
#pragma unroll
        for (int u = 0; u < POWCHUNK; u++) {
            double v = acc[u];
            for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
            if (lane == 0) sh[u][warp] = v;
        }
        __syncthreads();
        if (threadIdx.x < POWCHUNK && t0 + (int) threadIdx.x < npow) {
            double v = 0;
            for (int k = 0; k < nwarp; k++) v += sh[threadIdx.x][k];
            out[(t0 + threadIdx.x) + b * (size_t) npow] = v;
        }
        __syncthreads();
    }
}

/* The device halves.  Each lays tile t (device memory) out as the
 * contiguous range of the result it covers (run.cuh's gc_cuda_sink_half). */

/* A dense panel must be whole columns (all p rows, contiguous); *esz: the
 * size of its elements. */
static int whole_columns(const gc_sink *sink, const gc_tile *t, size_t *esz, char *msg,
                         size_t msgcap)
{
    size_t p = sink->p;
    *esz = t->is_float ? sizeof(float) : sizeof(double);
    if (t->i0 != 0 || t->ni != p || (t->ld != p && t->nj > 1)) {
        snprintf(msg, msgcap, "internal error: a dense panel must be whole columns");
        return GPUCOR_ERR_INVALID;
    }
    return GPUCOR_OK;
}

/* SINK_DENSE, SINK_DENSE_DEVICE, SINK_FILE: the panel already is its
 * range; the resident matrix takes it after the epilogue, scaled; a host
 * matrix gets its epilogue in place. */
static int dense_panel(int dev, const gc_sink *sink, gc_tile *t, const void **dst,
                       size_t *offset, size_t *count, cudaStream_t st, char *msg,
                       size_t msgcap)
{
    size_t p = sink->p, esz;
    int status = whole_columns(sink, t, &esz, msg, msgcap);
    if (status != GPUCOR_OK) return status;
    dim3 grid((unsigned) ((p + 255) / 256), (unsigned) t->nj);
    if (dev || sink->epilogue != EPI_IDENTITY) {
        size_t ld = dev ? (sink->ld ? sink->ld : p) : t->ld;
        void *out = dev ? (char *) sink->dev_out + t->j0 * ld * esz : (void *) t->val;
        double scale = dev ? t->scale : 1.0;
        if (t->nj) {
            if (t->is_float)
                dense_epilogue<float><<<grid, 256, 0, st>>>(
                    (const float *) t->val, t->ld, p, t->nj, sink->epilogue, sink->beta,
                    scale, (float *) out, ld);
            else
                dense_epilogue<double><<<grid, 256, 0, st>>>(
                    (const double *) t->val, t->ld, p, t->nj, sink->epilogue, sink->beta,
                    scale, (double *) out, ld);
            LAUNCHED("dense_epilogue");
        }
    }
    *dst = t->val;
    *offset = t->j0 * p;
    *count = dev ? 0 : t->nj * p;
cleanup:
    return status;
}

/* SINK_POWSUM: npow sums per column, staged */
static int stage_powsum(const gc_sink *sink, gc_tile *t, void *buf, const void **dst,
                        size_t *offset, size_t *count, cudaStream_t st, char *msg,
                        size_t msgcap)
{
    size_t p = sink->p, esz;
    int status = whole_columns(sink, t, &esz, msg, msgcap);
    if (status != GPUCOR_OK) return status;
    const gc_powsum *ps = sink->pow;
    /* the powers sit after the sums in the sink's device buffer */
    double *sums = (double *) buf, *w = sums + t->nj * ps->npow;
    CU(cudaMemcpyAsync(w, ps->w, ps->npow * sizeof(double), cudaMemcpyHostToDevice, st));
    if (t->nj) {
        if (t->is_float)
            powsum<float><<<(unsigned) t->nj, 256, 0, st>>>(
                (const float *) t->val, t->ld, p, t->j0, sink->epilogue, sink->beta,
                t->scale, w, ps->npow, ps->degree, ps->cut, sums);
        else
            powsum<double><<<(unsigned) t->nj, 256, 0, st>>>(
                (const double *) t->val, t->ld, p, t->j0, sink->epilogue, sink->beta,
                t->scale, w, ps->npow, ps->degree, ps->cut, sums);
        LAUNCHED("powsum");
    }
    t->rec = TILE_POWSUM;
    *dst = sums;
    *offset = 0;
    *count = (t->nj * ps->npow * sizeof(double) + esz - 1) / esz;
cleanup:
    return status;
}

/* SINK_DIST, SINK_DIST_DEVICE: the panel's pairs i > j packed, column
 * after column, with the epilogue; the resident 'dist' takes them in
 * place, scaled, and nothing goes to the host */
static int dist_panel(int dev, const gc_sink *sink, gc_tile *t, void *buf, const void **dst,
                      size_t *offset, size_t *count, cudaStream_t st, char *msg,
                      size_t msgcap)
{
    int status = GPUCOR_OK;
    size_t p = sink->p, j1 = t->j0 + t->nj;
    *dst = buf;
    *offset = dist_offset(p, t->j0);
    *count = dist_offset(p, j1 < p ? j1 : p) - *offset;
    if (*count == 0) return GPUCOR_OK;
    double scale = dev ? t->scale : 1.0;
    if (dev) {
        buf = (char *) sink->dev_out + *offset * (t->is_float ? sizeof(float) : sizeof(double));
        *count = 0;
    }
    size_t rows = p - t->j0;
    dim3 grid((unsigned) ((rows + 255) / 256), (unsigned) t->nj);
    if (t->is_float)
        pack_dist<float><<<grid, 256, 0, st>>>((const float *) t->val, t->ld, t->i0, t->ni,
                                               t->j0, p, sink->epilogue, sink->beta, scale,
                                               (float *) buf);
    else
        pack_dist<double><<<grid, 256, 0, st>>>((const double *) t->val, t->ld, t->i0,
                                                t->ni, t->j0, p, sink->epilogue,
                                                sink->beta, scale, (double *) buf);
    LAUNCHED("pack_dist");
cleanup:
    return status;
}

#define GC_STAGE_ARGS                                                                \
    const gc_sink *sink, gc_tile *t, void *buf, const void **dst, size_t *offset,      \
        size_t *count, cudaStream_t st, char *msg, size_t msgcap
static int stage_dense(GC_STAGE_ARGS)
{
    (void) buf;
    return dense_panel(0, sink, t, dst, offset, count, st, msg, msgcap);
}

static int stage_dense_device(GC_STAGE_ARGS)
{
    (void) buf;
    return dense_panel(1, sink, t, dst, offset, count, st, msg, msgcap);
}

static int stage_dist(GC_STAGE_ARGS)
{
    return dist_panel(0, sink, t, buf, dst, offset, count, st, msg, msgcap);
}

static int stage_dist_device(GC_STAGE_ARGS)
{
    return dist_panel(1, sink, t, buf, dst, offset, count, st, msg, msgcap);
}

static int stage_select(GC_STAGE_ARGS)
{
    *offset = 0;
    return gc_cuda_select(sink, t, buf, dst, count, st, msg, msgcap);
}

/* Device bytes per result column: the packed 'dist' beside the producer's
 * panel; a selection's records where the column's values would be (or its
 * compacted pairs and their count); npow sums and the powers */
static size_t dist_col_bytes(const gc_sink *sink, size_t elt, int narrow)
{
    (void) narrow;
    return sink->p * elt;
}

static size_t select_col_bytes(const gc_sink *sink, size_t elt, int narrow)
{
    return narrow ? sink->sel->k * sizeof(gc_pair) : sink->p * elt + 64;
}

static size_t powsum_col_bytes(const gc_sink *sink, size_t elt, int narrow)
{
    (void) elt;
    (void) narrow;
    return 2 * sink->pow->npow * sizeof(double);
}

/* Panels that stage a few records per column: a selection that keeps each
 * whole column's best k on the device; the sums of powers always */
static int select_narrow(const gc_sink *sink, size_t elt, int whole)
{
    const char *env = getenv("GPUCOR_TEST_WIDE");   /* bench: "0" keeps 64 MiB panels */
    if (env && env[0] == '0') return 0;
    return whole && gc_cuda_select_topk(sink, elt);
}

static int powsum_narrow(const gc_sink *sink, size_t elt, int whole)
{
    (void) sink;
    (void) elt;
    (void) whole;
    return 1;
}

/* the rows of engine/sink.c's table, on the device, in SINK_* order (C++
 * has no array designators): stage, col_bytes, narrow */
const gc_cuda_sink_half gc_cuda_sink_halves[SINK_COUNT] = {
    /* SINK_DENSE */ {stage_dense, NULL, NULL},
    /* SINK_DIST */ {stage_dist, dist_col_bytes, NULL},
    /* SINK_SELECT */ {stage_select, select_col_bytes, select_narrow},
    /* SINK_DIST_DEVICE */ {stage_dist_device, NULL, NULL},
    /* SINK_DENSE_DEVICE */ {stage_dense_device, NULL, NULL},
    /* SINK_POWSUM */ {stage_powsum, powsum_col_bytes, powsum_narrow},
    /* SINK_FILE */ {stage_dense, NULL, NULL},
};
static_assert(SINK_DENSE == 0 && SINK_DIST == 1 && SINK_SELECT == 2 &&
                  SINK_DIST_DEVICE == 3 && SINK_DENSE_DEVICE == 4 && SINK_POWSUM == 5 &&
                  SINK_FILE == 6 && SINK_COUNT == 7,
              "gc_cuda_sink_halves follows the SINK_* order");

int gc_cuda_stage(const gc_sink *sink, gc_tile *t, void *buf, const void **dst,
                  size_t *offset, size_t *count, cudaStream_t st, char *msg, size_t msgcap)
{
    return gc_cuda_sink_halves[sink->kind].stage(sink, t, buf, dst, offset, count, st, msg,
                                                 msgcap);
}
