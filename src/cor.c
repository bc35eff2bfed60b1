/*
 * cor.c -- .Call entry point of gpu_cor().  R/cor.R has already matched the
 * arguments, coerced x and y to double matrices, found the rows to use for
 * the complete-case modes and chosen the backend; here the cheap invariants
 * are checked again and the CPU or GPU engine is run.
 */
#include <R.h>
#include <Rinternals.h>
#include <string.h>
#include "gpucor.h"
#include "status.h"
#include "cpu/cpu.h"
#ifdef GPUCOR_CUDA
#include "cuda/engine.h"
#endif

SEXP gpucor_cor(SEXP x, SEXP y, SEXP method, SEXP use, SEXP rows,
                SEXP threads, SEXP gpu)
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
    int m = asInteger(method) - 1, u = asInteger(use) - 1;
    if (m < COR_PEARSON || m > COR_KENDALL || u < USE_EVERYTHING || u > USE_PAIRWISE)
        error("invalid 'method' or 'use'");
    if (!isNull(rows) && u != USE_COMPLETE_OBS && u != USE_NA_OR_COMPLETE)
        error("'rows' is only for the complete-case modes");
    if (!isNull(rows))
        for (R_xlen_t k = 0; k < XLENGTH(rows); k++)
            if (INTEGER(rows)[k] < 0 || (size_t) INTEGER(rows)[k] >= n)
                error("'rows' out of range");
    int single, progress;
    double mem_cap;
    size_t slab;
    int use_gpu = gpucor_gpu_opts(gpu, &single, &mem_cap, &slab, &progress);
    size_t nobs = isNull(rows) ? n : (size_t) XLENGTH(rows);

    SEXP ans = PROTECT(allocMatrix(REALSXP, (int) p, (int) q)); nprot++;
    int sd0 = 0, status;
    /* with fewer than two observations the answer is all NA: the CPU
     * writes it */
    if (use_gpu && nobs >= 2 && p > 0 && q > 0) {
#ifdef GPUCOR_CUDA
        gpu_cor_problem pb;
        memset(&pb, 0, sizeof pb);
        unsigned char *flags = (unsigned char *) R_alloc(p + q, 1);
        pb.x = REAL(x); pb.n = n; pb.p = p;
        pb.y = isNull(y) ? NULL : REAL(y); pb.q = q;
        pb.rows = isNull(rows) ? NULL : INTEGER(rows); pb.nobs = nobs;
        pb.method = m;
        pb.pairwise = u == USE_PAIRWISE;
        pb.single = single;
        pb.out_kind = 0;
        pb.out = REAL(ans);
        pb.flags_out = flags;
        gpucor_progress pr;
        gpucor_progress_init(&pr, progress);
        pb.host.interrupted = gpucor_interrupted;
        pb.host.progress = gpucor_progress_update;
        pb.host.progress_ctx = &pr;
        pb.host.nthreads = gpucor_nthreads(threads);
        pb.host.mem_cap = mem_cap;
        pb.host.slab_cols = slab;
        status = gpucor_cuda_cor(&pb);
        if (status != GPUCOR_OK) {
            UNPROTECT(nprot);
            gpucor_raise_msg(status, "gpu_cor", pb.msg);
        }
        /* pairwise, the warning comes from the pairs; otherwise from stats'
         * rule on the columns */
        sd0 = pb.pairwise ? pb.sd0
                          : cpu_sd0_rule(flags, p, isNull(y) ? NULL : flags + p, q);
        gpucor_set_timing(ans, gpu, pb.host.seconds);
#else
        error("gpu_cor: gpucor was built without CUDA");
#endif
    } else {
        cor_problem pb = {0};
        pb.x = REAL(x); pb.p = p; pb.ldx = n;
        pb.y = isNull(y) ? NULL : REAL(y); pb.q = q; pb.ldy = n;
        pb.n = n;
        pb.rows = isNull(rows) ? NULL : INTEGER(rows);
        pb.nobs = nobs;
        pb.method = m;
        pb.use = u;
        pb.out_kind = OUT_MATRIX;
        pb.out = REAL(ans);
        pb.nthreads = gpucor_nthreads(threads);
        pb.interrupted = gpucor_interrupted;
        status = cpu_cor_run(&pb);
        if (status != GPUCOR_OK) {
            UNPROTECT(nprot);
            gpucor_raise(status, "gpu_cor");
        }
        sd0 = pb.sd0;
        gpucor_set_threads(ans, gpu, pb.threads_used);
    }
    if (sd0) setAttrib(ans, install("sd0"), ScalarLogical(TRUE));
    UNPROTECT(nprot);
    return ans;
}
