/*
 * output.c -- results written to a file (gpu_hdf5(), R/hdf5.R): the
 * output specification from R, and the interrupt hook of an engine call
 * that writes one (it also stops the engine once a write has failed).
 */
#include <R.h>
#include <Rinternals.h>
#include <stdlib.h>
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

/* The post steps (file.h's gc_file_post) R asks for: list(epi, beta,
 * na_row, na_col, diag, epi2), the NA flags logicals or NULL, diag NA for
 * none (R/hdf5.R, .hdf5_post). */
static void read_post(SEXP post, size_t p, size_t q, gc_file_post *ps)
{
    if (TYPEOF(post) != VECSXP) error("internal error: invalid output steps");
    SEXP nr = field(post, "na_row"), nc = field(post, "na_col");
    if ((!isNull(nr) && (TYPEOF(nr) != LGLSXP || (size_t) XLENGTH(nr) != p)) ||
        (!isNull(nc) && (TYPEOF(nc) != LGLSXP || (size_t) XLENGTH(nc) != q)))
        error("internal error: invalid NA rows or columns");
    ps->epi = asInteger(field(post, "epi"));
    ps->beta = asReal(field(post, "beta"));
    ps->na_row = isNull(nr) ? NULL : LOGICAL(nr);
    ps->na_col = isNull(nc) ? NULL : LOGICAL(nc);
    double d = asReal(field(post, "diag"));
    ps->set_diag = !ISNA(d);
    ps->diag = ps->set_diag ? d : 0;
    ps->epi2 = asInteger(field(post, "epi2"));
    if (ps->epi < EPI_IDENTITY || ps->epi > EPI_ADJ_KEEP_SIGN || ps->epi2 < EPI_IDENTITY ||
        ps->epi2 > EPI_ADJ_KEEP_SIGN)
        error("internal error: invalid output steps");
}

gc_file *gpucor_file_open(SEXP spec, size_t p, size_t q, int symmetric, int zero_diag,
                          gc_opts *o, gc_sink *sink, gc_host *host, const char *what)
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
    SEXP win = field(spec, "window");
    if (!isNull(win)) {
        if (TYPEOF(win) != REALSXP || XLENGTH(win) != 2 || !(REAL(win)[0] >= 0) ||
            !(REAL(win)[1] > REAL(win)[0]) || REAL(win)[1] > (double) q)
            error("internal error: invalid output window");
        s.col0 = (size_t) REAL(win)[0];
        s.q = (size_t) REAL(win)[1] - s.col0;
        o->col0 = s.col0;
        o->col1 = s.col0 + s.q;
        o->col_cover = 1;
    }
    s.cr = (size_t) REAL(chunk)[0];
    s.cc = (size_t) REAL(chunk)[1];
    if (s.cr < 1 || s.cr > (p ? p : 1) || s.cc < 1 || s.cc > (s.q ? s.q : 1))
        error("internal error: invalid output chunk");
    s.level = asInteger(field(spec, "level"));
    s.out_float = asLogical(field(spec, "float")) == TRUE;
    s.symmetric = symmetric;
    s.zero_diag = zero_diag;
    s.nthreads = o->nthreads > 0 ? o->nthreads : 1;
    s.cap = (size_t) asReal(field(spec, "cap"));
    SEXP post = field(spec, "post");
    if (!isNull(post)) read_post(post, p, q, &s.post);
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
    const char *prof = getenv("GPUCOR_FILE_PROFILE");   /* bench/hdf5.R */
    if (prof && prof[0] == '1') {
        double s[5];
        gc_file_profile(f, s);
        REprintf("file sink: %.2f s open, writer writing %.2f s, idle %.2f s; engine "
                 "waiting for band memory %.2f s; %.0f bands\n", s[0], s[1], s[2], s[3], s[4]);
    }
    int s2 = gc_file_close(f, status == GPUCOR_OK, m2, sizeof m2);
    if (s2 != GPUCOR_OK) error("%s: %s", what, m2);
    if (status != GPUCOR_OK) gpucor_raise_msg(status, what, msg);
}

/* gpu_*(output =, BPPARAM =): the virtual dataset of the workers' parts
 * (gc_file_virtual); files, names: one a part, cols: c(from, to) of each. */
SEXP gpucor_hdf5_virtual(SEXP path, SEXP name, SEXP dims, SEXP out_float, SEXP files,
                         SEXP names, SEXP cols)
{
    R_xlen_t np = XLENGTH(files);
    if (TYPEOF(files) != STRSXP || TYPEOF(names) != STRSXP || XLENGTH(names) != np ||
        TYPEOF(cols) != REALSXP || XLENGTH(cols) != 2 * np || TYPEOF(dims) != REALSXP ||
        XLENGTH(dims) != 2)
        error("internal error: invalid virtual dataset");
    const char **fs = (const char **) R_alloc((size_t) np + 1, sizeof *fs);
    const char **ns = (const char **) R_alloc((size_t) np + 1, sizeof *ns);
    double *c0 = (double *) R_alloc((size_t) np + 1, sizeof *c0);
    double *c1 = (double *) R_alloc((size_t) np + 1, sizeof *c1);
    for (R_xlen_t k = 0; k < np; k++) {
        fs[k] = CHAR(STRING_ELT(files, k));
        ns[k] = CHAR(STRING_ELT(names, k));
        c0[k] = REAL(cols)[2 * k];
        c1[k] = REAL(cols)[2 * k + 1];
        if (!(c0[k] >= 0) || !(c1[k] > c0[k]) || c1[k] > REAL(dims)[1])
            error("internal error: invalid virtual dataset");
    }
    char msg[512] = "";
    if (gc_file_virtual(CHAR(STRING_ELT(path, 0)), CHAR(STRING_ELT(name, 0)),
                        (size_t) REAL(dims)[0], (size_t) REAL(dims)[1],
                        asLogical(out_float) == TRUE, (size_t) np, fs, ns, c0, c1, msg,
                        sizeof msg) != GPUCOR_OK)
        error("%s", msg);
    return ScalarLogical(TRUE);
}

SEXP gpucor_hdf5_available(void)
{
    return ScalarLogical(gc_file_available());
}
