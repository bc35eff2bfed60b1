/*
 * dispatch.c -- one pass of an engine over every pair, into any sink
 * (dispatch.h): the GPU's when the options say so and the problem is one
 * it takes, else the CPU's.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dispatch.h"
#include "../cpu/cpu.h"
#ifdef GPUCOR_CUDA
#include "../cuda/engine.h"
#endif

int gc_run_cor(const gc_cor_input *in, const gc_sink *sink, gc_host *host, int *sd0,
               int *used, char *msg, size_t msgcap)
{
    int status;
    const gc_opts *o = host->opts;
    size_t p = in->p, q = in->q;
    *sd0 = 0;
    *used = 0;
    /* with fewer than two observations the answer is all NA: the CPU
     * writes it */
    const gc_measure *ms = in->measure;
    if (o->gpu && !(ms->prep & PREP_COV) && in->nobs >= 2 && p > 0 && q > 0) {
#ifdef GPUCOR_CUDA
        gpu_cor_args a;
        memset(&a, 0, sizeof a);
        unsigned char *flags = malloc(p + q);
        if (!flags) return GPUCOR_ERR_ALLOC;
        a.x = in->x; a.n = in->n; a.p = p;
        a.y = in->y; a.q = q;
        a.rows = in->rows; a.nobs = in->nobs;
        a.method = ms->cor;
        a.cosine = (ms->prep & PREP_UNCENTRED) != 0;
        a.pairwise = in->use == USE_PAIRWISE;
        a.single = o->single;
        a.flags_out = flags;
        status = gpucor_cuda_cor(&a, sink, host, msg, msgcap);
        /* pairwise, the warning comes from the pairs; otherwise from stats'
         * rule on the columns */
        if (status == GPUCOR_OK)
            *sd0 = a.pairwise ? a.sd0 : cpu_sd0_rule(flags, p, in->y ? flags + p : NULL, q);
        free(flags);
        return status;
#else
        return gc_no_cuda(msg, msgcap);
#endif
    }
    cor_problem pb = {0};
    pb.x = in->x; pb.p = p; pb.ldx = in->n;
    pb.y = in->y; pb.q = q; pb.ldy = in->n;
    pb.n = in->n;
    pb.rows = in->rows;
    pb.nobs = in->nobs;
    pb.method = ms->cor;
    pb.cosine = (ms->prep & PREP_UNCENTRED) != 0;
    pb.cov = (ms->prep & PREP_COV) != 0;
    pb.use = in->use;
    pb.sink = sink;
    pb.host = host;
    status = cpu_cor_run(&pb);
    *sd0 = pb.sd0;
    *used = pb.threads_used > 0 ? pb.threads_used : 1;
    return status;
}

int gc_any_nan(const double *x, size_t len)
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

/* Correlation distances on the CPU: rows of x are the variables, so they
 * are copied into contiguous columns for the correlation engine. */
static int cpu_cor_dist(const double *x, size_t n, size_t p, const gc_measure *m,
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
    pb.method = m->cor;
    pb.cosine = (m->prep & PREP_UNCENTRED) != 0;
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
int gc_run_dist(const double *x, size_t n, size_t p, const gc_measure *m, double pw,
                int anyna, const gc_sink *sink, gc_host *host, int *flag, int *used,
                char *msg, size_t msgcap)
{
    int status = GPUCOR_OK;
    const gc_opts *o = host->opts;
    *flag = 0;
    *used = 0;
    /* a correlation needs two coordinates, a cosine one (m->min_coords; the
     * CPU writes the NAs of fewer).  To a file the GPU writes whole columns
     * (distance.cu, cor.cu's dev_problem.tri) */
    if (o->gpu && n >= 2 && p >= m->min_coords) {
#ifdef GPUCOR_CUDA
        if (!gc_measure_is_cor(m)) {
            gpu_dist_args a = {x, n, p, m->op, pw, o->single};
            status = gpucor_cuda_dist(&a, sink, host, msg, msgcap);
            if (m->warning == WARN_NONFINITE) *flag = binary_nonfinite(x, n, p);
        } else {
            gpu_cor_args a;
            memset(&a, 0, sizeof a);
            a.x = x; a.n = n; a.p = p;
            a.method = m->cor;
            a.cosine = (m->prep & PREP_UNCENTRED) != 0;
            a.pairwise = anyna;   /* rows with NA: pairwise, as on the CPU */
            a.single = o->single;
            a.rows_are_items = 1;
            a.dist_rules = 1;
            status = gpucor_cuda_cor(&a, sink, host, msg, msgcap);
            *flag = a.sd0;
        }
#else
        status = gc_no_cuda(msg, msgcap);
#endif
    } else if (!gc_measure_is_cor(m)) {
        dist_problem pb = {0};
        pb.x = x; pb.n = n; pb.p = p;
        pb.method = m->op; pb.power = pw;
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

int gc_no_cuda(char *msg, size_t msgcap)
{
    snprintf(msg, msgcap, "gpucor was built without CUDA");
    return GPUCOR_ERR_INVALID;
}
