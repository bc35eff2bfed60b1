/*
 * sink.c -- the table of sinks (engine.h's gc_sink_ops, one row per
 * SINK_*) and the calls every engine makes through it.  Each sink's host
 * half is in its own file (sink_dense.c, sink_dist.c, sink_select.c,
 * sink_powsum.c, sink_file.c); its device half is the same row of
 * cuda/pack.cu's table.
 */
#include "engine.h"

extern const gc_sink_ops gc_sink_dense, gc_sink_dense_device, gc_sink_dist,
    gc_sink_dist_device, gc_sink_select, gc_sink_powsum, gc_sink_file;

const gc_sink_ops *const gc_sink_table[SINK_COUNT] = {
    [SINK_DENSE] = &gc_sink_dense,
    [SINK_DIST] = &gc_sink_dist,
    [SINK_SELECT] = &gc_sink_select,
    [SINK_DIST_DEVICE] = &gc_sink_dist_device,
    [SINK_DENSE_DEVICE] = &gc_sink_dense_device,
    [SINK_POWSUM] = &gc_sink_powsum,
    [SINK_FILE] = &gc_sink_file,
};

size_t gc_sink_len(const gc_sink *s)
{
    const gc_sink_ops *ops = gc_sink_ops_of(s);
    return ops->len ? ops->len(s) : 0;
}

void gc_sink_begin(const gc_sink *s)
{
    if (gc_sink_len(s)) gc_advise_huge(s->out, gc_sink_len(s) * sizeof(double));
}

void gc_sink_emit(const gc_sink *s, const gc_tile *t)
{
    const gc_sink_ops *ops = gc_sink_ops_of(s);
    if (ops->emit) ops->emit(s, t);   /* the device-resident sinks: none */
}

void gc_sink_commit(const gc_sink *s, const gc_tile *t, size_t offset,
                    size_t count, int nthreads)
{
    const gc_sink_ops *ops = gc_sink_ops_of(s);
    if (ops->commit) ops->commit(s, t, offset, count, nthreads);
}

int gc_sink_fill_na(const gc_sink *s)
{
    const gc_sink_ops *ops = gc_sink_ops_of(s);
    size_t len = gc_sink_len(s);
    for (size_t k = 0; k < len; k++) s->out[k] = gpucor_na_real;
    return ops->fill_na ? ops->fill_na(s) : GPUCOR_OK;
}

void gc_sink_finish(const gc_sink *s)
{
    const gc_sink_ops *ops = gc_sink_ops_of(s);
    if (ops->finish) ops->finish(s);
}
