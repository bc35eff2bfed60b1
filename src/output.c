/*
 * output.c -- results written to a file (gpu_hdf5(), R/hdf5.R): the
 * output specification from R, and the interrupt hook of an engine call
 * that writes one (it also stops the engine once a write has failed).
 */
#include <R.h>
#include <Rinternals.h>
#include <string.h>
#include "gpucor.h"
#include "status.h"
#include "output.h"

static gc_file *active;   /* the file of the running call (R is one thread) */

static int file_interrupted(void)
{
    return (active && gc_file_failed(active)) || gpucor_interrupted();
}

#define field gpucor_field

gc_file *gpucor_file_open(SEXP spec, size_t p, size_t q, int symmetric, int zero_diag,
                          const gc_opts *o, gc_sink *sink, gc_host *host, const char *what)
{
    if (TYPEOF(spec) != VECSXP || isNull(getAttrib(spec, R_NamesSymbol)))
        error("internal error: invalid output");
    SEXP chunk = field(spec, "chunk");
    if (TYPEOF(chunk) != REALSXP || XLENGTH(chunk) != 2)
        error("internal error: invalid output chunk");
    gc_file_spec s;
    memset(&s, 0, sizeof s);
    s.path = CHAR(STRING_ELT(field(spec, "path"), 0));
    s.name = CHAR(STRING_ELT(field(spec, "name"), 0));
    s.p = p;
    s.q = q;
    s.cr = (size_t) REAL(chunk)[0];
    s.cc = (size_t) REAL(chunk)[1];
    if (s.cr < 1 || s.cr > (p ? p : 1) || s.cc < 1 || s.cc > (q ? q : 1))
        error("internal error: invalid output chunk");
    s.level = asInteger(field(spec, "level"));
    s.out_float = asLogical(field(spec, "float")) == TRUE;
    s.symmetric = symmetric;
    s.zero_diag = zero_diag;
    s.nthreads = o->nthreads > 0 ? o->nthreads : 1;
    s.cap = (size_t) asReal(field(spec, "cap"));
    gc_file *f = NULL;
    char msg[512] = "";
    if (gc_file_open(&s, &f, msg, sizeof msg) != GPUCOR_OK)
        error("%s: %s", what, msg);
    active = f;
    sink->kind = SINK_FILE;
    sink->file = f;
    sink->out = NULL;
    host->interrupted = file_interrupted;
    return f;
}

void gpucor_file_finish(gc_file *f, int status, const char *what, const char *msg)
{
    char m2[512] = "";
    active = NULL;
    int s2 = gc_file_close(f, status == GPUCOR_OK, m2, sizeof m2);
    if (s2 != GPUCOR_OK) error("%s: %s", what, m2);
    if (status != GPUCOR_OK) gpucor_raise_msg(status, what, msg);
}

SEXP gpucor_hdf5_available(void)
{
    return ScalarLogical(gc_file_available());
}
