/*
 * knnmi.c -- .Call entry points of gpu_knnmi().  R/knnmi.R has coerced x
 * (and y) to double matrices without NA (variables in rows), checked k and
 * drawn the jitter; it sets the dimnames on the matrix returned here.
 */
#include <R.h>
#include <Rinternals.h>
#include <stdlib.h>
#include "gpucor.h"
#include "status.h"
#include "output.h"
#include "algo/dispatch.h"

/* Without y the n x n symmetric matrix of x's rows, with y the nx x ny
 * matrix of x's rows against y's (the pairs (i, nx + j) of rbind(x, y):
 * engine/knnmi.h).  With 'file' (R/hdf5.R's .hdf5_spec) the matrix goes
 * there and TRUE comes back.  With the engine option 'cols' (a BiocParallel
 * worker's share, without y and file) the pairs of each range's columns of
 * the 'dist' come back, packed, one vector a range, as gpu_dist's do
 * (R/knnmi.R joins them with gpucor_knnmi_full). */
SEXP gpucor_knnmi(SEXP x, SEXP y, SEXP method, SEXP k, SEXP jitter, SEXP jitter_y,
                  SEXP opts, SEXP file)
{
    if (TYPEOF(x) != REALSXP || !isMatrix(x))
        error("'x' must be a double matrix");
    if (!isNull(y) && (TYPEOF(y) != REALSXP || !isMatrix(y)))
        error("'y' must be a double matrix");
    const gc_measure *m = gpucor_measure_arg(method, MEASURE_ROWS);
    if (m->family != FAMILY_KNNMI) error("internal error: '%s' is not knnmi", m->name);
    size_t n = (size_t) nrows(x), p = (size_t) ncols(x);
    if (!isNull(y) && (size_t) ncols(y) != p)
        error("'x' and 'y' must have the same number of columns (samples)");
    size_t ny = isNull(y) ? 0 : (size_t) nrows(y), q = isNull(y) ? n : ny;
    int sym = isNull(y);
    int kk = asInteger(k);
    if (kk == NA_INTEGER || kk < 2 || (size_t) kk >= p)
        error("'k' must be at least 2 and less than the number of samples");
    if (!isNull(jitter) && (TYPEOF(jitter) != REALSXP || XLENGTH(jitter) != XLENGTH(x)))
        error("internal error: invalid jitter");
    if (!isNull(jitter_y) && (isNull(y) || TYPEOF(jitter_y) != REALSXP ||
                              XLENGTH(jitter_y) != XLENGTH(y)))
        error("internal error: invalid jitter of 'y'");
    gc_opts o;
    gpucor_opts(opts, &o);
    const double *rg;
    size_t nr = gpucor_ranges(opts, &rg);
    if (nr && (!sym || !isNull(file)))
        error("internal error: a share of gpu_knnmi() with 'y' or a file");

    SEXP ans = PROTECT(nr ? allocVector(VECSXP, (R_xlen_t) nr)
                       : isNull(file) ? allocMatrix(REALSXP, (int) n, (int) q)
                       : allocVector(LGLSXP, 1));
    if (!isNull(file)) LOGICAL(ans)[0] = TRUE;
    gc_sink sink = {.kind = SINK_DENSE, .symmetric = sym, .p = n, .q = q,
                    .out = isNull(file) && !nr ? REAL(ans) : NULL};
    /* The GPU makes whole columns for a dense sink, each pair twice (a
     * panel's rows above it are earlier panels' columns, already on the
     * host); into a 'dist' it makes each pair once, which the host then
     * spreads over the matrix.  (The CPU's tiles are j <= i either way.)
     * A file takes whole columns (file.h), and a result with y has no
     * pair twice. */
    double *half = NULL;
    if (o.gpu && sym && n >= 2 && isNull(file) && !nr) {
        half = malloc(dist_len(n) * sizeof(double));
        if (!half) {
            UNPROTECT(1);
            error("gpu_knnmi: out of host memory for the %zu pairs", dist_len(n));
        }
        sink = (gc_sink) {.kind = SINK_DIST, .p = n, .q = n, .out = half};
    }
    if (nr) sink = (gc_sink) {.kind = SINK_DIST, .p = n, .q = n};
    gpucor_progress pr;
    gc_host host;
    gpucor_host_init(&host, &o, &pr, "gpu_knnmi");
    /* a file: a distance's zero diagonal without y (the estimate's own) */
    gc_file *f = isNull(file) ? NULL
               : gpucor_file_open(file, n, q, sym, sym, &o, &sink, &host, "gpu_knnmi");
    int status = GPUCOR_OK, flag = 0, used = 0;
    char msg[512] = "";
    /* a pair at all: two rows of x, or a row each of x and y */
    int pairs = sym ? n >= 2 : n >= 1 && ny >= 1;
    gc_problem pb = gc_rows_problem(REAL(x), n, p, m, 0, 0);
    pb.y = isNull(y) ? NULL : REAL(y);
    pb.q = ny;
    pb.k = (size_t) kk;
    pb.jitter = isNull(jitter) ? NULL : REAL(jitter);
    pb.jitter_y = isNull(jitter_y) ? NULL : REAL(jitter_y);
    for (size_t a = 0; a < (nr ? nr : 1) && status == GPUCOR_OK; a++) {
        if (nr) {
            o.col0 = sink.win0 = (size_t) rg[2 * a] < n ? (size_t) rg[2 * a] : n;
            o.col1 = sink.win1 = (size_t) rg[2 * a + 1] < n ? (size_t) rg[2 * a + 1] : n;
            o.col_cover = 1;
            SET_VECTOR_ELT(ans, (R_xlen_t) a,
                           allocVector(REALSXP, (R_xlen_t) gc_sink_len(&sink)));
            sink.out = REAL(VECTOR_ELT(ans, (R_xlen_t) a));
            if (gc_sink_len(&sink) == 0) continue;
        }
        if (pairs) {
            status = gc_run_warn(&pb, &sink, &host, &flag, &used, msg, sizeof msg);
        } else if (f) {
            /* no pair: the file's one item gets its zero diagonal (the
             * file's), an empty x or y nothing */
            status = gc_sink_fill_na(&sink);
            used = 1;
        } else {
            /* no pair: parmigene's zero diagonal */
            if (sym && n == 1) REAL(ans)[0] = 0;
            used = 1;
        }
    }
    if (half && status == GPUCOR_OK) gc_dist_expand(half, n, 0.0, REAL(ans), o.nthreads);
    free(half);
    gpucor_call_status(f, status, "gpu_knnmi", msg);
    gpucor_call_report(ans, &o, &host, used, "gpu_knnmi");
    UNPROTECT(1);
    return ans;
}

/* gpu_knnmi(BPPARAM =): the n x n symmetric matrix, zero diagonal, of the
 * 'dist' d of n items that the workers' shares made (R/knnmi.R), on
 * 'threads'. */
SEXP gpucor_knnmi_full(SEXP d, SEXP n, SEXP threads)
{
    int nn = asInteger(n), nt = asInteger(threads);
    if (TYPEOF(d) != REALSXP || nn == NA_INTEGER || nn < 0 ||
        (size_t) XLENGTH(d) != dist_len((size_t) nn))
        error("internal error: invalid 'dist'");
    SEXP ans = PROTECT(allocMatrix(REALSXP, nn, nn));
    if (nn == 1) REAL(ans)[0] = 0;
    else if (nn > 1)
        gc_dist_expand(REAL(d), (size_t) nn, 0.0, REAL(ans), nt == NA_INTEGER || nt < 1 ? 1 : nt);
    UNPROTECT(1);
    return ans;
}
