/*
 * hclust.c -- .Call entry point of gpu_hclust() (R/hclust.R): the
 * distances from a 'dist' (or, on the GPU, computed on the device from the
 * rows of x), the merges by algo/hclust.h on the CPU or the GPU, and the
 * parts of stats' hclust object (merge, height, order).
 */
#include <R.h>
#include <Rinternals.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gpucor.h"
#include "status.h"
#include "algo/dispatch.h"
#include "algo/hclust.h"

/* The bar's share of the copy (or check) of 'd' before the merges: the
 * copy writes fresh memory (page faults), the merges read each distance a
 * few times (2-core machine, 2026-11-28, n = 30000, complete linkage:
 * copy 21 s, merges 64 s; the GPU's upload from pinned memory is faster:
 * not measured, the same share). */
#define HC_COPY_SHARE 0.25

static void nonfinite_error(size_t at, double v)
{
    error("NA/NaN/Inf in the dissimilarities (element %.0f of 'd' is %g): clustering "
          "needs finite values", (double) at + 1, v);
}

/* data: a 'dist' (size: its number of objects), or x (the GPU computes
 * the distances of its rows, metric/power as gpu_dist()'s); method: the
 * linkage's name; members: NULL or doubles; inplace: data is the caller's
 * own scratch (the CPU engine may overwrite it). */
SEXP gpucor_hclust(SEXP data, SEXP size, SEXP method, SEXP members, SEXP metric,
                   SEXP power, SEXP opts, SEXP inplace)
{
    if (TYPEOF(data) != REALSXP) error("internal error: 'data' must be double");
    int isx = isMatrix(data), meth = -1;
    if (TYPEOF(method) == STRSXP && XLENGTH(method) == 1 && STRING_ELT(method, 0) != NA_STRING)
        meth = gc_hclust_find(CHAR(STRING_ELT(method, 0)));
    if (meth < 0) error("invalid clustering method");
    const gc_measure *m = isx ? gpucor_measure_arg(metric, MEASURE_ROWS) : NULL;
    size_t n = isx ? (size_t) nrows(data) : (size_t) asReal(size);
    if (!isx && (size_t) XLENGTH(data) != dist_len(n))
        error("internal error: 'd' does not hold %zu objects", n);
    if (!isNull(members) && (TYPEOF(members) != REALSXP || (size_t) XLENGTH(members) != n))
        error("invalid length of members");
    gc_opts o;
    gpucor_opts(opts, &o);
    const double *mem = isNull(members) ? NULL : REAL(members);
    int own = asLogical(inplace) == TRUE, nt = o.nthreads > 0 ? o.nthreads : 1;
    size_t nm = n > 1 ? n - 1 : 0;

    int nprot = 0;
    SEXP ans = PROTECT(allocVector(VECSXP, 3)); nprot++;
    SEXP merge = allocMatrix(INTSXP, (int) nm, 2);
    SET_VECTOR_ELT(ans, 0, merge);
    SET_VECTOR_ELT(ans, 1, allocVector(REALSXP, (R_xlen_t) nm));
    SET_VECTOR_ELT(ans, 2, allocVector(INTSXP, (R_xlen_t) n));
    gc_hclust_merges mg = {malloc((nm ? nm : 1) * sizeof(int)),
                           malloc((nm ? nm : 1) * sizeof(int)),
                           malloc((nm ? nm : 1) * sizeof(double))};
    double *D = NULL;
    int status = GPUCOR_OK, used = 0, flag = 0, bad = 0, sorted = 0;
    size_t at = 0;
    char msg[512] = "";
    gpucor_progress pr;
    gc_host host;
    gpucor_host_init(&host, &o, &pr, "gpu_hclust");
    if (!mg.a || !mg.b || !mg.h) {
        status = GPUCOR_ERR_ALLOC;
        snprintf(msg, sizeof msg, "out of host memory");
        goto done;
    }
    if (o.gpu && gc_hclust_reducible(meth)) {
#ifdef GPUCOR_CUDA
        int dev = o.ndevices ? o.devices[0] : 0;
        gc_hclust_dev *h = NULL;
        void *dd = NULL;
        status = gc_hclust_cuda_open(n, dev, o.single, o.gpu_memory, &h, &dd, msg, sizeof msg);
        if (status == GPUCOR_OK && isx) {
            size_t p = (size_t) ncols(data);
            int anyna = gc_measure_is_cor(m) ? gc_any_nan(REAL(data), n * p) : 0;
            /* the distances go to the device that clusters them */
            gc_opts o1;
            gc_host h1;
            gc_host_on_device(&host, dev, &o1, &h1);
            gc_sink sink = {.kind = SINK_DIST_DEVICE, .epilogue = m->epilogue, .p = n, .q = n,
                            .dev_out = dd};
            /* the distances' share: p coordinates a pair against the
             * merges' few scans of each distance */
            gc_progress_pass(&host, "distances", 1, 2, (double) p / (double) (p + 8));
            if (p < m->min_coords) {
                bad = 1;   /* every distance NA */
                status = GPUCOR_ERR_INVALID;
            } else {
                gc_problem pb = gc_rows_problem(REAL(data), n, p, m, asReal(power), anyna);
                status = gc_run_device(&pb, &sink, &h1, &flag, "the distances were", msg,
                                       sizeof msg);
            }
            used = 0;
        } else if (status == GPUCOR_OK) {
            gc_progress_pass(&host, "copy", 1, 2, HC_COPY_SHARE);
            status = gc_hclust_cuda_upload(h, REAL(data), nt, &host, &bad, &at, msg,
                                           sizeof msg);
        }
        gc_progress_pass(&host, "merges", 2, 2, 0);
        if (status == GPUCOR_OK)
            status = gc_hclust_cuda_run(h, meth, mem, &mg, &host, &bad, msg, sizeof msg);
        gc_hclust_cuda_close(h);
#else
        status = gc_no_cuda(msg, sizeof msg);
#endif
    } else {
        if (isx) error("internal error: the CPU engine clusters a 'dist'");
        size_t len = dist_len(n);
        if (own) {
            D = REAL(data);
        } else {
            D = malloc((len ? len : 1) * sizeof *D);
            if (!D) {
                status = GPUCOR_ERR_ALLOC;
                snprintf(msg, sizeof msg, "out of host memory for a copy of the %.2f GB "
                         "of distances", len * 8.0 / 1e9);
                goto done;
            }
            gc_advise_huge(D, len * sizeof *D);
        }
        /* the check, and the copy (in parallel: the copy is fresh memory),
         * in chunks with Ctrl-C between them */
        gc_progress_pass(&host, own ? "check" : "copy", 1, 2, HC_COPY_SHARE);
        size_t chunk = GC_COPY_CHUNK / sizeof *D;
        at = len;
        for (size_t k0 = 0; k0 < len; k0 += chunk) {
            size_t cnt = len - k0 < chunk ? len - k0 : chunk;
            if (gc_host_interrupted(&host)) {
                status = GPUCOR_ERR_INTERRUPT;
                break;
            }
            size_t f = gc_hclust_stage(REAL(data) + k0, cnt, own ? NULL : D + k0, 0, nt);
            if (f < cnt) {
                at = k0 + f;
                bad = 1;
                status = GPUCOR_ERR_INVALID;
                break;
            }
            host.progress(host.progress_ctx, (double) (k0 + cnt) / (double) len);
        }
        if (status != GPUCOR_OK) {
            if (!own) free(D);
            goto done;
        }
        gc_progress_pass(&host, "merges", 2, 2, 0);
        if (gc_hclust_reducible(meth)) {
            status = gc_hclust_chain_cpu(D, n, meth, mem, &mg, &host, &used, msg, sizeof msg);
        } else {
            status = gc_hclust_generic_cpu(D, n, meth, mem, &mg, &host, msg, sizeof msg);
            used = 1;
            sorted = 1;
        }
        if (D != REAL(data)) free(D);
    }
    if (status == GPUCOR_OK &&
        gc_hclust_finish(n, &mg, sorted, INTEGER(merge), REAL(VECTOR_ELT(ans, 1)),
                         INTEGER(VECTOR_ELT(ans, 2))) != GPUCOR_OK) {
        status = GPUCOR_ERR_ALLOC;
        snprintf(msg, sizeof msg, "out of host memory");
    }
done:
    free(mg.a);
    free(mg.b);
    free(mg.h);
    if (bad) {
        gpucor_progress_abort();
        UNPROTECT(nprot);
        if (isx)
            error("the distances between the rows of 'x' have NA/NaN values (a constant row, "
                  "a row without observed values, or two rows sharing too few observed "
                  "coordinates): remove those rows, or compute the distances with "
                  "gpu_dist() and replace the NAs");
        nonfinite_error(at, REAL(data)[at]);
    }
    if (status != GPUCOR_OK) {
        UNPROTECT(nprot);
        gpucor_raise_msg(status, "gpu_hclust", msg);
    }
    gpucor_progress_finish(host.progress_ctx);
    if (used) gpucor_set_threads(ans, &o, used);
    if (flag) setAttrib(ans, install("nonfinite"), ScalarLogical(TRUE));
    UNPROTECT(nprot);
    return ans;
}
