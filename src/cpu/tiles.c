/*
 * tiles.c -- the one generic tiled pairwise driver of the CPU engine.
 *
 * Tiles are handed out dynamically to OpenMP threads (their costs differ:
 * NA pairs take the exact per-pair path).  Only the master thread polls for
 * interrupts, because R's event loop may be entered from the main thread
 * only; the other threads see the shared 'stop' flag and skip the remaining
 * tiles, so an interrupt returns within about one tile's time; the master
 * also drives the progress bar (shown for runs longer than two seconds in
 * interactive sessions: progress.c).  Each
 * tile goes from the producer's fill() to the sink (engine/sink*.c).
 */
#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include "cpu.h"

int cpu_tiles_run(size_t p, size_t q, int symmetric, size_t tile,
                  tile_fill_fn fill, void *fill_ctx, size_t scratch_bytes,
                  const gc_sink *sink, const gc_host *host, int *team)
{
    int nthreads = host->opts->nthreads;
    gpucor_interrupt_fn interrupted = host->interrupted;
    if (team) *team = 1;
    if (p == 0 || q == 0) return GPUCOR_OK;
    if (tile < 1) tile = 1;
    size_t nbi = (p + tile - 1) / tile, nbj = (q + tile - 1) / tile;
    /* A file takes bands of whole columns in order (engine/file.h): every
     * tile, column of tiles after column of tiles; a symmetric result's
     * tile above the diagonal is its mirror's lower tile, transposed by
     * the sink (so each such pair is computed twice). */
    int full = (gc_sink_needs(sink) & GC_SINK_BOTH_HALVES) != 0;
    int tri = symmetric && !full;   /* the lower block triangle only */
    /* columns of tiles [b0, b1): a BiocParallel worker's share (those
     * whose first column is in its range, or that meet it), else all; column bj holds the
     * tiles cstart[bj - b0] .. of the enumeration (rows bj.. when tri) */
    size_t b0, b1;
    gc_share_blocks(host->opts->col0, host->opts->col1, host->opts->col_cover, tile, nbj,
                    &b0, &b1);
    size_t *cstart = malloc((b1 - b0 + 1) * sizeof *cstart);
    if (!cstart) return GPUCOR_ERR_ALLOC;
    cstart[0] = 0;
    for (size_t b = b0; b < b1; b++)
        cstart[b - b0 + 1] = cstart[b - b0] + (tri ? nbi - b : nbi);
    size_t ntiles = cstart[b1 - b0];
    int stop = 0, failed = 0;
    size_t done = 0;   /* tiles finished, for the progress bar */
    if (ntiles == 0) {
        free(cstart);
        return GPUCOR_OK;
    }
    if (nthreads < 1) nthreads = 1;
    if ((size_t) nthreads > ntiles) nthreads = (int) ntiles;
    gc_sink_begin(sink);

#ifdef _OPENMP
#pragma omp parallel num_threads(nthreads)
#endif
    {
        double *buf = malloc(tile * tile * sizeof(double));
        void *scratch = scratch_bytes ? malloc(scratch_bytes) : NULL;
        int ok = buf && (scratch || !scratch_bytes);
        int master = 1;
#ifdef _OPENMP
        master = omp_get_thread_num() == 0;
        if (master && team) *team = omp_get_num_threads();
#endif
        if (!ok) {
#ifdef _OPENMP
#pragma omp atomic write
#endif
            failed = 1;
        }
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 1)
#endif
        for (size_t t = 0; t < ntiles; t++) {
            int s, f;
#ifdef _OPENMP
#pragma omp atomic read
#endif
            s = stop;
#ifdef _OPENMP
#pragma omp atomic read
#endif
            f = failed;
            if (s || f || !ok) continue;
            if (master && interrupted && interrupted()) {
#ifdef _OPENMP
#pragma omp atomic write
#endif
                stop = 1;
                continue;
            }
            /* the column of tile t: the last start <= t */
            size_t lo = 0, hi = b1 - b0;
            while (hi - lo > 1) {
                size_t mid = lo + (hi - lo) / 2;
                if (cstart[mid] <= t) lo = mid; else hi = mid;
            }
            size_t bj = b0 + lo;
            size_t bi = (tri ? bj : 0) + (t - cstart[lo]);
            size_t i0 = bi * tile, j0 = bj * tile;
            size_t ni = p - i0 < tile ? p - i0 : tile;
            size_t nj = q - j0 < tile ? q - j0 : tile;
            gc_tile tl = {.i0 = i0, .ni = ni, .j0 = j0, .nj = nj, .val = buf, .ld = ni,
                          .scale = 1.0};
            if (symmetric && bi < bj) {
                fill(fill_ctx, j0, nj, i0, ni, buf, scratch);
                tl.ld = nj;
                tl.transposed = 1;
            } else {
                fill(fill_ctx, i0, ni, j0, nj, buf, scratch);
            }
            gc_sink_emit(sink, &tl);
            size_t d;
#ifdef _OPENMP
#pragma omp atomic capture
#endif
            d = ++done;
            /* R's console from the master (the calling) thread only */
            if (master && host->progress)
                host->progress(host->progress_ctx, (double) d / (double) ntiles);
        }
        free(buf);
        free(scratch);
    }
    free(cstart);
    if (failed) return GPUCOR_ERR_ALLOC;
    if (stop) return GPUCOR_ERR_INTERRUPT;
    if (host->progress) host->progress(host->progress_ctx, 1.0);
    return GPUCOR_OK;
}
