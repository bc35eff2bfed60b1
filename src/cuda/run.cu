/*
 * run.cu -- see run.cuh.
 */
#include <time.h>
#include "paths.cuh"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

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

size_t gc_cuda_sink_col_bytes(const gc_sink *sink, size_t elt)
{
    return sink->kind == SINK_DIST ? sink->p * elt : 0;
}

int gc_cuda_plan(const gc_sink *sink, size_t ncols, size_t rows, size_t elt,
                 size_t extra, size_t used, size_t align, size_t max_w,
                 const gc_host *host, gc_plan *pl, char *msg, size_t msgcap)
{
    size_t avail = gpucor_device_budget(host, used);
    size_t col = rows * elt + extra + gc_cuda_sink_col_bytes(sink, elt);
    if (gc_plan_panels(ncols, col, sink->p * elt, GPUCOR_PANEL_BYTES, avail,
                       align, max_w, host->opts->gpu_panel, pl))
        return GPUCOR_OK;
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
    double t0 = now(), t;
    int status = GPUCOR_OK;
    size_t esz = is_float ? sizeof(float) : sizeof(double);
    size_t npanels = pl->npanels;
    cudaStream_t st = gc->st;
    void *sbuf = NULL, *stage[2] = {gc->pinned[0], gc->pinned[1]};
    cudaEvent_t ev[2] = {NULL, NULL};
    struct { size_t offset, count; double scale; } staged[2] = {{0, 0, 1}, {0, 0, 1}};
    size_t s;

    if (npanels == 0) return GPUCOR_OK;
    if (sink->p * pl->w * esz > gc->pinned_bytes) {
        snprintf(msg, msgcap, "internal error: a panel of %zu bytes exceeds the "
                 "%zu-byte staging buffers", sink->p * pl->w * esz, gc->pinned_bytes);
        return GPUCOR_ERR_INVALID;
    }
    gc_sink_begin(sink);
    if (gc_cuda_sink_col_bytes(sink, esz))
        DALLOC(sbuf, gc_cuda_sink_col_bytes(sink, esz) * pl->w, "packed panel");
    for (int b = 0; b < 2; b++)
        CU(cudaEventCreateWithFlags(&ev[b], cudaEventDisableTiming));
    for (s = 0; s <= npanels; s++) {
        int b = (int) (s % 2);
        if (s < npanels) {
            if (host->interrupted && host->interrupted()) {
                status = GPUCOR_ERR_INTERRUPT;
                snprintf(msg, msgcap, "interrupted");
                goto cleanup;
            }
            size_t j0, j1;
            gc_tile tl;
            const void *src = NULL;
            gc_plan_range(pl, s, &j0, &j1);
            status = panel(self, j0, j1, &tl, st, msg, msgcap);
            if (status != GPUCOR_OK) goto cleanup;
            status = gc_cuda_stage(sink, &tl, sbuf, &src, &staged[b].offset,
                                   &staged[b].count, st, msg, msgcap);
            if (status != GPUCOR_OK) goto cleanup;
            staged[b].scale = tl.scale;
            if (staged[b].count)
                CU(cudaMemcpyAsync(stage[b], src, staged[b].count * esz,
                                   cudaMemcpyDeviceToHost, st));
            CU(cudaEventRecord(ev[b], st));
        }
        if (s > 0) {
            /* commit panel s - 1 while the device works on panel s */
            int a = 1 - b;
            t = now();
            CU(cudaEventSynchronize(ev[a]));
            host->seconds[0] += now() - t;
            t = now();
            gc_sink_commit(sink, staged[a].offset, stage[a], staged[a].count,
                           is_float, staged[a].scale, host->opts->nthreads);
            host->seconds[1] += now() - t;
            if (host->progress) host->progress(host->progress_ctx, (double) s / npanels);
        }
    }

cleanup:
    host->seconds[2] = now() - t0;
    /* nothing may still be writing into the buffers we free */
    cudaStreamSynchronize(st);
    for (int b = 0; b < 2; b++)
        if (ev[b]) cudaEventDestroy(ev[b]);
    cudaFree(sbuf);
    return status;
}

int gpucor_plan_panels(const dev_problem *d, size_t elt, size_t per_col,
                       size_t used, size_t max_w, gc_plan *pl, char *msg,
                       size_t msgcap)
{
    size_t ncols = d->dist ? (d->v > 0 ? d->v - 1 : 0) : d->q;
    return gc_cuda_plan(d->sink, ncols, d->v, elt, per_col, used, 1, max_w,
                        d->host, pl, msg, msgcap);
}

void gc_cuda_panel_tile(size_t i0, size_t rows, size_t j0, size_t j1,
                        const void *val, int is_float, double scale, gc_tile *t)
{
    t->i0 = i0;
    t->ni = t->ld = rows - i0;
    t->j0 = j0;
    t->nj = j1 - j0;
    t->val = val;
    t->is_float = is_float;
    t->scale = scale;
}

void gpucor_panel_tile(const dev_problem *d, size_t j0, size_t j1,
                       const void *val, int is_float, gc_tile *t)
{
    gc_cuda_panel_tile(panel_i0(*d, j0), d->v, j0, j1, val, is_float, 1.0, t);
}
