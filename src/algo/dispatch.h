/*
 * dispatch.h -- one pass of an engine over every pair, into any sink: the
 * GPU's when the options ask for it and it takes the problem, else the
 * CPU's.  Shared by the entry points (src/) and the multi-pass drivers
 * (edges, TOM).  R-free; they never raise: a status and a message come
 * back.
 */
#ifndef GPUCOR_DISPATCH_H
#define GPUCOR_DISPATCH_H

#include "../engine/engine.h"
#include "../engine/problem.h"

/* One pass: the GPU engine's when the options ask for it and it takes the
 * problem, else the CPU's (then the sink's finish); out->threads_used is
 * the CPU's team size, 0 when the GPU ran. */
int gc_run(const gc_problem *pb, const gc_sink *sink, gc_host *host, gc_pass *out,
           char *msg, size_t msgcap);

/* gc_run with the measure's warning flag in *warn (m->warning: stats'
 * "the standard deviation is zero" for the correlations, binary's
 * non-finite values for the distance ops) and the CPU's team size in
 * *used (0: the GPU ran). */
int gc_run_warn(const gc_problem *pb, const gc_sink *sink, gc_host *host, int *warn,
                int *used, char *msg, size_t msgcap);

/* gc_run_warn into a sink that stays in device memory, which only the GPU
 * can fill: an internal error naming 'what' ("the distances were") when the
 * CPU ran. */
int gc_run_device(const gc_problem *pb, const gc_sink *sink, gc_host *host, int *warn,
                  const char *what, char *msg, size_t msgcap);

/* The problem of a measure between the n rows of x (n x p): anyna, x has
 * NA (the correlation distances then go pairwise, as stats' do). */
gc_problem gc_rows_problem(const double *x, size_t n, size_t p, const gc_measure *m,
                           double power, int anyna);

/* Whether the GPU engine takes a y between rows (gc_problem's y with
 * between_rows) for measure m; else the CPU's engine runs it. */
int gc_gpu_takes_query(const gc_measure *m);

/* A GPU run asked of a build without CUDA: the message, and the status. */
int gc_no_cuda(char *msg, size_t msgcap);

/* Whether x[0 .. len) holds a NaN (NA). */
int gc_any_nan(const double *x, size_t len);

#endif
