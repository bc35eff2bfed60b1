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
 * results come down in column panels through two pinned host buffers (one
 * filled while the other is copied), made from the user's values as they
 * go (gc_apsp_fill), so the host never holds an extra n x n copy.  An
 * undirected graph keeps only the blocks on and above the diagonal up to
 * date (half of phase 3's work), reading a block below the diagonal as
 * the transpose of its mirror, and copies the upper half down at the end.  Between rounds, about every 0.2 s, the host waits for
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
 * grid (nb, nb), every block off the pivot's row and column.  sym (an
 * undirected graph): only the blocks I <= J are kept up to date, and a
 * block below the diagonal that an operand needs is read transposed from
 * above it (phase 2: grid (nb, 1), x < K the column's block (x, K), x > K
 * the row's (K, x)). */
template <typename T>
__global__ void fw_minplus(T *D, size_t ld, int Kb, int phase, int sym)
{
    int I, J;
    if (phase == 2) {
        if ((int) blockIdx.x == Kb) return;
        int row = sym ? (int) blockIdx.x > Kb : blockIdx.y == 0;
        I = row ? Kb : (int) blockIdx.x;
        J = row ? (int) blockIdx.x : Kb;
    } else {
        I = blockIdx.x;
        J = blockIdx.y;
        if (I == Kb || J == Kb || (sym && I > J)) return;
    }
    const int at = sym && I > Kb, bt = sym && Kb > J;   /* operands read transposed */
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
            if (!at) As[e / BS][e % BS] = D[(i0 + e % BS) + (k0 + kc + e / BS) * ld];
            else As[e % KC][e / KC] = D[(k0 + kc + e % KC) + (i0 + e / KC) * ld];
            if (!bt) Bs[e % KC][e / KC] = D[(k0 + kc + e % KC) + (j0 + e / KC) * ld];
            else Bs[e / BS][e % BS] = D[(j0 + e % BS) + (k0 + kc + e / BS) * ld];
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

/* After the rounds of an undirected graph: the lower half from the upper,
 * through 32 x 32 tiles in shared memory. */
template <typename T>
__global__ void fw_mirror(T *D, size_t ld)
{
    __shared__ T s[32][33];
    const int ti = blockIdx.x, tj = blockIdx.y;   /* the tile written: rows ti, columns tj */
    if (ti < tj) return;
    const int tx = threadIdx.x % 32, ty = threadIdx.x / 32;
    for (int r = ty; r < 32; r += blockDim.x / 32)
        s[r][tx] = D[((size_t) tj * 32 + tx) + ((size_t) ti * 32 + r) * ld];
    __syncthreads();
    for (int c = ty; c < 32; c += blockDim.x / 32) {
        size_t i = (size_t) ti * 32 + tx, j = (size_t) tj * 32 + c;
        if (i > j) D[i + j * ld] = s[tx][c];
    }
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
    const int nt = o->nthreads > 0 ? o->nthreads : 1, sym = job->symmetric;
    int dev = o->ndevices > 0 ? o->devices[0] : 0, prev = -1;
    gpucor_ctx *ctx = NULL;            /* device 0: the session's stream and pinned pair */
    cudaStream_t st = NULL;
    void *pin[2] = {NULL, NULL};
    int own_pin = 0;
    cudaEvent_t ev[2] = {NULL, NULL};
    T *D = NULL;
    double *dsum = NULL;
    const int is_float = sizeof(T) != sizeof(double);
    const int want_sums = out->inv_sum || out->len_sum || out->reach || out->ecc;
    size_t bytes = N * N * sizeof(T), free_b = 0, total_b = 0;
    /* the host panels: about 64 MiB of columns, two of them pinned, so that
     * making one overlaps copying the other */
    size_t pc = ((size_t) 64 << 20) / (N * sizeof(T));
    if (pc < 1) pc = 1;
    if (pc > N) pc = N;
    const size_t pbytes = pc * N * sizeof(T);
    size_t np = (n + pc - 1) / pc;

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
    if (dev == 0) {
        status = gpucor_ctx_get(&ctx, pbytes, msg, msgcap);
        if (status != GPUCOR_OK) goto cleanup;
        st = ctx->st;
        pin[0] = ctx->pinned[0];
        pin[1] = ctx->pinned[1];
    } else {
        own_pin = 1;
        CU(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
        CU(cudaHostAlloc(&pin[0], pbytes, cudaHostAllocDefault));
        CU(cudaHostAlloc(&pin[1], pbytes, cudaHostAllocDefault));
    }
    CU(cudaEventCreateWithFlags(&ev[0], cudaEventDisableTiming));
    CU(cudaEventCreateWithFlags(&ev[1], cudaEventDisableTiming));
    DALLOC(D, bytes, "the lengths");
    if (want_sums) DALLOC(dsum, 4 * N * sizeof(double), "the metrics' sums");
    /* lengths up, panel by panel (padding rows: no edge) */
    for (size_t p = 0; p < np; p++) {
        size_t j0 = p * pc, j1 = j0 + pc < n ? j0 + pc : n, b = p & 1;
        if (p >= 2) CU(cudaEventSynchronize(ev[b]));
        if (gc_host_interrupted(host)) {   /* Ctrl-C between the panels */
            status = GPUCOR_ERR_INTERRUPT;
            goto cleanup;
        }
        if (gc_apsp_fill(&job->src, j0, j1, pin[b], N, is_float, nt)) {
            *job->bad = 1;
            snprintf(msg, msgcap, "negative length");
            status = GPUCOR_ERR_INVALID;
            goto cleanup;
        }
        CU(cudaMemcpyAsync(D + j0 * N, pin[b], (j1 - j0) * N * sizeof(T),
                           cudaMemcpyHostToDevice, st));
        CU(cudaEventRecord(ev[b], st));
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
                fw_minplus<T><<<dim3((unsigned) nb, sym ? 1 : 2), APSP_THREADS, 0, st>>>(
                    D, N, (int) K, 2, sym);
                LAUNCHED("fw_minplus (2)");
                fw_minplus<T><<<dim3((unsigned) nb, (unsigned) nb), APSP_THREADS, 0, st>>>(
                    D, N, (int) K, 3, sym);
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
    if (sym && nb > 1) {
        fw_mirror<T><<<dim3((unsigned) (N / 32), (unsigned) (N / 32)), 256, 0, st>>>(D, N);
        LAUNCHED("fw_mirror");
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
    /* lengths down, panel by panel: copying the next overlaps taking this */
    if ((out->out_matrix || out->out_dist) && np > 0) {
        CU(cudaStreamSynchronize(st));
        CU(cudaMemcpyAsync(pin[0], D, (pc < n ? pc : n) * N * sizeof(T),
                           cudaMemcpyDeviceToHost, st));
        CU(cudaEventRecord(ev[0], st));
        for (size_t p = 0; p < np; p++) {
            size_t j0 = p * pc, j1 = j0 + pc < n ? j0 + pc : n, b = p & 1;
            if (p + 1 < np) {
                size_t k0 = j1, k1 = k0 + pc < n ? k0 + pc : n;
                CU(cudaMemcpyAsync(pin[1 - b], D + k0 * N, (k1 - k0) * N * sizeof(T),
                                   cudaMemcpyDeviceToHost, st));
                CU(cudaEventRecord(ev[1 - b], st));
            }
            CU(cudaEventSynchronize(ev[b]));
            gc_apsp_take(out, n, j0, j1, pin[b], N, is_float, nt);
        }
    }
cleanup:
    if (st) cudaStreamSynchronize(st);
    if (D) cudaFree(D);
    if (dsum) cudaFree(dsum);
    for (int b = 0; b < 2; b++)
        if (ev[b]) cudaEventDestroy(ev[b]);
    if (own_pin) {
        for (int b = 0; b < 2; b++)
            if (pin[b]) cudaFreeHost(pin[b]);
        if (st) cudaStreamDestroy(st);
    }
    if (status == GPUCOR_ERR_CUDA) {
        (void) cudaGetLastError();
        if (ctx) gpucor_ctx_drop();
    }
    if (prev >= 0 && prev != dev) (void) cudaSetDevice(prev);
    return status;
}

extern "C" int gc_apsp_cuda(const gc_apsp_job *job, gc_host *host, char *msg, size_t msgcap)
{
    if (job->src.n == 0) return GPUCOR_OK;
    return host->opts->single ? run<float>(job, host, msg, msgcap)
                              : run<double>(job, host, msg, msgcap);
}
