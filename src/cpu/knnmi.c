/*
 * knnmi.c -- the CPU producer of Kraskov's mutual information between rows
 * (FAMILY_KNNMI), parmigene's knnmi.all(): the variables prepared once
 * (engine/knnmi.c: normalised, jittered, sorted), then each pair of a tile
 * estimated by gc_knnmi_pair (engine/knnmi.h), the GPU's arithmetic too.
 * With y (gpu_knnmi(y =)) the tiles are those of the non-symmetric
 * result, x's variables against y's.
 */
#include <math.h>
#include "cpu.h"
#include "../engine/knnmi.h"

/* Pairs cost about m sqrt(k m) steps each: a tile of 16 x 16 pairs of 300
 * samples is about 0.5 ms, small enough for the dynamic schedule to even
 * out, large enough to keep the tile driver's work negligible. */
#define TILE_KNNMI 16

typedef struct {
    const gc_knnmi_view *v;
    size_t off;   /* result column j is variable off + j: 0, or with y x's
                     count (y's variables follow x's in the prepared block) */
} knnmi_ctx;

/* The pairs (i0 + a, j0 + b) of the result, variables i and off + j: 0 on
 * the diagonal (parmigene's; only without y), NaN with a variable whose
 * mean or sd is infinite, else the estimate, computed with the larger
 * index as X so that (i, j) and (j, i) are the same computation, and a
 * pair of x and y that of rbind(x, y).  scratch: room for k neighbours and
 * 2 m values. */
static void knnmi_fill(void *ctx, size_t i0, size_t ni, size_t j0, size_t nj,
                       double *tile, void *scratch)
{
    const knnmi_ctx *c = (const knnmi_ctx *) ctx;
    const gc_knnmi_view *v = c->v;
    double *nd = (double *) scratch, *yx = nd + v->k, *xy = yx + v->m;
    int *nj_ = (int *) (xy + v->m);
    for (size_t b = 0; b < nj; b++)
        for (size_t a = 0; a < ni; a++) {
            size_t i = i0 + a, j = c->off + j0 + b;
            double r;
            if (i == j) r = 0;
            else if (!v->ok[i] || !v->ok[j]) r = NAN;
            else {
                size_t x = i > j ? i : j, y = i > j ? j : i;
                /* Y in the order of X and X in the order of Y: the walks
                 * then read memory in order */
                const double *X = v->val + x * v->m, *Y = v->val + y * v->m;
                const int *oX = v->ord + x * v->m, *oY = v->ord + y * v->m;
                for (size_t q = 0; q < v->m; q++) {
                    yx[q] = Y[oX[q]];
                    xy[q] = X[oY[q]];
                }
                r = gc_knnmi_pair(v, x, y, nd, nj_, 1, yx, xy);
            }
            tile[a + b * ni] = r;
        }
}

int cpu_knnmi_run(const gc_problem *pb, const gc_sink *sink, const gc_host *host,
                  gc_pass *out)
{
    gc_knnmi_prep prep;
    char msg[256];
    int status = gc_knnmi_prepare(pb, &prep, msg, sizeof msg);
    if (status != GPUCOR_OK) return status;
    /* without y the symmetric n x n result; with y the nx x ny result of
     * x's variables against y's */
    size_t ny = pb->y ? pb->q : 0, nx = prep.v.n - ny, m = prep.v.m;   /* samples */
    knnmi_ctx c = {&prep.v, pb->y ? nx : 0};
    size_t tile = host->opts->cpu_tile ? host->opts->cpu_tile : TILE_KNNMI;
    status = cpu_tiles_run(nx, pb->y ? ny : nx, pb->y == NULL, tile, knnmi_fill, &c,
                           (pb->k + 2 * m) * sizeof(double) + pb->k * sizeof(int), sink, host,
                           &out->threads_used);
    gc_knnmi_free(&prep);
    return status;
}
