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
#include <math.h>
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
    int full = sink->kind == SINK_FILE;
    size_t ntiles = symmetric && !full ? nbi * (nbi + 1) / 2 : nbi * nbj;
    int stop = 0, failed = 0;
    size_t done = 0;   /* tiles finished, for the progress bar */
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
            size_t bi, bj;
            if (symmetric && !full) {
                /* t enumerates the lower block triangle row by row:
                 * row bi starts at bi*(bi+1)/2. */
                bi = (size_t) ((sqrt(8.0 * (double) t + 1.0) - 1.0) / 2.0);
                while (bi * (bi + 1) / 2 > t) bi--;
                while ((bi + 1) * (bi + 2) / 2 <= t) bi++;
                bj = t - bi * (bi + 1) / 2;
            } else {
                bi = t % nbi;
                bj = t / nbi;
            }
            size_t i0 = bi * tile, j0 = bj * tile;
            size_t ni = p - i0 < tile ? p - i0 : tile;
            size_t nj = q - j0 < tile ? q - j0 : tile;
            gc_tile tl = {i0, ni, j0, nj, buf, ni, 0, 1.0};
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
    if (failed) return GPUCOR_ERR_ALLOC;
    if (stop) return GPUCOR_ERR_INTERRUPT;
    if (host->progress) host->progress(host->progress_ctx, 1.0);
    return GPUCOR_OK;
}
