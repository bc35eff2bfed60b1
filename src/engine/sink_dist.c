/*
 * sink_dist.c -- the packed lower triangle of a 'dist' of p items: the
 * pairs i > j of each tile, after the epilogue.  Host tiles are doubles
 * (the CPU engine's).  A window (win0, win1: a BiocParallel worker's
 * share) keeps the columns [win0, win1), packed from out[0].
 */
#include "engine.h"

void gc_sink_emit_dist(const gc_sink *s, const gc_tile *t)
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
