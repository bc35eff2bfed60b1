/*
 * tom.c -- the TOM on the CPU (see tom.h): the degrees, then the product
 * A A tile by tile through the engine's tile driver and dot-product kernel
 * (A is symmetric, so its columns are the rows of the product), each tile
 * turned into TOM values and handed to the sink.
 */
#include <math.h>
#include <stdlib.h>
#include "../cpu/cpu.h"
#include "tom.h"

#define TILE_TOM 128

void gc_tom_degrees(double *A, size_t n, size_t ld, size_t c0, size_t c1, double *k)
{
    for (size_t j = c0; j < c1; j++) {
        double *col = A + j * ld, s = 0;
        int bad = 0;
        col[j] = 1.0;
        for (size_t i = 0; i < n; i++) {
            double a = col[i];
            if (a != a) { bad = 1; col[i] = 0; continue; }
            s += fabs(a);
        }
        k[j] = bad ? NAN : s;
    }
}

typedef struct {
    const double *A, *k;
    size_t n, ld;
    const gc_tom_args *ta;
} tom_ctx;

static void tom_fill(void *vctx, size_t i0, size_t ni, size_t j0, size_t nj,
                     double *tile, void *scratch)
{
    const tom_ctx *c = (const tom_ctx *) vctx;
    (void) scratch;
    cpu_dot_tile(c->A + i0 * c->ld, c->A + j0 * c->ld, c->ld, c->n, ni, nj, tile);
    for (size_t b = 0; b < nj; b++) {
        size_t j = j0 + b;
        for (size_t a = 0; a < ni; a++) {
            size_t i = i0 + a;
            double *t = tile + a + b * ni;
            if (i == j) { *t = 1.0; continue; }
            double ki = c->k[i], kj = c->k[j];
            *t = (ki != ki || kj != kj) ? gpucor_na_real
                 : gc_tom_value(c->ta->type, c->ta->mean_denom, *t,
                                c->A[i + j * c->ld], ki, kj);
        }
    }
}

int gc_tom_cpu(double *A, size_t n, size_t ld, const gc_tom_args *ta,
               const gc_sink *sink, const gc_host *host, int *team, size_t *nbad)
{
    double *k = malloc((n ? n : 1) * sizeof *k);
    if (!k) return GPUCOR_ERR_ALLOC;
    int nt = host->opts->nthreads > 0 ? host->opts->nthreads : 1;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static)
#endif
    for (size_t j = 0; j < n; j++) gc_tom_degrees(A, n, ld, j, j + 1, k);
    *nbad = 0;
    for (size_t j = 0; j < n; j++) *nbad += k[j] != k[j];
    tom_ctx c = {A, k, n, ld, ta};
    size_t tile = host->opts->cpu_tile ? host->opts->cpu_tile : TILE_TOM;
    int status = cpu_tiles_run(n, n, 1, tile, tom_fill, &c, 0, sink, host, team);
    free(k);
    return status;
}

/* The column blocks [c0, c1) (T columns each) of gc_adjacency_check():
 * bits 1 asymmetric, 2 out of range, 4 NA. */
static int adjacency_cols(const double *A, size_t n, size_t T, size_t c0, size_t c1,
                          double lo, double tol, int nthreads)
{
    int found = 0;
    (void) nthreads;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nthreads) schedule(dynamic, 1) reduction(|:found)
#endif
    for (size_t jb = c0; jb < c1; jb++) {
        size_t j1 = (jb + 1) * T < n ? (jb + 1) * T : n;
        for (size_t ib = 0; ib <= jb; ib++) {
            size_t i1 = (ib + 1) * T < n ? (ib + 1) * T : n;
            for (size_t j = jb * T; j < j1; j++)
                for (size_t i = ib * T; i < i1 && i <= j; i++) {
                    double a = A[i + j * n], b = A[j + i * n];
                    if (a != a || b != b) {
                        found |= 4;
                        if (a == a && (a < lo || a > 1)) found |= 2;
                        if (b == b && (b < lo || b > 1)) found |= 2;
                        continue;
                    }
                    /* R's max(abs(A - t(A)), na.rm = TRUE) > tol: Inf - Inf
                     * is NaN, removed */
                    double dd = fabs(a - b);
                    if (dd > tol) found |= 1;
                    if (a < lo || a > 1 || b < lo || b > 1) found |= 2;
                }
        }
    }
    return found;
}

int gc_adjacency_check(const double *A, size_t n, double lo, double tol, int nthreads,
                       const gc_host *host, int *na)
{
    const size_t T = 64, nb = (n + T - 1) / T;
    size_t per = GC_COPY_CHUNK / sizeof(double) / (T * (n ? n : 1)) + 1;
    int found = 0;
    for (size_t c0 = 0; c0 < nb; c0 += per) {
        if (gc_host_interrupted(host)) return ADJ_INTERRUPTED;
        found |= adjacency_cols(A, n, T, c0, c0 + per < nb ? c0 + per : nb, lo, tol, nthreads);
    }
    *na = (found & 4) != 0;
    return (found & 1) ? ADJ_ASYMMETRIC : (found & 2) ? ADJ_RANGE : ADJ_OK;
}
