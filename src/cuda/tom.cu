/*
 * tom.cu -- gpu_tom()'s topological overlap on the GPU (algo/tom.h).
 *
 * The adjacency A (n x n, double or float) stays on the device: the
 * correlation producers write it there through SINK_DENSE_DEVICE with the
 * adjacency as their epilogue (or the host's adjacency is uploaded).  A
 * kernel sets its diagonal to 1, its NAs to 0 (marking their genes) and
 * sums the degrees k; then the TOM is made panel by panel as a producer of
 * the engine: a panel is the GEMM A^T A[, j0:j1] against the resident A
 * (rows from j0 only for a 'dist'), turned into TOM values in place, and
 * the sink (a dense matrix or the packed 1 - TOM) takes it to the host as
 * it takes correlations.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "run.cuh"
#include "worker.cuh"
#include "gemm.cuh"
extern "C" {
#include "../algo/tom.h"
}

struct gc_tom_dev {
    int dev, single, prev;
    size_t n;
    void *A;
};

/* One block per column: diagonal 1, NaN to 0, k = sum |a| (NaN: a bad gene). */
template <typename T>
__global__ static void tom_degrees(T *A, size_t n, double *k)
{
    __shared__ double sh[32];
    size_t j = blockIdx.x;
    T *col = A + j * n;
    double s = 0;
    int bad = 0;
    if (threadIdx.x == 0) col[j] = (T) 1;
    __syncthreads();
    for (size_t i = threadIdx.x; i < n; i += blockDim.x) {
        T a = col[i];
        if (isnan(a)) { bad = 1; col[i] = 0; continue; }
        s += fabs((double) a);
    }
    for (int off = 16; off > 0; off >>= 1) s += __shfl_down_sync(0xffffffffu, s, off);
    if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = s;
    bad = __syncthreads_or(bad);
    if (threadIdx.x == 0) {
        double t = 0;
        for (int w = 0; w < (int) (blockDim.x >> 5); w++) t += sh[w];
        k[j] = bad ? nan("") : t;
    }
}

/* A panel of A A (rows i0 .., columns j0 .. j0 + w) into TOM values. */
template <typename T>
__global__ static void tom_panel(T *c, size_t i0, size_t rows, size_t j0, size_t w,
                                 const T *A, size_t n, const double *k, int type,
                                 int mean_denom)
{
    size_t e = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (e >= rows * w) return;
    size_t a = e % rows, b = e / rows, i = i0 + a, j = j0 + b;
    T *v = c + a + b * rows;
    if (i == j) { *v = (T) 1; return; }
    double ki = k[i], kj = k[j];
    if (isnan(ki) || isnan(kj)) { *v = na_value<T>(); return; }
    *v = (T) gc_tom_value(type, mean_denom, (double) *v, (double) A[i + j * n], ki, kj);
}

template <typename T>
struct tom_ctx {
    cublasHandle_t h;
    const T *A;
    const double *k;
    size_t n, w;
    int dist, type, mean_denom;
    T *buf;
};

template <typename T>
static int tom_produce(void *vctx, size_t j0, size_t j1, gc_tile *t, cudaStream_t st,
                       char *msg, size_t msgcap)
{
    tom_ctx<T> *c = (tom_ctx<T> *) vctx;
    int status = GPUCOR_OK;
    size_t n = c->n;
    /* a matrix: every panel the same GEMM (the last one shifted left), so
     * that (i, j) and (j, i) come out bitwise equal; a 'dist': rows >= j0 */
    size_t w = c->dist ? j1 - j0 : c->w;
    size_t jc = (!c->dist && j0 + w > n) ? n - w : j0;
    size_t i0 = c->dist ? j0 : 0, rows = n - i0;
    CUBLAS(gemm_tn(c->h, (int) rows, (int) w, (int) n, c->A + i0 * n, (int) n,
                   c->A + jc * n, (int) n, c->buf, (int) rows));
    {
        size_t len = rows * w;
        tom_panel<T><<<(unsigned) ((len + 255) / 256), 256, 0, st>>>(
            c->buf, i0, rows, jc, w, c->A, n, c->k, c->type, c->mean_denom);
        LAUNCHED("tom_panel");
    }
    gc_cuda_panel_tile(i0, n, j0, j1, c->buf + (j0 - jc) * rows, sizeof(T) == sizeof(float),
                       1.0, c->dist, t);
cleanup:
    return status;
}

typedef struct {
    gc_tom_dev *h;
    const gc_tom_args *ta;
    size_t nbad;          /* out: genes with an NA adjacency */
} tom_job_args;

template <typename T>
static int tom_run(gc_tom_dev *hd, const gc_tom_args *ta, const gc_sink *sink,
                   gc_host *host, size_t *nbad, char *msg, size_t msgcap)
{
    int status = GPUCOR_OK;
    gpucor_ctx *gc = NULL;
    double *k = NULL, *hk = NULL;
    T *buf = NULL;
    T *A = (T *) hd->A;
    size_t n = hd->n;
    int dist = (gc_sink_needs(sink) & GC_SINK_PACKED) != 0;
    gc_plan pl;
    status = gpucor_ctx_get(&gc, GPUCOR_PANEL_BYTES, msg, msgcap);
    if (status != GPUCOR_OK) return status;
    DALLOC(k, n * sizeof(double) + 8, "degrees");
    if (n) {
        tom_degrees<T><<<(unsigned) n, 256, 0, gc->st>>>(A, n, k);
        LAUNCHED("tom_degrees");
        hk = (double *) malloc(n * sizeof(double));
        if (!hk) {
            snprintf(msg, msgcap, "out of host memory");
            status = GPUCOR_ERR_ALLOC;
            goto cleanup;
        }
        CU(cudaMemcpyAsync(hk, k, n * sizeof(double), cudaMemcpyDeviceToHost, gc->st));
        CU(cudaStreamSynchronize(gc->st));
        *nbad = 0;
        for (size_t j = 0; j < n; j++) *nbad += hk[j] != hk[j];
    }
    status = gc_cuda_plan(sink, dist ? (n > 0 ? n - 1 : 0) : n, n, sizeof(T), 0,
                          n * n * sizeof(T), 1, (size_t) -1, !dist, host, &pl, msg, msgcap);
    if (status != GPUCOR_OK) goto cleanup;
    if (pl.npanels) {
        DALLOC(buf, n * pl.w * sizeof(T), "product panel");
        tom_ctx<T> c;
        c.h = gc->h; c.A = A; c.k = k; c.n = n; c.w = pl.w;
        c.dist = dist; c.type = ta->type; c.mean_denom = ta->mean_denom;
        c.buf = buf;
        status = gc_cuda_run(tom_produce<T>, &c, &pl, sizeof(T) == sizeof(float), sink,
                             host, gc, msg, msgcap);
    }
cleanup:
    if (gc && gc->st) cudaStreamSynchronize(gc->st);
    cudaFree(k);
    cudaFree(buf);
    free(hk);
    if (status != GPUCOR_OK && status != GPUCOR_ERR_INTERRUPT) gpucor_ctx_drop();
    return status;
}

static int tom_job(void *arg, const gc_sink *sink, gc_host *host, char *msg, size_t msgcap)
{
    tom_job_args *a = (tom_job_args *) arg;
    if (a->h->single) return tom_run<float>(a->h, a->ta, sink, host, &a->nbad, msg, msgcap);
    return tom_run<double>(a->h, a->ta, sink, host, &a->nbad, msg, msgcap);
}

extern "C" int gc_tom_cuda_open(size_t n, int device, int single, double gpu_memory,
                                gc_tom_dev **hp, void **dev_a, char *msg, size_t msgcap)
{
    int status = GPUCOR_OK;
    size_t elt = single ? sizeof(float) : sizeof(double), free_b = 0;
    double mat = (double) n * n * elt, need = mat + 2.0 * GPUCOR_PANEL_BYTES + 16.0 * n;
    gc_tom_dev *h = (gc_tom_dev *) calloc(1, sizeof *h);
    *hp = h;
    *dev_a = NULL;
    if (!h) {
        snprintf(msg, msgcap, "out of host memory");
        return GPUCOR_ERR_ALLOC;
    }
    h->dev = device;
    h->single = single;
    h->n = n;
    status = gpucor_device_enter(device, gpu_memory, &h->prev, &free_b, msg, msgcap);
    if (status != GPUCOR_OK) goto cleanup;
    if (need > (double) free_b) {
        double nmax = floor(sqrt(((double) free_b - 2.0 * GPUCOR_PANEL_BYTES) / elt));
        snprintf(msg, msgcap,
                 "the adjacency of %zu genes needs %.2f GB of GPU memory in %s (n^2 x %zu "
                 "bytes, and %.2f GB more), %.2f GB are free on GPU %d: up to about %.0f "
                 "genes fit%s, or use backend = \"cpu\"",
                 n, mat / 1e9, single ? "float" : "double", elt, (need - mat) / 1e9,
                 (double) free_b / 1e9, device, nmax > 0 ? nmax : 0,
                 single ? "" : " (precision = \"single\" halves the need)");
        status = GPUCOR_ERR_ALLOC;
        goto cleanup;
    }
    DALLOC(h->A, (size_t) mat + 8, "the adjacency");
    *dev_a = h->A;
cleanup:
    return status;
}

extern "C" int gc_tom_cuda_upload(gc_tom_dev *h, const double *A, const gc_host *host,
                                  char *msg, size_t msgcap)
{
    int status = GPUCOR_OK;
    size_t n = h->n, len = n * n;
    /* in chunks (GC_COPY_CHUNK bytes of A), with Ctrl-C between them; floats
     * through a host buffer */
    size_t chunk = GC_COPY_CHUNK / sizeof(double), off;
    float *tmp = NULL;
    CU(cudaSetDevice(h->dev));
    if (h->single && !(tmp = (float *) malloc(chunk * sizeof(float)))) {
        snprintf(msg, msgcap, "out of host memory");
        return GPUCOR_ERR_ALLOC;
    }
    for (off = 0; off < len; off += chunk) {
        size_t cnt = len - off < chunk ? len - off : chunk;
        if (gc_host_interrupted(host)) {
            snprintf(msg, msgcap, "interrupted");
            status = GPUCOR_ERR_INTERRUPT;
            goto cleanup;
        }
        if (!h->single) {
            CU(cudaMemcpy((double *) h->A + off, A + off, cnt * sizeof(double),
                          cudaMemcpyHostToDevice));
        } else {
            for (size_t e = 0; e < cnt; e++) tmp[e] = (float) A[off + e];
            CU(cudaMemcpy((float *) h->A + off, tmp, cnt * sizeof(float),
                          cudaMemcpyHostToDevice));
        }
    }
cleanup:
    free(tmp);
    return status;
}

extern "C" int gc_tom_cuda_run(gc_tom_dev *h, const gc_tom_args *ta, const gc_sink *sink,
                               gc_host *host, size_t *nbad, char *msg, size_t msgcap)
{
    /* one worker, on the device that holds A */
    gc_opts o1;
    gc_host h1;
    gc_host_on_device(host, h->dev, &o1, &h1);
    tom_job_args a = {h, ta, 0};
    gc_worker_result res[1];
    int status = gc_cuda_workers(tom_job, &a, sizeof a, 1, sink, &h1, res, msg, msgcap);
    memcpy(host->seconds, h1.seconds, sizeof host->seconds);
    *nbad = a.nbad;
    return status;
}

extern "C" void gc_tom_cuda_close(gc_tom_dev *h)
{
    if (!h) return;
    if (h->A) {
        (void) cudaSetDevice(h->dev);
        cudaDeviceSynchronize();
        cudaFree(h->A);
    }
    (void) cudaGetLastError();
    if (h->prev >= 0) (void) cudaSetDevice(h->prev);
    free(h);
}
