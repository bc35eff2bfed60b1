/*
 * knnmi.c -- .Call entry point of gpu_knnmi().  R/knnmi.R has coerced x to
 * a double matrix without NA (variables in rows), checked k and drawn the
 * jitter; it sets the dimnames on the n x n matrix returned here.
 */
#include <R.h>
#include <Rinternals.h>
#include <stdlib.h>
#include "gpucor.h"
#include "status.h"
#include "algo/dispatch.h"

SEXP gpucor_knnmi(SEXP x, SEXP method, SEXP k, SEXP jitter, SEXP opts)
{
    if (TYPEOF(x) != REALSXP || !isMatrix(x))
        error("'x' must be a double matrix");
    const gc_measure *m = gpucor_measure_arg(method, MEASURE_ROWS);
    if (m->family != FAMILY_KNNMI) error("internal error: '%s' is not knnmi", m->name);
    size_t n = (size_t) nrows(x), p = (size_t) ncols(x);
    int kk = asInteger(k);
    if (kk == NA_INTEGER || kk < 2 || (size_t) kk >= p)
        error("'k' must be at least 2 and less than the number of samples");
    if (!isNull(jitter) && (TYPEOF(jitter) != REALSXP || XLENGTH(jitter) != XLENGTH(x)))
        error("internal error: invalid jitter");
    gc_opts o;
    gpucor_opts(opts, &o);
    SEXP ans = PROTECT(allocMatrix(REALSXP, (int) n, (int) n));
    gc_sink sink = {.kind = SINK_DENSE, .symmetric = 1, .p = n, .q = n, .out = REAL(ans)};
    /* The GPU makes whole columns for a dense sink, each pair twice (a
     * panel's rows above it are earlier panels' columns, already on the
     * host); into a 'dist' it makes each pair once, which the host then
     * spreads over the matrix.  (The CPU's tiles are j <= i either way.) */
    double *half = NULL;
    if (o.gpu && n >= 2) {
        half = malloc(dist_len(n) * sizeof(double));
        if (!half) {
            UNPROTECT(1);
            error("gpu_knnmi: out of host memory for the %zu pairs", dist_len(n));
        }
        sink = (gc_sink) {.kind = SINK_DIST, .p = n, .q = n, .out = half};
    }
    gpucor_progress pr;
    gc_host host;
    gpucor_host_init(&host, &o, &pr);
    int status = GPUCOR_OK, flag = 0, used = 0;
    char msg[512] = "";
    if (n < 2) {
        /* no pair: parmigene's zero diagonal */
        if (n == 1) REAL(ans)[0] = 0;
        used = 1;
    } else {
        gc_problem pb = gc_rows_problem(REAL(x), n, p, m, 0, 0);
        pb.k = (size_t) kk;
        pb.jitter = isNull(jitter) ? NULL : REAL(jitter);
        status = gc_run_warn(&pb, &sink, &host, &flag, &used, msg, sizeof msg);
        if (half && status == GPUCOR_OK) gc_dist_expand(half, n, 0.0, REAL(ans), o.nthreads);
    }
    free(half);
    gpucor_call_status(NULL, status, "gpu_knnmi", msg);
    gpucor_call_report(ans, &o, &host, used, "gpu_knnmi");
    UNPROTECT(1);
    return ans;
}
