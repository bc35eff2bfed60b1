/*
 * progress.c -- the progress bar of long runs, on either engine.
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
    pr->pct = -1;
    pr->ended = 0;
    pr->start = now();
}

void gpucor_progress_update(void *ctx, double frac)
{
    gpucor_progress *pr = ctx;
    if (!pr->show || pr->ended) return;
    if (!pr->shown && (now() - pr->start < 2.0 || frac >= 1.0)) return;
    int pct = (int) (frac * 100 + 0.5);
    if (pct == pr->pct && frac < 1.0) return;   /* the CPU engine calls once a tile */
    pr->pct = pct;
    int width = 40, done = (int) (frac * width + 0.5);
    char bar[41];
    for (int k = 0; k < width; k++) bar[k] = k < done ? '=' : ' ';
    bar[width] = '\0';
    REprintf("\rgpucor |%s| %3d%%", bar, pct);
    if (frac >= 1.0) {
        REprintf("\n");       /* once: engines may report the end twice */
        pr->ended = 1;
    }
    pr->shown = 1;
}

/* The same bar over a loop of engine calls in R (R/blocks.R): the state
 * lives in a raw vector private to the loop's closure. */
SEXP gpucor_progress_new(SEXP show)
{
    SEXP st = PROTECT(allocVector(RAWSXP, sizeof(gpucor_progress)));
    gpucor_progress_init((gpucor_progress *) RAW(st), asLogical(show) == TRUE);
    UNPROTECT(1);
    return st;
}

SEXP gpucor_progress_step(SEXP st, SEXP frac)
{
    if (TYPEOF(st) != RAWSXP || XLENGTH(st) != (R_xlen_t) sizeof(gpucor_progress))
        error("internal error: invalid progress state");
    gpucor_progress_update(RAW(st), asReal(frac));
    return R_NilValue;
}
