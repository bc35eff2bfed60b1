/*
 * prune.cu -- the CUDA engine of ARACNE, CLR and MRNET (algo/prune.h).
 * ARACNE of a host mi first (gc_aracne_cuda), then the rest
 * (gc_prune_cuda, at the end of the file).
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

/* The decisions of the pairs j < i < n into dmask (zeros on entry), D
 * prepared by aracne_prep; batches of column blocks between interrupt
 * checks, progress from p0 to p1. */
static int aracne_decide(const double *D, size_t N, size_t n, int maxmin, double eps,
                         double eta, unsigned char *dmask, cudaStream_t st, gc_host *host,
                         double p0, double p1, char *msg, size_t msgcap)
{
    int status = GPUCOR_OK;
    const size_t nb = N / BS;
    for (size_t I0 = 0; I0 < nb; I0 += BATCH) {
        unsigned nI = (unsigned) (I0 + BATCH < nb ? BATCH : nb - I0);
        if (maxmin) {
            aracne_maxmin<<<dim3((unsigned) nb, nI), PRUNE_THREADS, 0, st>>>(
                D, N, n, (int) I0, eps, eta, dmask);
            LAUNCHED("aracne_maxmin");
        } else {
            aracne_tree<<<dim3((unsigned) (N / 16), nI, BS / 16), 256, 0, st>>>(
                D, N, n, (int) I0, eps, eta, dmask);
            LAUNCHED("aracne_tree");
        }
        CU(cudaStreamSynchronize(st));
        if (host->interrupted && host->interrupted()) {
            status = GPUCOR_ERR_INTERRUPT;
            goto cleanup;
        }
        if (host->progress)
            host->progress(host->progress_ctx, p0 + (p1 - p0) * (double) (I0 + nI) / (double) nb);
    }
cleanup:
    return status;
}

extern "C" int gc_aracne_cuda(const gc_aracne_job *job, gc_host *host, char *msg,
                              size_t msgcap)
{
    int status = GPUCOR_OK;
    const gc_opts *o = host->opts;
    const size_t n = job->n, N = (n + BS - 1) / BS * BS;
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
    status = aracne_decide(D, N, n, job->maxmin, job->eps, job->eta, dmask, st, host, 0, 1,
                           msg, msgcap);
    if (status != GPUCOR_OK) goto cleanup;
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

/* ---- CLR, MRNET, and the three from the data (gc_prune_cuda) ------------ */
/* The MI (n x n doubles, leading dimension N) is resident: copied from the
 * host, or made there from the data by gc_knnmi_cuda_fill (cuda/knnmi.cu)
 * and then checked for NaN and negative values in one pass.  ARACNE: the
 * max-min decisions above, applied on the device.  CLR: the rows' moments
 * (a thread each), then the scores in place.  MRNET: a block per target,
 * the targets in batches whose scores are a band of the result's columns.
 * The per-value arithmetic of CLR and MRNET is algo/prune.h's, the CPU's
 * own, with no fused multiply-add: the values are the CPU engine's to the
 * bit.  Host memory: the result (and mi or x), two 64 MiB staging
 * buffers. */

/* The result comes back through two pinned buffers, a band of columns in
 * one while the host spreads the other over the fresh result on its
 * threads (gc_copy_out: the result's pages are first touched in parallel,
 * which is what bounds a dense n^2 result). */
#define STAGE_BYTES ((size_t) 64 << 20)
#define MRNET_THREADS 256
#define MRNET_NONE (~0ull)

typedef struct {
    void *pin[2];
    cudaEvent_t ev[2];
    size_t cols;       /* columns of n doubles a buffer holds */
} stage;

static int stage_open(stage *sg, size_t n, size_t panel, char *msg, size_t msgcap)
{
    int status = GPUCOR_OK;
    sg->cols = STAGE_BYTES / (n * sizeof(double));
    if (panel) sg->cols = panel;   /* the tests' narrow bands */
    if (sg->cols > n) sg->cols = n;
    if (sg->cols < 1) sg->cols = 1;
    for (int b = 0; b < 2; b++) {
        CU(cudaHostAlloc(&sg->pin[b], sg->cols * n * sizeof(double), cudaHostAllocDefault));
        CU(cudaEventCreateWithFlags(&sg->ev[b], cudaEventDisableTiming));
    }
cleanup:
    return status;
}

static void stage_close(stage *sg)
{
    for (int b = 0; b < 2; b++) {
        if (sg->ev[b]) cudaEventDestroy(sg->ev[b]);
        if (sg->pin[b]) cudaFreeHost(sg->pin[b]);
    }
}

/* cols columns of n values (device, leading dimension ld) into out (host,
 * n rows), on st; returns when out is whole. */
static int download(stage *sg, const double *src, size_t ld, size_t n, size_t cols,
                    double *out, cudaStream_t st, int nt, char *msg, size_t msgcap)
{
    int status = GPUCOR_OK, pb = -1;
    size_t pc0 = 0, pcc = 0;
    for (size_t c0 = 0, t = 0; c0 < cols; c0 += sg->cols, t++) {
        int b = (int) (t & 1);
        size_t cc = cols - c0 < sg->cols ? cols - c0 : sg->cols;
        /* buffer b last held band t - 2, spread over out in round t - 1 */
        CU(cudaMemcpy2DAsync(sg->pin[b], n * sizeof(double), src + c0 * ld, ld * sizeof(double),
                             n * sizeof(double), cc, cudaMemcpyDeviceToHost, st));
        CU(cudaEventRecord(sg->ev[b], st));
        if (pb >= 0) {
            CU(cudaEventSynchronize(sg->ev[pb]));
            gc_copy_out(out + pc0 * n, sg->pin[pb], pcc * n, 0, 1.0, nt);
        }
        pb = b;
        pc0 = c0;
        pcc = cc;
    }
    if (pb >= 0) {
        CU(cudaEventSynchronize(sg->ev[pb]));
        gc_copy_out(out + pc0 * n, sg->pin[pb], pcc * n, 0, 1.0, nt);
    }
cleanup:
    if (status != GPUCOR_OK) cudaStreamSynchronize(st);   /* the buffers stay in use */
    return status;
}

/* flags[0]: a value off the diagonal is not finite; flags[1]: one is
 * below 0.  One atomic per thread at most, not one per value. */
__global__ void prune_scan(const double *D, size_t ld, size_t n, int *flags)
{
    const size_t len = n * n;
    int bad = 0, neg = 0;
    for (size_t e = blockIdx.x * (size_t) blockDim.x + threadIdx.x; e < len;
         e += (size_t) gridDim.x * blockDim.x) {
        size_t i = e % n, j = e / n;
        if (i == j) continue;
        double v = D[i + j * ld];
        if (!isfinite(v)) bad = 1;
        else if (v < 0) neg = 1;
    }
    if (bad) atomicOr(flags, 1);
    if (neg) atomicOr(flags + 1, 1);
}

/* ARACNE's decisions applied where they were made: the pairs j < i whose
 * mask is set become 0 on both sides (one thread writes both cells of its
 * pair), the diagonal (-Inf since aracne_prep) mi's 0 again. */
__global__ void aracne_apply(double *D, size_t N, size_t n, const unsigned char *mask)
{
    const size_t len = n * n;
    for (size_t e = blockIdx.x * (size_t) blockDim.x + threadIdx.x; e < len;
         e += (size_t) gridDim.x * blockDim.x) {
        size_t j = e % n, i = e / n;
        if (i == j) D[i + i * N] = 0;
        else if (j < i && mask[j + i * N]) D[j + i * N] = D[i + j * N] = 0;
    }
}

/* CLR's moments, a thread per variable i, reading row i (= column i):
 * neighbouring threads read neighbouring words. */
__global__ void clr_moments(const double *D, size_t ld, size_t n, double *ms, double *vs)
{
    size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (i < n) gc_clr_moments(D + i, ld, n, ms + i, vs + i);
}

/* CLR's scores in place: each value read and replaced by its own thread. */
__global__ void clr_scores(double *D, size_t ld, size_t n, const double *ms, const double *vs)
{
    const size_t len = n * n;
    for (size_t e = blockIdx.x * (size_t) blockDim.x + threadIdx.x; e < len;
         e += (size_t) gridDim.x * blockDim.x) {
        size_t j = e % n, i = e / n;
        double *p = D + j + i * ld;
        *p = i == j ? 0 : gc_clr_pair(*p, ms[i], vs[i], ms[j], vs[j]);
    }
}

/* (s, a) from another lane if it is the better candidate: the larger
 * score, the smaller index on ties (the CPU's first index of the strict
 * maximum in index order); (0, MRNET_NONE) is no candidate. */
__device__ static inline void mrnet_best(double *s, unsigned long long *a)
{
#pragma unroll
    for (int off = 16; off > 0; off /= 2) {
        double os = __shfl_down_sync(0xffffffffu, *s, off);
        unsigned long long oa = __shfl_down_sync(0xffffffffu, *a, off);
        if (os > *s || (os == *s && oa < *a)) {
            *s = os;
            *a = oa;
        }
    }
}

/* MRNET's greedy selection for the targets i0 .. i0 + gridDim.x - 1, a
 * block each (the CPU's mrnet_target): candidate j belongs to thread
 * j % MRNET_THREADS, which alone reads and writes its sel, rs and res, so
 * the only exchange is the block's choice of each turn.  rs[j] sums the
 * selected variables' mi[j, .] in the order of selection, as the CPU's. */
__global__ void __launch_bounds__(MRNET_THREADS)
mrnet_targets(const double *D, size_t ld, size_t n, size_t i0, double *rs_all,
              unsigned char *sel_all, double *res_all)
{
    const size_t b = blockIdx.x, i = i0 + b;
    const unsigned t = threadIdx.x, lane = t % 32, warp = t / 32;
    double *rs = rs_all + b * n, *res = res_all + b * n;
    unsigned char *sel = sel_all + b * n;
    const double *ci = D + i * ld;
    __shared__ double wbest[MRNET_THREADS / 32];
    __shared__ unsigned long long wat[MRNET_THREADS / 32];
    __shared__ double best;
    __shared__ unsigned long long bat;
    for (size_t j = t; j < n; j += MRNET_THREADS) {
        rs[j] = 0;
        sel[j] = j == i;
        res[j] = 0;
    }
    for (size_t turn = 0; turn < n; turn++) {
        double mx = 0;
        unsigned long long at = MRNET_NONE;
        for (size_t j = t; j < n; j += MRNET_THREADS) {   /* ascending: the first kept */
            if (sel[j]) continue;
            double s = gc_mrnet_score(ci[j], rs[j], turn);
            if (s > mx) {
                mx = s;
                at = j;
            }
        }
        mrnet_best(&mx, &at);
        if (lane == 0) {
            wbest[warp] = mx;
            wat[warp] = at;
        }
        __syncthreads();
        if (warp == 0) {
            mx = lane < MRNET_THREADS / 32 ? wbest[lane] : 0;
            at = lane < MRNET_THREADS / 32 ? wat[lane] : MRNET_NONE;
            mrnet_best(&mx, &at);
            if (lane == 0) {
                best = mx;
                bat = at;
            }
        }
        __syncthreads();
        /* best and bat are rewritten only after the next turn's first
         * barrier, which every thread reaches after reading them here */
        const double bm = best;
        const size_t ba = (size_t) bat;
        if (!(bm > 0)) break;   /* the same for the whole block */
        const double *ca = D + ba * ld;
        for (size_t j = t; j < n; j += MRNET_THREADS) {
            if (j == ba) {
                res[j] = bm;
                sel[j] = 1;
            } else if (!sel[j]) {
                rs[j] = rs[j] + ca[j];
            }
        }
    }
}

extern "C" int gc_prune_cuda(const gc_prune_dev_job *job, gc_host *host, char *msg,
                             size_t msgcap)
{
    int status = GPUCOR_OK;
    const gc_opts *o = host->opts;
    const size_t n = job->n;
    const int aracne = job->algo == PRUNE_ARACNE;
    /* ARACNE's tiles want N a multiple of their side; CLR and MRNET no padding */
    const size_t N = aracne ? (n + BS - 1) / BS * BS : n;
    const int nt = o->nthreads > 0 ? o->nthreads : 1;
    /* the bar: the MI (from x; half the work, about), then the pruning */
    const int npass = job->prep ? 2 : 1;
    const char *step = aracne ? "ARACNE" : job->algo == PRUNE_CLR ? "CLR" : "MRNET";
    int dev = o->ndevices > 0 ? o->devices[0] : 0, prev = -1, maxmin = 1;
    int flags[2] = {0, 0};
    cudaStream_t st = NULL;
    stage sg;
    double *D = NULL, *ms = NULL, *vs = NULL, *rs = NULL, *res = NULL;
    unsigned char *dmask = NULL, *sel = NULL;
    int *dflags = NULL;
    size_t free_b = 0, total_b = 0, scratch = 0, batch = 0;
    double need = (double) N * N * sizeof(double);
    memset(&sg, 0, sizeof sg);

    if (n == 0) return GPUCOR_OK;
    if (aracne && !job->prep) {
        snprintf(msg, msgcap, "internal error: ARACNE of a host mi is gc_aracne_cuda's");
        return GPUCOR_ERR_INVALID;
    }
    if (aracne) need += (double) N * N;   /* the decisions */
    if (job->prep) need += (double) job->prep->bytes;
    if (cudaGetDevice(&prev) != cudaSuccess) prev = -1;
    CU(cudaSetDevice(dev));
    CU(cudaMemGetInfo(&free_b, &total_b));
    if (o->gpu_memory > 0 && (double) free_b > o->gpu_memory) free_b = (size_t) o->gpu_memory;
    /* what is left goes to the MI's panels and MRNET's targets (each needs
     * at least a column's worth), at most 1 GB: beyond, no faster */
    if (need + (double) n * 64 > (double) free_b) {
        snprintf(msg, msgcap,
                 "the %zu x %zu mutual information%s needs %.2f GB of GPU memory, %.2f GB "
                 "are free (use backend = \"cpu\")",
                 n, n, aracne ? " and its decisions" : "", need / 1e9, (double) free_b / 1e9);
        status = GPUCOR_ERR_ALLOC;
        goto cleanup;
    }
    scratch = (size_t) ((double) free_b - need);
    scratch -= scratch / 8;
    if (scratch > ((size_t) 1 << 30)) scratch = (size_t) 1 << 30;

    CU(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    DALLOC(D, N * N * sizeof(double), "the mutual information");
    if (job->prep) {
        gc_progress_pass(host, "mutual information", 1, 2, 0.5);
        status = gc_knnmi_cuda_fill(job->prep, D, N, st, scratch, host, 0, 1, msg, msgcap);
        if (status != GPUCOR_OK) goto cleanup;
        /* gpu_knnmi() gives NaN for a variable whose mean or sd overflows,
         * which the host path refuses; negative estimates decide ARACNE's
         * rule (prune.h) */
        DALLOC(dflags, 2 * sizeof(int), "flags");
        CU(cudaMemsetAsync(dflags, 0, 2 * sizeof(int), st));
        prune_scan<<<1024, 256, 0, st>>>(D, N, n, dflags);
        LAUNCHED("prune_scan");
        CU(cudaMemcpyAsync(flags, dflags, 2 * sizeof(int), cudaMemcpyDeviceToHost, st));
        CU(cudaStreamSynchronize(st));
        if (flags[0]) {
            snprintf(msg, msgcap, "the mutual information has NaN values (a row of 'x' whose "
                                  "mean or standard deviation is not finite)");
            status = GPUCOR_ERR_INVALID;
            goto cleanup;
        }
        maxmin = job->eta == 1 || !flags[1];
    } else {
        /* the host's mi up in chunks of columns, with Ctrl-C between them */
        size_t per = GC_COPY_CHUNK / ((n ? n : 1) * sizeof(double)) + 1;
        for (size_t j0 = 0; j0 < n; j0 += per) {
            if (gc_host_interrupted(host)) {
                status = GPUCOR_ERR_INTERRUPT;
                goto cleanup;
            }
            CU(cudaMemcpy2DAsync(D + j0 * N, N * sizeof(double), job->mi + j0 * n,
                                 n * sizeof(double), n * sizeof(double),
                                 n - j0 < per ? n - j0 : per, cudaMemcpyHostToDevice, st));
            CU(cudaStreamSynchronize(st));
        }
    }
    gc_progress_pass(host, step, npass, npass, 0);
    status = stage_open(&sg, n, o->gpu_panel, msg, msgcap);
    if (status != GPUCOR_OK) goto cleanup;

    if (aracne) {
        DALLOC(dmask, N * N, "the decisions");
        CU(cudaMemsetAsync(dmask, 0, N * N, st));
        if (n >= 3) {
            aracne_prep<<<1024, 256, 0, st>>>(D, N, n);
            LAUNCHED("aracne_prep");
            status = aracne_decide(D, N, n, maxmin, job->eps, job->eta, dmask, st, host, 0,
                                   1, msg, msgcap);
            if (status != GPUCOR_OK) goto cleanup;
        }
        aracne_apply<<<1024, 256, 0, st>>>(D, N, n, dmask);
        LAUNCHED("aracne_apply");
        status = download(&sg, D, N, n, n, job->out, st, nt, msg, msgcap);
    } else if (job->algo == PRUNE_CLR) {
        DALLOC(ms, n * sizeof(double), "the moments");
        DALLOC(vs, n * sizeof(double), "the moments");
        clr_moments<<<(unsigned) ((n + 127) / 128), 128, 0, st>>>(D, N, n, ms, vs);
        LAUNCHED("clr_moments");
        clr_scores<<<1024, 256, 0, st>>>(D, N, n, ms, vs);
        LAUNCHED("clr_scores");
        status = download(&sg, D, N, n, n, job->out, st, nt, msg, msgcap);
    } else {
        /* targets in batches (a block each): their scratch and scores, a
         * band of the result's columns, between interrupt checks */
        batch = o->gpu_panel ? o->gpu_panel : scratch / (n * (2 * sizeof(double) + 1));
        if (batch > n) batch = n;
        if (batch < 1) batch = 1;
        DALLOC(rs, batch * n * sizeof(double), "MRNET's redundancies");
        DALLOC(res, batch * n * sizeof(double), "MRNET's scores");
        DALLOC(sel, batch * n, "MRNET's selections");
        for (size_t b0 = 0; b0 < n; b0 += batch) {
            size_t cnt = n - b0 < batch ? n - b0 : batch;
            mrnet_targets<<<(unsigned) cnt, MRNET_THREADS, 0, st>>>(D, N, n, b0, rs, sel, res);
            LAUNCHED("mrnet_targets");
            status = download(&sg, res, n, n, cnt, job->out + b0 * n, st, nt, msg, msgcap);
            if (status != GPUCOR_OK) goto cleanup;
            if (host->interrupted && host->interrupted()) {
                status = GPUCOR_ERR_INTERRUPT;
                goto cleanup;
            }
            if (host->progress)
                host->progress(host->progress_ctx, (double) (b0 + cnt) / (double) n);
        }
        gc_mrnet_symmetrize(job->out, n, nt);
    }

cleanup:
    if (st) cudaStreamSynchronize(st);
    stage_close(&sg);
    cudaFree(D);
    cudaFree(dmask);
    cudaFree(dflags);
    cudaFree(ms);
    cudaFree(vs);
    cudaFree(rs);
    cudaFree(res);
    cudaFree(sel);
    if (st) cudaStreamDestroy(st);
    if (status == GPUCOR_ERR_CUDA) (void) cudaGetLastError();
    if (prev >= 0 && prev != dev) (void) cudaSetDevice(prev);
    return status;
}
