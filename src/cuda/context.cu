/*
 * context.cu -- what every engine call shares: error messages, allocation
 * with an informative out-of-memory error.  (The per-worker contexts are
 * in worker.cu.)
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

int gpucor_device_enter(int device, double gpu_memory, int *prev, size_t *free_b, char *msg,
                        size_t msgcap)
{
    int status = GPUCOR_OK;
    size_t total_b = 0;
    if (cudaGetDevice(prev) != cudaSuccess) {
        (void) cudaGetLastError();
        *prev = -1;
    }
    CU(cudaSetDevice(device));
    CU(cudaMemGetInfo(free_b, &total_b));
    if (gpu_memory > 0 && (double) *free_b > gpu_memory) *free_b = (size_t) gpu_memory;
cleanup:
    return status;
}
