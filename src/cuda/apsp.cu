/*
 * apsp.cu -- the CUDA engine of the blocked Floyd-Warshall (algo/apsp.h).
 *
 * D lives on the device, N x N (n rounded up to the block side 64; the
 * padding vertices have no edges), in double or float.  Each round is
 * three launches: the pivot block closed in shared memory by one thread
 * block; the blocks of the pivot's row and column; every other block.
 * The last two are one min-plus tile kernel: a thread block makes a
 * 64 x 64 block, each thread 4 x 4 of it in registers, over the pivot's
 * 64 columns staged 16 at a time in shared memory (a GEMM with + for *
 * and min for +).  Where the tile is its own operand (the pivot's row and
 * column) every thread has read it before any writes.  Lengths go up and
 * results come down in column panels through a host buffer, made from the
 * user's values as they go (gc_apsp_fill), so the host never holds an
 * extra n x n copy.  Between rounds, about every 0.2 s, the host waits for
 * the device and checks for an interrupt.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "check.cuh"
extern "C" {
#include "../algo/apsp.h"
}

#define BS 64        /* the block side */
#define KC 16        /* pivot columns per shared-memory stage */
#define APSP_THREADS 256

template <typename T> __device__ __forceinline__ T tmin(T a, T b) { return a < b ? a : b; }

/* 1. the pivot block (K0 .. K0 + 63)^2, closed in shared memory.  In step k
 * row k and column k cannot fall (D[k, k] = 0), so they are never written
 * while they are read. */
template <typename T>
__global__ void fw_pivot(T *D, size_t ld, size_t K0)
{
    __shared__ T s[BS][BS + 1];   /* s[col][row] */
    const int t = threadIdx.x, i = t % BS;
    for (int m = 0; m < BS * BS / APSP_THREADS; m++) {
        int j = t / BS + m * (APSP_THREADS / BS);
        s[j][i] = D[(K0 + i) + (K0 + j) * ld];
    }
    __syncthreads();
    for (int k = 0; k < BS; k++) {
        T dik = s[k][i];
        for (int m = 0; m < BS * BS / APSP_THREADS; m++) {
            int j = t / BS + m * (APSP_THREADS / BS);
            T v = dik + s[j][k];
            if (v < s[j][i]) s[j][i] = v;
        }
        __syncthreads();
    }
    for (int m = 0; m < BS * BS / APSP_THREADS; m++) {
        int j = t / BS + m * (APSP_THREADS / BS);
        D[(K0 + i) + (K0 + j) * ld] = s[j][i];
    }
}

/* 2. and 3.: block (I, J) = min(itself, D_IK (x) D_KJ).  phase 2: grid
 * (nb, 2), y = 0 the pivot's row (K, x), y = 1 its column (x, K); phase 3:
 * grid (nb, nb), every block off the pivot's row and column. */
template <typename T>
__global__ void fw_minplus(T *D, size_t ld, int Kb, int phase)
{
    int I, J;
    if (phase == 2) {
        if ((int) blockIdx.x == Kb) return;
        I = blockIdx.y == 0 ? Kb : (int) blockIdx.x;
        J = blockIdx.y == 0 ? (int) blockIdx.x : Kb;
    } else {
        I = blockIdx.x;
        J = blockIdx.y;
        if (I == Kb || J == Kb) return;
    }
    __shared__ T As[KC][BS];       /* As[k][row] */
    __shared__ T Bs[KC][BS + 1];   /* Bs[k][col] */
    const int t = threadIdx.x, tx = t % 16, ty = t / 16;
    const size_t i0 = (size_t) I * BS, j0 = (size_t) J * BS, k0 = (size_t) Kb * BS;
    T acc[4][4];
#pragma unroll
    for (int c = 0; c < 4; c++)
#pragma unroll
        for (int r = 0; r < 4; r++)
            acc[r][c] = D[(i0 + tx + 16 * r) + (j0 + ty + 16 * c) * ld];
    for (int kc = 0; kc < BS; kc += KC) {
#pragma unroll
        for (int m = 0; m < KC * BS / APSP_THREADS; m++) {
            int e = t + m * APSP_THREADS;
            As[e / BS][e % BS] = D[(i0 + e % BS) + (k0 + kc + e / BS) * ld];
            Bs[e % KC][e / KC] = D[(k0 + kc + e % KC) + (j0 + e / KC) * ld];
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < KC; k++) {
            T a[4], b[4];
#pragma unroll
            for (int r = 0; r < 4; r++) a[r] = As[k][tx + 16 * r];
#pragma unroll
            for (int c = 0; c < 4; c++) b[c] = Bs[k][ty + 16 * c];
#pragma unroll
            for (int c = 0; c < 4; c++)
#pragma unroll
                for (int r = 0; r < 4; r++) acc[r][c] = tmin(acc[r][c], a[r] + b[c]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int c = 0; c < 4; c++)
#pragma unroll
        for (int r = 0; r < 4; r++)
            D[(i0 + tx + 16 * r) + (j0 + ty + 16 * c) * ld] = acc[r][c];
}

/* The padding columns n .. N - 1: no edges, 0 on the diagonal. */
template <typename T>
__global__ void fw_pad(T *D, size_t N, size_t n)
{
    size_t len = (N - n) * N;
    for (size_t e = blockIdx.x * (size_t) blockDim.x + threadIdx.x; e < len;
         e += (size_t) gridDim.x * blockDim.x) {
        size_t i = e % N, j = n + e / N;
        D[i + j * N] = i == j ? (T) 0 : (T) INFINITY;
    }
}

/* The metrics' sums of each row i < n over the columns j < n, j != i: one
 * thread per row (a warp reads 32 rows of a column at once). */
template <typename T>
__global__ void fw_row_sums(const T *D, size_t ld, size_t n, double *inv, double *len,
                            double *reach, double *ecc)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (i >= n) return;
    double si = 0, sl = 0, sr = 0, mx = 0;
    for (size_t j = 0; j < n; j++) {
        double d = (double) D[i + j * ld];
        if (j == i || d == INFINITY) continue;
        si += 1 / d;
        sl += d;
        sr += 1;
        mx = d > mx ? d : mx;
    }
    inv[i] = si; len[i] = sl; reach[i] = sr; ecc[i] = mx;
}

template <typename T>
static int run(const gc_apsp_job *job, gc_host *host, char *msg, size_t msgcap)
{
    int status = GPUCOR_OK;
    const gc_opts *o = host->opts;
    const gc_apsp_out *out = &job->out;
    const size_t n = job->src.n, N = (n + BS - 1) / BS * BS, nb = N / BS;
    const int nt = o->nthreads > 0 ? o->nthreads : 1;
    int dev = o->ndevices > 0 ? o->devices[0] : 0, prev = -1;
    cudaStream_t st = NULL;
    T *D = NULL;
    double *dsum = NULL;
    T *stage = NULL;
    const int is_float = sizeof(T) != sizeof(double);
    const int want_sums = out->inv_sum || out->len_sum || out->reach || out->ecc;
    size_t bytes = N * N * sizeof(T), free_b = 0, total_b = 0;
    /* the host panels: about 64 MiB of columns */
    size_t pc = ((size_t) 64 << 20) / (N * sizeof(T));
    if (pc < 1) pc = 1;
    if (pc > N) pc = N;

    if (cudaGetDevice(&prev) != cudaSuccess) prev = -1;
    CU(cudaSetDevice(dev));
    CU(cudaMemGetInfo(&free_b, &total_b));
    if (o->gpu_memory > 0 && (double) free_b > o->gpu_memory) free_b = (size_t) o->gpu_memory;
    if ((double) bytes + 4.0 * N * sizeof(double) > (double) free_b) {
        snprintf(msg, msgcap,
                 "the %zu x %zu lengths need %.2f GB of GPU memory, %.2f GB are free "
                 "(n up to about %.0f fits in %s here; use backend = \"cpu\"%s)",
                 n, n, (double) bytes / 1e9, (double) free_b / 1e9,
                 floor(sqrt((double) free_b / sizeof(T) * 0.98)),
                 sizeof(T) == 8 ? "double" : "float",
                 sizeof(T) == 8 ? " or precision = \"single\"" : "");
        status = GPUCOR_ERR_ALLOC;
        goto cleanup;
    }
    CU(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    DALLOC(D, bytes, "the lengths");
    if (want_sums) DALLOC(dsum, 4 * N * sizeof(double), "the metrics' sums");
    stage = (T *) malloc(pc * N * sizeof(T));
    if (!stage) {
        snprintf(msg, msgcap, "out of host memory for the staging panel");
        status = GPUCOR_ERR_ALLOC;
        goto cleanup;
    }
    /* lengths up, panel by panel (padding rows: no edge) */
    for (size_t j0 = 0; j0 < n; j0 += pc) {
        size_t j1 = j0 + pc < n ? j0 + pc : n, w = j1 - j0;
        if (gc_apsp_fill(&job->src, j0, j1, stage, N, is_float, nt)) {
            *job->bad = 1;
            snprintf(msg, msgcap, "negative length");
            status = GPUCOR_ERR_INVALID;
            goto cleanup;
        }
        CU(cudaMemcpyAsync(D + j0 * N, stage, w * N * sizeof(T), cudaMemcpyHostToDevice, st));
        CU(cudaStreamSynchronize(st));
    }
    if (N > n) {
        fw_pad<T><<<256, 256, 0, st>>>(D, N, n);
        LAUNCHED("fw_pad");
    }
    {
        double last = gpucor_now();
        for (size_t K = 0; K < nb; K++) {
            fw_pivot<T><<<1, APSP_THREADS, 0, st>>>(D, N, K * BS);
            LAUNCHED("fw_pivot");
            if (nb > 1) {
                fw_minplus<T><<<dim3((unsigned) nb, 2), APSP_THREADS, 0, st>>>(D, N, (int) K, 2);
                LAUNCHED("fw_minplus (2)");
                fw_minplus<T><<<dim3((unsigned) nb, (unsigned) nb), APSP_THREADS, 0, st>>>(
                    D, N, (int) K, 3);
                LAUNCHED("fw_minplus (3)");
            }
            /* about every 0.2 s of queued work: wait, look for Ctrl-C */
            if ((K + 1) % 8 == 0 || K + 1 == nb) {
                CU(cudaStreamSynchronize(st));
                double now = gpucor_now();
                if (now - last > 0.2 || K + 1 == nb) {
                    last = now;
                    if (host->interrupted && host->interrupted()) {
                        status = GPUCOR_ERR_INTERRUPT;
                        goto cleanup;
                    }
                    if (host->progress)
                        host->progress(host->progress_ctx, (double) (K + 1) / (double) nb);
                }
            }
        }
    }
    if (want_sums) {
        fw_row_sums<T><<<(unsigned) ((n + 127) / 128), 128, 0, st>>>(D, N, n, dsum, dsum + N,
                                                                     dsum + 2 * N, dsum + 3 * N);
        LAUNCHED("fw_row_sums");
        double *h[4] = {out->inv_sum, out->len_sum, out->reach, out->ecc};
        for (int k = 0; k < 4; k++)
            if (h[k]) CU(cudaMemcpyAsync(h[k], dsum + k * N, n * sizeof(double),
                                         cudaMemcpyDeviceToHost, st));
        CU(cudaStreamSynchronize(st));
    }
    /* lengths down, panel by panel */
    if (out->out_matrix || out->out_dist) {
        for (size_t j0 = 0; j0 < n; j0 += pc) {
            size_t j1 = j0 + pc < n ? j0 + pc : n, w = j1 - j0;
            CU(cudaMemcpyAsync(stage, D + j0 * N, w * N * sizeof(T), cudaMemcpyDeviceToHost, st));
            CU(cudaStreamSynchronize(st));
            gc_apsp_take(out, n, j0, j1, stage, N, is_float, nt);
        }
    }
cleanup:
    if (st) cudaStreamSynchronize(st);
    if (D) cudaFree(D);
    if (dsum) cudaFree(dsum);
    if (st) cudaStreamDestroy(st);
    free(stage);
    if (status == GPUCOR_ERR_CUDA) (void) cudaGetLastError();
    if (prev >= 0 && prev != dev) (void) cudaSetDevice(prev);
    return status;
}

extern "C" int gc_apsp_cuda(const gc_apsp_job *job, gc_host *host, char *msg, size_t msgcap)
{
    if (job->src.n == 0) return GPUCOR_OK;
    return host->opts->single ? run<float>(job, host, msg, msgcap)
                              : run<double>(job, host, msg, msgcap);
}
