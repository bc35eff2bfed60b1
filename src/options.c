/*
 * options.c -- the engine options, crossing .Call as one named list built
 * by .engine_opts() in R/backend.R, read here and nowhere else; the
 * measure and 'use' mode, crossing as their names; and the host hooks
 * (interrupts, progress) every engine call gets.
 */
#include <R.h>
#include <Rinternals.h>
#include <stdio.h>
#include <string.h>
#include "gpucor.h"
#include "status.h"
#include "output.h"
#include "engine/measure.h"
#include "algo/hclust.h"
#include "algo/edges.h"
#include "algo/bicor.h"

/* The index of the field 'name' of the named list, -1 when it has none. */
static R_xlen_t field_index(SEXP list, const char *name)
{
    SEXP names = getAttrib(list, R_NamesSymbol);
    if (TYPEOF(list) != VECSXP || isNull(names)) return -1;
    for (R_xlen_t k = 0; k < XLENGTH(list); k++)
        if (!strcmp(CHAR(STRING_ELT(names, k)), name)) return k;
    return -1;
}

SEXP gpucor_field(SEXP list, const char *name)
{
    R_xlen_t k = field_index(list, name);
    if (k < 0) error("internal error: field '%s' missing", name);
    return VECTOR_ELT(list, k);
}
#define field gpucor_field

/* An optional field: R_NilValue when the list has none. */
SEXP gpucor_field_or_null(SEXP list, const char *name)
{
    R_xlen_t k = field_index(list, name);
    return k < 0 ? R_NilValue : VECTOR_ELT(list, k);
}

static int flag(SEXP list, const char *name)
{
    return asLogical(field(list, name)) == TRUE;
}

/* a count (0: automatic); NA and negative values are 0 */
static size_t count(SEXP list, const char *name)
{
    double v = asReal(field(list, name));
    return R_FINITE(v) && v >= 1 ? (size_t) v : 0;
}

void gpucor_opts(SEXP list, gc_opts *o)
{
    if (TYPEOF(list) != VECSXP || isNull(getAttrib(list, R_NamesSymbol)))
        error("internal error: invalid engine options");
    memset(o, 0, sizeof *o);
    o->gpu = flag(list, "gpu");
    o->single = flag(list, "single");
    /* the bar: a loop's in R (its state, a raw vector: progress.c), or the
     * delay in seconds before this call's own shows (negative, NA: none) */
    SEXP pg = field(list, "progress");
    if (TYPEOF(pg) == RAWSXP && XLENGTH(pg) == (R_xlen_t) sizeof(gpucor_progress)) {
        o->bar = RAW(pg);
        o->progress = 1;
    } else {
        double d = TYPEOF(pg) == LGLSXP ? (asLogical(pg) == TRUE ? 2 : -1) : asReal(pg);
        o->progress = R_FINITE(d) && d >= 0;
        o->progress_delay = o->progress ? d : -1;
    }
    o->profile = flag(list, "profile");
    o->nthreads = gpucor_nthreads(asInteger(field(list, "threads")));
    o->gpu_memory = asReal(field(list, "gpu_memory"));
    if (!R_FINITE(o->gpu_memory)) o->gpu_memory = 0;
    o->gpu_panel = count(list, "gpu_panel");
    o->cpu_tile = count(list, "cpu_tile");
    /* GPU ordinals, checked by R/options.R; -1 (or nothing): every one */
    SEXP dev = field(list, "devices");
    R_xlen_t nd = XLENGTH(dev);
    if (TYPEOF(dev) != INTSXP || nd < 1 || nd > (R_xlen_t) (sizeof o->devices / sizeof o->devices[0]))
        error("internal error: invalid engine option 'devices'");
    o->ndevices = INTEGER(dev)[0] < 0 ? 0 : (int) nd;
    for (int k = 0; k < o->ndevices; k++) {
        if (INTEGER(dev)[k] < 0) error("internal error: invalid GPU ordinal");
        o->devices[k] = INTEGER(dev)[k];
    }
    SEXP fun = field(list, "fun");
    if (TYPEOF(fun) == STRSXP && XLENGTH(fun) == 1)
        snprintf(o->fun, sizeof o->fun, "%s", CHAR(STRING_ELT(fun, 0)));
    /* an external pointer from gpucor_resident_new() (src/knn.c) */
    SEXP res = gpucor_field_or_null(list, "resident");
    if (TYPEOF(res) == EXTPTRSXP && R_ExternalPtrTag(res) == install("gpucor_resident"))
        o->resident = (gc_resident *) R_ExternalPtrAddr(res);
}

/* a single string, or NULL */
static const char *string1(SEXP s)
{
    return TYPEOF(s) == STRSXP && XLENGTH(s) == 1 && STRING_ELT(s, 0) != NA_STRING
         ? CHAR(STRING_ELT(s, 0)) : NULL;
}

const gc_measure *gpucor_measure_arg(SEXP name, int space)
{
    const char *nm = string1(name);
    const gc_measure *m = nm ? gc_measure_find(nm, space) : NULL;
    if (!m) error("internal error: unknown %s measure '%s'",
                  space == MEASURE_ROWS ? "distance" : "correlation", nm ? nm : "NA");
    return m;
}

int gpucor_use_arg(SEXP use)
{
    const char *nm = string1(use);
    int u = nm ? gc_use_find(nm) : -1;
    if (u < 0) error("internal error: invalid 'use'");
    return u;
}

/* The table of measures for R (.measures() in R/backend.R): name, space
 * ("columns" or "rows") and the CPU costs "auto" weighs the work with; and
 * the names of the 'use' modes and of gpu_hclust()'s linkages, which the
 * tests compare with R's. */
SEXP gpucor_measures(void)
{
    size_t n = gc_measure_count();
    const char *names[] = {"name", "space", "cost", "cost_pairwise", "uses", "linkages", ""};
    SEXP ans = PROTECT(mkNamed(VECSXP, names));
    SEXP nm = allocVector(STRSXP, (R_xlen_t) n);
    SET_VECTOR_ELT(ans, 0, nm);
    SEXP sp = allocVector(STRSXP, (R_xlen_t) n);
    SET_VECTOR_ELT(ans, 1, sp);
    SEXP c1 = allocVector(REALSXP, (R_xlen_t) n);
    SET_VECTOR_ELT(ans, 2, c1);
    SEXP c2 = allocVector(REALSXP, (R_xlen_t) n);
    SET_VECTOR_ELT(ans, 3, c2);
    for (size_t k = 0; k < n; k++) {
        const gc_measure *m = gc_measure_at(k);
        SET_STRING_ELT(nm, (R_xlen_t) k, mkChar(m->name));
        SET_STRING_ELT(sp, (R_xlen_t) k, mkChar(m->space == MEASURE_ROWS ? "rows" : "columns"));
        REAL(c1)[k] = m->cost;
        REAL(c2)[k] = m->cost_pairwise;
    }
    SEXP us = allocVector(STRSXP, 5);
    SET_VECTOR_ELT(ans, 4, us);
    for (int k = 0; k < 5; k++) SET_STRING_ELT(us, k, mkChar(gc_use_names[k]));
    SEXP hc = allocVector(STRSXP, HC_COUNT);
    SET_VECTOR_ELT(ans, 5, hc);
    for (int k = 0; k < HC_COUNT; k++) SET_STRING_ELT(hc, k, mkChar(gc_hclust_names[k]));
    UNPROTECT(1);
    return ans;
}

/* a number of a named list; NA (absent criterion) as NaN */
static double number(SEXP list, const char *name)
{
    SEXP v = field(list, name);
    if (!isReal(v) && !isLogical(v) && !isInteger(v)) error("internal error: '%s' not a number", name);
    return asReal(v);
}

void gpucor_criteria(SEXP list, struct gc_edges_job *job)
{
    if (TYPEOF(list) != VECSXP) error("invalid criteria");
    double thr = number(list, "threshold"), k = number(list, "top_k");
    double d = number(list, "density"), f = number(list, "fdr");
    job->strength = flag(list, "absolute") ? STRENGTH_ABS : STRENGTH_RAW;
    job->has_thr = !ISNAN(thr);
    job->thr = job->has_thr ? thr : 0;
    job->top_k = ISNAN(k) ? 0 : (size_t) k;
    job->density = ISNAN(d) ? 0 : d;
    job->fdr = ISNAN(f) ? 0 : f;
    job->want_p = flag(list, "p_value");
}

static const char *const bicor_fallbacks[] = {"none", "individual", "all"};

void gpucor_bicor_opts(SEXP list, struct gc_bicor_opts *o)
{
    if (TYPEOF(list) != VECSXP) error("invalid bicor parameters");
    o->max_outliers = number(list, "max_outliers");
    o->pearson = flag(list, "pearson");
    const char *fb = string1(field(list, "fallback"));
    o->fallback = 0;
    for (int k = 0; fb && k < 3; k++)
        if (!strcmp(fb, bicor_fallbacks[k])) o->fallback = BICOR_FB_NONE + k;
    if (!o->fallback) error("invalid bicor parameters");
}

double gpucor_bicor_sides(SEXP list, struct gc_bicor_opts *ox, struct gc_bicor_opts *oy)
{
    if (TYPEOF(list) != VECSXP) error("invalid bicor parameters");
    gpucor_bicor_opts(field(list, "x"), ox);
    gpucor_bicor_opts(field(list, "y"), oy);
    return number(list, "quick");
}

size_t gpucor_ranges(SEXP list, const double **r)
{
    SEXP cols = field(list, "cols");
    *r = NULL;
    if (isNull(cols)) return 0;
    R_xlen_t len = XLENGTH(cols);
    if (TYPEOF(cols) != REALSXP || len < 2 || len % 2)
        error("internal error: invalid engine option 'cols'");
    for (R_xlen_t k = 0; k < len; k += 2)
        if (!(REAL(cols)[k] >= 0) || !(REAL(cols)[k + 1] > REAL(cols)[k]))
            error("internal error: invalid engine option 'cols'");
    *r = REAL(cols);
    return (size_t) len / 2;
}

void gpucor_host_init(gc_host *h, const gc_opts *o, gpucor_progress *pr, const char *label)
{
    memset(h, 0, sizeof *h);
    h->opts = o;
    h->interrupted = gpucor_interrupted;
    h->progress = gpucor_progress_update;
    h->pass = gpucor_progress_pass;
    if (o->bar) {
        h->progress_ctx = o->bar;
        return;
    }
    gpucor_progress_init(pr, o->progress ? o->progress_delay : -1, o->fun[0] ? o->fun : label);
    h->progress_ctx = pr;
}

void gpucor_set_timing(SEXP ans, const gc_opts *o, const double *seconds)
{
    if (!o->profile) return;
    SEXP t = PROTECT(allocVector(REALSXP, 3));
    for (int k = 0; k < 3; k++) REAL(t)[k] = seconds[k];
    setAttrib(ans, install("timing"), t);
    UNPROTECT(1);
}

void gpucor_set_threads(SEXP ans, const gc_opts *o, int threads)
{
    if (!o->profile) return;
    setAttrib(ans, install("threads"), ScalarInteger(threads));
}

void gpucor_call_report(SEXP ans, const gc_opts *o, const gc_host *host, int used,
                        const char *fun)
{
    gpucor_progress_finish(host->progress_ctx);
    if (used) {
        gpucor_set_threads(ans, o, used);
        return;
    }
    gpucor_set_timing(ans, o, host->seconds);
    if (host->note[0]) {
        if (fun) warning("%s: %s", fun, host->note);
        else warning("%s", host->note);
    }
}

/* (the error resets R's protection stack: nothing to unprotect first) */
void gpucor_call_status(gc_file *f, int status, const char *fun, const char *msg)
{
    if (status != GPUCOR_OK) gpucor_progress_abort();
    if (f) gpucor_file_finish(f, status, fun, msg);   /* raises on failure */
    else if (status != GPUCOR_OK) gpucor_raise_msg(status, fun, msg);
}
