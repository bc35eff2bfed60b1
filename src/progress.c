/*
 * progress.c -- the progress bar of long GPU runs, and the gpu_host hooks
 * filled from gpu_cor()/gpu_dist()'s 'gpu' options vector.
 *
 * The bar appears only in interactive sessions (R decides: interactive()
 * and option gpucor.progress), and only once a run has taken more than two
 * seconds, so short calls print nothing.
 */
#include <R.h>
#include <Rinternals.h>
#include <time.h>
#include "gpucor.h"
#include "status.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

void gpucor_progress_init(gpucor_progress *pr, int show)
{
    pr->show = show;
    pr->shown = 0;
    pr->start = now();
}

void gpucor_progress_update(void *ctx, double frac)
{
    gpucor_progress *pr = ctx;
    if (!pr->show) return;
    if (!pr->shown && (now() - pr->start < 2.0 || frac >= 1.0)) return;
    int width = 40, done = (int) (frac * width + 0.5);
    char bar[41];
    for (int k = 0; k < width; k++) bar[k] = k < done ? '=' : ' ';
    bar[width] = '\0';
    REprintf("\rgpucor |%s| %3d%%", bar, (int) (frac * 100 + 0.5));
    if (frac >= 1.0) REprintf("\n");
    pr->shown = 1;
}

/* option gpucor.profile, the last entry of the options vector */
static int profiling(SEXP opts)
{
    return XLENGTH(opts) >= 6 && REAL(opts)[5] != 0;
}

void gpucor_set_timing(SEXP ans, SEXP opts, const double *seconds)
{
    if (!profiling(opts)) return;
    SEXP t = PROTECT(allocVector(REALSXP, 3));
    for (int k = 0; k < 3; k++) REAL(t)[k] = seconds[k];
    setAttrib(ans, install("timing"), t);
    UNPROTECT(1);
}

void gpucor_set_threads(SEXP ans, SEXP opts, int threads)
{
    if (!profiling(opts)) return;
    setAttrib(ans, install("threads"), ScalarInteger(threads));
}

/* gpu options vector from R: c(use_gpu, single, mem_cap, slab, progress,
 * profile) */
int gpucor_gpu_opts(SEXP opts, int *single, double *mem_cap, size_t *slab,
                    int *progress)
{
    if (TYPEOF(opts) != REALSXP || XLENGTH(opts) != 6)
        error("invalid GPU options");
    const double *o = REAL(opts);
    *single = o[1] != 0;
    *mem_cap = o[2];
    *slab = o[3] > 0 ? (size_t) o[3] : 0;
    *progress = o[4] != 0;
    return o[0] != 0;
}
