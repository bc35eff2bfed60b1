/*
 * cor.cu -- correlation matrices and correlation distances on the GPU.
 *
 * The columns are uploaded once, ranked (Spearman) and standardized on the
 * device, then the result is produced panel by panel through the sink
 * (run.cuh): a panel is the product Z^T Z[, j0:j1] from cuBLAS (DGEMM or
 * SGEMM) -- all rows for a matrix (and a distance's file), the rows i >= j0
 * for a 'dist' in memory -- fixed
 * up in place with stats' rules (NA and zero-sd flags, the clamp to
 * [-1, 1], the unit diagonal of a matrix).  The sink packs a 'dist' with
 * 1 - r.  Panel widths come from the device memory budget, so results far
 * larger than the GPU memory are produced in pieces.  Kendall and
 * pairwise complete observations take the uploaded columns to their own
 * paths (kendall.cu, pairwise.cu).
 */
#include <math.h>
#include <string.h>
#include <stdlib.h>
#include "paths.cuh"
#include "worker.cuh"
#include "gemm.cuh"

/* The engine's own context of a pass, made from the problem (and each
 * worker's copy).  rows_are_items: the ROWS of x are the variables
 * (gpu_dist's correlation distances); the engine transposes x on the
 * device.  dist_rules: stats' rules of 1 - cor(t(x)), pairs i > j only. */
typedef struct {
    const double *x; size_t n, p;
    const double *y; size_t q;               /* NULL: symmetric */
    const int *rows; size_t nobs;            /* NULL: every row */
    int method;                              /* COR_PEARSON / _SPEARMAN / _KENDALL */
    int pairwise;                            /* use = "pairwise.complete.obs" */
    int cosine;                              /* uncentred */
    int raw;                                 /* prepared columns as they are
                                                (PREP_RAW) */
    int single;                              /* float arithmetic */
    int rows_are_items;
    int dist_rules;
    int sd0;                                 /* out: zero-sd pair met (see cpu) */
    unsigned char *flags_out;                /* out (optional, p then q): column flags */
} gpu_cor_args;

template <typename T>
__device__ static inline T fix(T r, unsigned f)
{
    if (f & (COL_HAS_NA | COL_ZERO_SD)) return na_value<T>();
    return r >= (T) 1 ? (T) 1 : (r <= (T) -1 ? (T) -1 : r);
}

/* A panel in place (rows i0 .. i0 + rows - 1 of columns j0 .. j0 + w - 1,
 * leading dimension ld): flags, clamp, the unit diagonal of a matrix; sd0
 * (a distance's per-pair warning) for the pairs i > j. */
template <typename T>
__global__ static void fix_panel(T *c, size_t i0, size_t rows, size_t ld,
                                 size_t j0, size_t w, const unsigned char *fx,
                                 const unsigned char *fy, int unit_diag,
                                 int *sd0)
{
    size_t k = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (k >= rows * w) return;
    size_t a = k % rows, b = k / rows, i = i0 + a, j = j0 + b;
    T *e = c + a + b * ld;
    unsigned f = fx[i] | fy[j];
    if (sd0 && i > j && (f & COL_ZERO_SD)) *sd0 = 1;
    T r = fix(*e, f);
    if (unit_diag && i == j) r = (T) 1;
    *e = r;
}

/* Rows -> columns (rows_are_items) and row subsets (complete modes). */
__global__ static void gather_rows(const double *x, size_t n, size_t p,
                                   const int *rows, size_t m, double *out)
{
    size_t k = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (k >= m * p) return;
    size_t r = k % m, c = k / m;
    out[k] = x[(size_t) rows[r] + c * n];
}

template <typename T>
struct cor_ctx {
    const dev_problem *d;
    cublasHandle_t h;
    const T *zx, *zy;
    const unsigned char *fx, *fy;
    size_t m, w;
    T *buf;        /* the panel: v x w */
    int *sd0;      /* device flag */
};

template <typename T>
static int produce(void *vctx, size_t j0, size_t j1, gc_tile *t,
                   cudaStream_t st, char *msg, size_t msgcap)
{
    cor_ctx<T> *c = (cor_ctx<T> *) vctx;
    const dev_problem *d = c->d;
    int status = GPUCOR_OK;
    size_t v = d->v, m = c->m;
    if (!d->tri) {
        /* Every panel is one GEMM of the same shape: the last one is shifted
         * left to end at column q and only its new columns are kept.
         * cuBLAS then sums every entry in the same order, so entries (i, j)
         * and (j, i) from different panels are bitwise equal, and the
         * matrix is exactly symmetric as stats' is.  (A distance's whole
         * columns, for a file, flag its zero-sd pairs.) */
        size_t w = c->w, jc = j0 + w > d->q ? d->q - w : j0;
        CUBLAS(gemm_tn(c->h, (int) v, (int) w, (int) m, c->zx, (int) m,
                       c->zy + jc * m, (int) m, c->buf, (int) v));
        size_t len = v * w;
        fix_panel<T><<<(unsigned) ((len + 255) / 256), 256, 0, st>>>(
            c->buf, 0, v, v, jc, w, c->fx, c->fy, d->symmetric, d->dist ? c->sd0 : NULL);
        LAUNCHED("fix_panel");
        gpucor_panel_tile(d, j0, j1, c->buf + (j0 - jc) * v, sizeof(T) == sizeof(float), t);
    } else {
        size_t w = j1 - j0, rows = v - j0;
        CUBLAS(gemm_tn(c->h, (int) rows, (int) w, (int) m, c->zx + j0 * m,
                       (int) m, c->zx + j0 * m, (int) m, c->buf, (int) rows));
        size_t len = rows * w;
        fix_panel<T><<<(unsigned) ((len + 255) / 256), 256, 0, st>>>(
            c->buf, j0, rows, rows, j0, w, c->fx, c->fx, 0, c->sd0);
        LAUNCHED("fix_panel");
        gpucor_panel_tile(d, j0, j1, c->buf, sizeof(T) == sizeof(float), t);
    }
cleanup:
    return status;
}

template <typename T>
static int run(gpu_cor_args *pb, const gc_sink *sink, gc_host *host,
               char *msg, size_t msgcap)
{
    int status = GPUCOR_OK;
    gpucor_ctx *gc = NULL;
    cudaStream_t st = NULL;
    cublasHandle_t h = NULL;
    double *dx = NULL, *dy = NULL, *dtmp = NULL;
    int *drows = NULL, *dsd0 = NULL;
    T *zx = NULL, *zy = NULL, *buf = NULL;
    unsigned char *fx = NULL, *fy = NULL;
    int sd0 = 0;
    int symmetric = pb->y == NULL;
    dev_problem d;
    /* m observations of v variables (x) and q (y) */
    size_t m, v, q;
    if (pb->rows_are_items) { m = pb->p; v = pb->n; }
    else { m = pb->rows ? pb->nobs : pb->n; v = pb->p; }
    q = symmetric ? v : pb->q;

    status = gpucor_ctx_get(&gc, GPUCOR_PANEL_BYTES, msg, msgcap);
    if (status != GPUCOR_OK) return status;
    st = gc->st;
    h = gc->h;

    /* columns on the device, m x v (and m x q) */
    for (int side = 0; side < (symmetric ? 1 : 2); side++) {
        const double *src = side ? pb->y : pb->x;
        size_t nc = side ? q : (pb->rows_are_items ? pb->p : v);
        double **dst = side ? &dy : &dx;
        size_t n = pb->n;
        DALLOC(*dst, m * (pb->rows_are_items ? pb->n : nc) * sizeof(double), "input columns");
        if (pb->rows_are_items) {
            /* upload the n x p matrix, transpose on the device to p x n */
            DALLOC(dtmp, n * pb->p * sizeof(double), "input");
            CU(cudaMemcpyAsync(dtmp, src, n * pb->p * sizeof(double),
                               cudaMemcpyHostToDevice, st));
            const double one = 1.0, zero = 0.0;
            CUBLAS(cublasDgeam(h, CUBLAS_OP_T, CUBLAS_OP_N, (int) pb->p, (int) n,
                               &one, dtmp, (int) n, &zero, dtmp, (int) pb->p,
                               *dst, (int) pb->p));
        } else if (pb->rows) {
            DALLOC(dtmp, n * nc * sizeof(double), "input");
            if (!drows) {
                DALLOC(drows, m * sizeof(int), "row index");
                CU(cudaMemcpyAsync(drows, pb->rows, m * sizeof(int),
                                   cudaMemcpyHostToDevice, st));
            }
            CU(cudaMemcpyAsync(dtmp, src, n * nc * sizeof(double),
                               cudaMemcpyHostToDevice, st));
            size_t len = m * nc;
            if (len) {
                gather_rows<<<(unsigned) ((len + 255) / 256), 256, 0, st>>>(
                    dtmp, n, nc, drows, m, *dst);
                LAUNCHED("gather_rows");
            }
        } else {
            CU(cudaMemcpyAsync(*dst, src, n * nc * sizeof(double),
                               cudaMemcpyHostToDevice, st));
        }
        CU(cudaStreamSynchronize(st));
        cudaFree(dtmp);
        dtmp = NULL;
    }

    /* the columns on the device, as every path sees them */
    memset(&d, 0, sizeof d);
    d.x = dx; d.y = symmetric ? dx : dy;
    d.m = m; d.v = v; d.q = q;
    d.symmetric = symmetric;
    d.dist = pb->dist_rules;
    d.tri = pb->dist_rules && !(gc_sink_needs(sink) & GC_SINK_BOTH_HALVES);
    d.method = pb->method;
    d.cosine = pb->cosine;
    d.pairwise = pb->pairwise;
    d.host = host; d.gc = gc;
    d.sink = sink;
    d.flags_out = pb->flags_out;
    if ((pb->method == COR_KENDALL && !pb->cosine) || pb->pairwise) {
        /* Kendall (any use) and pairwise complete observations */
        status = d.method == COR_KENDALL && !d.cosine ? gpucor_kendall<T>(&d, msg, msgcap)
                                                      : gpucor_pairwise<T>(&d, msg, msgcap);
        pb->sd0 = d.sd0;
        goto cleanup;
    }

    /* ranks and standardized columns */
    DALLOC(fx, v, "flags");
    DALLOC(zx, m * v * sizeof(T), "standardized columns");
    if (!symmetric) {
        DALLOC(fy, q, "flags");
        DALLOC(zy, m * q * sizeof(T), "standardized columns");
    }
    if (pb->method == COR_SPEARMAN && !pb->cosine) {
        status = gpucor_rank_columns(dx, m, v, st, msg, msgcap);
        if (status == GPUCOR_OK && !symmetric)
            status = gpucor_rank_columns(dy, m, q, st, msg, msgcap);
        if (status != GPUCOR_OK) goto cleanup;
    }
    {
        /* stats' cor(), not a distance: its zero-sd rule for spreads
         * below the double range (see standardize.cu) */
        int r_rule = pb->dist_rules ? 0 : symmetric ? 1 : 2;
        int center = pb->raw ? STANDARDIZE_RAW : !pb->cosine;
        status = gpucor_standardize<T>(dx, m, v, center, r_rule, zx, fx, st,
                                       msg, msgcap);
        if (status == GPUCOR_OK && !symmetric)
            status = gpucor_standardize<T>(dy, m, q, center, r_rule, zy, fy,
                                           st, msg, msgcap);
    }
    if (status != GPUCOR_OK) goto cleanup;
    CU(cudaStreamSynchronize(st));
    cudaFree(dx); dx = NULL;
    cudaFree(dy); dy = NULL;
    DALLOC(dsd0, sizeof(int), "flag");
    CU(cudaMemsetAsync(dsd0, 0, sizeof(int), st));

    {
        cor_ctx<T> c;
        c.d = &d;
        c.h = h; c.zx = zx; c.zy = symmetric ? zx : zy;
        c.fx = fx; c.fy = symmetric ? fx : fy;
        c.m = m;
        c.sd0 = dsd0;
        gc_plan pl;
        size_t used = m * (v + (symmetric ? 0 : q)) * sizeof(T);
        status = gpucor_plan_panels(&d, sizeof(T), 0, used, (size_t) -1, 0, &pl, msg,
                                    msgcap);
        if (status != GPUCOR_OK) goto cleanup;
        c.w = pl.w;
        if (pl.npanels) DALLOC(buf, v * c.w * sizeof(T), "product panel");
        c.buf = buf;
        status = gc_cuda_run(produce<T>, &c, &pl, sizeof(T) == sizeof(float), sink,
                             host, gc, msg, msgcap);
        if (status != GPUCOR_OK) goto cleanup;
        CU(cudaMemcpy(&sd0, dsd0, sizeof(int), cudaMemcpyDeviceToHost));
        pb->sd0 = sd0;
        if (pb->flags_out) {
            CU(cudaMemcpy(pb->flags_out, fx, v, cudaMemcpyDeviceToHost));
            if (!symmetric)
                CU(cudaMemcpy(pb->flags_out + v, fy, q, cudaMemcpyDeviceToHost));
        }
    }

cleanup:
    if (st) cudaStreamSynchronize(st);
    cudaFree(dx); cudaFree(dy); cudaFree(dtmp); cudaFree(drows); cudaFree(dsd0);
    cudaFree(zx); cudaFree(zy); cudaFree(buf); cudaFree(fx); cudaFree(fy);
    /* after a CUDA failure the cached context may be unusable: start over */
    if (status != GPUCOR_OK && status != GPUCOR_ERR_INTERRUPT) gpucor_ctx_drop();
    return status;
}

static int cor_job(void *arg, const gc_sink *sink, gc_host *host, char *msg,
                   size_t msgcap)
{
    gpu_cor_args *a = (gpu_cor_args *) arg;
    a->sd0 = 0;
    if (a->single) return run<float>(a, sink, host, msg, msgcap);
    return run<double>(a, sink, host, msg, msgcap);
}

static int cor_workers(gpu_cor_args *a, const gc_sink *sink, gc_host *host, char *msg,
                       size_t msgcap)
{
    gpu_cor_args wa[GC_MAX_WORKERS];
    gc_worker_result res[GC_MAX_WORKERS];
    int n = 0;
    msg[0] = '\0';
    a->sd0 = 0;
    int status = gc_cuda_worker_count(host, &n, msg, msgcap);
    if (status != GPUCOR_OK) return status;
    /* each worker reports its column flags into its own part */
    size_t nf = a->flags_out ? (a->rows_are_items ? a->n : a->p) + a->q : 0;
    unsigned char *flags = nf ? (unsigned char *) malloc(nf * n) : NULL;
    if (nf && !flags) {
        snprintf(msg, msgcap, "out of host memory");
        return GPUCOR_ERR_ALLOC;
    }
    for (int k = 0; k < n; k++) {
        wa[k] = *a;
        wa[k].flags_out = flags ? flags + k * nf : NULL;
    }
    status = gc_cuda_workers(cor_job, wa, sizeof *wa, n, sink, host, res, msg,
                             msgcap);
    if (status == GPUCOR_OK) {
        int from = -1;
        for (int k = 0; k < n; k++)
            if (res[k].ok) {
                a->sd0 |= wa[k].sd0;
                if (from < 0 || (res[k].panels && !res[from].panels)) from = k;
            }
        if (flags && from >= 0) memcpy(a->flags_out, flags + from * nf, nf);
    }
    free(flags);
    return status;
}

extern "C" int gpucor_cuda_cor(const gc_problem *pb, const gc_sink *sink, gc_host *host,
                               gc_pass *out, char *msg, size_t msgcap)
{
    const gc_measure *m = pb->measure;
    gpu_cor_args a;
    memset(&a, 0, sizeof a);
    a.x = pb->x; a.n = pb->n; a.p = pb->p;
    a.y = pb->y; a.q = pb->q;
    a.rows = pb->rows; a.nobs = pb->nobs;
    a.method = m->cor;
    a.raw = (m->prep & PREP_RAW) != 0;
    a.cosine = a.raw || (m->prep & PREP_UNCENTRED) != 0;
    a.pairwise = pb->use == USE_PAIRWISE;
    a.single = host->opts->single;
    a.rows_are_items = pb->between_rows;
    a.dist_rules = pb->between_rows;
    /* stats' warning: from the pairs (pairwise, a distance's pairs i > j),
     * else by its rule from the column flags */
    if (!a.dist_rules) {
        a.flags_out = (unsigned char *) malloc(pb->p + pb->q);
        if (!a.flags_out) {
            snprintf(msg, msgcap, "out of host memory");
            return GPUCOR_ERR_ALLOC;
        }
    }
    int status = cor_workers(&a, sink, host, msg, msgcap);
    if (status == GPUCOR_OK)
        out->sd0 = a.pairwise || a.dist_rules
                       ? a.sd0 : gc_sd0_rule(a.flags_out, pb->p,
                                             pb->y ? a.flags_out + pb->p : NULL, pb->q);
    out->threads_used = 0;
    free(a.flags_out);
    return status;
}
