/*
 * shrink.c -- .Call entry points of gpu_cor_shrink() and gpu_pcor_shrink()
 * (R/shrink.R): corpcor's moments, and the products that turn them into
 * the columns the engine multiplies (algo/shrink.h).
 */
#include <R.h>
#include <Rinternals.h>
#include "gpucor.h"
#include "status.h"
#include "algo/shrink.h"

/* list(z, zero, er2, z4): see gc_shrink_scale. */
SEXP gpucor_shrink_scale(SEXP x, SEXP w, SEXP opts)
{
    if (TYPEOF(x) != REALSXP || !isMatrix(x)) error("'x' must be a double matrix");
    size_t n = (size_t) nrows(x), p = (size_t) ncols(x);
    if (TYPEOF(w) != REALSXP || (size_t) XLENGTH(w) != n) error("internal error: invalid 'w'");
    gc_opts o;
    gpucor_opts(opts, &o);
    SEXP ans = PROTECT(allocVector(VECSXP, 4));
    SEXP z = allocMatrix(REALSXP, (int) n, (int) p);
    SET_VECTOR_ELT(ans, 0, z);
    SEXP zero = allocVector(LGLSXP, (R_xlen_t) p);
    SET_VECTOR_ELT(ans, 1, zero);
    double er2 = 0, z4 = 0;
    if (gc_shrink_scale(REAL(x), n, p, REAL(w), REAL(z), LOGICAL(zero), &er2, &z4,
                        o.nthreads)) {
        UNPROTECT(1);
        error("out of host memory");
    }
    SET_VECTOR_ELT(ans, 2, ScalarReal(er2));
    SET_VECTOR_ELT(ans, 3, ScalarReal(z4));
    UNPROTECT(1);
    return ans;
}

/* t(a) %*% b (b NULL: t(a) %*% a); rows TRUE: a %*% t(b) (a %*% t(a)). */
SEXP gpucor_crossprod(SEXP a, SEXP b, SEXP rows, SEXP opts)
{
    if (TYPEOF(a) != REALSXP || !isMatrix(a)) error("internal error: invalid 'a'");
    int by_rows = asLogical(rows) == TRUE;
    size_t ma = (size_t) (by_rows ? ncols(a) : nrows(a));
    size_t na = (size_t) (by_rows ? nrows(a) : ncols(a)), nb = na;
    if (!isNull(b)) {
        if (TYPEOF(b) != REALSXP || !isMatrix(b) ||
            (size_t) (by_rows ? ncols(b) : nrows(b)) != ma)
            error("internal error: invalid 'b'");
        nb = (size_t) (by_rows ? nrows(b) : ncols(b));
    }
    gc_opts o;
    gpucor_opts(opts, &o);
    SEXP c = PROTECT(allocMatrix(REALSXP, (int) na, (int) nb));
    if (gc_crossprod(REAL(a), na, isNull(b) ? NULL : REAL(b), nb, ma, by_rows, REAL(c),
                     o.nthreads)) {
        UNPROTECT(1);
        error("out of host memory");
    }
    UNPROTECT(1);
    return c;
}

/* list(v, u2): see gc_shrink_partial. */
SEXP gpucor_shrink_partial(SEXP m, SEXP z, SEXP opts)
{
    if (TYPEOF(m) != REALSXP || !isMatrix(m) || TYPEOF(z) != REALSXP || !isMatrix(z) ||
        nrows(m) != nrows(z))
        error("internal error: invalid arguments");
    size_t n = (size_t) nrows(z), p = (size_t) ncols(z), r = (size_t) ncols(m);
    gc_opts o;
    gpucor_opts(opts, &o);
    SEXP ans = PROTECT(allocVector(VECSXP, 2));
    SEXP v = allocMatrix(REALSXP, (int) r, (int) p);
    SET_VECTOR_ELT(ans, 0, v);
    SEXP u2 = allocVector(REALSXP, (R_xlen_t) p);
    SET_VECTOR_ELT(ans, 1, u2);
    if (gc_shrink_partial(REAL(m), r, REAL(z), n, p, REAL(v), REAL(u2), o.nthreads)) {
        UNPROTECT(1);
        error("out of host memory");
    }
    UNPROTECT(1);
    return ans;
}

/* a * f (a double matrix), computed on the engine's threads. */
SEXP gpucor_scale_copy(SEXP a, SEXP f, SEXP opts)
{
    if (TYPEOF(a) != REALSXP || !isMatrix(a) || TYPEOF(f) != REALSXP || XLENGTH(f) != 1)
        error("internal error: invalid arguments");
    gc_opts o;
    gpucor_opts(opts, &o);
    SEXP out = PROTECT(allocMatrix(REALSXP, nrows(a), ncols(a)));
    gc_scale_copy(REAL(a), (size_t) XLENGTH(a), REAL(f)[0], REAL(out), o.nthreads);
    UNPROTECT(1);
    return out;
}
