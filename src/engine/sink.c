/*
 * sink.c -- what the sinks share: the result's length, its
 * memory, and the GPU's commits.  Each sink's tile writer is in its own
 * file (sink_dense.c, sink_dist.c, sink_select.c, sink_powsum.c); its
 * device half in cuda/pack.cu, select.cu, reduce.cu.
 */
#include "engine.h"
#include "select.h"
#include "file.h"

void gc_sink_emit_dense(const gc_sink *s, const gc_tile *t);
void gc_sink_emit_dist(const gc_sink *s, const gc_tile *t);
void gc_powsum_tile(const gc_sink *s, const gc_tile *t, int slot);
void gc_powsum_commit(const gc_sink *s, const gc_tile *t);

size_t gc_sink_len(const gc_sink *s)
{
    if (s->kind != SINK_DENSE && s->kind != SINK_DIST) return 0;
    if (s->kind == SINK_DIST && s->win1)
        return dist_offset(s->p, s->win1) - dist_offset(s->p, s->win0);
    return s->kind == SINK_DIST ? dist_len(s->p) : s->p * s->q;
}

void gc_sink_begin(const gc_sink *s)
{
    if (gc_sink_len(s)) gc_advise_huge(s->out, gc_sink_len(s) * sizeof(double));
}

void gc_sink_emit(const gc_sink *s, const gc_tile *t)
{
    if (s->kind == SINK_SELECT) gc_select_tile(s, t, gc_select_slot());
    else if (s->kind == SINK_POWSUM) gc_powsum_tile(s, t, gc_select_slot());
    else if (s->kind == SINK_DIST) gc_sink_emit_dist(s, t);
    else if (s->kind == SINK_FILE)
        gc_file_put(s->file, t->val, t->ld, t->is_float, t->scale, t->i0, t->ni, t->j0,
                    t->nj, t->transposed, s->epilogue, s->beta);
    else gc_sink_emit_dense(s, t);
}

void gc_sink_commit(const gc_sink *s, const gc_tile *t, size_t offset,
                    size_t count, int nthreads)
{
    if (s->kind == SINK_SELECT) gc_select_commit(s, t, nthreads);
    else if (s->kind == SINK_POWSUM) gc_powsum_commit(s, t);
    else if (s->kind == SINK_DIST_DEVICE || s->kind == SINK_DENSE_DEVICE)
        return;   /* laid out on the device already */
    else if (s->kind == SINK_FILE) {
        /* whole columns, their epilogue applied on the device */
        (void) nthreads;
        if (s->p)
            gc_file_put(s->file, t->val, s->p, t->is_float, t->scale, 0, s->p, offset / s->p,
                        count / s->p, 0, EPI_IDENTITY, 1.0);
    }
    else if (s->kind == SINK_DIST && s->win1) {
        /* the window's part of the staged range (both are runs of whole
         * columns of the packed 'dist') */
        size_t lo = dist_offset(s->p, s->win0), hi = dist_offset(s->p, s->win1);
        size_t a = offset > lo ? offset : lo, b = offset + count < hi ? offset + count : hi;
        size_t esz = t->is_float ? sizeof(float) : sizeof(double);
        if (a < b)
            gc_copy_out(s->out + (a - lo), (const char *) t->val + (a - offset) * esz, b - a,
                        t->is_float, t->scale, nthreads);
    }
    else if (s->kind == SINK_DENSE && s->mul_row)
        gc_copy_out_mul(s->out, t->val, offset, count, t->is_float, t->scale,
                        s->ld ? s->ld : s->p, s->mul_row, s->mul_col, s->mul_round, nthreads);
    else gc_copy_out(s->out + offset, t->val, count, t->is_float, t->scale, nthreads);
}
