/*
 * wgcna.c -- .Call entry points of the WGCNA family (R/wgcna.R): bicor's
 * column preparation and its pairwise-NA pairs (algo/bicor.h), and one
 * entry for what is made of the correlations -- the adjacency matrix, the
 * soft-threshold scan's connectivities (SINK_POWSUM), the TOM (algo/tom.h)
 * as a matrix or as the 'dist' of 1 - TOM -- on either engine.  A matrix
 * may go to a file instead (gpu_hdf5(): output.h), with R's steps after
 * the engine done by the file sink to each band (file.h's post steps), and
 * bicor's pairs with NAs recomputed there too (gpucor_bicor_file).
 */
#include <R.h>
#include <Rinternals.h>
#include <stdlib.h>
#include <string.h>
#include "gpucor.h"
#include "status.h"
#include "algo/dispatch.h"
#include "output.h"
#include "algo/bicor.h"
#include "algo/tom.h"

/* params: one side's (gpucor_bicor_opts).  list(z, flags) */
SEXP gpucor_bicor_prep(SEXP x, SEXP params, SEXP opts)
{
    if (TYPEOF(x) != REALSXP || !isMatrix(x)) error("'x' must be a double matrix");
    gc_opts o;
    gpucor_opts(opts, &o);
    gc_bicor_opts bo;
    gpucor_bicor_opts(params, &bo);
    size_t n = (size_t) nrows(x), p = (size_t) ncols(x);
    SEXP ans = PROTECT(allocVector(VECSXP, 2));
    SEXP z = allocMatrix(REALSXP, (int) n, (int) p);
    SET_VECTOR_ELT(ans, 0, z);
    SEXP fl = allocVector(INTSXP, (R_xlen_t) p);
    SET_VECTOR_ELT(ans, 1, fl);
    if (gc_bicor_prep(REAL(x), n, p, &bo, REAL(z), INTEGER(fl), o.nthreads)) {
        UNPROTECT(1);
        error("gpu_bicor: out of host memory");
    }
    UNPROTECT(1);
    return ans;
}

/* The pairs with NAs on their common rows, into r (p x q, the caller's
 * fresh result).  params: list(x, y: each side's, quick).  Returns c(pairs
 * that became NA, zero MAD met in x, in y). */
SEXP gpucor_bicor_pairs(SEXP x, SEXP fx, SEXP y, SEXP fy, SEXP params, SEXP r, SEXP opts)
{
    if (TYPEOF(x) != REALSXP || !isMatrix(x) || TYPEOF(fx) != INTSXP ||
        XLENGTH(fx) != ncols(x))
        error("internal error: invalid 'x'");
    int sym = isNull(y);
    if (!sym && (TYPEOF(y) != REALSXP || !isMatrix(y) || nrows(y) != nrows(x) ||
                 TYPEOF(fy) != INTSXP || XLENGTH(fy) != ncols(y)))
        error("internal error: invalid 'y'");
    size_t n = (size_t) nrows(x), p = (size_t) ncols(x), q = sym ? p : (size_t) ncols(y);
    if (TYPEOF(r) != REALSXP || (size_t) XLENGTH(r) != p * q)
        error("internal error: invalid result");
    gc_opts o;
    gpucor_opts(opts, &o);
    gc_bicor_opts ox, oy;
    double quick = gpucor_bicor_sides(params, &ox, &oy);
    gpucor_progress pr;
    gc_host host;
    gpucor_host_init(&host, &o, &pr, "gpu_bicor");
    size_t nna = 0;
    int zmad[2] = {0, 0};
    int st = gc_bicor_pairs(REAL(x), n, p, INTEGER(fx), &ox, sym ? NULL : REAL(y), q,
                            sym ? NULL : INTEGER(fy), &oy, quick, REAL(r), &nna,
                            zmad, &host);
    if (st != GPUCOR_OK) gpucor_raise(st, "gpu_bicor");
    gpucor_progress_finish(host.progress_ctx);
    SEXP ans = allocVector(REALSXP, 3);
    REAL(ans)[0] = (double) nna;
    REAL(ans)[1] = zmad[0];
    REAL(ans)[2] = zmad[1];
    return ans;
}

/* gpu_bicor(output =) and the adjacencies of bicor with pairwise NAs: the
 * product of the prepared columns zx (and zy) written to the file (the
 * output spec, with R's post steps), and with 'pairs' the pairs with NAs
 * recomputed on their common rows in each band before it is written
 * (algo/bicor.h), never the whole matrix in memory.  params: list(x, y,
 * quick) as gpucor_bicor_pairs', and pairs.  Returns c(pairs that became
 * NA, zero MAD met in x, in y), as gpucor_bicor_pairs. */
SEXP gpucor_bicor_file(SEXP zx, SEXP zy, SEXP x, SEXP y, SEXP fx, SEXP fy, SEXP params,
                       SEXP opts, SEXP file, SEXP what)
{
    int sym = isNull(zy);
    if (TYPEOF(zx) != REALSXP || !isMatrix(zx) || TYPEOF(x) != REALSXP || !isMatrix(x) ||
        nrows(x) != nrows(zx) || ncols(x) != ncols(zx) || TYPEOF(fx) != INTSXP ||
        XLENGTH(fx) != ncols(x))
        error("internal error: invalid 'x'");
    if (!sym && (TYPEOF(zy) != REALSXP || !isMatrix(zy) || TYPEOF(y) != REALSXP ||
                 !isMatrix(y) || nrows(y) != nrows(x) || nrows(zy) != nrows(y) ||
                 ncols(zy) != ncols(y) || TYPEOF(fy) != INTSXP || XLENGTH(fy) != ncols(y)))
        error("internal error: invalid 'y'");
    if (!isString(what) || XLENGTH(what) != 1) error("internal error: invalid caller");
    const char *fun = CHAR(STRING_ELT(what, 0));
    size_t n = (size_t) nrows(x), p = (size_t) ncols(x), q = sym ? p : (size_t) ncols(y);
    gc_opts o;
    gpucor_opts(opts, &o);
    gc_bicor_opts ox, oy;
    double quick = gpucor_bicor_sides(params, &ox, &oy);
    int pairs = asLogical(gpucor_field(params, "pairs")) == TRUE;

    SEXP ans = PROTECT(allocVector(REALSXP, 3));
    memset(REAL(ans), 0, 3 * sizeof(double));
    gc_sink sink = {.kind = SINK_DENSE, .symmetric = sym, .p = p, .q = q};
    gpucor_progress pr;
    gc_host host;
    gpucor_host_init(&host, &o, &pr, fun);
    gc_file *f = gpucor_file_open(file, p, q, sym, 0, &o, &sink, &host, fun);
    gc_bicor_pairs_ctx *pc = NULL;
    int status = GPUCOR_OK, sd0 = 0, used = 0;
    char msg[512] = "";
    if (pairs) {
        status = gc_bicor_pairs_open(REAL(x), n, p, INTEGER(fx), &ox, sym ? NULL : REAL(y), q,
                                     sym ? NULL : INTEGER(fy), &oy, quick,
                                     o.nthreads, &pc);
        if (status == GPUCOR_OK) gc_file_set_hook(f, gc_bicor_pairs_columns, pc);
        else snprintf(msg, sizeof msg, "out of host memory");
    }
    if (status == GPUCOR_OK) {
        gc_problem in = {.x = REAL(zx), .y = sym ? NULL : REAL(zy), .n = n, .p = p, .q = q,
                         .nobs = n, .measure = gc_measure_find("bicor", MEASURE_COLUMNS),
                         .use = USE_EVERYTHING};
        status = gc_run_warn(&in, &sink, &host, &sd0, &used, msg, sizeof msg);
    }
    if (pc) {
        size_t nna = 0;
        int zmad[2] = {0, 0};
        gc_bicor_pairs_close(pc, &nna, zmad);
        REAL(ans)[0] = (double) nna;
        REAL(ans)[1] = zmad[0];
        REAL(ans)[2] = zmad[1];
    }
    gpucor_call_status(f, status, fun, msg);
    gpucor_call_report(ans, &o, &host, used, fun);
    UNPROTECT(1);
    return ans;
}

enum { NET_ADJACENCY = 1, NET_POWSUM = 2, NET_TOM = 3, NET_TOM_DIST = 4 };

/* x: the data (n x p; method the name of a measure between columns:
 * "pearson", "spearman", or "bicor" for its prepared columns) or an
 * adjacency (method NULL; TOM only); use, rows as gpu_cor's.  params:
 * list(epilogue, beta, powers, tom type, mean denom).
 * file: NULL, or the output spec of the adjacency or TOM matrix (a TOM
 * 'dist' as the full matrix of 1 - TOM, diagonal 0); then TRUE comes back
 * (with the attributes). */
SEXP gpucor_network(SEXP x, SEXP what, SEXP method, SEXP use, SEXP rows, SEXP params,
                    SEXP opts, SEXP file)
{
    if (TYPEOF(x) != REALSXP || !isMatrix(x)) error("internal error: 'x' must be a double matrix");
    if (TYPEOF(params) != VECSXP) error("internal error: invalid parameters");
    if (!isNull(rows) && TYPEOF(rows) != INTSXP) error("'rows' must be an integer vector");
    int w = asInteger(what), u = gpucor_use_arg(use);
    /* the data's measure; NULL: x is the adjacency */
    const gc_measure *m = isNull(method) ? NULL : gpucor_measure_arg(method, MEASURE_COLUMNS);
    if (w < NET_ADJACENCY || w > NET_TOM_DIST || (m && m->family != FAMILY_PRODUCT) ||
        (!m && w < NET_TOM) || (!isNull(file) && w == NET_POWSUM))
        error("internal error: invalid network request");
    size_t n = (size_t) nrows(x), p = m ? (size_t) ncols(x) : n;
    if (!m && (size_t) ncols(x) != n) error("the adjacency must be square");
    gc_opts o;
    gpucor_opts(opts, &o);
    int epi = asInteger(gpucor_field(params, "epilogue"));
    double beta = asReal(gpucor_field(params, "beta"));
    SEXP powers = gpucor_field(params, "powers");
    gc_tom_args ta = {asInteger(gpucor_field(params, "tom")),
                      asInteger(gpucor_field(params, "mean_denom"))};
    gc_problem in = {.x = REAL(x), .n = n, .p = p, .q = p,
                     .rows = isNull(rows) ? NULL : INTEGER(rows),
                     .nobs = isNull(rows) ? n : (size_t) XLENGTH(rows), .measure = m, .use = u};
    const char *fun = w == NET_ADJACENCY ? "gpu_adjacency"
                    : w == NET_POWSUM ? "gpu_soft_threshold" : "gpu_tom";
    gpucor_progress pr;
    gc_host host;
    gpucor_host_init(&host, &o, &pr, fun);
    int status = GPUCOR_OK, sd0 = 0, used = 0, nprot = 0;
    size_t nbad = 0;
    char msg[512] = "";
    SEXP ans = R_NilValue;
    gc_file *f = NULL;

    if (w == NET_ADJACENCY || w == NET_POWSUM) {
        gc_sink sink = {.kind = SINK_DENSE, .epilogue = epi, .symmetric = 1, .p = p, .q = p,
                        .beta = beta};
        gc_powsum ps = {0};
        if (!isNull(file)) {
            /* the sink applies the epilogue to the tiles (the GPU's on the
             * device), as the dense one does */
            /* a fresh TRUE: attributes go on it (ScalarLogical's is R's own) */
            ans = PROTECT(allocVector(LGLSXP, 1)); nprot++;
            LOGICAL(ans)[0] = TRUE;
            f = gpucor_file_open(file, p, p, 1, 0, &o, &sink, &host, fun);
        } else if (w == NET_ADJACENCY) {
            ans = PROTECT(allocMatrix(REALSXP, (int) p, (int) p)); nprot++;
            sink.out = REAL(ans);
        } else {
            if (TYPEOF(powers) != REALSXP) error("internal error: invalid powers");
            ps.w = REAL(powers);
            ps.npow = (int) XLENGTH(powers);
            ps.nslots = o.nthreads > 0 ? o.nthreads : 1;
            ans = PROTECT(allocMatrix(REALSXP, (int) p, ps.npow)); nprot++;
            ps.k = REAL(ans);
            ps.slot = calloc((size_t) ps.nslots * p * ps.npow + 1, sizeof(double));
            if (!ps.slot) { UNPROTECT(nprot); gpucor_raise(GPUCOR_ERR_ALLOC, "gpu_soft_threshold"); }
            sink.kind = SINK_POWSUM;
            sink.pow = &ps;
        }
        gc_progress_pass(&host, w == NET_POWSUM ? "connectivity" : "adjacency", 1, 1, 1);
        status = gc_run_warn(&in, &sink, &host, &sd0, &used, msg, sizeof msg);
        free(ps.slot);
    } else {
        /* the genes: p (x's columns, or the adjacency's side) */
        size_t g = p;
        /* the bar's two passes from the data, weighted by their work: the
         * adjacency takes about nobs multiply-adds a pair plus its power and
         * its write (counted as 300: 2-core machine, 2026-11-28, 5000 genes
         * of 100 samples, adjacency 4.2 s, TOM 66 s), the TOM's product g;
         * from an adjacency, one pass */
        double nobs = (double) in.nobs + 300;
        double w_adj = m ? nobs / (nobs + (double) g) : 0;
        int npass = m ? 2 : 1;
        size_t len = w == NET_TOM ? g * g : dist_len(g);
        gc_sink out = {.kind = w == NET_TOM ? SINK_DENSE : SINK_DIST,
                       .epilogue = w == NET_TOM ? EPI_IDENTITY : EPI_ONE_MINUS,
                       .symmetric = 1, .p = g, .q = g};
        if (!isNull(file)) {
            /* before the adjacency's memory is taken: opening may raise.  A
             * 'dist' is the matrix of 1 - TOM, diagonal 0 (as gpu_dist's);
             * the GPU then makes matrix panels, the same GEMMs as a TOM
             * matrix's (tom.cu) */
            ans = PROTECT(allocVector(LGLSXP, 1)); nprot++;
            LOGICAL(ans)[0] = TRUE;
            f = gpucor_file_open(file, g, g, 1, w == NET_TOM_DIST, &o, &out, &host, fun);
        } else {
            ans = PROTECT(w == NET_TOM ? allocMatrix(REALSXP, (int) g, (int) g)
                                       : allocVector(REALSXP, (R_xlen_t) len)); nprot++;
            out.out = REAL(ans);
        }
        if (o.gpu) {
#ifdef GPUCOR_CUDA
            int dev = o.ndevices ? o.devices[0] : 0;
            gc_tom_dev *h = NULL;
            void *dA = NULL;
            status = gc_tom_cuda_open(g, dev, o.single, o.gpu_memory, &h, &dA, msg, sizeof msg);
            if (status == GPUCOR_OK && !m) {
                status = gc_tom_cuda_upload(h, REAL(x), &host, msg, sizeof msg);
            } else if (status == GPUCOR_OK) {
                gc_progress_pass(&host, "adjacency", 1, 2, w_adj);
                /* the adjacency goes to the device that holds it */
                gc_opts o1;
                gc_host h1;
                gc_host_on_device(&host, dev, &o1, &h1);
                gc_sink sink = {.kind = SINK_DENSE_DEVICE, .epilogue = epi, .symmetric = 1,
                                .p = g, .q = g, .dev_out = dA, .beta = beta, .ld = g};
                status = gc_run_device(&in, &sink, &h1, &sd0, "the adjacency was", msg,
                                       sizeof msg);
            }
            used = 0;
            gc_progress_pass(&host, "TOM", npass, npass, 1 - w_adj);
            if (status == GPUCOR_OK)
                status = gc_tom_cuda_run(h, &ta, &out, &host, &nbad, msg, sizeof msg);
            gc_tom_cuda_close(h);
#else
            status = gc_no_cuda(msg, sizeof msg);
#endif
        } else {
            size_t ld = (g + 3) & ~(size_t) 3;
            double *A = calloc(ld * g + 1, sizeof(double));
            if (!A) {
                UNPROTECT(nprot);
                snprintf(msg, sizeof msg, "out of host memory for the %.2f GB adjacency",
                         ld * g * 8.0 / 1e9);
                if (f) gpucor_file_finish(f, GPUCOR_ERR_ALLOC, fun, msg);   /* raises */
                error("gpu_tom: %s", msg);
            }
            if (!m) {
                /* the adjacency's copy, interruptible */
                status = gc_copy_columns(A, ld, REAL(x), g, g, g, o.nthreads, &host);
            } else {
                gc_sink sink = {.kind = SINK_DENSE, .epilogue = epi, .symmetric = 1, .p = g,
                                .q = g, .out = A, .beta = beta, .ld = ld};
                gc_progress_pass(&host, "adjacency", 1, 2, w_adj);
                status = gc_run_warn(&in, &sink, &host, &sd0, &used, msg, sizeof msg);
            }
            gc_progress_pass(&host, "TOM", npass, npass, 1 - w_adj);
            if (status == GPUCOR_OK) status = gc_tom_cpu(A, g, ld, &ta, &out, &host, &used, &nbad);
            free(A);
        }
    }
    gpucor_call_status(f, status, fun, msg);
    gpucor_call_report(ans, &o, &host, used, NULL);
    if (nbad) setAttrib(ans, install("bad"), ScalarReal((double) nbad));
    if (sd0) setAttrib(ans, install("sd0"), ScalarLogical(TRUE));
    UNPROTECT(nprot);
    return ans;
}

/* gpu_tom(adjacency =)'s checks (R/wgcna.R, .check_adjacency()): c(what,
 * na), what 0 fine, 1 not symmetric (within 1e-12), 2 a value outside
 * [lo, 1]; na: some value is NA.  Interruptible, on the threads. */
SEXP gpucor_adjacency_check(SEXP a, SEXP lo, SEXP opts)
{
    if (TYPEOF(a) != REALSXP || !isMatrix(a) || nrows(a) != ncols(a))
        error("internal error: the adjacency must be a square double matrix");
    gc_opts o;
    gpucor_opts(opts, &o);
    gc_host h = {.opts = &o, .interrupted = gpucor_interrupted};   /* Ctrl-C only */
    int na = 0;
    int r = gc_adjacency_check(REAL(a), (size_t) nrows(a), asReal(lo), 1e-12, o.nthreads, &h,
                               &na);
    if (r == ADJ_INTERRUPTED) gpucor_raise(GPUCOR_ERR_INTERRUPT, "gpu_tom");
    SEXP ans = allocVector(INTSXP, 2);
    INTEGER(ans)[0] = r;
    INTEGER(ans)[1] = na;
    return ans;
}
