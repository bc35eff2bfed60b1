/*
 * sink_dense.c -- the p x q matrix (column-major, as R stores it).  A
 * symmetric result's tiles hold the pairs j <= i; the sink writes each of
 * them at (i, j) and (j, i), so the matrix is exactly symmetric.  Host
 * tiles are doubles (the CPU engine's).  The matrix may have a leading
 * dimension above p (ld: gpu_tom's padded adjacency).
 */
#include "engine.h"

static size_t dense_len(const gc_sink *s)
{
    return s->p * s->q;
}

static void dense_emit(const gc_sink *s, const gc_tile *t)
{
    const double *v = (const double *) t->val;
    size_t ld = s->ld ? s->ld : s->p;
    for (size_t b = 0; b < t->nj; b++) {
        size_t j = t->j0 + b;
        for (size_t a = 0; a < t->ni; a++) {
            size_t i = t->i0 + a;
            if (s->symmetric && j > i) continue;
            double r = gc_epilogue(s->epilogue, s->beta, v[a + b * t->ld]);
            s->out[i + j * ld] = r;
            if (s->symmetric) s->out[j + i * ld] = r;
        }
    }
}

/* GPU commits: whole columns, the epilogue applied on the device; gpu_cov's
 * spreads applied as they land */
static void dense_commit(const gc_sink *s, const gc_tile *t, size_t offset, size_t count,
                         int nthreads)
{
    if (s->mul_row)
        gc_copy_out_mul(s->out, t->val, offset, count, t->is_float, t->scale,
                        s->ld ? s->ld : s->p, s->mul_row, s->mul_col, s->mul_round, nthreads);
    else gc_copy_out(s->out + offset, t->val, count, t->is_float, t->scale, nthreads);
}

const gc_sink_ops gc_sink_dense = {
    .name = "dense", .len = dense_len, .emit = dense_emit, .commit = dense_commit,
};

/* SINK_DENSE_DEVICE: the matrix stays in device memory (cuda/pack.cu lays
 * the panels out there); nothing reaches the host. */
const gc_sink_ops gc_sink_dense_device = {.name = "dense on the device"};
