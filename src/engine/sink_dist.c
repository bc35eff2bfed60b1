/*
 * sink_dist.c -- the packed lower triangle of a 'dist' of p items: the
 * pairs i > j of each tile, after the epilogue.  Host tiles are doubles
 * (the CPU engine's).  A window (win0, win1: a BiocParallel worker's
 * share) keeps the columns [win0, win1), packed from out[0].
 */
#include "engine.h"

static size_t dist_sink_len(const gc_sink *s)
{
    if (s->win1) return dist_offset(s->p, s->win1) - dist_offset(s->p, s->win0);
    return dist_len(s->p);
}

static void dist_emit(const gc_sink *s, const gc_tile *t)
{
    const double *v = (const double *) t->val;
    size_t lo = s->win1 ? dist_offset(s->p, s->win0) : 0;
    for (size_t b = 0; b < t->nj; b++) {
        size_t j = t->j0 + b;
        if (t->i0 + t->ni <= j + 1) continue;          /* no pair i > j */
        if (s->win1 && (j < s->win0 || j >= s->win1)) continue;
        /* pair (i, j) at base + i (unsigned arithmetic: wraps for j = 0) */
        size_t base = dist_offset(s->p, j) - lo - j - 1;
        size_t a = j + 1 > t->i0 ? j + 1 - t->i0 : 0;
        for (; a < t->ni; a++)
            s->out[base + t->i0 + a] = gc_epilogue(s->epilogue, s->beta, v[a + b * t->ld]);
    }
}

/* GPU commits: a range of whole packed columns (pack.cu); a window keeps
 * its part of it */
static void dist_commit(const gc_sink *s, const gc_tile *t, size_t offset, size_t count,
                        int nthreads)
{
    if (!s->win1) {
        gc_copy_out(s->out + offset, t->val, count, t->is_float, t->scale, nthreads);
        return;
    }
    size_t lo = dist_offset(s->p, s->win0), hi = dist_offset(s->p, s->win1);
    size_t a = offset > lo ? offset : lo, b = offset + count < hi ? offset + count : hi;
    size_t esz = t->is_float ? sizeof(float) : sizeof(double);
    if (a < b)
        gc_copy_out(s->out + (a - lo), (const char *) t->val + (a - offset) * esz, b - a,
                    t->is_float, t->scale, nthreads);
}

const gc_sink_ops gc_sink_dist = {
    .name = "dist", .needs = GC_SINK_PACKED, .len = dist_sink_len, .emit = dist_emit,
    .commit = dist_commit,
};

/* SINK_DIST_DEVICE: the packed triangle stays in device memory (gpu_hclust's
 * distances); nothing reaches the host. */
const gc_sink_ops gc_sink_dist_device = {.name = "dist on the device",
                                         .needs = GC_SINK_PACKED};
