/*
 * consensus.c -- .Call entry point of the consensus TOM of
 * gpu_blockwise_consensus_modules() (R/consensus.R; algo/consensus.h).
 */
#include <R.h>
#include <Rinternals.h>
#include "gpucor.h"
#include "status.h"
#include "algo/consensus.h"

/* d: a list of the sets' dissimilarities 1 - TOM (doubles, one length),
 * or with from_tom TRUE their TOMs;
 * pw: the sets' calibration powers; mode: 0 minimum, 1 quantile q, 2 the
 * sum weighted by w.  Returns list(dist = 1 - the consensus TOM (a plain
 * vector), count = for each set the pairs whose TOM is at most the
 * consensus). */
SEXP gpucor_consensus_tom(SEXP d, SEXP from_tom, SEXP pw, SEXP mode, SEXP q, SEXP w, SEXP opts)
{
    if (TYPEOF(d) != VECSXP || XLENGTH(d) < 1 || XLENGTH(d) > CS_MAX_SETS)
        error("internal error: 'd' must be a list of 1 to %d sets", CS_MAX_SETS);
    size_t nsets = (size_t) XLENGTH(d);
    R_xlen_t len = XLENGTH(VECTOR_ELT(d, 0));
    if (TYPEOF(pw) != REALSXP || (size_t) XLENGTH(pw) != nsets || TYPEOF(w) != REALSXP ||
        (size_t) XLENGTH(w) != nsets)
        error("internal error: 'pw' and 'w' must be doubles, one per set");
    const double *dp[CS_MAX_SETS];
    for (size_t s = 0; s < nsets; s++) {
        SEXP ds = VECTOR_ELT(d, (R_xlen_t) s);
        if (TYPEOF(ds) != REALSXP || XLENGTH(ds) != len)
            error("internal error: the sets' dissimilarities must be doubles of one length");
        dp[s] = REAL(ds);
    }
    int m = asInteger(mode);
    if (m < CS_MIN || m > CS_MEAN) error("internal error: bad 'mode'");
    gc_opts o;
    gpucor_opts(opts, &o);
    SEXP out = PROTECT(allocVector(REALSXP, len));
    SEXP count = PROTECT(allocVector(REALSXP, (R_xlen_t) nsets));
    int st = gc_consensus_tom(dp, asLogical(from_tom) == TRUE, nsets, (size_t) len, REAL(pw),
                              m, asReal(q), REAL(w), REAL(out), REAL(count),
                              o.nthreads > 0 ? o.nthreads : 1);
    if (st != 0) {
        UNPROTECT(2);
        error("gpu_blockwise_consensus_modules: out of memory for the consensus TOM");
    }
    SEXP ans = PROTECT(allocVector(VECSXP, 2));
    SEXP nms = PROTECT(allocVector(STRSXP, 2));
    SET_VECTOR_ELT(ans, 0, out);
    SET_VECTOR_ELT(ans, 1, count);
    SET_STRING_ELT(nms, 0, mkChar("dist"));
    SET_STRING_ELT(nms, 1, mkChar("count"));
    setAttrib(ans, R_NamesSymbol, nms);
    UNPROTECT(4);
    return ans;
}
