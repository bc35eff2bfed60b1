/*
 * progress.c -- the progress bar of long runs, on either engine: one bar
 * per call, across its passes.
 *
 *   gpu_tom: TOM (2/2) |=========           |  45% 0:09 ETA 0:11
 *   gpu_hclust: clustering (2/2) > merges (2/2) |=================== |  96% 0:30 ETA 0:01
 *
 * The bar appears only where R asks for it (interactive() and option
 * gpucor.progress: R/progress.R), and only once a call has taken more than
 * two seconds, so short calls print nothing.  It names the R function and
 * the pass, shows the fraction of the whole call (never 100% before the
 * last pass ends), the time taken and an estimate of the time left (the
 * time taken scaled by the fraction left: passes are weighted by their
 * expected work, so the estimate is as good as the weights), and ends with
 * one newline.
 *
 * Two levels: a loop of engine calls in R (R/progress.R) holds one bar and
 * sets its frame -- the share of the whole call the next engine call covers
 * -- and names that step; an engine call's driver names its passes
 * (gc_progress_pass(), engine.h), which divide the frame.  A call that R runs alone
 * has one frame, the whole call.  The engines report the fraction of the
 * present pass (the CPU engine once a tile, from the master thread), so an
 * update that changes nothing on the screen costs a clock read.
 */
#include <R.h>
#include <Rinternals.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "gpucor.h"
#include "status.h"

#define BAR_WIDTH 20

/* a bar's line is on the screen without its newline (an error raised then
 * must start on a fresh line: gpucor_progress_abort) */
static int line_open = 0;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void copy_name(char *dst, size_t cap, const char *src)
{
    snprintf(dst, cap, "%s", src ? src : "");
}

void gpucor_progress_abort(void)
{
    if (line_open) REprintf("\n");
    line_open = 0;
}

void gpucor_progress_init(gpucor_progress *pr, double delay, const char *label)
{
    memset(pr, 0, sizeof *pr);
    gpucor_progress_abort();   /* a bar that never ended (it should not happen) */
    pr->show = delay >= 0;
    pr->delay = delay;
    pr->start = now();
    pr->k = pr->npass = pr->fk = pr->fnpass = 1;
    pr->hi = pr->span = 1;
    copy_name(pr->label, sizeof pr->label, label && *label ? label : "gpucor");
}

/* Part k of npass of [0, 1] (*lo its start, *len its length), as
 * gc_progress_pass() says: part k starts where part k - 1 ended (part 1 at
 * 0), and the last one ends at 1. */
static void next_part(double *lo, double *len, int k, int npass, double weight)
{
    *lo = k <= 1 ? 0 : *lo + *len;
    if (*lo > 1) *lo = 1;
    double left = 1 - *lo;
    if (k >= npass) *len = left;
    else if (weight > 0) *len = weight < left ? weight : left;
    else *len = left / (npass - k + 1);
}

void gpucor_progress_pass(void *ctx, const char *step, int k, int npass, double weight)
{
    gpucor_progress *pr = ctx;
    if (!pr || !pr->show || pr->ended) return;
    next_part(&pr->base, &pr->span, k, npass, weight);
    pr->over = 0;
    pr->k = k;
    pr->npass = npass > k ? npass : k;
    copy_name(pr->step, sizeof pr->step, step);
    pr->dirty = 1;
    gpucor_progress_update(pr, 0);
}

/* m:ss, or h:mm:ss */
static void clock_text(char *buf, size_t cap, double s)
{
    if (!(s >= 0) || s > 359999) {
        snprintf(buf, cap, "--:--");
        return;
    }
    long t = (long) (s + 0.5);
    if (t >= 3600) snprintf(buf, cap, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
    else snprintf(buf, cap, "%ld:%02ld", t / 60, t % 60);
}

/* "step (k/n)", the count only when there are several; sep before it */
static void part_text(char *buf, size_t cap, const char *sep, const char *step, int k, int n)
{
    if (!*step) buf[0] = '\0';
    else if (n > 1) snprintf(buf, cap, "%s%s (%d/%d)", sep, step, k, n);
    else snprintf(buf, cap, "%s%s", sep, step);
}

void gpucor_progress_update(void *ctx, double frac)
{
    gpucor_progress *pr = ctx;
    if (!pr || !pr->show || pr->ended) return;
    if (!(frac > 0)) frac = 0;
    if (frac > 1) frac = 1;
    /* the end: of the last pass of the last step; a loop's bar in R ends
     * when the loop says (work in R may follow its last engine call) */
    int final = frac >= 1 && (pr->k >= pr->npass || pr->over) && pr->fk >= pr->fnpass &&
                (!pr->loop || pr->closing);
    double f = pr->lo + (pr->hi - pr->lo) * (pr->base + pr->span * frac);
    if (final) f = 1;
    else if (f > 0.999) f = 0.999;   /* 100% only at the end of the last pass */
    if (f < pr->done) f = pr->done;
    double t = now();
    int pct = (int) (f * 100), last_pct = (int) (pr->done * 100);
    if (!pr->shown) {
        if (t - pr->start < pr->delay) return;   /* short calls print nothing */
    } else if (!final && !pr->dirty && pct == last_pct && t - pr->last < 1.0) {
        return;   /* nothing new on the screen (the clock ticks once a second) */
    }
    pr->done = f;
    pr->last = t;
    pr->dirty = 0;

    char outer[64], inner[64], took[32], left[32], bar[BAR_WIDTH + 1], line[256];
    /* "label: loop's step (k/n) > pass (k/n)" */
    part_text(outer, sizeof outer, " ", pr->fstep, pr->fk, pr->fnpass);
    part_text(inner, sizeof inner, outer[0] ? " > " : " ", pr->step, pr->k, pr->npass);
    double el = t - pr->start;
    clock_text(took, sizeof took, el);
    clock_text(left, sizeof left, f > 0 ? el * (1 - f) / f : -1);
    int fill = (int) (f * BAR_WIDTH);   /* full only at 100% */
    for (int k = 0; k < BAR_WIDTH; k++) bar[k] = k < fill ? '=' : ' ';
    bar[BAR_WIDTH] = '\0';
    int len = snprintf(line, sizeof line, "%s:%s%s |%s| %3d%% %s ETA %s", pr->label, outer,
                       inner, bar, pct, took, left);
    if (len >= (int) sizeof line) len = (int) sizeof line - 1;
    /* blank what a longer line before left */
    int pad = pr->len > len ? pr->len - len : 0;
    REprintf("\r%s%*s", line, pad, "");
    pr->len = len;
    pr->shown = 1;
    line_open = 1;
    if (final) {
        REprintf("\n");
        line_open = 0;
        pr->ended = 1;
    }
}

void gpucor_progress_finish(void *ctx)
{
    gpucor_progress *pr = ctx;
    if (!pr || !pr->show || pr->ended) return;
    /* passes not made (gpu_cor_edges' collecting pass when nothing can be
     * kept) are over too: the bar shows the last one made at 100% */
    pr->base = 0;
    pr->span = 1;
    pr->over = 1;
    gpucor_progress_update(pr, 1);
}

/* ---- the bar of a loop of engine calls in R (R/progress.R): the state
 * lives in a raw vector that the loop keeps, and that the engine calls it
 * makes receive as option 'progress' (gc_opts.bar). */
static gpucor_progress *state(SEXP st)
{
    if (TYPEOF(st) != RAWSXP || XLENGTH(st) != (R_xlen_t) sizeof(gpucor_progress))
        error("internal error: invalid progress state");
    return (gpucor_progress *) RAW(st);
}

static const char *string_arg(SEXP s)
{
    return TYPEOF(s) == STRSXP && XLENGTH(s) == 1 && STRING_ELT(s, 0) != NA_STRING
         ? CHAR(STRING_ELT(s, 0)) : "";
}

SEXP gpucor_progress_new(SEXP delay, SEXP label)
{
    SEXP st = PROTECT(allocVector(RAWSXP, sizeof(gpucor_progress)));
    double d = asReal(delay);
    gpucor_progress_init((gpucor_progress *) RAW(st), ISNAN(d) ? -1 : d, string_arg(label));
    ((gpucor_progress *) RAW(st))->loop = 1;
    UNPROTECT(1);
    return st;
}

/* The loop's step k of npass ('step', share 'weight' as gc_progress_pass()'s): the
 * frame of the engine calls that follow. */
SEXP gpucor_progress_frame(SEXP st, SEXP step, SEXP k, SEXP npass, SEXP weight)
{
    gpucor_progress *pr = state(st);
    int kk = asInteger(k), nn = asInteger(npass);
    if (kk == NA_INTEGER || nn == NA_INTEGER || kk < 1) error("internal error: invalid step");
    if (!pr->show || pr->ended) return R_NilValue;
    double lo = pr->lo, len = pr->hi - pr->lo;
    next_part(&lo, &len, kk, nn, asReal(weight));
    pr->lo = lo;
    pr->hi = lo + len;
    pr->fk = kk;
    pr->fnpass = nn > kk ? nn : kk;
    copy_name(pr->fstep, sizeof pr->fstep, string_arg(step));
    /* the engine calls' own passes start afresh */
    pr->k = pr->npass = 1;
    pr->base = 0;
    pr->span = 1;
    pr->step[0] = '\0';
    pr->over = 0;
    pr->dirty = 1;
    gpucor_progress_update(pr, 0);
    return R_NilValue;
}

/* The fraction done of the loop's present step (work R does itself). */
SEXP gpucor_progress_step(SEXP st, SEXP frac)
{
    gpucor_progress_update(state(st), asReal(frac));
    return R_NilValue;
}

/* The loop ends: ok, the bar's 100% and newline (if it was shown); else
 * (an error, an interrupt) a newline if its line is open. */
SEXP gpucor_progress_end(SEXP st, SEXP ok)
{
    gpucor_progress *pr = state(st);
    if (!pr->show || pr->ended) return R_NilValue;
    if (asLogical(ok) == TRUE) {
        pr->closing = 1;
        pr->over = 1;
        pr->fk = pr->fnpass;
        pr->base = 0;
        pr->span = 1;
        gpucor_progress_update(pr, 1);
    } else if (pr->shown) {
        gpucor_progress_abort();
    }
    pr->ended = 1;
    return R_NilValue;
}
