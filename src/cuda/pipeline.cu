/*
 * pipeline.cu -- see pipeline.cuh.
 */
#include <time.h>
#include "paths.cuh"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

size_t gpucor_device_budget(const gpu_host *host, size_t used)
{
    size_t fr = 0, tot = 0;
    if (cudaMemGetInfo(&fr, &tot) != cudaSuccess) {
        (void) cudaGetLastError();
        fr = 0;
    }
    /* what is free now already excludes 'used' */
    size_t b = (size_t) (0.9 * (double) fr);
    if (host->mem_cap > 0) {
        double left = host->mem_cap - (double) used;
        if (left < (double) b) b = left > 0 ? (size_t) left : 0;
    }
    return b;
}

int gpucor_pipeline(slab_producer produce, void *ctx, size_t nslabs,
                    size_t max_count, int is_float, double out_scale,
                    double *host_out, gpu_host *host, gpucor_ctx *gc,
                    char *msg, size_t msgcap)
{
    double t0 = now(), t;
    int status = GPUCOR_OK;
    size_t esz = is_float ? sizeof(float) : sizeof(double);
    cudaStream_t st = gc->st;
    void *dout = NULL, *stage[2] = {gc->pinned[0], gc->pinned[1]};
    cudaEvent_t ev[2] = {NULL, NULL};
    slab_info info[2] = {{0, 0, 0}, {0, 0, 0}};
    size_t s;

    if (nslabs == 0) return GPUCOR_OK;
    if (max_count * esz > gc->pinned_bytes) {
        snprintf(msg, msgcap, "internal error: slab of %zu bytes exceeds the "
                 "%zu-byte staging buffers", max_count * esz, gc->pinned_bytes);
        return GPUCOR_ERR_INVALID;
    }
    DALLOC(dout, max_count * esz, "output slab");
    for (int b = 0; b < 2; b++)
        CU(cudaEventCreateWithFlags(&ev[b], cudaEventDisableTiming));
    for (s = 0; s < nslabs; s++) {
        if (host->interrupted && host->interrupted()) {
            status = GPUCOR_ERR_INTERRUPT;
            snprintf(msg, msgcap, "interrupted");
            goto cleanup;
        }
        int b = (int) (s % 2);
        status = produce(ctx, s, dout, &info[b], st, msg, msgcap);
        if (status != GPUCOR_OK) goto cleanup;
        if (info[b].count)
            CU(cudaMemcpyAsync(stage[b], (char *) dout + info[b].dev_offset * esz,
                               info[b].count * esz, cudaMemcpyDeviceToHost, st));
        CU(cudaEventRecord(ev[b], st));
        if (s > 0) {
            int a = 1 - b;
            t = now();
            CU(cudaEventSynchronize(ev[a]));
            host->seconds[0] += now() - t;
            t = now();
            cpu_copy_out(host_out + info[a].host_offset, stage[a],
                         info[a].count, is_float, out_scale, host->nthreads);
            host->seconds[1] += now() - t;
            if (host->progress) host->progress(host->progress_ctx, (double) s / nslabs);
        }
    }
    {
        int a = (int) ((nslabs - 1) % 2);
        t = now();
        CU(cudaEventSynchronize(ev[a]));
        host->seconds[0] += now() - t;
        t = now();
        cpu_copy_out(host_out + info[a].host_offset, stage[a], info[a].count,
                     is_float, out_scale, host->nthreads);
        host->seconds[1] += now() - t;
        if (host->progress) host->progress(host->progress_ctx, 1.0);
    }

cleanup:
    host->seconds[2] = now() - t0;
    /* nothing may still be writing into the buffers we free */
    cudaStreamSynchronize(st);
    for (int b = 0; b < 2; b++)
        if (ev[b]) cudaEventDestroy(ev[b]);
    if (dout) cudaFree(dout);
    return status;
}

int gpucor_plan_slabs(const dev_problem *d, size_t elt, size_t per_col,
                      size_t used, size_t max_w, slab_plan *pl, char *msg,
                      size_t msgcap)
{
    size_t v = d->v;
    pl->ncols = d->dist ? (v > 0 ? v - 1 : 0) : d->q;
    size_t avail = gpucor_device_budget(d->host, used);
    size_t need = v * elt + per_col;          /* the output column + the path's */
    size_t w = avail / (need ? need : 1);
    size_t cap = GPUCOR_SLAB_BYTES / (v * elt ? v * elt : 1);
    if (w > cap) w = cap;
    if (d->host->slab_cols) w = d->host->slab_cols < cap ? d->host->slab_cols : cap;
    if (w > max_w) w = max_w;
    if (w < 1) {
        snprintf(msg, msgcap, "out of GPU memory: %.1f MiB free for a slab "
                 "needing %.1f MiB", avail / 1048576.0, need / 1048576.0);
        return GPUCOR_ERR_ALLOC;
    }
    if (w > pl->ncols && pl->ncols > 0) w = pl->ncols;
    pl->w = w;
    pl->nslabs = pl->ncols ? (pl->ncols + w - 1) / w : 0;
    return GPUCOR_OK;
}

void gpucor_slab_range(const dev_problem *d, const slab_plan *pl, size_t s,
                       size_t *j0, size_t *j1, slab_info *info)
{
    *j0 = s * pl->w;
    *j1 = *j0 + pl->w < pl->ncols ? *j0 + pl->w : pl->ncols;
    if (d->dist) {
        dist_slab(d->v, *j0, *j1, info);
    } else {
        info->host_offset = *j0 * d->v;
        info->count = (*j1 - *j0) * d->v;
        info->dev_offset = 0;
    }
}
