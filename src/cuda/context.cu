/*
 * context.cu -- what every engine call shares: error messages, allocation
 * with an informative out-of-memory error.
 */
#include <string.h>
#include "check.cuh"

const char *gpucor_cublas_name(cublasStatus_t s)
{
    switch (s) {
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED:    return "CUBLAS_STATUS_ALLOC_FAILED (out of device memory)";
    case CUBLAS_STATUS_INVALID_VALUE:   return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH:   return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR:  return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED:   return "CUBLAS_STATUS_NOT_SUPPORTED";
    default:                            return "cuBLAS error";
    }
}

int gpucor_cuda_fail(char *msg, size_t cap, const char *what, cudaError_t err)
{
    snprintf(msg, cap, "%s failed: %s (%s)", what, cudaGetErrorString(err),
             cudaGetErrorName(err));
    (void) cudaGetLastError();   /* clear a sticky-free error */
    if (err == cudaErrorMemoryAllocation) return GPUCOR_ERR_ALLOC;
    if (err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver)
        return GPUCOR_ERR_NO_DEVICE;
    return GPUCOR_ERR_CUDA;
}

int gpucor_device_alloc(void **ptr, size_t bytes, const char *what, char *msg,
                        size_t cap)
{
    *ptr = NULL;
    cudaError_t e = cudaMalloc(ptr, bytes ? bytes : 1);
    if (e == cudaSuccess) return GPUCOR_OK;
    (void) cudaGetLastError();
    *ptr = NULL;
    size_t fr = 0, tot = 0;
    cudaMemGetInfo(&fr, &tot);
    if (e == cudaErrorMemoryAllocation) {
        snprintf(msg, cap,
                 "cudaMalloc(%s) failed: out of GPU memory: asked for %.1f MiB, "
                 "%.1f MiB free of %.1f MiB (lower option gpucor.gpu_memory or "
                 "free GPU memory)", what, bytes / 1048576.0, fr / 1048576.0,
                 tot / 1048576.0);
        return GPUCOR_ERR_ALLOC;
    }
    return gpucor_cuda_fail(msg, cap, "cudaMalloc", e);
}

static gpucor_ctx the_ctx;
static int have_ctx = 0;

void gpucor_ctx_drop(void)
{
    if (!have_ctx) return;
    if (the_ctx.st) cudaStreamSynchronize(the_ctx.st);
    for (int b = 0; b < 2; b++)
        if (the_ctx.pinned[b]) cudaFreeHost(the_ctx.pinned[b]);
    if (the_ctx.h) cublasDestroy(the_ctx.h);
    if (the_ctx.st) cudaStreamDestroy(the_ctx.st);
    memset(&the_ctx, 0, sizeof the_ctx);
    have_ctx = 0;
    (void) cudaGetLastError();
}

extern "C" void gpucor_cuda_release(void)
{
    gpucor_ctx_drop();
}

extern "C" void gpucor_cuda_forget(void)
{
    memset(&the_ctx, 0, sizeof the_ctx);
    have_ctx = 0;
}

int gpucor_ctx_get(gpucor_ctx **ctx, size_t pinned_bytes, char *msg,
                   size_t msgcap)
{
    int status = GPUCOR_OK;
    if (!have_ctx) {
        memset(&the_ctx, 0, sizeof the_ctx);
        have_ctx = 1;
        CU(cudaStreamCreateWithFlags(&the_ctx.st, cudaStreamNonBlocking));
        CUBLAS(cublasCreate(&the_ctx.h));
        CUBLAS(cublasSetStream(the_ctx.h, the_ctx.st));
        int dev = 0;
        CU(cudaGetDevice(&dev));
        CU(cudaDeviceGetAttribute(&the_ctx.sms, cudaDevAttrMultiProcessorCount, dev));
    }
    if (pinned_bytes > the_ctx.pinned_bytes) {
        for (int b = 0; b < 2; b++) {
            if (the_ctx.pinned[b]) cudaFreeHost(the_ctx.pinned[b]);
            the_ctx.pinned[b] = NULL;
        }
        the_ctx.pinned_bytes = 0;
        for (int b = 0; b < 2; b++)
            CU(cudaHostAlloc(&the_ctx.pinned[b], pinned_bytes, cudaHostAllocDefault));
        the_ctx.pinned_bytes = pinned_bytes;
    }
    *ctx = &the_ctx;
    return GPUCOR_OK;
cleanup:
    gpucor_ctx_drop();
    *ctx = NULL;
    return status;
}
