/*
 * dist.c -- .Call entry point of gpu_dist().  R/dist.R has matched the
 * method and coerced x to a double matrix; it sets the 'dist' attributes on
 * the packed vector returned here.
 */
#include <R.h>
#include <Rinternals.h>
#include <stdlib.h>
#include <math.h>
#include "gpucor.h"
#include "status.h"
#include "cpu/cpu.h"

/* Correlation distances: rows of x are the variables, so they are copied
 * into contiguous columns for the correlation engine. */
static int run_cor_dist(const double *x, size_t n, size_t p, int method,
                        double *out, int nthreads, int *sd0)
{
    double *xt = malloc((n * p ? n * p : 1) * sizeof(double));
    if (!xt) return GPUCOR_ERR_ALLOC;
    int anyna = 0;
    for (size_t k = 0; k < p; k++)
        for (size_t i = 0; i < n; i++) {
            double v = x[i + k * n];
            xt[k + i * p] = v;
            anyna |= isnan(v);
        }
    cor_problem pb = {0};
    pb.x = xt; pb.p = n; pb.ldx = p;
    pb.n = p;
    pb.method = method == DIST_SPEARMAN ? COR_SPEARMAN
              : method == DIST_KENDALL ? COR_KENDALL : COR_PEARSON;
    pb.cosine = method == DIST_COSINE;
    pb.use = anyna ? USE_PAIRWISE : USE_EVERYTHING;
    pb.out_kind = OUT_DIST;
    pb.dist_transform = method == DIST_ABSCORRELATION ? DIST_ONE_MINUS_ABS
                                                      : DIST_ONE_MINUS;
    pb.out = out;
    pb.nthreads = nthreads;
    pb.interrupted = gpucor_interrupted;
    int status = cpu_cor_run(&pb);
    *sd0 = pb.sd0;
    free(xt);
    return status;
}

SEXP gpucor_dist(SEXP x, SEXP method, SEXP power, SEXP threads)
{
    if (TYPEOF(x) != REALSXP || !isMatrix(x))
        error("'x' must be a double matrix");
    int m = asInteger(method) - 1;
    if (m < DIST_EUCLIDEAN || m > DIST_COSINE) error("invalid distance method");
    double pw = asReal(power);
    if (m == DIST_MINKOWSKI && (!R_FINITE(pw) || pw <= 0))
        error("'p' must be a positive number");
    size_t n = (size_t) nrows(x), p = (size_t) ncols(x);
    R_xlen_t len = (R_xlen_t) (n * (n - (n > 0)) / 2);
    SEXP ans = PROTECT(allocVector(REALSXP, len));
    int status, flag = 0;
    if (m <= DIST_MINKOWSKI) {
        dist_problem pb = {0};
        pb.x = REAL(x); pb.n = n; pb.p = p;
        pb.method = m; pb.power = pw;
        pb.out = REAL(ans);
        pb.nthreads = asInteger(threads);
        pb.interrupted = gpucor_interrupted;
        status = cpu_dist_run(&pb);
        flag = pb.nonfinite_binary;
    } else {
        status = run_cor_dist(REAL(x), n, p, m, REAL(ans),
                              asInteger(threads), &flag);
    }
    if (status != GPUCOR_OK) {
        UNPROTECT(1);
        gpucor_raise(status, "gpu_dist");
    }
    if (flag)
        setAttrib(ans, install(m == DIST_BINARY ? "nonfinite" : "sd0"),
                  ScalarLogical(TRUE));
    UNPROTECT(1);
    return ans;
}
