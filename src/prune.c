/*
 * prune.c -- .Call entry points of gpu_aracne_a(), gpu_aracne_m(),
 * gpu_clr() and gpu_mrnet() (R/prune.R): check the mutual-information
 * matrix (finite, symmetric), run algo/prune.h on the CPU or the GPU,
 * return the n x n result; or, on the GPU, the same from the data with the
 * MI made on the device (gpucor_prune_x).
 */
#include <R.h>
#include <Rinternals.h>
#include <stdio.h>
#include <string.h>
#include "gpucor.h"
#include "status.h"
#include "algo/prune.h"
#include "algo/dispatch.h"

/* mi's size, checked; raises for a value that is not finite or a pair
 * that differs from its mirror.  *negative: a value below 0 off the
 * diagonal. */
static size_t checked(SEXP mi, const gc_opts *o, int *negative)
{
    if (TYPEOF(mi) != REALSXP || !isMatrix(mi)) error("'mi' must be a double matrix");
    size_t n = (size_t) nrows(mi);
    if ((size_t) ncols(mi) != n) error("'mi' must be a square matrix");
    size_t i = 0, j = 0;
    const double *v = REAL(mi);
    gc_host h = {.opts = o, .interrupted = gpucor_interrupted};   /* Ctrl-C only */
    switch (gc_prune_check(v, n, &i, &j, negative, o->nthreads, &h)) {
    case PRUNE_INTERRUPTED:
        gpucor_raise(GPUCOR_ERR_INTERRUPT, "gpucor");   /* R's interrupt */
    case PRUNE_NONFINITE:
        error("'mi' must have finite values (mi[%zu, %zu] is %g)", i + 1, j + 1, v[i + j * n]);
    case PRUNE_ASYMMETRIC:
        error("'mi' must be symmetric (mi[%zu, %zu] = %.17g but mi[%zu, %zu] = %.17g)",
              i + 1, j + 1, v[i + j * n], j + 1, i + 1, v[j + i * n]);
    default:
        break;
    }
    return n;
}

/* The end of a run: the R error, or the team's size as attribute. */
static SEXP finish(SEXP ans, int status, const char *fun, const char *msg, const gc_opts *o,
                   int used, void *bar)
{
    if (status != GPUCOR_OK) {
        UNPROTECT(1);
        gpucor_raise_msg(status, fun, msg);
    }
    gpucor_progress_finish(bar);
    if (used) gpucor_set_threads(ans, o, used);
    UNPROTECT(1);
    return ans;
}

/* ARACNE with parmigene's f(v) = v * eta - eps (aracne.a: eta = 1;
 * aracne.m: eps = 0, eta = 1 - tau). */
SEXP gpucor_aracne(SEXP mi, SEXP eps, SEXP eta, SEXP opts)
{
    gc_opts o;
    gpucor_opts(opts, &o);
    int negative = 0;
    size_t n = checked(mi, &o, &negative);
    gc_aracne_job job;
    memset(&job, 0, sizeof job);
    job.mi = REAL(mi);
    job.n = n;
    job.eps = asReal(eps);
    job.eta = asReal(eta);
    /* see prune.h: the max-min rule is parmigene's tree where f(v) <= v */
    job.maxmin = job.eta == 1 || !negative;
    job.block = o.cpu_tile;
    SEXP ans = PROTECT(allocMatrix(REALSXP, (int) n, (int) n));
    job.out = REAL(ans);
    gpucor_progress pr;
    gc_host host;
    gpucor_host_init(&host, &o, &pr, "gpu_aracne");
    char msg[512] = "";
    int status, used = 0;
    if (o.gpu) {
#ifdef GPUCOR_CUDA
        status = gc_aracne_cuda(&job, &host, msg, sizeof msg);
#else
        status = gc_no_cuda(msg, sizeof msg);
#endif
    } else {
        status = gc_aracne_cpu(&job, &host, &used, msg, sizeof msg);
    }
    return finish(ans, status, "gpu_aracne", msg, &o, used, host.progress_ctx);
}

/* what: 0 CLR, 1 MRNET. */
SEXP gpucor_clr_mrnet(SEXP mi, SEXP what, SEXP opts)
{
    gc_opts o;
    gpucor_opts(opts, &o);
    int negative = 0, mr = asInteger(what) == 1;
    size_t n = checked(mi, &o, &negative);
    SEXP ans = PROTECT(allocMatrix(REALSXP, (int) n, (int) n));
    gpucor_progress pr;
    gc_host host;
    gpucor_host_init(&host, &o, &pr, mr ? "gpu_mrnet" : "gpu_clr");
    char msg[512] = "";
    int status, used = 0;
    if (o.gpu) {
#ifdef GPUCOR_CUDA
        gc_prune_dev_job job = {.algo = mr ? PRUNE_MRNET : PRUNE_CLR, .mi = REAL(mi), .n = n,
                                .out = REAL(ans)};
        status = gc_prune_cuda(&job, &host, msg, sizeof msg);
#else
        status = gc_no_cuda(msg, sizeof msg);
#endif
    } else {
        status = mr ? gc_mrnet_cpu(REAL(mi), n, REAL(ans), &host, &used, msg, sizeof msg)
                    : gc_clr_cpu(REAL(mi), n, REAL(ans), &host, &used, msg, sizeof msg);
    }
    return finish(ans, status, mr ? "gpu_mrnet" : "gpu_clr", msg, &o, used,
                  host.progress_ctx);
}

/* algo: 0 ARACNE (eps, eta as gpucor_aracne's), 1 CLR, 2 MRNET of the
 * Kraskov MI of x's rows, on the GPU only, where the MI is made and stays
 * (R/prune.R has checked x and k and drawn the jitter as gpu_knnmi()
 * does): host memory holds x and the result, no n x n MI. */
SEXP gpucor_prune_x(SEXP x, SEXP k, SEXP jitter, SEXP algo, SEXP eps, SEXP eta, SEXP opts)
{
    static const char *fun[] = {"gpu_aracne", "gpu_clr", "gpu_mrnet"};
    if (TYPEOF(x) != REALSXP || !isMatrix(x)) error("'x' must be a double matrix");
    size_t n = (size_t) nrows(x), p = (size_t) ncols(x);
    int kk = asInteger(k), a = asInteger(algo);
    if (kk == NA_INTEGER || kk < 2 || (size_t) kk >= p)
        error("'k' must be at least 2 and less than the number of samples");
    if (a != PRUNE_ARACNE && a != PRUNE_CLR && a != PRUNE_MRNET) error("internal error: algo");
    if (!isNull(jitter) && (TYPEOF(jitter) != REALSXP || XLENGTH(jitter) != XLENGTH(x)))
        error("internal error: invalid jitter");
    gc_opts o;
    gpucor_opts(opts, &o);
    SEXP ans = PROTECT(allocMatrix(REALSXP, (int) n, (int) n));
    char msg[512] = "";
    int status = GPUCOR_OK;
    if (n < 2) {
        /* no pair: the zero diagonal whatever the algorithm */
        if (n == 1) REAL(ans)[0] = 0;
        return finish(ans, status, fun[a], msg, &o, 0, NULL);
    }
#ifdef GPUCOR_CUDA
    gpucor_progress pr;
    gc_host host;
    gpucor_host_init(&host, &o, &pr, fun[a]);
    gc_problem pb = gc_rows_problem(REAL(x), n, p, gc_measure_find("knnmi", MEASURE_ROWS), 0, 0);
    pb.k = (size_t) kk;
    pb.jitter = isNull(jitter) ? NULL : REAL(jitter);
    gc_knnmi_prep prep;
    status = gc_knnmi_prepare(&pb, &prep, msg, sizeof msg);
    if (status == GPUCOR_OK) {
        gc_prune_dev_job job = {.algo = a, .prep = &prep, .n = n, .eps = asReal(eps),
                                .eta = asReal(eta), .out = REAL(ans)};
        status = gc_prune_cuda(&job, &host, msg, sizeof msg);
        gc_knnmi_free(&prep);
    }
    void *bar = host.progress_ctx;
#else
    (void) eps;
    (void) eta;
    status = gc_no_cuda(msg, sizeof msg);
    void *bar = NULL;
#endif
    return finish(ans, status, fun[a], msg, &o, 0, bar);
}
