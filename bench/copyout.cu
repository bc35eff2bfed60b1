/*
 * bench/copyout.cu -- how fast can a dense result of B bytes leave the GPU
 * and land in FRESH host memory (as an R result does)?  Standalone, no R:
 *   nvcc -O2 -arch=sm_90 -Xcompiler -fopenmp,-mavx2 -o /tmp/copyout bench/copyout.cu
 *   /tmp/copyout GB [threads] [panel MiB] [chunk KiB ...]
 * Prints one line per strategy (seconds, GB/s of result):
 *   write     ceiling: threads write fresh memory (huge pages advised)
 *   d2h       ceiling: device-to-host into two pinned 64 MiB buffers
 *   staged    D2H into pinned buffer s%2 while threads copy panel s-1 out
 *   staged-nt the same with non-temporal stores in the copy
 *   staged-sl the same, each thread copying one contiguous slice of a panel
 *   staged-sym a symmetric n x n result: the lower triangle's panels cross,
 *             threads write each panel and its transpose
 *   reg-whole threads fault the result in, cudaHostRegister it whole, D2H
 *             straight into it, unregister
 *   reg-chunk per 64 MiB panel: threads fault panel s+1 in and register it
 *             while the DMA of panel s runs; D2H straight into R memory
 *   chunked-C each panel's D2H issued as chunks of C KiB, an event each;
 *             threads copy a chunk out as soon as it lands (while the rest
 *             of the panel, and the next panel, still cross), so that the
 *             copy may read the staged bytes while they are still in cache
 *   ring-C    each thread its own stream and two pinned slots of C KiB:
 *             it copies chunk i out while chunk i+1 crosses (small staging
 *             that stays in cache; chunks in order of the result)
 * The chunk sizes (KiB) are the 4th and later arguments (default 1024).
 * Every strategy gets a fresh mmap'd result (as glibc gives R for large
 * vectors), advised MADV_HUGEPAGE.
 */
#include <cuda_runtime.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <stdint.h>
#include <immintrin.h>

static size_t PANEL = (size_t) 64 << 20;
#define HUGE ((size_t) 2 << 20)
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static char *fresh(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) { perror("mmap"); exit(1); }
    madvise(p, bytes, MADV_HUGEPAGE);
    return (char *) p;
}

static void copy_nt(char *dst, const char *src, size_t n)
{
    /* dst, src 32-byte aligned here */
    size_t k = 0;
    for (; k + 32 <= n; k += 32)
        _mm256_stream_pd((double *) (dst + k), _mm256_load_pd((const double *) (src + k)));
    memcpy(dst + k, src + k, n - k);
}

/* threads copy [0, n) of src into dst in 2 MiB chunks */
static void par_copy(char *dst, const char *src, size_t n, int nt, int nt_store)
{
    size_t nch = (n + HUGE - 1) / HUGE;
#pragma omp parallel for num_threads(nt) schedule(static)
    for (size_t c = 0; c < nch; c++) {
        size_t lo = c * HUGE, hi = lo + HUGE < n ? lo + HUGE : n;
        if (nt_store) copy_nt(dst + lo, src + lo, hi - lo);
        else memcpy(dst + lo, src + lo, hi - lo);
    }
    if (nt_store) _mm_sfence();
}

/* each thread one contiguous slice of [0, n) (4 KiB aligned) */
static void par_slice(char *dst, const char *src, size_t n, int nt)
{
#pragma omp parallel num_threads(nt)
    {
        int t = omp_get_thread_num(), m = omp_get_num_threads();
        size_t per = (n / m + 4095) / 4096 * 4096;
        size_t lo = t * per, hi = lo + per < n ? lo + per : n;
        if (lo < hi) memcpy(dst + lo, src + lo, hi - lo);
    }
}

static void par_touch(char *dst, size_t n, int nt)
{
    size_t nch = (n + HUGE - 1) / HUGE;
#pragma omp parallel for num_threads(nt) schedule(static)
    for (size_t c = 0; c < nch; c++) {
        size_t lo = c * HUGE, hi = lo + HUGE < n ? lo + HUGE : n;
        for (size_t k = lo; k < hi; k += 4096) dst[k] = 0;
    }
}

static void report(const char *what, double s, size_t bytes, const char *extra)
{
    printf("%-10s %8.3f s  %6.1f GB/s  %s\n", what, s, bytes / s / 1e9, extra);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    double gb = argc > 1 ? atof(argv[1]) : 3.2;
    int nt = argc > 2 ? atoi(argv[2]) : omp_get_max_threads();
    if (argc > 3) PANEL = (size_t) atoi(argv[3]) << 20;
    size_t bytes = (size_t) (gb * 1e9) / PANEL * PANEL;
    size_t np = bytes / PANEL;
    char *dev, *pin[2];
    cudaStream_t st;
    cudaEvent_t ev[2];
    char extra[200];
    CK(cudaMalloc(&dev, PANEL));
    CK(cudaMemset(dev, 1, PANEL));
    for (int b = 0; b < 2; b++) {
        CK(cudaHostAlloc(&pin[b], PANEL, cudaHostAllocDefault));
        CK(cudaEventCreateWithFlags(&ev[b], cudaEventDisableTiming));
    }
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    printf("result %.2f GB in %zu panels of %zu MiB, %d threads\n", bytes / 1e9, np, PANEL >> 20, nt);

    { /* write ceiling */
        char *r = fresh(bytes);
        double t = now();
#pragma omp parallel for num_threads(nt) schedule(static)
        for (size_t c = 0; c < bytes / HUGE; c++) memset(r + c * HUGE, 1, HUGE);
        report("write", now() - t, bytes, "");
        t = now();
#pragma omp parallel for num_threads(nt) schedule(static)
        for (size_t c = 0; c < bytes / HUGE; c++) memset(r + c * HUGE, 2, HUGE);
        report("rewrite", now() - t, bytes, "");
        munmap(r, bytes);
    }
    { /* d2h ceiling */
        double t = now();
        for (size_t s = 0; s < np; s++)
            CK(cudaMemcpyAsync(pin[s % 2], dev, PANEL, cudaMemcpyDeviceToHost, st));
        CK(cudaStreamSynchronize(st));
        report("d2h", now() - t, bytes, "");
    }
    for (int nts = 0; nts < 3; nts++) { /* staged */
        char *r = fresh(bytes);
        double t = now(), wait = 0, cp = 0;
        for (size_t s = 0; s <= np; s++) {
            int b = s % 2;
            if (s < np) {
                CK(cudaMemcpyAsync(pin[b], dev, PANEL, cudaMemcpyDeviceToHost, st));
                CK(cudaEventRecord(ev[b], st));
            }
            if (s > 0) {
                double t1 = now();
                CK(cudaEventSynchronize(ev[1 - b]));
                double t2 = now();
                if (nts == 2) par_slice(r + (s - 1) * PANEL, pin[1 - b], PANEL, nt);
                else par_copy(r + (s - 1) * PANEL, pin[1 - b], PANEL, nt, nts);
                wait += t2 - t1; cp += now() - t2;
            }
        }
        snprintf(extra, sizeof extra, "(wait %.3f, copy %.3f)", wait, cp);
        report(nts == 2 ? "staged-sl" : nts ? "staged-nt" : "staged", now() - t, bytes, extra);
        if (r[bytes - 1] != 1) printf("  WRONG\n");
        munmap(r, bytes);
    }
    { /* staged, symmetric: only the rows i >= j0 of each panel cross
       * (the lower triangle), and the threads write the panel and its
       * transpose (the rows j0 .. j1 - 1 of the columns right of it) */
        size_t n = 1;
        while ((n + 1) * (n + 1) * 8 <= bytes) n++;
        size_t w = PANEL / (n * 8);
        size_t nb = (n + w - 1) / w;
        char *r = fresh(n * n * 8);
        double *R = (double *) r;
        double t = now(), wait = 0, cp = 0, moved = 0;
        for (size_t s = 0; s <= nb; s++) {
            int b = s % 2;
            if (s < nb) {
                size_t j0 = s * w, j1 = j0 + w < n ? j0 + w : n;
                size_t len = (n - j0) * (j1 - j0) * 8;
                moved += len;
                CK(cudaMemcpyAsync(pin[b], dev, len, cudaMemcpyDeviceToHost, st));
                CK(cudaEventRecord(ev[b], st));
            }
            if (s > 0) {
                size_t j0 = (s - 1) * w, j1 = j0 + w < n ? j0 + w : n, pw = j1 - j0;
                size_t rows = n - j0;
                const double *P = (const double *) pin[1 - b];
                double t1 = now();
                CK(cudaEventSynchronize(ev[1 - b]));
                double t2 = now();
                /* blocks of 64 panel rows: the columns' part, then the
                 * transposed rows (each result column c gets pw values) */
#pragma omp parallel for num_threads(nt) schedule(static)
                for (size_t rb = 0; rb < rows; rb += 64) {
                    size_t re = rb + 64 < rows ? rb + 64 : rows;
                    for (size_t c = 0; c < pw; c++)
                        memcpy(R + (j0 + rb) + (j0 + c) * n, P + rb + c * rows, (re - rb) * 8);
                    for (size_t i = rb; i < re; i++) {
                        if (i < pw) continue;   /* the diagonal block: done above */
                        double *dst = R + j0 + (j0 + i) * n;
                        for (size_t c = 0; c < pw; c++) dst[c] = P[i + c * rows];
                    }
                }
                wait += t2 - t1; cp += now() - t2;
            }
        }
        snprintf(extra, sizeof extra, "(n %zu, w %zu, moved %.2f GB, wait %.3f, copy %.3f)",
                 n, w, moved / 1e9, wait, cp);
        report("staged-sym", now() - t, n * n * 8, extra);
        munmap(r, n * n * 8);
    }
    for (int touch = 1; touch >= 0; touch--) {
        /* registered whole: threads fault the pages in first, or the
         * driver does while registering */
        char *r = fresh(bytes);
        double t = now();
        if (touch) par_touch(r, bytes, nt);
        double t1 = now();
        CK(cudaHostRegister(r, bytes, cudaHostRegisterDefault));
        double t2 = now();
        for (size_t s = 0; s < np; s++)
            CK(cudaMemcpyAsync(r + s * PANEL, dev, PANEL, cudaMemcpyDeviceToHost, st));
        CK(cudaStreamSynchronize(st));
        double t3 = now();
        CK(cudaHostUnregister(r));
        double t4 = now();
        snprintf(extra, sizeof extra, "(touch %.3f, register %.3f, d2h %.3f, unregister %.3f)",
                 t1 - t, t2 - t1, t3 - t2, t4 - t3);
        report(touch ? "reg-whole" : "reg-nofault", t4 - t, bytes, extra);
        if (r[bytes - 1] != 1) printf("  WRONG\n");
        munmap(r, bytes);
    }
    { /* registered per panel, pipelined */
        char *r = fresh(bytes);
        double t = now(), tt = 0, tr = 0;
        for (size_t s = 0; s < np; s++) {
            double a = now();
            par_touch(r + s * PANEL, PANEL, nt);
            double b2 = now();
            CK(cudaHostRegister(r + s * PANEL, PANEL, cudaHostRegisterDefault));
            tt += b2 - a; tr += now() - b2;
            CK(cudaMemcpyAsync(r + s * PANEL, dev, PANEL, cudaMemcpyDeviceToHost, st));
        }
        CK(cudaStreamSynchronize(st));
        double t3 = now();
        for (size_t s = 0; s < np; s++) CK(cudaHostUnregister(r + s * PANEL));
        double t4 = now();
        snprintf(extra, sizeof extra, "(touch %.3f, register %.3f, tail %.3f, unregister %.3f)",
                 tt, tr, t3 - t - tt - tr, t4 - t3);
        report("reg-chunk", t4 - t, bytes, extra);
        if (r[bytes - 1] != 1) printf("  WRONG\n");
        munmap(r, bytes);
    }
    for (int a = 4; a < (argc > 4 ? argc : 5); a++) {
        size_t C = (size_t) (argc > 4 ? atoi(argv[a]) : 1024) << 10;
        if (!C || PANEL % C) continue;
        size_t nc = PANEL / C;
        cudaEvent_t *cev = (cudaEvent_t *) malloc(2 * nc * sizeof *cev);
        for (size_t k = 0; k < 2 * nc; k++)
            CK(cudaEventCreateWithFlags(&cev[k], cudaEventDisableTiming));
        { /* chunked: panel s+1's chunks are enqueued before panel s is copied */
            char *r = fresh(bytes);
            double t = now();
            for (size_t s = 0; s <= np; s++) {
                int b = s % 2;
                if (s < np)
                    for (size_t k = 0; k < nc; k++) {
                        CK(cudaMemcpyAsync(pin[b] + k * C, dev + k * C, C,
                                           cudaMemcpyDeviceToHost, st));
                        CK(cudaEventRecord(cev[b * nc + k], st));
                    }
                if (s > 0) {
                    char *dst = r + (s - 1) * PANEL;
                    const char *src = pin[1 - b];
                    cudaEvent_t *e = cev + (1 - b) * nc;
#pragma omp parallel for num_threads(nt) schedule(static, 1)
                    for (size_t k = 0; k < nc; k++) {
                        CK(cudaEventSynchronize(e[k]));
                        memcpy(dst + k * C, src + k * C, C);
                    }
                }
            }
            snprintf(extra, sizeof extra, "(chunk %zu KiB)", C >> 10);
            report("chunked", now() - t, bytes, extra);
            if (r[bytes - 1] != 1) printf("  WRONG\n");
            munmap(r, bytes);
        }
        { /* ring: per thread a stream and two slots */
            char *r = fresh(bytes);
            size_t nchunk = bytes / C;
            char **slot = (char **) malloc(2 * nt * sizeof *slot);
            cudaStream_t *ts = (cudaStream_t *) malloc(nt * sizeof *ts);
            cudaEvent_t *tev = (cudaEvent_t *) malloc(2 * nt * sizeof *tev);
            for (int i = 0; i < nt; i++) {
                CK(cudaStreamCreateWithFlags(&ts[i], cudaStreamNonBlocking));
                for (int b = 0; b < 2; b++) {
                    CK(cudaHostAlloc(&slot[2 * i + b], C, cudaHostAllocDefault));
                    CK(cudaEventCreateWithFlags(&tev[2 * i + b], cudaEventDisableTiming));
                }
            }
            double t = now();
#pragma omp parallel num_threads(nt)
            {
                int i = omp_get_thread_num(), m = omp_get_num_threads();
                size_t prev = (size_t) -1;
                int b = 0;
                for (size_t c = i;; c += m) {
                    if (c < nchunk) {
                        CK(cudaMemcpyAsync(slot[2 * i + b], dev + (c * C) % PANEL, C,
                                           cudaMemcpyDeviceToHost, ts[i]));
                        CK(cudaEventRecord(tev[2 * i + b], ts[i]));
                    }
                    if (prev != (size_t) -1) {
                        CK(cudaEventSynchronize(tev[2 * i + 1 - b]));
                        memcpy(r + prev * C, slot[2 * i + 1 - b], C);
                    }
                    if (c >= nchunk) break;
                    prev = c;
                    b = 1 - b;
                }
            }
            snprintf(extra, sizeof extra, "(chunk %zu KiB, %d streams)", C >> 10, nt);
            report("ring", now() - t, bytes, extra);
            if (r[bytes - 1] != 1) printf("  WRONG\n");
            munmap(r, bytes);
            for (int i = 0; i < nt; i++) {
                CK(cudaStreamDestroy(ts[i]));
                for (int b = 0; b < 2; b++) {
                    CK(cudaFreeHost(slot[2 * i + b]));
                    CK(cudaEventDestroy(tev[2 * i + b]));
                }
            }
            free(slot); free(ts); free(tev);
        }
        for (size_t k = 0; k < 2 * nc; k++) CK(cudaEventDestroy(cev[k]));
        free(cev);
    }
    return 0;
}
