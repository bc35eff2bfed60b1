/*
 * device.cu -- what CUDA device gpucor would use, and whether it works.
 *
 * R-free: called from device.c (gpu_info()) and by the R layer to decide
 * whether the GPU backend is usable.  The answer comes from real calls, not
 * from what was found at build time: the package is built with CUDA on
 * machines that have no GPU and no driver (CI, CRAN-like builders).
 */
#include <stdio.h>
#include <string.h>

#include <cuda_runtime.h>
#include <cublas_v2.h>

extern "C" {
#include "../gpucor.h"
}

static void set_msg(char *msg, size_t msglen, const char *what, const char *detail)
{
    if (msg == NULL || msglen == 0)
        return;
    snprintf(msg, msglen, "%s: %s", what, detail);
}

static const char *cublas_name(cublasStatus_t s)
{
    switch (s) {
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED:    return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_ARCH_MISMATCH:   return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_INTERNAL_ERROR:  return "CUBLAS_STATUS_INTERNAL_ERROR";
    default:                            return "cuBLAS error";
    }
}

extern "C" int gpucor_cuda_query(gpucor_device_info *info, char *msg, size_t msglen)
{
    int status = GPUCOR_OK;
    int count = 0;
    cudaError_t err;
    cudaDeviceProp prop;
    size_t mfree = 0, mtotal = 0;
    cublasHandle_t handle = NULL;
    cublasStatus_t bst;

    if (msg != NULL && msglen > 0)
        msg[0] = '\0';
    if (info == NULL) {
        set_msg(msg, msglen, "invalid argument", "info is NULL");
        return GPUCOR_ERR_INVALID;
    }
    /* Unknown until queried: device.c shows these fields as NA. */
    memset(info, 0, sizeof(*info));
    info->device = 0;
    info->mem_total = -1.0;
    info->mem_free = -1.0;
    info->cc_major = -1;
    info->cc_minor = -1;

    /* Neither call needs a driver; the driver version is 0 when there is
     * none, which tells "no driver" apart from "driver too old". */
    if (cudaRuntimeGetVersion(&info->runtime_version) != cudaSuccess)
        info->runtime_version = 0;
    if (cudaDriverGetVersion(&info->driver_version) != cudaSuccess)
        info->driver_version = 0;

    err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) {
        char detail[200];
        count = 0;
        if (info->driver_version == 0) {
            snprintf(detail, sizeof(detail),
                     "libcuda.so.1 could not be loaded (cudaGetDeviceCount: %s)",
                     cudaGetErrorString(err));
            set_msg(msg, msglen, "CUDA driver not found", detail);
        } else if (err == cudaErrorInsufficientDriver) {
            snprintf(detail, sizeof(detail),
                     "%s (driver supports CUDA %d.%d, gpucor was built with %d.%d)",
                     cudaGetErrorString(err),
                     info->driver_version / 1000, (info->driver_version % 1000) / 10,
                     info->runtime_version / 1000, (info->runtime_version % 1000) / 10);
            set_msg(msg, msglen, "CUDA driver too old", detail);
        } else {
            set_msg(msg, msglen, "no CUDA device", cudaGetErrorString(err));
        }
        status = GPUCOR_ERR_NO_DEVICE;
        goto cleanup;
    }
    info->device_count = count;
    if (count < 1) {
        set_msg(msg, msglen, "no CUDA device", "cudaGetDeviceCount() found 0 devices");
        status = GPUCOR_ERR_NO_DEVICE;
        goto cleanup;
    }

    err = cudaGetDeviceProperties(&prop, 0);
    if (err != cudaSuccess) {
        set_msg(msg, msglen, "cudaGetDeviceProperties failed", cudaGetErrorString(err));
        status = GPUCOR_ERR_CUDA;
        goto cleanup;
    }
    snprintf(info->name, sizeof(info->name), "%s", prop.name);
    info->cc_major = prop.major;
    info->cc_minor = prop.minor;
    info->mem_total = (double) prop.totalGlobalMem;

    /* Creates the primary context on device 0: a device that is present but
     * unusable (exclusive-process mode held by another process, ECC error,
     * too old for our SASS/PTX) fails here rather than in the first tile. */
    err = cudaSetDevice(0);
    if (err == cudaSuccess)
        err = cudaMemGetInfo(&mfree, &mtotal);
    if (err != cudaSuccess) {
        set_msg(msg, msglen, "CUDA device 0 is not usable", cudaGetErrorString(err));
        status = (err == cudaErrorDevicesUnavailable || err == cudaErrorNoDevice)
                     ? GPUCOR_ERR_NO_DEVICE : GPUCOR_ERR_CUDA;
        goto cleanup;
    }
    info->mem_free = (double) mfree;
    info->mem_total = (double) mtotal;

    /* A create/destroy round-trip proves libcublas loads and initialises. */
    bst = cublasCreate(&handle);
    if (bst != CUBLAS_STATUS_SUCCESS) {
        handle = NULL;
        set_msg(msg, msglen, "cublasCreate failed", cublas_name(bst));
        status = GPUCOR_ERR_CUDA;
        goto cleanup;
    }

cleanup:
    if (handle != NULL)
        cublasDestroy(handle);
    /* A failed query must not leave a sticky error for the next CUDA call. */
    (void) cudaGetLastError();
    return status;
}

extern "C" int gpucor_cuda_devices(gpucor_device_row *rows, int max)
{
    int count = 0, k;
    cudaDeviceProp prop;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        (void) cudaGetLastError();
        return 0;
    }
    for (k = 0; k < count && k < max; k++) {
        if (cudaGetDeviceProperties(&prop, k) != cudaSuccess) {
            (void) cudaGetLastError();
            break;
        }
        snprintf(rows[k].name, sizeof rows[k].name, "%s", prop.name);
        rows[k].mem_total = (double) prop.totalGlobalMem;
        rows[k].cc_major = prop.major;
        rows[k].cc_minor = prop.minor;
        rows[k].sms = prop.multiProcessorCount;
    }
    return k;
}
