/*
 * sink.c -- what the two dense sinks share: the result's length, its
 * memory, and the GPU's commits.  Each sink's tile writer is in its own
 * file (sink_dense.c, sink_dist.c); its device half in cuda/pack.cu.
 */
#include "engine.h"

void gc_sink_emit_dense(const gc_sink *s, const gc_tile *t);
void gc_sink_emit_dist(const gc_sink *s, const gc_tile *t);

size_t gc_sink_len(const gc_sink *s)
{
    return s->kind == SINK_DIST ? dist_len(s->p) : s->p * s->q;
}

void gc_sink_begin(const gc_sink *s)
{
    gc_advise_huge(s->out, gc_sink_len(s) * sizeof(double));
}

void gc_sink_emit(const gc_sink *s, const gc_tile *t)
{
    if (s->kind == SINK_DIST) gc_sink_emit_dist(s, t);
    else gc_sink_emit_dense(s, t);
}

void gc_sink_commit(const gc_sink *s, size_t offset, const void *src,
                    size_t count, int is_float, double scale, int nthreads)
{
    gc_copy_out(s->out + offset, src, count, is_float, scale, nthreads);
}
