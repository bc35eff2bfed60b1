/*
 * check.cuh -- error handling shared by the CUDA engine.  Every engine
 * function keeps one 'cleanup:' exit; these macros record the first failure
 * (status and a message naming the call) and jump there.
 */
#ifndef GPUCOR_CHECK_CUH
#define GPUCOR_CHECK_CUH

#include <stdio.h>
#include <time.h>
#include <cuda_runtime.h>
#include <cublas_v2.h>
#include "engine.h"

const char *gpucor_cublas_name(cublasStatus_t s);

/* Makes 'device' current for a resident algorithm (the caller's device in
 * *prev, -1 if none, to return to) and says how many bytes it may take:
 * what is free there, at most the option cap gpu_memory (> 0). */
int gpucor_device_enter(int device, double gpu_memory, int *prev, size_t *free_b, char *msg,
                        size_t msgcap);

/* Seconds on the monotonic clock (the runner's stage timings). */
static inline double gpucor_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Records 'err' of call 'what' into msg (cap bytes). */
int gpucor_cuda_fail(char *msg, size_t cap, const char *what, cudaError_t err);

#define CU(call)                                                              \
    do {                                                                      \
        cudaError_t e_ = (call);                                              \
        if (e_ != cudaSuccess) {                                              \
            status = gpucor_cuda_fail(msg, msgcap, #call, e_);                \
            goto cleanup;                                                     \
        }                                                                     \
    } while (0)

#define CUBLAS(call)                                                          \
    do {                                                                      \
        cublasStatus_t s_ = (call);                                           \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                    \
            snprintf(msg, msgcap, "%s failed: %s", #call,                     \
                     gpucor_cublas_name(s_));                                 \
            status = s_ == CUBLAS_STATUS_ALLOC_FAILED ? GPUCOR_ERR_ALLOC       \
                                                      : GPUCOR_ERR_CUDA;      \
            goto cleanup;                                                     \
        }                                                                     \
    } while (0)

/* after a kernel launch */
#define LAUNCHED(name) CU(cudaGetLastError())

/* cudaMalloc with an out-of-memory message that says how much was asked
 * and how much is free */
int gpucor_device_alloc(void **ptr, size_t bytes, const char *what,
                        char *msg, size_t cap);
#define DALLOC(ptr, bytes, what)                                              \
    do {                                                                      \
        status = gpucor_device_alloc((void **) &(ptr), (bytes), (what), msg,  \
                                     msgcap);                                 \
        if (status != GPUCOR_OK) goto cleanup;                                \
    } while (0)

/* A worker's context (worker.cu): its device's stream, cuBLAS handle and
 * the two pinned staging buffers of the output pipeline, created on first
 * use and kept, because creating them costs more than a small problem's
 * whole run (pinning 2 x 64 MiB alone takes tens of milliseconds).
 * Released by gpucor_cuda_release() when the package is unloaded, and
 * dropped after any CUDA error so the next call starts clean.
 * gpucor_ctx_get/drop act on the calling worker's own context. */
typedef struct {
    cudaStream_t st;
    cublasHandle_t h;
    void *pinned[2];
    size_t pinned_bytes;
    int sms;             /* multiprocessors, for sizing grids */
} gpucor_ctx;

int gpucor_ctx_get(gpucor_ctx **ctx, size_t pinned_bytes, char *msg,
                   size_t msgcap);
void gpucor_ctx_drop(void);

#endif
