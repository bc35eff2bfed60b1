/*
 * measure_template.h -- a template for a new measure computed pair by pair
 * on the CPU, never compiled into the package (nothing includes it; `gcc
 * -fsyntax-only -x c` checks it, see CONTRIBUTING.md).  Copy it to
 * cpu/<name>.c and fill it in.
 *
 * The example is the mean absolute difference of two columns over the rows
 * both have (NA where they share none): a producer of canonical tiles for
 * cpu/tiles.c, which hands them to any sink (a matrix, a 'dist', edges,
 * neighbours, a file) on any number of threads.
 *
 * A measure is a row of engine/measure.c's table.  A new computation:
 *  1. engine/measure.h: a FAMILY_<NAME> (and a PREP_ bit if its columns are
 *     prepared differently); engine/measure.c: the row -- name, space,
 *     family, p-value, warning, the costs "auto" weighs;
 *  2. this file as cpu/<name>.c; cpu/cpu.h: its declaration; cpu/run.c:
 *     the row [FAMILY_<NAME>] = cpu_<name>_run;
 *  3. its GPU producer in cuda/<name>.cu (gc_cuda_plan / gc_cuda_run through
 *     the sink's device half, as distance.cu), the row of cuda/run.cu's
 *     producers, and its declaration in cuda/engine.h;
 *  4. R: the name in the function's method vector, its help, its tests
 *     (test-measures.R checks that R's names are the table's).
 * A measure the engines already compute with other parameters (a new
 * epilogue, another correlation distance) is the row alone (step 1) and
 * step 4.
 */
#include <math.h>
#include "cpu.h"

#define TILE_TEMPLATE 64

typedef struct {
    const gc_problem *pb;
} template_ctx;

/* The producer: the values of the pairs (i0 + a, j0 + b) of columns of x
 * (and y) into tile[a + b * ni], stats' rules applied (here: NA where no
 * row is shared).  A symmetric result's tiles are asked for j <= i only. */
static void template_fill(void *ctx, size_t i0, size_t ni, size_t j0, size_t nj,
                          double *tile, void *scratch)
{
    const gc_problem *pb = ((const template_ctx *) ctx)->pb;
    const double *y = pb->y ? pb->y : pb->x;
    size_t nobs = pb->rows ? pb->nobs : pb->n;
    (void) scratch;
    for (size_t b = 0; b < nj; b++)
        for (size_t a = 0; a < ni; a++) {
            const double *u = pb->x + (i0 + a) * pb->n, *v = y + (j0 + b) * pb->n;
            double sum = 0;
            size_t used = 0;
            for (size_t k = 0; k < nobs; k++) {
                size_t r = pb->rows ? (size_t) pb->rows[k] : k;
                if (isnan(u[r]) || isnan(v[r])) continue;
                sum += fabs(u[r] - v[r]);
                used++;
            }
            tile[a + b * ni] = used ? sum / (double) used : gpucor_na_real;
        }
}

int cpu_template_run(const gc_problem *pb, const gc_sink *sink, const gc_host *host,
                     gc_pass *out)
{
    template_ctx c = {pb};
    size_t q = pb->y ? pb->q : pb->p;
    size_t tile = host->opts->cpu_tile ? host->opts->cpu_tile : TILE_TEMPLATE;
    return cpu_tiles_run(pb->p, q, pb->y == NULL, tile, template_fill, &c, 0, sink, host,
                         &out->threads_used);
}
