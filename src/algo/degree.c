/*
 * degree.c -- the cut of a degree centrality at a density: the value of
 * the D-th strongest pair, found exactly by histogram passes of the
 * selecting sink (engine/select.h), each refining the 16-bit bin that
 * holds it, as algo/edges.c finds a density's cut -- but down to one key,
 * since a degree is a count, not a list whose last candidates are decided
 * on the host.
 */
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include "degree.h"
#include "../engine/select.h"

int gc_degree_cut(const gc_degree_job *job, double *cut, double *kept, char *msg,
                  size_t msgcap)
{
    gc_select s = {.symmetric = 1, .p = job->p, .q = job->p, .key = KEY_STRENGTH,
                   .strength = job->absolute ? STRENGTH_ABS : STRENGTH_RAW};
    gc_sink sink = {.kind = SINK_SELECT, .epilogue = EPI_IDENTITY, .p = job->p, .q = job->p,
                    .sel = &s};
    uint64_t *h = malloc(SEL_NBINS * sizeof *h);
    if (!h || gc_select_alloc(&s, job->nslots, 1)) {
        free(h);
        gc_select_free(&s);
        snprintf(msg, msgcap, "out of host memory");
        return GPUCOR_ERR_ALLOC;
    }
    uint64_t prefix = 0;
    int bits = 0, status = GPUCOR_OK;
    for (;;) {
        gc_select_reset(&s);
        s.mode = SEL_HIST;
        s.prefix = prefix;
        s.prefix_bits = bits;
        status = job->run(job->run_ctx, &sink, msg, msgcap);
        if (status != GPUCOR_OK) break;
        uint64_t above, valid, cum;
        gc_select_sum(&s, h, &above, &valid);
        if (bits == 0 && (double) valid <= job->D) {    /* every pair with a value */
            *cut = -INFINITY;
            *kept = (double) valid;
            break;
        }
        /* the bin of the D-th strongest pair (the passes after the first
         * look inside the bin that holds it: 'above' < D <= above + its pairs) */
        long b = -1;
        cum = above;
        for (long k = (long) SEL_NBINS - 1; k >= 0; k--) {
            if ((double) (cum + h[k]) >= job->D) { b = k; break; }
            cum += h[k];
        }
        if (b < 0) {
            snprintf(msg, msgcap, "internal error: the density's pair was not found");
            status = GPUCOR_ERR_INVALID;
            break;
        }
        /* down to one key (the last pass: 48 bits of prefix, bins one key
         * wide), so that the cut is the weakest kept value itself */
        if (bits + SEL_BIN_BITS >= 64) {
            int top;
            uint64_t lo = sel_bin_edge(prefix, bits, (size_t) b, &top);
            *cut = nextafter(sel_decode(lo), -INFINITY);
            *kept = (double) (cum + h[b]);
            break;
        }
        prefix = (prefix << SEL_BIN_BITS) | (uint64_t) b;
        bits += SEL_BIN_BITS;
    }
    free(h);
    gc_select_free(&s);
    return status;
}
