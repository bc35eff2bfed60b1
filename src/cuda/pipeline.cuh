/*
 * pipeline.cuh -- the output pipeline shared by every GPU method.
 *
 * The result (a p x q matrix or a packed 'dist') is produced in slabs, each
 * one contiguous range of the R result.  While the device computes slab s
 * and copies it to pinned staging buffer s % 2, the host copies slab s - 1
 * from the other staging buffer into R memory with several threads.  For
 * large results the host write is the bottleneck (fresh pages are faulted
 * in on first touch), so everything else is arranged to hide behind it.
 */
#ifndef GPUCOR_PIPELINE_CUH
#define GPUCOR_PIPELINE_CUH

#include "check.cuh"

typedef struct {
    size_t count;        /* elements to copy out */
    size_t dev_offset;   /* ... starting at this element of the slab buffer */
    size_t host_offset;  /* where they go in the R result */
} slab_info;

/* Start of column j (0-based) of a packed 'dist' of n items: columns of the
 * lower triangle follow each other, column j holding rows j+1 .. n-1. */
__host__ __device__ inline size_t dist_offset(size_t n, size_t j)
{
    return j * n - j * (j + 1) / 2;
}

/* The slab of dist columns j0 <= j < j1 is one contiguous range. */
inline void dist_slab(size_t n, size_t j0, size_t j1, slab_info *info)
{
    info->host_offset = dist_offset(n, j0);
    info->count = dist_offset(n, j1) - info->host_offset;
    info->dev_offset = 0;
}

/* Enqueues slab s on stream st into dout; fills *info.  Returns a status
 * (and a message in msg) if an enqueue failed. */
typedef int (*slab_producer)(void *ctx, size_t s, void *dout, slab_info *info,
                             cudaStream_t st, char *msg, size_t msgcap);

/* is_float: the slabs hold floats, widened to double by the copy-out and
 * multiplied there by out_scale (an exact power of two: single-precision
 * distances of scaled data; 1 otherwise). */
int gpucor_pipeline(slab_producer produce, void *ctx, size_t nslabs,
                    size_t max_count, int is_float, double out_scale,
                    double *host_out, gpu_host *host, gpucor_ctx *gc,
                    char *msg, size_t msgcap);

/* Slabs are at most this many bytes: several stages for the pipeline to
 * overlap, and pinned staging that is cheap to keep (2 x 64 MiB). */
#define GPUCOR_SLAB_BYTES ((size_t) 64 << 20)

/* Bytes of device memory the slabs may still take, once 'used' bytes are
 * allocated for this call: 90% of what is free now, and no more than the
 * option cap (gpucor.gpu_memory) minus 'used'. */
size_t gpucor_device_budget(const gpu_host *host, size_t used);

#endif
