/*
 * run.cu -- see run.cuh.
 */
#include <stdlib.h>
#include "paths.cuh"
#include "worker.cuh"
#include "../engine/select.h"
#include "engine.h"

size_t gpucor_device_budget(const gc_host *host, size_t used)
{
    size_t fr = 0, tot = 0;
    if (cudaMemGetInfo(&fr, &tot) != cudaSuccess) {
        (void) cudaGetLastError();
        fr = 0;
    }
    /* what is free now already excludes 'used' */
    size_t b = (size_t) (0.9 * (double) fr);
    if (host->opts->gpu_memory > 0) {
        double left = host->opts->gpu_memory - (double) used;
        if (left < (double) b) b = left > 0 ? (size_t) left : 0;
    }
    return b;
}

size_t gc_cuda_sink_col_bytes(const gc_sink *sink, size_t elt, int narrow)
{
    const gc_cuda_sink_half *h = &gc_cuda_sink_halves[sink->kind];
    return h->col_bytes ? h->col_bytes(sink, elt, narrow) : 0;
}

int gc_cuda_plan(const gc_sink *sink, size_t ncols, size_t rows, size_t elt,
                 size_t extra, size_t used, size_t align, size_t max_w, int how,
                 const gc_host *host, gc_plan *pl, char *msg, size_t msgcap)
{
    int whole = (how & GC_PLAN_WHOLE) != 0;
    size_t avail = gpucor_device_budget(host, used);
    /* a share of the result (BiocParallel): every process must cut the
     * same panels, so the free memory, which differs, does not choose
     * them; the panels must still fit (checked below) */
    int share = host->opts->col1 > 0;
    size_t real_avail = avail;
    if (share) avail = (size_t) -1 / 4;
    const gc_cuda_sink_half *half = &gc_cuda_sink_halves[sink->kind];
    int narrow = half->narrow ? half->narrow(sink, elt, whole) : 0;
    size_t col = rows * elt + extra + gc_cuda_sink_col_bytes(sink, elt, narrow);
    size_t stage = sink->p * elt, cap = GPUCOR_PANEL_BYTES;
    if (narrow) {
        /* k records a column, and panels of up to 1 GiB of values */
        stage = gc_cuda_sink_col_bytes(sink, elt, 1);
        size_t wmax = GPUCOR_WIDE_PANEL_BYTES / (rows * elt ? rows * elt : 1);
        cap = stage * (wmax ? wmax : 1);
        if (cap > GPUCOR_PANEL_BYTES) cap = GPUCOR_PANEL_BYTES;
    }
    if (gc_plan_panels(ncols, col, stage, cap, avail, align, max_w,
                       host->opts->gpu_panel, pl)) {
        pl->narrow = narrow;
        pl->split = (how & GC_PLAN_SPLIT) != 0 && !share;
        if (share && pl->w > 0 && col > real_avail / pl->w) {
            snprintf(msg, msgcap, "out of GPU memory: %.1f MiB free for the panels "
                     "of %.1f MiB that every BiocParallel worker cuts alike",
                     real_avail / 1048576.0, (double) col * pl->w / 1048576.0);
            return GPUCOR_ERR_ALLOC;
        }
        /* one plan for every worker of the call, of this process's share */
        if (gc_worker_agree(pl, host->opts->col0, host->opts->col1,
                            host->opts->col_cover) == GPUCOR_OK)
            return GPUCOR_OK;
        snprintf(msg, msgcap, "interrupted");
        return GPUCOR_ERR_INTERRUPT;
    }
    if (sink->p * elt > GPUCOR_PANEL_BYTES)
        snprintf(msg, msgcap, "a result column of %.1f MiB exceeds the %.0f MiB "
                 "staging buffers: compute the result in blocks",
                 sink->p * elt / 1048576.0, GPUCOR_PANEL_BYTES / 1048576.0);
    else
        snprintf(msg, msgcap, "out of GPU memory: %.1f MiB free for a panel "
                 "needing %.1f MiB", avail / 1048576.0, col / 1048576.0);
    return GPUCOR_ERR_ALLOC;
}

int gc_cuda_run(gc_panel_fn panel, void *self, const gc_plan *pl, int is_float,
                const gc_sink *sink, gc_host *host, gpucor_ctx *gc, char *msg,
                size_t msgcap)
{
    double t;
    int status = GPUCOR_OK;
    size_t esz = is_float ? sizeof(float) : sizeof(double);
    cudaStream_t st = gc->st;
    void *sbuf = NULL, *stage[2] = {gc->pinned[0], gc->pinned[1]};
    cudaEvent_t ev[2] = {NULL, NULL};
    struct { size_t offset, count; gc_tile t; } staged[2];
    int b = 0, pend = -1;
    /* the staged panel in buffer k, once its copy has landed, to the
     * coordinator */
#define HAND_OVER(k)                                                          \
    do {                                                                      \
        t = gpucor_now();                                                     \
        CU(cudaEventSynchronize(ev[k]));                                      \
        host->seconds[0] += gpucor_now() - t;                                 \
        gc_worker_post(k, &staged[k].t, staged[k].offset, staged[k].count);   \
    } while (0)

    if (pl->npanels == 0) return GPUCOR_OK;
    {
        size_t staged = pl->narrow ? gc_cuda_sink_col_bytes(sink, esz, 1) * pl->w
                                   : sink->p * pl->w * esz;
        if (staged > gc->pinned_bytes) {
            snprintf(msg, msgcap, "internal error: a panel of %zu bytes exceeds the "
                     "%zu-byte staging buffers", staged, gc->pinned_bytes);
            return GPUCOR_ERR_INVALID;
        }
    }
    if (gc_cuda_sink_col_bytes(sink, esz, pl->narrow))
        DALLOC(sbuf, gc_cuda_sink_col_bytes(sink, esz, pl->narrow) * pl->w + 64,
               "packed panel");
    for (int k = 0; k < 2; k++)
        CU(cudaEventCreateWithFlags(&ev[k], cudaEventDisableTiming));
    /* Panel s is enqueued into staging buffer b while the D2H copy of the
     * panel before it (buffer pend) may still run; that one is posted to
     * the coordinator, which commits it on R's thread. */
    for (;;) {
        long s = gc_worker_take(pend < 0);
        if (s == -2) {
            /* nothing to take now: hand over what is staged, then wait */
            HAND_OVER(pend);
            pend = -1;
            continue;
        }
        if (s == -3) {
            snprintf(msg, msgcap, "injected failure (GPUCOR_TEST_FAIL_WORKER)");
            status = GPUCOR_ERR_CUDA;
            goto cleanup;
        }
        if (s < 0) break;
        if (gc_worker_wait_free(b)) break;
        size_t j0, j1;
        gc_tile tl;
        const void *src = NULL;
        gc_plan_range(pl, (size_t) s, &j0, &j1);
        status = panel(self, j0, j1, &tl, st, msg, msgcap);
        if (status != GPUCOR_OK) goto cleanup;
        status = gc_cuda_stage(sink, &tl, sbuf, &src, &staged[b].offset,
                               &staged[b].count, st, msg, msgcap);
        if (status != GPUCOR_OK) goto cleanup;
        /* the staged copy, as the host sees it */
        staged[b].t = tl;
        staged[b].t.val = stage[b];
        staged[b].t.ld = tl.ni;
        if (staged[b].count)
            CU(cudaMemcpyAsync(stage[b], src, staged[b].count * esz,
                               cudaMemcpyDeviceToHost, st));
        CU(cudaEventRecord(ev[b], st));
        if (pend >= 0) HAND_OVER(pend);
        pend = b;
        b = 1 - b;
    }
    if (gc_worker_stopped()) {
        status = GPUCOR_ERR_INTERRUPT;
        snprintf(msg, msgcap, "interrupted");
        goto cleanup;
    }
    if (pend >= 0) HAND_OVER(pend);
#undef HAND_OVER

cleanup:
    /* nothing may still be writing into, or reading from, the buffers */
    cudaStreamSynchronize(st);
    gc_worker_drain();
    for (int k = 0; k < 2; k++)
        if (ev[k]) cudaEventDestroy(ev[k]);
    cudaFree(sbuf);
    return status;
}

int gpucor_plan_panels(const dev_problem *d, size_t elt, size_t per_col,
                       size_t used, size_t max_w, int split, gc_plan *pl,
                       char *msg, size_t msgcap)
{
    size_t ncols = d->tri ? (d->v > 0 ? d->v - 1 : 0) : d->q;
    return gc_cuda_plan(d->sink, ncols, d->v, elt, per_col, used, 1, max_w,
                        (d->tri ? 0 : GC_PLAN_WHOLE) | (split ? GC_PLAN_SPLIT : 0),
                        d->host, pl, msg, msgcap);
}

void gc_cuda_panel_tile(size_t i0, size_t rows, size_t j0, size_t j1,
                        const void *val, int is_float, double scale, int tri,
                        gc_tile *t)
{
    t->i0 = i0;
    t->ni = t->ld = rows - i0;
    t->j0 = j0;
    t->nj = j1 - j0;
    t->val = val;
    t->is_float = is_float;
    t->scale = scale;
    t->rec = TILE_VALUES;
    t->nrec = 0;
    t->tri = tri;
}

void gpucor_panel_tile(const dev_problem *d, size_t j0, size_t j1,
                       const void *val, int is_float, gc_tile *t)
{
    gc_cuda_panel_tile(panel_i0(*d, j0), d->v, j0, j1, val, is_float, 1.0, d->tri, t);
}

/* The producer of each measure family (FAMILY_* order: C++ has no array
 * designators).  A new family is a row here and its producer's file. */
typedef int (*gc_cuda_producer)(const gc_problem *pb, const gc_sink *sink, gc_host *host,
                                gc_pass *out, char *msg, size_t msgcap);
static const gc_cuda_producer producers[] = {
    /* FAMILY_PRODUCT */ gpucor_cuda_cor,    /* cor.cu */
    /* FAMILY_PAIR */ gpucor_cuda_cor,       /* cor.cu -> kendall.cu */
    /* FAMILY_DISTANCE */ gpucor_cuda_dist,  /* distance.cu */
    /* FAMILY_KNNMI */ gpucor_cuda_knnmi,    /* knnmi.cu */
};
static_assert(FAMILY_PRODUCT == 0 && FAMILY_PAIR == 1 && FAMILY_DISTANCE == 2 &&
              FAMILY_KNNMI == 3, "producers follows the FAMILY_* order");

extern "C" int gpucor_cuda_run(const gc_problem *pb, const gc_sink *sink, gc_host *host,
                               gc_pass *out, char *msg, size_t msgcap)
{
    return producers[pb->measure->family](pb, sink, host, out, msg, msgcap);
}
