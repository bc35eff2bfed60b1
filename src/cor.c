/*
 * cor.c -- .Call entry point of gpu_cor().  R/cor.R has already matched the
 * arguments, coerced x and y to double matrices and, for the complete-case
 * modes, found the rows to use; here the cheap invariants are checked again
 * and the engine is run.
 */
#include <R.h>
#include <Rinternals.h>
#include "gpucor.h"
#include "status.h"
#include "cpu/cpu.h"

SEXP gpucor_cor(SEXP x, SEXP y, SEXP method, SEXP use, SEXP rows,
                SEXP threads)
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
    if (!isNull(rows))
        for (R_xlen_t k = 0; k < XLENGTH(rows); k++)
            if (INTEGER(rows)[k] < 0 || (size_t) INTEGER(rows)[k] >= n)
                error("'rows' out of range");

    SEXP ans = PROTECT(allocMatrix(REALSXP, (int) p, (int) q)); nprot++;
    cor_problem pb = {0};
    pb.x = REAL(x); pb.p = p; pb.ldx = n;
    pb.y = isNull(y) ? NULL : REAL(y); pb.q = q; pb.ldy = n;
    pb.n = n;
    pb.rows = isNull(rows) ? NULL : INTEGER(rows);
    pb.nobs = isNull(rows) ? n : (size_t) XLENGTH(rows);
    pb.method = m;
    pb.use = u;
    pb.out_kind = OUT_MATRIX;
    pb.out = REAL(ans);
    pb.nthreads = asInteger(threads);
    pb.interrupted = gpucor_interrupted;
    int status = cpu_cor_run(&pb);
    if (status != GPUCOR_OK) {
        UNPROTECT(nprot);
        gpucor_raise(status, "gpu_cor");
    }
    if (pb.sd0) setAttrib(ans, install("sd0"), ScalarLogical(TRUE));
    UNPROTECT(nprot);
    return ans;
}
