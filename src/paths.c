/*
 * paths.c -- .Call entry point of gpu_shortest_paths() and
 * gpu_network_metrics() (R/paths.R): checks the graph, runs the blocked
 * Floyd-Warshall of algo/apsp.h on the CPU or the GPU, and returns either
 * the lengths (an n x n matrix, or a 'dist' vector) or, per vertex, the
 * sums the metrics are made of.
 */
#include <R.h>
#include <Rinternals.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "gpucor.h"
#include "status.h"
#include "algo/apsp.h"
#include "algo/dispatch.h"

static const char *weight_names[] = {"distance", "inverse", "neglog", "one_minus"};

/* w: the matrix or 'dist' values; n: the vertices; weights: 1-based as in
 * R; threshold: NA for none; directed; what: 0 the lengths, 1 the sums. */
SEXP gpucor_apsp(SEXP w, SEXP size, SEXP weights, SEXP threshold, SEXP directed, SEXP what,
                 SEXP opts)
{
    if (TYPEOF(w) != REALSXP) error("'w' must be double");
    double nd = asReal(size);
    if (ISNAN(nd) || nd < 0 || nd > 4294967295.0) error("invalid number of vertices");
    size_t n = (size_t) nd;
    int is_dist = !isMatrix(w);
    if (is_dist ? (size_t) XLENGTH(w) != (n > 1 ? n * (n - 1) / 2 : 0)
                : (size_t) nrows(w) != n || (size_t) ncols(w) != n)
        error("internal error: 'w' does not have %zu vertices", n);
    int wt = asInteger(weights) - 1;
    if (wt < W_DISTANCE || wt > W_ONE_MINUS) error("invalid 'weights'");
    double thr = asReal(threshold);
    int dir = asLogical(directed), sums = asInteger(what) == 1;
    gc_opts o;
    gpucor_opts(opts, &o);

    gc_apsp_job job;
    memset(&job, 0, sizeof job);
    job.src.w = REAL(w);
    job.src.is_dist = is_dist;
    job.src.n = n;
    job.src.weights = wt;
    job.src.has_thr = !ISNAN(thr);
    job.src.thr = thr;
    job.block = o.cpu_tile;
    job.symmetric = is_dist || dir != TRUE;
    int bad = 0;
    job.bad = &bad;

    gpucor_progress pr;
    gc_host host;
    gpucor_host_init(&host, &o, &pr, sums ? "gpu_network_metrics" : "gpu_shortest_paths");
    size_t bi = 0, bj = 0;
    int asym = !is_dist && dir != TRUE
             ? gc_apsp_asymmetric(&job.src, &bi, &bj, o.nthreads, &host) : 0;
    if (asym < 0) gpucor_raise(GPUCOR_ERR_INTERRUPT, "gpu_shortest_paths");
    if (asym)
        error("'w' is not symmetric (w[%zu, %zu] = %g but w[%zu, %zu] = %g): give directed = "
              "TRUE for a directed graph, or make 'w' symmetric",
              bi + 1, bj + 1, REAL(w)[bi + bj * n], bj + 1, bi + 1, REAL(w)[bj + bi * n]);

    int nprot = 0;
    SEXP ans;
    if (sums) {
        ans = PROTECT(allocVector(VECSXP, 4)); nprot++;
        double **dst[4] = {&job.out.inv_sum, &job.out.len_sum, &job.out.reach, &job.out.ecc};
        for (int k = 0; k < 4; k++) {
            SEXP v = allocVector(REALSXP, (R_xlen_t) n);
            SET_VECTOR_ELT(ans, k, v);
            *dst[k] = REAL(v);
        }
    } else if (is_dist) {
        ans = PROTECT(allocVector(REALSXP, XLENGTH(w))); nprot++;
        job.out.out_dist = REAL(ans);
        gc_advise_huge(REAL(ans), (size_t) XLENGTH(ans) * sizeof(double));
    } else {
        ans = PROTECT(allocMatrix(REALSXP, (int) n, (int) n)); nprot++;
        job.out.out_matrix = REAL(ans);
        gc_advise_huge(REAL(ans), n * n * sizeof(double));
    }

    /* one pass, the rounds of the blocked Floyd-Warshall (the lengths'
     * copy before them is a small part: n^2 against n^3) */
    gc_progress_pass(&host, "Floyd-Warshall rounds", 1, 1, 1);
    char msg[512] = "";
    int status, used = 0;
    if (o.gpu) {
#ifdef GPUCOR_CUDA
        status = gc_apsp_cuda(&job, &host, msg, sizeof msg);
#else
        status = gc_no_cuda(msg, sizeof msg);
#endif
    } else {
        status = gc_apsp_cpu(&job, &host, &used, msg, sizeof msg);
    }
    if (bad) {
        double v = NA_REAL;
        bi = bj = 0;
        gc_apsp_first_bad(&job.src, &bi, &bj, &v);
        double len = gc_apsp_length(&job.src, v);
        gpucor_progress_abort();
        UNPROTECT(nprot);
        error("the edge %zu -> %zu has length %g (w = %g, weights = \"%s\"): shortest paths "
              "need lengths >= 0 (a negative edge makes a negative cycle, and no path is "
              "shortest)%s",
              bi + 1, bj + 1, len, v, weight_names[wt],
              wt == W_DISTANCE ? "" : "; a 'threshold' leaves out the values below it");
    }
    if (status != GPUCOR_OK) {
        UNPROTECT(nprot);
        gpucor_raise_msg(status, "gpu_shortest_paths", msg);
    }
    gpucor_progress_finish(host.progress_ctx);
    if (used) gpucor_set_threads(ans, &o, used);
    UNPROTECT(nprot);
    return ans;
}
