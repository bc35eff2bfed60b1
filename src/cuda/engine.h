/*
 * engine.h -- the C interface of the CUDA engine (R-free).  The entry points
 * in cor.c / dist.c fill the arguments of a producer family, name the sink
 * and call the engine; every function returns a gpucor_status and writes a
 * message into msg on error, after freeing every device buffer, pinned
 * buffer, stream, event and handle it created.
 */
#ifndef GPUCOR_CUDA_ENGINE_H
#define GPUCOR_CUDA_ENGINE_H

#include <stddef.h>
#include "../gpucor.h"
#include "../engine/engine.h"
#include "../engine/problem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One pass of the CUDA engine (engine/problem.h): gpucor_cuda_run
 * (run.cu), the producer of the measure's family.  A correlation measure
 * (cor.cu; pairwise.cu and kendall.cu) between the columns of x (and y), or
 * between the rows of x (between_rows: x is transposed on the device, and
 * stats' rules of 1 - cor(t(x)) hold); a distance op between the rows of x
 * (distance.cu).  Arithmetic in float when host->opts->single. */
int gpucor_cuda_run(const gc_problem *pb, const gc_sink *sink, gc_host *host,
                    gc_pass *out, char *msg, size_t msgcap);
int gpucor_cuda_cor(const gc_problem *pb, const gc_sink *sink, gc_host *host,
                    gc_pass *out, char *msg, size_t msgcap);
int gpucor_cuda_dist(const gc_problem *pb, const gc_sink *sink, gc_host *host,
                     gc_pass *out, char *msg, size_t msgcap);
/* Kraskov's mutual information between the rows of x, as parmigene's
 * knnmi.all() (knnmi.cu; the estimator in engine/knnmi.h), in double. */
int gpucor_cuda_knnmi(const gc_problem *pb, const gc_sink *sink, gc_host *host,
                      gc_pass *out, char *msg, size_t msgcap);

/* Frees the cached stream, cuBLAS handle and pinned buffers (at exit and
 * unload). */
void gpucor_cuda_release(void);
/* Forgets them without any CUDA call (in a forked child, where the
 * parent's context cannot be used). */
void gpucor_cuda_forget(void);
/* Frees a resident x's device copies (distance.cu). */
void gpucor_cuda_resident_free(gc_resident *r);

#ifdef __cplusplus
}
#endif
#endif
