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
#include "output.h"
#include "cpu/cpu.h"
#include "network.h"
#ifdef GPUCOR_CUDA
#include "cuda/engine.h"
#endif

int gpucor_any_nan(const double *x, size_t len)
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
                        int anyna, const gc_sink *sink, const gc_host *host,
                        int *sd0, int *threads_used)
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
    pb.dist_rules = 1;
    pb.sink = sink;
    pb.host = host;
    int status = cpu_cor_run(&pb);
    *sd0 = pb.sd0;
    *threads_used = pb.threads_used;
    free(xt);
    return status;
}

/* The distances between the n rows of x (n x p) into sink, by the GPU
 * engine when host->opts says so and the metric can (else the CPU): *flag
 * gets stats' warning (binary's non-finite values, or a zero sd), *used
 * the CPU's team size (0: the GPU ran). */
int gpucor_dist_engine(const double *x, size_t n, size_t p, int m, double pw,
                       int anyna, const gc_sink *sink, gc_host *host, int *flag,
                       int *used, char *msg, size_t msgcap)
{
    int status = GPUCOR_OK;
    const gc_opts *o = host->opts;
    *flag = 0;
    *used = 0;
    /* a correlation needs two coordinates; a cosine one.  To a file the
     * GPU writes whole columns (distance.cu, cor.cu's dev_problem.tri) */
    if (o->gpu && n >= 2 && (m <= DIST_MINKOWSKI || p >= (m == DIST_COSINE ? 1u : 2u))) {
#ifdef GPUCOR_CUDA
        if (m <= DIST_MINKOWSKI) {
            gpu_dist_args a = {x, n, p, m, pw, o->single};
            status = gpucor_cuda_dist(&a, sink, host, msg, msgcap);
            if (m == DIST_BINARY) *flag = binary_nonfinite(x, n, p);
        } else {
            gpu_cor_args a;
            memset(&a, 0, sizeof a);
            a.x = x; a.n = n; a.p = p;
            a.method = cor_method_of(m);
            a.cosine = m == DIST_COSINE;
            a.pairwise = anyna;   /* rows with NA: pairwise, as on the CPU */
            a.single = o->single;
            a.rows_are_items = 1;
            a.dist_rules = 1;
            status = gpucor_cuda_cor(&a, sink, host, msg, msgcap);
            *flag = a.sd0;
        }
#else
        snprintf(msg, msgcap, "gpucor was built without CUDA");
        status = GPUCOR_ERR_INVALID;
#endif
    } else if (m <= DIST_MINKOWSKI) {
        dist_problem pb = {0};
        pb.x = x; pb.n = n; pb.p = p;
        pb.method = m; pb.power = pw;
        pb.sink = sink;
        pb.host = host;
        status = cpu_dist_run(&pb);
        *flag = pb.nonfinite_binary;
        *used = pb.threads_used;
    } else {
        status = cpu_cor_dist(x, n, p, m, anyna, sink, host, flag, used);
    }
    return status;
}

/* With the engine option 'cols' (a BiocParallel worker's share: ranges
 * of columns of the 'dist'), the pairs of each range's columns come back,
 * packed, one vector a range (R/dist.R puts them together); the engine
 * makes the tiles or panels that meet the range (gc_opts.col_cover), the
 * sink keeps the range's columns, so every pair has the arithmetic of the
 * call without shares. */
SEXP gpucor_dist(SEXP x, SEXP method, SEXP power, SEXP opts, SEXP file)
{
    if (TYPEOF(x) != REALSXP || !isMatrix(x))
        error("'x' must be a double matrix");
    int m = asInteger(method) - 1;
    if (m < DIST_EUCLIDEAN || m > DIST_COSINE) error("invalid distance method");
    double pw = asReal(power);
    if (m == DIST_MINKOWSKI && (!R_FINITE(pw) || pw <= 0))
        error("distance(): invalid p");
    gc_opts o;
    gpucor_opts(opts, &o);
    size_t n = (size_t) nrows(x), p = (size_t) ncols(x);
    int used = 0;   /* the CPU engine's team size; 0: the GPU ran */
    int anyna = m > DIST_MINKOWSKI ? gpucor_any_nan(REAL(x), n * p) : 0;
    const double *rg;
    size_t nr = gpucor_ranges(opts, &rg);
    if (nr && !isNull(file)) error("internal error: a share of a 'dist' to a file");

    /* with a file, the full n x n matrix is written there and TRUE returned */
    SEXP ans = PROTECT(nr ? allocVector(VECSXP, (R_xlen_t) nr)
                       : isNull(file) ? allocVector(REALSXP, (R_xlen_t) dist_len(n))
                       : allocVector(LGLSXP, 1));
    if (!isNull(file)) LOGICAL(ans)[0] = TRUE;
    /* a correlation distance is 1 - r, or 1 - |r| */
    gc_sink sink = {SINK_DIST,
                    m <= DIST_MINKOWSKI ? EPI_IDENTITY
                    : m == DIST_ABSCORRELATION ? EPI_ONE_MINUS_ABS : EPI_ONE_MINUS,
                    0, n, n, nr || !isNull(file) ? NULL : REAL(ans)};
    int status = GPUCOR_OK, flag = 0;
    gpucor_progress pr;
    gc_host host;
    gpucor_host_init(&host, &o, &pr);
    gc_file *f = isNull(file) ? NULL
               : gpucor_file_open(file, n, n, 1, 1, &o, &sink, &host, "gpu_dist");
    char msg[512] = "";
    for (size_t a = 0; a < (nr ? nr : 1) && status == GPUCOR_OK; a++) {
        if (nr) {
            o.col0 = sink.win0 = (size_t) rg[2 * a] < n ? (size_t) rg[2 * a] : n;
            o.col1 = sink.win1 = (size_t) rg[2 * a + 1] < n ? (size_t) rg[2 * a + 1] : n;
            o.col_cover = 1;
            SET_VECTOR_ELT(ans, (R_xlen_t) a, allocVector(REALSXP, (R_xlen_t) gc_sink_len(&sink)));
            sink.out = REAL(VECTOR_ELT(ans, (R_xlen_t) a));
            if (gc_sink_len(&sink) == 0) continue;
        }
        int fl = 0;
        if (p == 0 && !f) {
            /* no coordinate observed: stats gives NA for every metric */
            for (size_t k = 0; k < gc_sink_len(&sink); k++) sink.out[k] = NA_REAL;
        } else if (f && (p == 0 || n < 2)) {
            /* the engine visits no pair: NA off the diagonal (no coordinate),
             * or the one item's zero */
            for (size_t j = 0; j < n; j++)
                for (size_t i = 0; i < n; i++) {
                    double v = NA_REAL;
                    gc_file_put(f, &v, 1, 0, 1.0, i, 1, j, 1, 0, EPI_IDENTITY, 1.0);
                }
        } else {
            status = gpucor_dist_engine(REAL(x), n, p, m, pw, anyna, &sink, &host, &fl,
                                        &used, msg, sizeof msg);
        }
        flag |= fl;
    }
    if (p == 0 && !f) {
        UNPROTECT(1);
        return ans;
    }
    if (f) {
        UNPROTECT(1);
        gpucor_file_finish(f, status, "gpu_dist", msg);   /* raises on failure */
        PROTECT(ans);
    }
    if (status == GPUCOR_OK && used == 0) {
        gpucor_set_timing(ans, &o, host.seconds);
        if (host.note[0]) warning("gpu_dist: %s", host.note);
    }
    if (status != GPUCOR_OK) {
        UNPROTECT(1);
        gpucor_raise_msg(status, "gpu_dist", msg);
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
    if (used) gpucor_set_threads(ans, &o, used);
    if (flag)
        setAttrib(ans, install(m == DIST_BINARY ? "nonfinite" : "sd0"),
                  ScalarLogical(TRUE));
    UNPROTECT(1);
    return ans;
}
