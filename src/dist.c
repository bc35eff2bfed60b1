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
#include "cpu/cpu.h"
#ifdef GPUCOR_CUDA
#include "cuda/engine.h"
#endif

static int any_nan(const double *x, size_t len)
{
    for (size_t k = 0; k < len; k++)
        if (isnan(x[k])) return 1;
    return 0;
}

/* stats' binary distance warns when a non-finite value meets a non-NA value
 * in the same column: an infinite entry in a column with another non-NA. */
static int binary_nonfinite(const double *x, size_t n, size_t p)
{
    for (size_t k = 0; k < p; k++) {
        const double *c = x + k * n;
        size_t nonna = 0, inf = 0;
        for (size_t i = 0; i < n; i++) {
            if (isnan(c[i])) continue;
            nonna++;
            if (!isfinite(c[i])) inf = 1;
        }
        if (inf && nonna >= 2) return 1;
    }
    return 0;
}

/* The correlation method of a correlation distance. */
static int cor_method_of(int m)
{
    return m == DIST_SPEARMAN ? COR_SPEARMAN
         : m == DIST_KENDALL ? COR_KENDALL : COR_PEARSON;
}

/* Correlation distances on the CPU: rows of x are the variables, so they
 * are copied into contiguous columns for the correlation engine. */
static int cpu_cor_dist(const double *x, size_t n, size_t p, int method,
                        int anyna, double *out, int nthreads, int *sd0,
                        int *threads_used)
{
    double *xt = malloc((n * p ? n * p : 1) * sizeof(double));
    if (!xt) return GPUCOR_ERR_ALLOC;
    for (size_t k = 0; k < p; k++)
        for (size_t i = 0; i < n; i++) xt[k + i * p] = x[i + k * n];
    cor_problem pb = {0};
    pb.x = xt; pb.p = n; pb.ldx = p;
    pb.n = p;
    pb.method = cor_method_of(method);
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
    *threads_used = pb.threads_used;
    free(xt);
    return status;
}


SEXP gpucor_dist(SEXP x, SEXP method, SEXP power, SEXP threads, SEXP gpu)
{
    if (TYPEOF(x) != REALSXP || !isMatrix(x))
        error("'x' must be a double matrix");
    int m = asInteger(method) - 1;
    if (m < DIST_EUCLIDEAN || m > DIST_COSINE) error("invalid distance method");
    double pw = asReal(power);
    if (m == DIST_MINKOWSKI && (!R_FINITE(pw) || pw <= 0))
        error("distance(): invalid p");
    int single, progress;
    double mem_cap;
    size_t slab;
    int use_gpu = gpucor_gpu_opts(gpu, &single, &mem_cap, &slab, &progress);
    size_t n = (size_t) nrows(x), p = (size_t) ncols(x);
    R_xlen_t len = (R_xlen_t) (n * (n - (n > 0)) / 2);
    int nt = gpucor_nthreads(threads), used = 1;
    int anyna = m > DIST_MINKOWSKI ? any_nan(REAL(x), n * p) : 0;

    SEXP ans = PROTECT(allocVector(REALSXP, len));
    int status = GPUCOR_OK, flag = 0;
    if (p == 0) {   /* no coordinate observed: stats gives NA for every metric */
        for (R_xlen_t k = 0; k < len; k++) REAL(ans)[k] = NA_REAL;
        UNPROTECT(1);
        return ans;
    }
    const char *gmsg = NULL;
#ifdef GPUCOR_CUDA
    gpu_cor_problem cpb;
    gpu_dist_problem dpb;
    gpucor_progress pr;
    gpu_host host;
    memset(&host, 0, sizeof host);
    gpucor_progress_init(&pr, progress);
    host.interrupted = gpucor_interrupted;
    host.progress = gpucor_progress_update;
    host.progress_ctx = &pr;
    host.nthreads = nt;
    host.mem_cap = mem_cap;
    host.slab_cols = slab;
#endif
    /* a correlation needs two coordinates; a cosine one */
    if (use_gpu && n >= 2 && (m <= DIST_MINKOWSKI || p >= (m == DIST_COSINE ? 1u : 2u))) {
#ifdef GPUCOR_CUDA
        if (m <= DIST_MINKOWSKI) {
            memset(&dpb, 0, sizeof dpb);
            dpb.x = REAL(x); dpb.n = n; dpb.p = p;
            dpb.method = m; dpb.power = pw; dpb.single = single;
            dpb.out = REAL(ans);
            dpb.host = host;
            status = gpucor_cuda_dist(&dpb);
            gmsg = dpb.msg;
            if (status == GPUCOR_OK) gpucor_set_timing(ans, gpu, dpb.host.seconds);
            if (m == DIST_BINARY) flag = binary_nonfinite(REAL(x), n, p);
        } else {
            memset(&cpb, 0, sizeof cpb);
            cpb.x = REAL(x); cpb.n = n; cpb.p = p;
            cpb.method = cor_method_of(m);
            cpb.cosine = m == DIST_COSINE;
            cpb.pairwise = anyna;   /* rows with NA: pairwise, as on the CPU */
            cpb.single = single;
            cpb.out_kind = 1;
            cpb.dist_transform = m == DIST_ABSCORRELATION;
            cpb.dist_rows = 1;
            cpb.out = REAL(ans);
            cpb.host = host;
            status = gpucor_cuda_cor(&cpb);
            gmsg = cpb.msg;
            flag = cpb.sd0;
            if (status == GPUCOR_OK) gpucor_set_timing(ans, gpu, cpb.host.seconds);
        }
#else
        error("gpu_dist: gpucor was built without CUDA");
#endif
    } else if (m <= DIST_MINKOWSKI) {
        dist_problem pb = {0};
        pb.x = REAL(x); pb.n = n; pb.p = p;
        pb.method = m; pb.power = pw;
        pb.out = REAL(ans);
        pb.nthreads = nt;
        pb.interrupted = gpucor_interrupted;
        status = cpu_dist_run(&pb);
        flag = pb.nonfinite_binary;
        used = pb.threads_used;
    } else {
        status = cpu_cor_dist(REAL(x), n, p, m, anyna, REAL(ans), nt, &flag,
                              &used);
    }
    if (status != GPUCOR_OK) {
        UNPROTECT(1);
        gpucor_raise_msg(status, "gpu_dist", gmsg);
    }
    /* With NA the correlation distances are 1 - cor(t(x), use =
     * "pairwise.complete.obs"), whose diagonal -- not in a 'dist' -- also
     * gives stats' warning for a row constant on its own observed values */
    if (anyna && !flag) {
        int s = cpu_self_pairs_sd0(REAL(x), n, p, 1, n, cor_method_of(m),
                                   m == DIST_COSINE);
        if (s < 0) {
            UNPROTECT(1);
            gpucor_raise(GPUCOR_ERR_ALLOC, "gpu_dist");
        }
        flag = s;
    }
    if (!use_gpu) gpucor_set_threads(ans, gpu, used);
    if (flag)
        setAttrib(ans, install(m == DIST_BINARY ? "nonfinite" : "sd0"),
                  ScalarLogical(TRUE));
    UNPROTECT(1);
    return ans;
}
