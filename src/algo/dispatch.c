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

/* Whether the GPU engine takes the problem: with fewer than two
 * observations (a row with fewer coordinates than the measure needs) every
 * value is NA, which the CPU writes; gpu_cov's pairs with NA are the CPU's. */
int gc_gpu_takes_query(const gc_measure *m)
{
    return m->family == FAMILY_KNNMI || m->family == FAMILY_DISTANCE;
}

static int gpu_takes(const gc_problem *pb)
{
    const gc_measure *m = pb->measure;
    /* (a y between rows: gpu_knnmi(y =)'s q rows, a pair for each of x's;
     * gpu_knn(query =)'s q rows, which the GPU's distance ops take
     * (cuda/distance.cu) and its correlation distances do not: those are
     * the CPU's) */
    if (pb->between_rows && pb->y && !gc_gpu_takes_query(m))
        return 0;
    if (pb->between_rows)
        return (pb->y ? pb->n >= 1 && pb->q >= 1 : pb->n >= 2) && pb->p >= m->min_coords;
    return !(m->prep & PREP_COV) && pb->nobs >= 2 && pb->p > 0 && pb->q > 0;
}

int gc_run(const gc_problem *pb, const gc_sink *sink, gc_host *host, gc_pass *out,
           char *msg, size_t msgcap)
{
    memset(out, 0, sizeof *out);
    if (host->opts->gpu && gpu_takes(pb)) {
#ifdef GPUCOR_CUDA
        return gpucor_cuda_run(pb, sink, host, out, msg, msgcap);
#else
        return gc_no_cuda(msg, msgcap);
#endif
    }
    int status = cpu_run(pb, sink, host, out);
    if (status == GPUCOR_OK) gc_sink_finish(sink);
    if (out->threads_used < 1) out->threads_used = 1;
    return status;
}

int gc_run_warn(const gc_problem *pb, const gc_sink *sink, gc_host *host, int *warn,
                int *used, char *msg, size_t msgcap)
{
    gc_pass out;
    int status = gc_run(pb, sink, host, &out, msg, msgcap);
    *warn = gc_measure_is_cor(pb->measure) ? out.sd0 : out.nonfinite;
    *used = out.threads_used;
    return status;
}

int gc_run_device(const gc_problem *pb, const gc_sink *sink, gc_host *host, int *warn,
                  const char *what, char *msg, size_t msgcap)
{
    int used = 0;
    int status = gc_run_warn(pb, sink, host, warn, &used, msg, msgcap);
    if (status == GPUCOR_OK && used) {
        snprintf(msg, msgcap, "internal error: %s not computed on the GPU", what);
        return GPUCOR_ERR_INVALID;
    }
    return status;
}

int gc_any_nan(const double *x, size_t len)
{
    for (size_t k = 0; k < len; k++)
        if (isnan(x[k])) return 1;
    return 0;
}

gc_problem gc_rows_problem(const double *x, size_t n, size_t p, const gc_measure *m,
                           double power, int anyna)
{
    gc_problem pb = {.x = x, .n = n, .p = p, .measure = m, .between_rows = 1,
                     .use = anyna ? USE_PAIRWISE : USE_EVERYTHING, .power = power};
    return pb;
}

int gc_no_cuda(char *msg, size_t msgcap)
{
    snprintf(msg, msgcap, "gpucor was built without CUDA");
    return GPUCOR_ERR_INVALID;
}
