/*
 * cor.c -- .Call entry point of gpu_cor().  R/cor.R has already matched the
 * arguments, coerced x and y to double matrices, found the rows to use for
 * the complete-case modes and chosen the backend; here the cheap invariants
 * are checked again and the CPU or GPU engine is run.
 */
#include <R.h>
#include <Rinternals.h>
#include <math.h>
#include <string.h>
#include <stdio.h>
#include "gpucor.h"
#include "status.h"
#include "cpu/cpu.h"
#include "algo/dispatch.h"
#include "algo/degree.h"
#include "output.h"

/* The complete-case rows (0-based) R chose: each within x's n rows. */
static void check_rows(SEXP rows, size_t n)
{
    if (isNull(rows)) return;
    for (R_xlen_t k = 0; k < XLENGTH(rows); k++)
        if (INTEGER(rows)[k] < 0 || (size_t) INTEGER(rows)[k] >= n)
            error("'rows' out of range");
}

SEXP gpucor_cor(SEXP x, SEXP y, SEXP method, SEXP use, SEXP rows, SEXP opts, SEXP file)
{
    int nprot = 0;
    if (TYPEOF(x) != REALSXP || !isMatrix(x))
        error("'x' must be a double matrix");
    if (!isNull(y) && (TYPEOF(y) != REALSXP || !isMatrix(y)))
        error("'y' must be a double matrix");
    size_t n = (size_t) nrows(x), p = (size_t) ncols(x);
    size_t q = isNull(y) ? p : (size_t) ncols(y);
    if (!isNull(y) && (size_t) nrows(y) != n)
        error("incompatible dimensions");
    if (!isNull(rows) && TYPEOF(rows) != INTSXP)
        error("'rows' must be an integer vector");
    const gc_measure *ms = gpucor_measure_arg(method, MEASURE_COLUMNS);
    int u = gpucor_use_arg(use);
    if ((ms->prep & PREP_COV) && u != USE_PAIRWISE) error("invalid 'method' or 'use'");
    if (!isNull(rows) && u != USE_COMPLETE_OBS && u != USE_NA_OR_COMPLETE)
        error("'rows' is only for the complete-case modes");
    check_rows(rows, n);
    gc_opts o;
    gpucor_opts(opts, &o);
    const char *fun = o.fun[0] ? o.fun : "gpu_cor";
    size_t nobs = isNull(rows) ? n : (size_t) XLENGTH(rows);

    /* with a file, the result is written there and a TRUE returned */
    SEXP ans = PROTECT(isNull(file) ? allocMatrix(REALSXP, (int) p, (int) q)
                                    : allocVector(LGLSXP, 1)); nprot++;
    if (!isNull(file)) LOGICAL(ans)[0] = TRUE;
    gc_sink sink = {.kind = SINK_DENSE, .symmetric = isNull(y), .p = p, .q = q,
                    .epilogue = ms->epilogue, .out = isNull(file) ? REAL(ans) : NULL};
    /* gpu_cov's spreads (option 'mul': list(sx, sy, round)): the GPU's
     * commits multiply as the values land; after the CPU engine, one pass
     * on the threads */
    SEXP mul = gpucor_field_or_null(opts, "mul");
    if (!isNull(mul)) {
        if (!isNull(file) || TYPEOF(mul) != VECSXP || XLENGTH(mul) != 3 ||
            TYPEOF(VECTOR_ELT(mul, 0)) != REALSXP || TYPEOF(VECTOR_ELT(mul, 1)) != REALSXP ||
            (size_t) XLENGTH(VECTOR_ELT(mul, 0)) != p || (size_t) XLENGTH(VECTOR_ELT(mul, 1)) != q)
            error("internal error: invalid option 'mul'");
        sink.mul_row = REAL(VECTOR_ELT(mul, 0));
        sink.mul_col = REAL(VECTOR_ELT(mul, 1));
        sink.mul_round = asLogical(VECTOR_ELT(mul, 2)) == TRUE;
    }
    gpucor_progress pr;
    gc_host host;
    gpucor_host_init(&host, &o, &pr, fun);
    gc_file *f = isNull(file) ? NULL
               : gpucor_file_open(file, p, q, isNull(y), isNull(y) && ms->zero_diag, &o,
                                  &sink, &host, fun);
    int sd0 = 0, used = 0, status;
    char msg[512] = "";
    gc_problem in = {.x = REAL(x), .y = isNull(y) ? NULL : REAL(y), .n = n, .p = p, .q = q,
                     .rows = isNull(rows) ? NULL : INTEGER(rows), .nobs = nobs, .measure = ms,
                     .use = u};
    status = gc_run_warn(&in, &sink, &host, &sd0, &used, msg, sizeof msg);
    gpucor_call_status(f, status, fun, msg);
    if (isNull(file) && isNull(y) && ms->zero_diag)   /* the file sink has done it */
        for (size_t j = 0; j < p; j++) REAL(ans)[j + j * p] = 0;
    if (sink.mul_row && used)
        gc_copy_out_mul(sink.out, NULL, 0, p * q, 0, 1.0, p, sink.mul_row, sink.mul_col,
                        sink.mul_round, o.nthreads);
    gpucor_call_report(ans, &o, &host, used, fun);
    if (sd0) setAttrib(ans, install("sd0"), ScalarLogical(TRUE));
    UNPROTECT(nprot);
    return ans;
}

/* gpu_cor() of a dgCMatrix (R/sparse.R): Pearson or Spearman between its
 * columns on the CPU engine, never dense.  NULL when a column's mean is too
 * large against its spread for the sparse formula (the caller then uses the
 * dense columns). */
SEXP gpucor_sparse_cor(SEXP colptr, SEXP rowind, SEXP val, SEXP nrow,
                       SEXP spearman, SEXP opts)
{
    if (TYPEOF(colptr) != INTSXP || TYPEOF(rowind) != INTSXP || TYPEOF(val) != REALSXP ||
        XLENGTH(rowind) != XLENGTH(val) || XLENGTH(colptr) < 1)
        error("internal error: invalid sparse matrix");
    size_t p = (size_t) XLENGTH(colptr) - 1, n = (size_t) asInteger(nrow);
    const int *cp = INTEGER(colptr), *ri = INTEGER(rowind);
    if (cp[0] != 0 || (R_xlen_t) cp[p] != XLENGTH(val))
        error("internal error: invalid sparse matrix");
    for (size_t j = 0; j < p; j++)
        if (cp[j + 1] < cp[j]) error("internal error: invalid sparse matrix");
    for (R_xlen_t k = 0; k < XLENGTH(rowind); k++)
        if (ri[k] < 0 || (size_t) ri[k] >= n) error("internal error: invalid sparse matrix");
    gc_opts o;
    gpucor_opts(opts, &o);
    SEXP ans = PROTECT(allocMatrix(REALSXP, (int) p, (int) p));
    gc_sink sink = {.kind = SINK_DENSE, .symmetric = 1, .p = p, .q = p, .out = REAL(ans)};
    gpucor_progress pr;
    gc_host host;
    gpucor_host_init(&host, &o, &pr, "gpu_cor");
    int sd0 = 0, ill = 0;
    int status = cpu_sparse_cor(cp, ri, REAL(val), n, p, asLogical(spearman) == TRUE,
                                &sink, &host, &sd0, &ill);
    if (ill) {
        UNPROTECT(1);
        return R_NilValue;
    }
    if (status != GPUCOR_OK) {
        UNPROTECT(1);
        gpucor_raise(status, "gpu_cor");
    }
    gpucor_progress_finish(host.progress_ctx);
    setAttrib(ans, install("sd0"), ScalarLogical(sd0));
    gpucor_set_threads(ans, &o, o.nthreads);
    UNPROTECT(1);
    return ans;
}

/* gpu_degree_centrality(): per column of x (the nodes), the number and the
 * sum of the correlations with the other columns above a cut (with
 * 'absolute', of their absolute values), never the p x p matrix: the
 * engine's SINK_POWSUM in its degree mode.  The cut is 'cut', or with a
 * 'density' (not NA) the value of the density's weakest pair, found first
 * by histogram passes (algo/degree.c).  A p x 2 matrix comes back (count,
 * sum), with attributes "cut" and "edges" for a density. */
typedef struct {
    gc_problem *in;
    gc_host *host;
    int sd0, used;
    int k, npass;        /* the passes made and planned (a density: 4 + 1) */
} degree_ctx;

static int degree_pass(void *ctx, const gc_sink *sink, char *msg, size_t msgcap)
{
    degree_ctx *c = ctx;
    if (c->npass > 1) {
        c->k++;
        gc_progress_pass(c->host, sink->kind == SINK_SELECT ? "cut" : "count",
                         sink->kind == SINK_SELECT ? c->k : c->npass, c->npass, 0);
    }
    return gc_run_warn(c->in, sink, c->host, &c->sd0, &c->used, msg, msgcap);
}

SEXP gpucor_degree(SEXP x, SEXP method, SEXP use, SEXP rows, SEXP cut, SEXP density,
                   SEXP absolute, SEXP opts)
{
    if (TYPEOF(x) != REALSXP || !isMatrix(x)) error("'x' must be a double matrix");
    if (!isNull(rows) && TYPEOF(rows) != INTSXP) error("'rows' must be an integer vector");
    size_t n = (size_t) nrows(x), p = (size_t) ncols(x);
    const gc_measure *ms = gpucor_measure_arg(method, MEASURE_COLUMNS);
    int u = gpucor_use_arg(use), abs_ = asLogical(absolute) == TRUE;
    double c = asReal(cut), d = asReal(density);
    if (c != c && d != d) error("internal error: give a cut or a density");
    check_rows(rows, n);
    gc_opts o;
    gpucor_opts(opts, &o);
    static const double unused[2] = {1, 2};
    gc_powsum ps = {.w = unused, .npow = 2, .nslots = o.nthreads > 0 ? o.nthreads : 1,
                    .degree = 1};
    SEXP ans = PROTECT(allocMatrix(REALSXP, (int) p, 2));
    ps.k = REAL(ans);
    ps.slot = calloc((size_t) ps.nslots * p * 2 + 1, sizeof(double));
    if (!ps.slot) {
        UNPROTECT(1);
        gpucor_raise(GPUCOR_ERR_ALLOC, "gpu_degree_centrality");
    }
    gc_sink sink = {.kind = SINK_POWSUM, .symmetric = 1, .p = p, .q = p, .pow = &ps,
                    .epilogue = abs_ ? EPI_ADJ_UNSIGNED : EPI_IDENTITY, .beta = 1.0};
    gpucor_progress pr;
    gc_host host;
    gpucor_host_init(&host, &o, &pr, "gpu_degree_centrality");
    char msg[512] = "";
    gc_problem in = {.x = REAL(x), .n = n, .p = p, .q = p,
                     .rows = isNull(rows) ? NULL : INTEGER(rows),
                     .nobs = isNull(rows) ? n : (size_t) XLENGTH(rows), .measure = ms, .use = u};
    /* a density's cut: four histogram passes (algo/degree.c), then the count */
    degree_ctx ctx = {.in = &in, .host = &host, .npass = d == d ? 5 : 1};
    int status = GPUCOR_OK;
    double kept = NA_REAL;
    if (d == d) {
        /* the density's D strongest pairs, as gpu_cor_edges(density =) counts them */
        double D = nearbyint(d * (double) p * ((double) p - 1) / 2);
        gc_degree_job job = {.run = degree_pass, .run_ctx = &ctx, .p = p, .absolute = abs_,
                             .nslots = ps.nslots, .D = D};
        if (D < 1) {
            c = INFINITY;
            kept = 0;
        } else {
            status = gc_degree_cut(&job, &c, &kept, msg, sizeof msg);
        }
    }
    ps.cut = c;
    if (status == GPUCOR_OK) status = degree_pass(&ctx, &sink, msg, sizeof msg);
    free(ps.slot);
    gpucor_call_status(NULL, status, "gpu_degree_centrality", msg);
    gpucor_call_report(ans, &o, &host, ctx.used, "gpu_degree_centrality");
    if (ctx.sd0) setAttrib(ans, install("sd0"), ScalarLogical(TRUE));
    if (d == d) {
        /* the cut as a value ("a pair is kept when at least this strong") */
        setAttrib(ans, install("cut"), ScalarReal(c == -INFINITY || c == INFINITY ? c
                                                  : nextafter(c, INFINITY)));
        setAttrib(ans, install("edges"), ScalarReal(kept));
    }
    UNPROTECT(1);
    return ans;
}
