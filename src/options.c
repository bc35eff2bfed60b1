/*
 * options.c -- the engine options, crossing .Call as one named list built
 * by .engine_opts() in R/backend.R, read here and nowhere else; and the
 * host hooks (interrupts, progress) every engine call gets.
 */
#include <R.h>
#include <Rinternals.h>
#include <stdio.h>
#include <string.h>
#include "gpucor.h"
#include "status.h"

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
    o->progress = flag(list, "progress");
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

void gpucor_host_init(gc_host *h, const gc_opts *o, gpucor_progress *pr)
{
    memset(h, 0, sizeof *h);
    gpucor_progress_init(pr, o->progress);
    h->opts = o;
    h->interrupted = gpucor_interrupted;
    h->progress = gpucor_progress_update;
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
