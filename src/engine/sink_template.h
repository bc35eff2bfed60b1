/*
 * sink_template.h -- a template for a new sink, never compiled into the
 * package (nothing includes it; `gcc -fsyntax-only -x c` checks it, see
 * CONTRIBUTING.md).  Copy it to sink_<name>.c and fill it in.
 *
 * The example counts, for every column j of a symmetric p x p result, the
 * rows i != j whose value (after the epilogue) is at least a threshold: the
 * degrees of a thresholded network, with no n x n result ever stored.
 *
 * A sink is one row of gc_sink_table (sink.c) and the same row of
 * cuda/pack.cu's device table; producers read its 'needs', never its kind.
 * To add one:
 *  1. engine.h: a SINK_<NAME> before SINK_COUNT (the sink's own struct
 *     goes in gc_sink.state);
 *  2. this file as engine/sink_<name>.c, exporting its gc_sink_ops;
 *  3. sink.c: the row [SINK_<NAME>] = &gc_sink_<name>;
 *  4. cuda/pack.cu: the device row at the same index (stage, col_bytes,
 *     narrow) and its kernel (or a .cu of its own, as select.cu), or
 *     stage_dense when whole value columns may be staged as they are;
 *  5. the entry point (a src/ file) or driver (src/algo/) that builds it with
 *     designated initializers: {.kind = SINK_<NAME>, .p = p, .q = p, ...}.
 */
#include "engine.h"
#include "select.h"   /* gc_select_slot: the calling thread's slot */

/* the sink's state: gc_sink.state points to it */
typedef struct {
    double threshold;
    int nslots;          /* the CPU's threads */
    double *slot;        /* nslots x p counts */
    double *degree;      /* out: p */
} gc_degree;

/* CPU tiles of a symmetric result hold the pairs j <= i (engine.h): a pair
 * i > j counts for both i and j, in the calling thread's slot. */
static void degree_emit(const gc_sink *s, const gc_tile *t)
{
    const gc_degree *d = (const gc_degree *) s->state;
    double *cnt = d->slot + (size_t) gc_select_slot() * s->p;
    const double *v = (const double *) t->val;
    for (size_t b = 0; b < t->nj; b++)
        for (size_t a = 0; a < t->ni; a++) {
            size_t i = t->i0 + a, j = t->j0 + b;
            if (j >= i) continue;
            double r = gc_epilogue(s->epilogue, s->beta, v[a + b * t->ld]);
            if (r == r && r >= d->threshold) {
                cnt[i] += 1;
                cnt[j] += 1;
            }
        }
}

/* GPU: what the device row staged -- here one count per column of the
 * panel, t->nj doubles (its stage counts on the device, as pack.cu's
 * powsum sums) -- on the coordinator thread */
static void degree_commit(const gc_sink *s, const gc_tile *t, size_t offset, size_t count,
                          int nthreads)
{
    (void) offset; (void) count; (void) nthreads;
    const gc_degree *d = (const gc_degree *) s->state;
    const double *v = (const double *) t->val;
    for (size_t b = 0; b < t->nj; b++) d->degree[t->j0 + b] = v[b];
}

/* after the CPU's pass: the threads' slots added up */
static void degree_finish(const gc_sink *s)
{
    const gc_degree *d = (const gc_degree *) s->state;
    for (size_t i = 0; i < s->p; i++) {
        double sum = 0;
        for (int k = 0; k < d->nslots; k++) sum += d->slot[(size_t) k * s->p + i];
        d->degree[i] = sum;
    }
}

/* No R memory is written during the pass (len NULL); fill_na NULL: with
 * fewer than two observations nothing is counted.  needs: 0 (the lower
 * tiles of a symmetric result are enough; GPU panels of whole columns). */
const gc_sink_ops gc_sink_template = {
    .name = "degrees", .needs = 0, .emit = degree_emit, .commit = degree_commit,
    .finish = degree_finish,
};
