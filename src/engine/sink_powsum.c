/*
 * sink_powsum.c -- the host half of SINK_POWSUM (engine.h): per column,
 * the sums of the powers of the adjacency over the other rows.  CPU tiles
 * of the symmetric result hold the pairs j <= i: a pair i > j adds to the
 * sums of both i and j, in the calling thread's slot.  A GPU panel of whole
 * columns arrives already summed (cuda/pack.cu: npow sums per column).
 */
#include "engine.h"
#include "select.h"   /* gc_select_slot */

/* The powers of a (a^w[0], a^w[1], ...) as pickSoftThreshold() makes
 * them, into acc[0 .. npow). */
static inline void add_powers(const gc_powsum *ps, double a, double *acc)
{
    if (ps->degree) {      /* degree centrality: the count and the sum above the cut */
        if (a > ps->cut) {
            acc[0] += 1;
            acc[1] += a;
        }
        return;
    }
    double cur = 1.0, prev = 0.0;
    for (int t = 0; t < ps->npow; t++) {
        cur *= gc_rpow(a, ps->w[t] - prev);
        prev = ps->w[t];
        acc[t] += cur;
    }
}

static void powsum_emit(const gc_sink *s, const gc_tile *t)
{
    int slot = gc_select_slot();
    const gc_powsum *ps = s->pow;
    const double *v = (const double *) t->val;
    double *acc = ps->slot + (size_t) slot * s->p * ps->npow;
    for (size_t b = 0; b < t->nj; b++) {
        size_t j = t->j0 + b;
        for (size_t a = 0; a < t->ni; a++) {
            size_t i = t->i0 + a;
            if (j >= i) continue;
            double r = gc_epilogue(s->epilogue, s->beta, v[a + b * t->ld]);
            if (r != r) continue;
            add_powers(ps, r, acc + i * ps->npow);
            add_powers(ps, r, acc + j * ps->npow);
        }
    }
}

static void powsum_commit(const gc_sink *s, const gc_tile *t, size_t offset, size_t count,
                          int nthreads)
{
    (void) offset;
    (void) count;
    (void) nthreads;
    const gc_powsum *ps = s->pow;
    const double *v = (const double *) t->val;   /* npow sums per column */
    for (size_t b = 0; b < t->nj; b++)
        for (int k = 0; k < ps->npow; k++)
            ps->k[(t->j0 + b) + (size_t) k * s->p] = v[k + b * ps->npow];
}

/* The CPU's slots, added up into k (p x npow). */
static void powsum_finish(const gc_sink *s)
{
    const gc_powsum *ps = s->pow;
    for (size_t i = 0; i < s->p; i++)
        for (int k = 0; k < ps->npow; k++) {
            double sum = 0;
            for (int sl = 0; sl < ps->nslots; sl++)
                sum += ps->slot[((size_t) sl * s->p + i) * ps->npow + k];
            ps->k[i + (size_t) k * s->p] = sum;
        }
}

const gc_sink_ops gc_sink_powsum = {
    .name = "sums of powers", .emit = powsum_emit, .commit = powsum_commit,
    .finish = powsum_finish,
};
