/*
 * modules.c -- .Call entry points of gpu_module_eigengenes() (R/modules.R):
 * the module summaries of algo/eigengene.h, and the fingerprint of a data
 * matrix that keys R's cache of them.
 */
#include <math.h>
#include <stdio.h>
#include <R.h>
#include <Rinternals.h>
#include "status.h"
#include "algo/eigengene.h"

/* x: double matrix (samples x genes); code: integer module of each gene
 * (1..nmod, else none); nve: components of the variance explained;
 * threads.  Returns list(pc = n x nmod, ve = nve x nmod, ae = n x nmod,
 * status = 0 done / 1 left to R). */
SEXP gpucor_module_eigengenes(SEXP x, SEXP code, SEXP nmod, SEXP nve, SEXP threads)
{
    if (TYPEOF(x) != REALSXP || !isMatrix(x)) error("internal error: 'x' must be a double matrix");
    size_t n = (size_t) nrows(x), p = (size_t) ncols(x);
    int k = asInteger(nmod), v = asInteger(nve);
    if (TYPEOF(code) != INTSXP || (size_t) XLENGTH(code) != p || k < 0 || v < 1 || n < 1)
        error("internal error: bad module codes");
    SEXP pc = PROTECT(allocMatrix(REALSXP, (int) n, k)),
         ve = PROTECT(allocMatrix(REALSXP, v, k)),
         ae = PROTECT(allocMatrix(REALSXP, (int) n, k)),
         st = PROTECT(allocVector(INTSXP, k));
    for (R_xlen_t i = 0; i < XLENGTH(pc); i++) REAL(pc)[i] = REAL(ae)[i] = NA_REAL;
    for (R_xlen_t i = 0; i < XLENGTH(ve); i++) REAL(ve)[i] = NA_REAL;
    if (gc_module_eigengenes(REAL(x), n, p, INTEGER(code), k, v,
                             gpucor_nthreads(asInteger(threads)), REAL(pc), REAL(ve), REAL(ae),
                             INTEGER(st)) != 0) {
        UNPROTECT(4);
        gpucor_raise(GPUCOR_ERR_ALLOC, "gpu_module_eigengenes");
    }
    SEXP ans = PROTECT(allocVector(VECSXP, 4)), nm = PROTECT(allocVector(STRSXP, 4));
    SET_VECTOR_ELT(ans, 0, pc); SET_VECTOR_ELT(ans, 1, ve);
    SET_VECTOR_ELT(ans, 2, ae); SET_VECTOR_ELT(ans, 3, st);
    SET_STRING_ELT(nm, 0, mkChar("pc")); SET_STRING_ELT(nm, 1, mkChar("ve"));
    SET_STRING_ELT(nm, 2, mkChar("ae")); SET_STRING_ELT(nm, 3, mkChar("status"));
    setAttrib(ans, R_NamesSymbol, nm);
    UNPROTECT(6);
    return ans;
}

/* A string naming x's values, type and dimensions (a 64-bit hash of its
 * bytes): the key of the module-summary cache.  x: a double, integer or
 * logical vector or matrix. */
SEXP gpucor_fingerprint(SEXP x)
{
    const void *data;
    size_t bytes;
    switch (TYPEOF(x)) {
    case REALSXP: data = REAL(x); bytes = sizeof(double) * (size_t) XLENGTH(x); break;
    case INTSXP: data = INTEGER(x); bytes = sizeof(int) * (size_t) XLENGTH(x); break;
    case LGLSXP: data = LOGICAL(x); bytes = sizeof(int) * (size_t) XLENGTH(x); break;
    default: error("internal error: no fingerprint of this type");
    }
    SEXP dim = getAttrib(x, R_DimSymbol);
    unsigned long long seed = (unsigned long long) TYPEOF(x) * 1000003ULL;
    if (!isNull(dim))
        for (int i = 0; i < LENGTH(dim); i++)
            seed = seed * 31ULL + (unsigned long long) INTEGER(dim)[i];
    char buf[40];
    snprintf(buf, sizeof buf, "%016llx", gc_hash_bytes(data, bytes, seed));
    return mkString(buf);
}
