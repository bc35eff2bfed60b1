/*
 * hclust.cu -- the CUDA engine of gpu_hclust()'s nearest-neighbour chain
 * (algo/hclust.h).
 *
 * The packed distances stay on the device.  One step of the chain is two
 * kernels over the active clusters: hc_scan finds the nearest neighbour of
 * the chain's top (a grid of blocks, each its best pair, the last block to
 * finish the best of those) and either pushes it or marks the pair for
 * merging; hc_merge, when a merge is marked, writes the Lance-Williams
 * update of the survivor's row and records the merge (again the last block
 * finishes).  The chain's state lives in device memory, so the host never
 * waits for a decision: it replays a CUDA graph of STEPS such steps (a
 * step after the last merge does nothing), reads how many merges are done
 * after each replay, and looks for Ctrl-C between replays.  There are at
 * most about 3n steps.
 *
 * The update's arithmetic is written with _rn intrinsics, one rounding per
 * operation as the CPU engine's C, so the two give the same bits in double.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "check.cuh"
extern "C" {
#include "../algo/hclust.h"
}

#define HC_THREADS 256
#define STEPS 256            /* chain steps per graph replay */
#define STAGE_BYTES ((size_t) 32 << 20)

typedef struct {
    int len;                 /* the chain's length (>= 1) */
    int merges;
    int pending;             /* a merge of chain[len - 2], chain[len - 1] is marked */
    double h;                /* its height */
    unsigned ticket[2];      /* blocks done, scan and merge */
    int na;                  /* hc_nan: a distance is NaN */
} hc_state;

struct gc_hclust_dev {
    int dev, single, prev;
    int checked;             /* uploaded: the host has seen every value finite */
    size_t n;
    void *D;
    cudaStream_t st;
};

/* (v1, k1) before (v2, k2): the smaller distance; among equal ones the
 * chain's previous cluster b, else the smaller index; k < 0 is nothing. */
static __device__ __forceinline__ bool before(double v1, int k1, double v2, int k2, int b)
{
    if (k2 < 0) return k1 >= 0;
    if (k1 < 0) return false;
    if (v1 != v2) return v1 < v2;
    if (k1 == b) return true;
    if (k2 == b) return false;
    return k1 < k2;
}

/* the best of the block's (v, k); every thread gets it */
static __device__ void block_best(double &v, int &k, int b)
{
    __shared__ double sv[HC_THREADS / 32];
    __shared__ int sk[HC_THREADS / 32];
    for (int o = 16; o > 0; o >>= 1) {
        double v2 = __shfl_down_sync(0xffffffffu, v, o);
        int k2 = __shfl_down_sync(0xffffffffu, k, o);
        if (before(v2, k2, v, k, b)) { v = v2; k = k2; }
    }
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    __syncthreads();
    if (lane == 0) { sv[warp] = v; sk[warp] = k; }
    __syncthreads();
    v = sv[0];
    k = sk[0];
    for (int w = 1; w < HC_THREADS / 32; w++)
        if (before(sv[w], sk[w], v, k, b)) { v = sv[w]; k = sk[w]; }
}

template <typename T>
__device__ __forceinline__ T &at(T *D, size_t n, size_t i, size_t j)
{
    return i > j ? D[dist_index(n, i, j)] : D[dist_index(n, j, i)];
}

/* Whether this block is the grid's last to finish (its writes before this
 * visible to that block); the last one resets the ticket. */
static __device__ bool last_block(unsigned *ticket)
{
    __shared__ bool last;
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) last = atomicAdd(ticket, 1u) == gridDim.x - 1;
    __syncthreads();
    if (last) __threadfence();
    return last;
}

template <typename T>
__global__ void hc_scan(const T *D, size_t n, const unsigned char *active, hc_state *st,
                        int *chain, double *pv, int *pk)
{
    if (st->pending || st->merges >= (int) n - 1) return;
    int len = st->len, a = chain[len - 1], b = len >= 2 ? chain[len - 2] : -1;
    double v = 0;
    int k = -1;
    for (size_t x = blockIdx.x * (size_t) blockDim.x + threadIdx.x; x < n;
         x += (size_t) gridDim.x * blockDim.x) {
        if (!active[x] || (int) x == a) continue;
        double y = (double) at(D, n, (size_t) a, x);
        if (before(y, (int) x, v, k, b)) { v = y; k = (int) x; }
    }
    block_best(v, k, b);
    if (threadIdx.x == 0) { pv[blockIdx.x] = v; pk[blockIdx.x] = k; }
    if (!last_block(&st->ticket[0])) return;
    v = 0;
    k = -1;
    for (unsigned g = threadIdx.x; g < gridDim.x; g += blockDim.x)
        if (before(pv[g], pk[g], v, k, b)) { v = pv[g]; k = pk[g]; }
    block_best(v, k, b);
    if (threadIdx.x != 0) return;
    st->ticket[0] = 0;
    if (k == b) {
        st->pending = 1;
        st->h = v;
    } else {
        chain[len] = k;
        st->len = len + 1;
    }
}

/* Lance-Williams for the reducible methods, as gc_hclust_lw() in C */
static __device__ __forceinline__ double lw(int method, double dki, double dkj, double dij,
                                     double ni, double nj, double nk)
{
    switch (method) {
    case HC_SINGLE: return dki < dkj ? dki : dkj;
    case HC_COMPLETE: return dki > dkj ? dki : dkj;
    case HC_AVERAGE:
        return __ddiv_rn(__dadd_rn(__dmul_rn(ni, dki), __dmul_rn(nj, dkj)), __dadd_rn(ni, nj));
    case HC_MCQUITTY: return __dadd_rn(__dmul_rn(0.5, dki), __dmul_rn(0.5, dkj));
    default:
        return __ddiv_rn(__dsub_rn(__dadd_rn(__dmul_rn(__dadd_rn(ni, nk), dki),
                                             __dmul_rn(__dadd_rn(nj, nk), dkj)),
                                   __dmul_rn(nk, dij)),
                         __dadd_rn(__dadd_rn(ni, nj), nk));
    }
}

template <typename T>
__global__ void hc_merge(T *D, size_t n, int method, unsigned char *active, double *size,
                         hc_state *st, int *chain, int *ma, int *mb, double *mh)
{
    if (!st->pending) return;
    int len = st->len, a = chain[len - 1], b = chain[len - 2];
    int s = a < b ? a : b, o = a < b ? b : a;
    double dij = st->h, ns = size[s], no = size[o];
    for (size_t x = blockIdx.x * (size_t) blockDim.x + threadIdx.x; x < n;
             x += (size_t) gridDim.x * blockDim.x) {
            if (!active[x] || (int) x == s || (int) x == o) continue;
            T &ds = at(D, n, x, (size_t) s);
            ds = (T) lw(method, (double) ds, (double) at(D, n, x, (size_t) o), dij, ns, no,
                        size[x]);
        }
    if (!last_block(&st->ticket[1]) || threadIdx.x != 0) return;
    st->ticket[1] = 0;
    int m = st->merges;
    ma[m] = s;
    mb[m] = o;
    mh[m] = dij;
    size[s] = ns + no;
    active[o] = 0;
    st->merges = m + 1;
    st->len = len - 2 > 0 ? len - 2 : 1;
    if (len - 2 <= 0) chain[0] = 0;   /* object 0 is never dropped: start again there */
    st->pending = 0;
}

extern "C" int gc_hclust_cuda_open(size_t n, int device, int single, double gpu_memory,
                                   gc_hclust_dev **hp, void **dev_d, char *msg,
                                   size_t msgcap)
{
    int status = GPUCOR_OK;
    size_t elt = single ? sizeof(float) : sizeof(double), free_b = 0;
    double need = (double) dist_len(n) * elt + 64.0 * n + (64 << 20);
    gc_hclust_dev *h = (gc_hclust_dev *) calloc(1, sizeof *h);
    *hp = h;
    *dev_d = NULL;
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
        /* n(n - 1)/2 elt <= free: the largest n that would fit */
        double nmax = floor(sqrt(2.0 * ((double) free_b - (64 << 20)) / elt));
        snprintf(msg, msgcap,
                 "the distances between %zu objects need %.2f GB of GPU memory in %s "
                 "(n(n - 1)/2 x %zu bytes, and %.2f GB more), %.2f GB are free on GPU %d: "
                 "up to about %.0f objects fit%s, or use backend = \"cpu\" (%.2f GB of "
                 "host memory)",
                 n, (double) dist_len(n) * elt / 1e9, single ? "float" : "double", elt,
                 (need - (double) dist_len(n) * elt) / 1e9, (double) free_b / 1e9, device,
                 nmax > 0 ? nmax : 0,
                 single ? "" : " (precision = \"single\" halves the need)",
                 (double) dist_len(n) * 8 / 1e9);
        status = GPUCOR_ERR_ALLOC;
        goto cleanup;
    }
    CU(cudaStreamCreateWithFlags(&h->st, cudaStreamNonBlocking));
    DALLOC(h->D, dist_len(n) * elt, "the distances");
    *dev_d = h->D;
cleanup:
    return status;
}

extern "C" void gc_hclust_cuda_close(gc_hclust_dev *h)
{
    if (!h) return;
    if (h->st || h->D) {
        (void) cudaSetDevice(h->dev);
        if (h->st) cudaStreamSynchronize(h->st);
        if (h->D) cudaFree(h->D);
        if (h->st) cudaStreamDestroy(h->st);
    }
    (void) cudaGetLastError();
    if (h->prev >= 0) (void) cudaSetDevice(h->prev);
    free(h);
}

extern "C" int gc_hclust_cuda_upload(gc_hclust_dev *h, const double *d, int nthreads,
                                     const gc_host *host, int *bad, size_t *at_k, char *msg,
                                     size_t msgcap)
{
    int status = GPUCOR_OK;
    size_t len = dist_len(h->n), elt = h->single ? sizeof(float) : sizeof(double);
    size_t chunk = STAGE_BYTES / elt;
    void *pin[2] = {NULL, NULL};
    cudaEvent_t ev[2] = {NULL, NULL};
    *bad = 0;
    CU(cudaSetDevice(h->dev));
    for (int b = 0; b < 2; b++) {
        CU(cudaHostAlloc(&pin[b], STAGE_BYTES, cudaHostAllocDefault));
        CU(cudaEventCreateWithFlags(&ev[b], cudaEventDisableTiming));
    }
    for (size_t k0 = 0, c = 0; k0 < len; k0 += chunk, c++) {
        size_t cnt = len - k0 < chunk ? len - k0 : chunk;
        int b = (int) (c & 1);
        if (c >= 2) CU(cudaEventSynchronize(ev[b]));
        /* Ctrl-C between the chunks (a 30000-object 'dist' is 3.6 GB) */
        if (gc_host_interrupted(host)) {
            snprintf(msg, msgcap, "interrupted");
            status = GPUCOR_ERR_INTERRUPT;
            goto cleanup;
        }
        if (host->progress) host->progress(host->progress_ctx, (double) k0 / (double) len);
        size_t f = gc_hclust_stage(d + k0, cnt, pin[b], h->single, nthreads);
        if (f < cnt) {
            *bad = 1;
            *at_k = k0 + f;
            snprintf(msg, msgcap, "a dissimilarity is not finite");
            status = GPUCOR_ERR_INVALID;
            goto cleanup;
        }
        CU(cudaMemcpyAsync((char *) h->D + k0 * elt, pin[b], cnt * elt,
                           cudaMemcpyHostToDevice, h->st));
        CU(cudaEventRecord(ev[b], h->st));
    }
    h->checked = 1;
cleanup:
    if (h->st) cudaStreamSynchronize(h->st);
    for (int b = 0; b < 2; b++) {
        if (ev[b]) cudaEventDestroy(ev[b]);
        if (pin[b]) cudaFreeHost(pin[b]);
    }
    return status;
}

/* Ward's "D2" works on squared distances (as stats) */
template <typename T>
__global__ void hc_square(T *D, size_t len)
{
    for (size_t k = blockIdx.x * (size_t) blockDim.x + threadIdx.x; k < len;
         k += (size_t) gridDim.x * blockDim.x)
        D[k] = D[k] * D[k];
}

/* distances computed from x may be NA (a constant row, too few shared
 * coordinates) */
template <typename T>
__global__ void hc_nan(const T *D, size_t len, hc_state *st)
{
    bool na = false;
    for (size_t k = blockIdx.x * (size_t) blockDim.x + threadIdx.x; k < len;
         k += (size_t) gridDim.x * blockDim.x)
        na |= D[k] != D[k];
    if (__syncthreads_or(na) && threadIdx.x == 0) st->na = 1;
}

template <typename T>
static int run(gc_hclust_dev *h, int method, const double *members, gc_hclust_merges *out,
               gc_host *host, int *bad, char *msg, size_t msgcap)
{
    int status = GPUCOR_OK, sms = 0;
    size_t n = h->n;
    T *D = (T *) h->D;
    unsigned char *active = NULL;
    double *size = NULL, *pv = NULL, *mh = NULL;
    int *chain = NULL, *pk = NULL, *ma = NULL, *mb = NULL, *hmerges = NULL;
    hc_state *st = NULL, init;
    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec = NULL;
    cudaEvent_t ev[2] = {NULL, NULL};
    double *hsize = NULL;
    cudaStream_t s = h->st;
    unsigned grid;
    CU(cudaSetDevice(h->dev));
    CU(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, h->dev));
    grid = (unsigned) ((n + HC_THREADS - 1) / HC_THREADS);
    if (grid > (unsigned) (4 * sms)) grid = (unsigned) (4 * sms);
    if (grid < 1) grid = 1;
    DALLOC(active, n, "the active flags");
    DALLOC(size, n * sizeof(double), "the cluster sizes");
    DALLOC(chain, n * sizeof(int), "the chain");
    DALLOC(pv, grid * sizeof(double), "the block minima");
    DALLOC(pk, grid * sizeof(int), "the block minima");
    DALLOC(ma, n * sizeof(int), "the merges");
    DALLOC(mb, n * sizeof(int), "the merges");
    DALLOC(mh, n * sizeof(double), "the heights");
    DALLOC(st, sizeof(hc_state), "the chain's state");
    CU(cudaHostAlloc((void **) &hmerges, 2 * sizeof(int), cudaHostAllocDefault));
    if (!(hsize = (double *) malloc(n * sizeof(double)))) {
        snprintf(msg, msgcap, "out of host memory");
        status = GPUCOR_ERR_ALLOC;
        goto cleanup;
    }
    for (size_t k = 0; k < n; k++) hsize[k] = members ? members[k] : 1.0;
    memset(&init, 0, sizeof init);
    init.len = 1;
    CU(cudaMemcpyAsync(size, hsize, n * sizeof(double), cudaMemcpyHostToDevice, s));
    CU(cudaMemsetAsync(active, 1, n, s));
    CU(cudaMemsetAsync(chain, 0, sizeof(int), s));
    CU(cudaMemcpyAsync(st, &init, sizeof init, cudaMemcpyHostToDevice, s));
    if (!h->checked) {
        /* computed from x: a distance may be NA */
        hc_nan<T><<<1024, 256, 0, s>>>(D, dist_len(n), st);
        LAUNCHED("hc_nan");
        CU(cudaMemcpyAsync(&init, st, sizeof init, cudaMemcpyDeviceToHost, s));
        CU(cudaStreamSynchronize(s));
        if (init.na) {
            *bad = 1;
            snprintf(msg, msgcap, "a distance is NA or NaN");
            status = GPUCOR_ERR_INVALID;
            goto cleanup;
        }
    }
    if (method == HC_WARD_D2) {
        hc_square<T><<<1024, 256, 0, s>>>(D, dist_len(n));
        LAUNCHED("hc_square");
    }
    /* STEPS steps, captured once and replayed */
    CU(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    for (int k = 0; k < STEPS; k++) {
        hc_scan<T><<<grid, HC_THREADS, 0, s>>>(D, n, active, st, chain, pv, pk);
        hc_merge<T><<<grid, HC_THREADS, 0, s>>>(D, n, method, active, size, st, chain, ma, mb,
                                                mh);
    }
    {
        cudaError_t e = cudaStreamEndCapture(s, &graph);
        if (e != cudaSuccess) CU(e);
    }
    CU(cudaGraphInstantiate(&exec, graph, 0));
    for (int b = 0; b < 2; b++) CU(cudaEventCreateWithFlags(&ev[b], cudaEventDisableTiming));
    {
        /* replay r is in flight while the host waits for replay r - 1 */
        double last = gpucor_now();
        long r = 0;
        for (;;) {
            int b = (int) (r & 1);
            CU(cudaGraphLaunch(exec, s));
            CU(cudaMemcpyAsync(&hmerges[b], &st->merges, sizeof(int), cudaMemcpyDeviceToHost, s));
            CU(cudaEventRecord(ev[b], s));
            if (r > 0) {
                CU(cudaEventSynchronize(ev[1 - b]));
                if (hmerges[1 - b] >= (int) n - 1) break;
                double now = gpucor_now();
                if (now - last > 0.2) {
                    last = now;
                    if (host->interrupted && host->interrupted()) {
                        status = GPUCOR_ERR_INTERRUPT;
                        snprintf(msg, msgcap, "interrupted");
                        goto cleanup;
                    }
                    if (host->progress)
                        host->progress(host->progress_ctx,
                                       gc_hclust_chain_done((size_t) hmerges[1 - b], n));
                }
            }
            r++;
        }
    }
    CU(cudaStreamSynchronize(s));
    CU(cudaMemcpy(out->a, ma, (n - 1) * sizeof(int), cudaMemcpyDeviceToHost));
    CU(cudaMemcpy(out->b, mb, (n - 1) * sizeof(int), cudaMemcpyDeviceToHost));
    CU(cudaMemcpy(out->h, mh, (n - 1) * sizeof(double), cudaMemcpyDeviceToHost));
    if (method == HC_WARD_D2)
        for (size_t m = 0; m + 1 < n; m++) out->h[m] = sqrt(out->h[m]);
    if (host->progress) host->progress(host->progress_ctx, 1.0);
cleanup:
    if (s) cudaStreamSynchronize(s);
    if (exec) cudaGraphExecDestroy(exec);
    if (graph) cudaGraphDestroy(graph);
    for (int b = 0; b < 2; b++)
        if (ev[b]) cudaEventDestroy(ev[b]);
    cudaFree(active);
    cudaFree(size);
    cudaFree(chain);
    cudaFree(pv);
    cudaFree(pk);
    cudaFree(ma);
    cudaFree(mb);
    cudaFree(mh);
    cudaFree(st);
    if (hmerges) cudaFreeHost(hmerges);
    free(hsize);
    return status;
}

extern "C" int gc_hclust_cuda_run(gc_hclust_dev *h, int method, const double *members,
                                  gc_hclust_merges *out, gc_host *host, int *bad, char *msg,
                                  size_t msgcap)
{
    *bad = 0;
    if (h->n < 2) return GPUCOR_OK;
    return h->single ? run<float>(h, method, members, out, host, bad, msg, msgcap)
                     : run<double>(h, method, members, out, host, bad, msg, msgcap);
}
