/*
 * dist.c -- .Call entry point of gpu_dist().  R/dist.R has matched the
 * method, coerced x to a double matrix and chosen the backend; it sets the
 * 'dist' attributes on the packed vector returned here.
 */
#include <R.h>
#include <Rinternals.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include "gpucor.h"
#include "status.h"
#include "output.h"
#include "cpu/cpu.h"
#include "algo/dispatch.h"

/* With the engine option 'cols' (a BiocParallel worker's share: ranges
 * of columns of the 'dist'), the pairs of each range's columns come back,
 * packed, one vector a range (R/dist.R puts them together); the engine
 * makes the tiles or panels that meet the range (gc_opts.col_cover), the
 * sink keeps the range's columns, so every pair has the arithmetic of the
 * call without shares. */
SEXP gpucor_dist(SEXP x, SEXP method, SEXP power, SEXP opts, SEXP file)
{
    if (TYPEOF(x) != REALSXP || !isMatrix(x))
        error("'x' must be a double matrix");
    const gc_measure *m = gpucor_measure_arg(method, MEASURE_ROWS);
    double pw = asReal(power);
    if (m->op == DIST_MINKOWSKI && (!R_FINITE(pw) || pw <= 0))
        error("distance(): invalid p");
    gc_opts o;
    gpucor_opts(opts, &o);
    size_t n = (size_t) nrows(x), p = (size_t) ncols(x);
    int used = 0;   /* the CPU engine's team size; 0: the GPU ran */
    int anyna = gc_measure_is_cor(m) ? gc_any_nan(REAL(x), n * p) : 0;
    const double *rg;
    size_t nr = gpucor_ranges(opts, &rg);
    if (nr && !isNull(file)) error("internal error: a share of a 'dist' to a file");

    /* with a file, the full n x n matrix is written there and TRUE returned */
    SEXP ans = PROTECT(nr ? allocVector(VECSXP, (R_xlen_t) nr)
                       : isNull(file) ? allocVector(REALSXP, (R_xlen_t) dist_len(n))
                       : allocVector(LGLSXP, 1));
    if (!isNull(file)) LOGICAL(ans)[0] = TRUE;
    /* a correlation distance is 1 - r, or 1 - |r| */
    gc_sink sink = {.kind = SINK_DIST, .epilogue = m->epilogue, .p = n, .q = n,
                    .out = nr || !isNull(file) ? NULL : REAL(ans)};
    int status = GPUCOR_OK, flag = 0;
    gpucor_progress pr;
    gc_host host;
    gpucor_host_init(&host, &o, &pr, "gpu_dist");
    gc_file *f = isNull(file) ? NULL
               : gpucor_file_open(file, n, n, 1, 1, &o, &sink, &host, "gpu_dist");
    char msg[512] = "";
    for (size_t a = 0; a < (nr ? nr : 1) && status == GPUCOR_OK; a++) {
        if (nr) {
            o.col0 = sink.win0 = (size_t) rg[2 * a] < n ? (size_t) rg[2 * a] : n;
            o.col1 = sink.win1 = (size_t) rg[2 * a + 1] < n ? (size_t) rg[2 * a + 1] : n;
            o.col_cover = 1;
            SET_VECTOR_ELT(ans, (R_xlen_t) a, allocVector(REALSXP, (R_xlen_t) gc_sink_len(&sink)));
            sink.out = REAL(VECTOR_ELT(ans, (R_xlen_t) a));
            if (gc_sink_len(&sink) == 0) continue;
        }
        int fl = 0;
        if (p == 0 || (f && n < 2)) {
            /* no coordinate observed: stats gives NA for every metric; a
             * file gets every value NA too when the engine visits no pair
             * (the one item's zero diagonal is the file's post step) */
            status = gc_sink_fill_na(&sink);
        } else {
            gc_problem pb = gc_rows_problem(REAL(x), n, p, m, pw, anyna);
            status = gc_run_warn(&pb, &sink, &host, &fl, &used, msg, sizeof msg);
        }
        flag |= fl;
    }
    if (p == 0 && !f) {
        UNPROTECT(1);
        return ans;
    }
    gpucor_call_status(f, status, "gpu_dist", msg);
    gpucor_call_report(ans, &o, &host, used, "gpu_dist");
    /* With NA the correlation distances are 1 - cor(t(x), use =
     * "pairwise.complete.obs"), whose diagonal -- not in a 'dist' -- also
     * gives stats' warning for a row constant on its own observed values */
    if (anyna && !flag) {
        int s = cpu_self_pairs_sd0(REAL(x), n, p, 1, n, m->cor,
                                   (m->prep & PREP_UNCENTRED) != 0);
        if (s < 0) {
            UNPROTECT(1);
            gpucor_raise(GPUCOR_ERR_ALLOC, "gpu_dist");
        }
        flag = s;
    }
    if (flag)
        setAttrib(ans, install(gc_measure_flag_attr(m)), ScalarLogical(TRUE));
    UNPROTECT(1);
    return ans;
}
