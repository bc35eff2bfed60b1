/*
 * sink_dense.c -- the p x q matrix (column-major, as R stores it).  A
 * symmetric result's tiles hold the pairs j <= i; the sink writes each of
 * them at (i, j) and (j, i), so the matrix is exactly symmetric.  Host
 * tiles are doubles (the CPU engine's).  The matrix may have a leading
 * dimension above p (ld: gpu_tom's padded adjacency).
 */
#include "engine.h"

void gc_sink_emit_dense(const gc_sink *s, const gc_tile *t)
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
