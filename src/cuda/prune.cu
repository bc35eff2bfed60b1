/*
 * prune.cu -- the CUDA engine of ARACNE (algo/prune.h).
 *
 * mi lives on the device, N x N doubles (n rounded up to the tile side
 * 64), with the diagonal and the padding set to -Inf so that the terms
 * k = i, k = j and the padding never win a max.  The max-min rule is one
 * tiled kernel, apsp.cu's min-plus tile with (max, min) for (min, +): a
 * thread block makes a 64 x 64 tile of m[j, i] = max_k min(mi[j, k],
 * mi[k, i]), each thread 4 x 4 of it in registers, over k staged 16 at a
 * time in shared memory; only the tiles on and above the diagonal (m is
 * symmetric), and the epilogue writes parmigene's decision for each pair
 * j < i into a byte mask.  Where the rule is parmigene's tree instead
 * (aracne.m with a negative value), one thread per pair runs the tree
 * over every k (gc_aracne_pair_removed, the CPU's code).  The mask comes
 * back and the host makes the result from mi (gc_aracne_apply_mask).
 * The tiles are launched in batches of column blocks; between batches the
 * host checks for an interrupt.  max and min are exact, so the decisions
 * are the CPU engine's to the bit.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "check.cuh"
extern "C" {
#include "../algo/prune.h"
}

#define BS 64        /* the tile side */
#define KC 16        /* k per shared-memory stage */
#define PRUNE_THREADS 256
#define BATCH 8      /* tile columns per launch between interrupt checks */

/* The diagonal and the padding (rows or columns from n on) to -Inf. */
__global__ void aracne_prep(double *D, size_t N, size_t n)
{
    size_t len = N * N;
    for (size_t e = blockIdx.x * (size_t) blockDim.x + threadIdx.x; e < len;
         e += (size_t) gridDim.x * blockDim.x) {
        size_t i = e % N, j = e / N;
        if (i == j || i >= n || j >= n) D[e] = -INFINITY;
    }
}

/* Tile (J, I) = (blockIdx.x, I0 + blockIdx.y), J <= I: m over all k, then
 * mask[j + i N] = (mi[j, i] < f(m[j, i])) for j < i < n, with parmigene's
 * f(m) = m * eta - eps rounded as it rounds it (no fused multiply-add). */
__global__ void aracne_maxmin(const double *D, size_t N, size_t n, int I0, double eps,
                              double eta, unsigned char *mask)
{
    const int J = blockIdx.x, I = I0 + (int) blockIdx.y;
    if (J > I) return;
    __shared__ double As[KC][BS];       /* As[k][row j] = mi[j, k] */
    __shared__ double Bs[KC][BS + 1];   /* Bs[k][col i] = mi[k, i] */
    const int t = threadIdx.x, tx = t % 16, ty = t / 16;
    const size_t j0 = (size_t) J * BS, i0 = (size_t) I * BS;
    double acc[4][4];
#pragma unroll
    for (int c = 0; c < 4; c++)
#pragma unroll
        for (int r = 0; r < 4; r++) acc[r][c] = -INFINITY;
    for (size_t kc = 0; kc < N; kc += KC) {
#pragma unroll
        for (int m = 0; m < KC * BS / PRUNE_THREADS; m++) {
            int e = t + m * PRUNE_THREADS;
            As[e / BS][e % BS] = D[(j0 + e % BS) + (kc + e / BS) * N];
            Bs[e % KC][e / KC] = D[(kc + e % KC) + (i0 + e / KC) * N];
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < KC; k++) {
            double a[4], b[4];
#pragma unroll
            for (int r = 0; r < 4; r++) a[r] = As[k][tx + 16 * r];
#pragma unroll
            for (int c = 0; c < 4; c++) b[c] = Bs[k][ty + 16 * c];
#pragma unroll
            for (int c = 0; c < 4; c++)
#pragma unroll
                for (int r = 0; r < 4; r++) acc[r][c] = fmax(acc[r][c], fmin(a[r], b[c]));
        }
        __syncthreads();
    }
#pragma unroll
    for (int c = 0; c < 4; c++)
#pragma unroll
        for (int r = 0; r < 4; r++) {
            size_t j = j0 + tx + 16 * r, i = i0 + ty + 16 * c;
            if (j >= i || i >= n) continue;
            double m = acc[r][c];
            double f = __dsub_rn(__dmul_rn(m, eta), eps);
            mask[j + i * N] = m > -INFINITY && D[j + i * N] < f;
        }
}

/* parmigene's tree for the pairs j < i of column blocks [I0, I0 + gridDim.y):
 * one thread per pair, 16 x 16 threads per block. */
__global__ void aracne_tree(const double *D, size_t N, size_t n, int I0, double eps,
                            double eta, unsigned char *mask)
{
    size_t j = blockIdx.x * (size_t) 16 + threadIdx.x % 16;
    size_t i = ((size_t) I0 + blockIdx.y) * BS + blockIdx.z * (size_t) 16 + threadIdx.x / 16;
    if (j >= i || i >= n) return;
    mask[j + i * N] = (unsigned char) gc_aracne_pair_removed(D, N, n, i, j, eps, eta);
}

extern "C" int gc_aracne_cuda(const gc_aracne_job *job, gc_host *host, char *msg,
                              size_t msgcap)
{
    int status = GPUCOR_OK;
    const gc_opts *o = host->opts;
    const size_t n = job->n, N = (n + BS - 1) / BS * BS, nb = N / BS;
    const int nt = o->nthreads > 0 ? o->nthreads : 1;
    int dev = o->ndevices > 0 ? o->devices[0] : 0, prev = -1;
    cudaStream_t st = NULL;
    double *D = NULL;
    unsigned char *dmask = NULL, *mask = NULL;
    size_t free_b = 0, total_b = 0, band = 0;
    const double bytes = (double) N * N * (sizeof(double) + 1);

    if (n < 3) {   /* no triangle: mi itself */
        if (n) gc_aracne_apply_mask(job->mi, n, NULL, 0, 0, 1, job->out, nt);
        return GPUCOR_OK;
    }
    if (cudaGetDevice(&prev) != cudaSuccess) prev = -1;
    CU(cudaSetDevice(dev));
    CU(cudaMemGetInfo(&free_b, &total_b));
    if (o->gpu_memory > 0 && (double) free_b > o->gpu_memory) free_b = (size_t) o->gpu_memory;
    if (bytes > (double) free_b) {
        snprintf(msg, msgcap,
                 "the %zu x %zu mutual information and its decisions need %.2f GB of GPU "
                 "memory, %.2f GB are free (n up to about %.0f fits here; use backend = "
                 "\"cpu\")",
                 n, n, bytes / 1e9, (double) free_b / 1e9,
                 floor(sqrt((double) free_b / (sizeof(double) + 1) * 0.98)));
        status = GPUCOR_ERR_ALLOC;
        goto cleanup;
    }
    /* the decisions come back a band of columns at a time (at most 256 MB:
     * host memory stays mi and the result, 2 n^2 doubles) */
    band = ((size_t) 1 << 28) / N / GC_ARACNE_BAND * GC_ARACNE_BAND;
    if (o->gpu_panel)   /* the tests' small panels: several bands */
        band = (o->gpu_panel + GC_ARACNE_BAND - 1) / GC_ARACNE_BAND * GC_ARACNE_BAND;
    if (band < GC_ARACNE_BAND) band = GC_ARACNE_BAND;
    if (band > N) band = N;
    if (!(mask = (unsigned char *) malloc(band * N))) {
        snprintf(msg, msgcap, "out of host memory for %zu x %zu decisions", N, band);
        status = GPUCOR_ERR_ALLOC;
        goto cleanup;
    }
    CU(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    DALLOC(D, N * N * sizeof(double), "the mutual information");
    DALLOC(dmask, N * N, "the decisions");
    CU(cudaMemcpy2DAsync(D, N * sizeof(double), job->mi, n * sizeof(double),
                         n * sizeof(double), n, cudaMemcpyHostToDevice, st));
    CU(cudaMemsetAsync(dmask, 0, N * N, st));
    aracne_prep<<<1024, 256, 0, st>>>(D, N, n);
    LAUNCHED("aracne_prep");
    for (size_t I0 = 0; I0 < nb; I0 += BATCH) {
        unsigned nI = (unsigned) (I0 + BATCH < nb ? BATCH : nb - I0);
        if (job->maxmin) {
            aracne_maxmin<<<dim3((unsigned) nb, nI), PRUNE_THREADS, 0, st>>>(
                D, N, n, (int) I0, job->eps, job->eta, dmask);
            LAUNCHED("aracne_maxmin");
        } else {
            aracne_tree<<<dim3((unsigned) (N / 16), nI, BS / 16), 256, 0, st>>>(
                D, N, n, (int) I0, job->eps, job->eta, dmask);
            LAUNCHED("aracne_tree");
        }
        CU(cudaStreamSynchronize(st));
        if (host->interrupted && host->interrupted()) {
            status = GPUCOR_ERR_INTERRUPT;
            goto cleanup;
        }
        if (host->progress)
            host->progress(host->progress_ctx, (double) (I0 + nI) / (double) nb);
    }
    for (size_t c0 = 0; c0 < n; c0 += band) {
        size_t cols = n - c0 < band ? n - c0 : band;
        CU(cudaMemcpyAsync(mask, dmask + c0 * N, cols * N, cudaMemcpyDeviceToHost, st));
        CU(cudaStreamSynchronize(st));
        gc_aracne_apply_mask(job->mi, n, mask, N, c0 / GC_ARACNE_BAND,
                             (c0 + cols + GC_ARACNE_BAND - 1) / GC_ARACNE_BAND, job->out, nt);
    }
cleanup:
    if (st) cudaStreamSynchronize(st);
    if (D) cudaFree(D);
    if (dmask) cudaFree(dmask);
    if (st) cudaStreamDestroy(st);
    free(mask);
    if (status == GPUCOR_ERR_CUDA) (void) cudaGetLastError();
    if (prev >= 0 && prev != dev) (void) cudaSetDevice(prev);
    return status;
}
