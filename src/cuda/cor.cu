/*
 * cor.cu -- correlation matrices and correlation distances on the GPU.
 *
 * The columns are uploaded once, ranked (Spearman) and standardized on the
 * device, then the result is produced slab by slab through the output
 * pipeline: a slab is the product Z^T Z[, j0:j1] from cuBLAS (DGEMM or
 * SGEMM), fixed up in place (NA and zero-sd flags, clamping to [-1, 1], the
 * unit diagonal) for a matrix, or packed into 'dist' order with 1 - r for a
 * distance.  Slab widths come from the device memory budget, so results
 * far larger than the GPU memory are produced in pieces.  Kendall and
 * pairwise complete observations take the uploaded columns to their own
 * paths (kendall.cu, pairwise.cu).
 */
#include <math.h>
#include <string.h>
#include "paths.cuh"

static cublasStatus_t gemm_tn(cublasHandle_t h, int m, int n, int k,
                              const double *a, int lda, const double *b,
                              int ldb, double *c, int ldc)
{
    const double one = 1.0, zero = 0.0;
    return cublasDgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &one, a, lda, b,
                       ldb, &zero, c, ldc);
}
static cublasStatus_t gemm_tn(cublasHandle_t h, int m, int n, int k,
                              const float *a, int lda, const float *b, int ldb,
                              float *c, int ldc)
{
    const float one = 1.0f, zero = 0.0f;
    return cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &one, a, lda, b,
                       ldb, &zero, c, ldc);
}

template <typename T>
__device__ static inline T fix(T r, unsigned f)
{
    if (f & (COL_HAS_NA | COL_ZERO_SD)) return na_value<T>();
    return r >= (T) 1 ? (T) 1 : (r <= (T) -1 ? (T) -1 : r);
}

/* A p x w matrix slab, in place: flags, clamp, unit diagonal. */
template <typename T>
__global__ static void fix_matrix(T *c, size_t p, size_t w, size_t j0,
                                  const unsigned char *fx,
                                  const unsigned char *fy, int symmetric)
{
    size_t k = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (k >= p * w) return;
    size_t i = k % p, j = j0 + k / p;
    T r = fix(c[k], fx[i] | fy[j]);
    if (symmetric && i == j) r = (T) 1;
    c[k] = r;
}

/* Pack rows i > j of the slab's columns j0 <= j < j1 (G is (v - j0) x w,
 * leading dimension v - j0) into 'dist' order starting at column j0. */
template <typename T>
__global__ static void pack_dist(const T *g, size_t v, size_t j0, size_t w,
                                 const unsigned char *f, int transform,
                                 T *out, int *sd0)
{
    size_t b = blockIdx.y;
    size_t j = j0 + b;
    size_t i = j + 1 + blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (b >= w || i >= v) return;
    size_t ld = v - j0;
    size_t off = dist_offset(v, j) - dist_offset(v, j0);
    unsigned fl = f[i] | f[j];
    T r = fix(g[(i - j0) + b * ld], fl);
    if (fl & COL_ZERO_SD) *sd0 = 1;
    /* NA is written as such: GPU arithmetic on NaN does not keep R's payload */
    out[off + (i - j - 1)] = (fl & (COL_HAS_NA | COL_ZERO_SD)) ? na_value<T>()
                             : transform ? (T) 1 - fabs(r) : (T) 1 - r;
}

/* Rows -> columns (dist_rows) and row subsets (complete modes). */
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
    cublasHandle_t h;
    const T *zx, *zy;
    const unsigned char *fx, *fy;
    size_t m, v, q, w, nslabs;
    int symmetric, dist, transform;
    T *g;          /* GEMM slab for dist */
    int *sd0;      /* device flag */
};

template <typename T>
static int produce(void *vctx, size_t s, void *dout, slab_info *info,
                   cudaStream_t st, char *msg, size_t msgcap)
{
    cor_ctx<T> *c = (cor_ctx<T> *) vctx;
    int status = GPUCOR_OK;
    size_t j0 = s * c->w, w = c->w;
    if (!c->dist) {
        /* Every slab is one GEMM of the same shape: the last one is shifted
         * left to end at column q and only its new columns are copied out.
         * cuBLAS then sums every entry in the same order, so entries (i, j)
         * and (j, i) from different slabs are bitwise equal, and the
         * matrix is exactly symmetric as stats' is. */
        size_t jc = j0 + w > c->q ? c->q - w : j0;
        CUBLAS(gemm_tn(c->h, (int) c->v, (int) w, (int) c->m, c->zx, (int) c->m,
                       c->zy + jc * c->m, (int) c->m, (T *) dout, (int) c->v));
        size_t len = c->v * w;
        fix_matrix<T><<<(unsigned) ((len + 255) / 256), 256, 0, st>>>(
            (T *) dout, c->v, w, jc, c->fx, c->fy, c->symmetric);
        LAUNCHED("fix_matrix");
        info->dev_offset = (j0 - jc) * c->v;
        info->count = len - info->dev_offset;
        info->host_offset = j0 * c->v;
    } else {
        size_t v = c->v;
        if (j0 + w > v - 1) w = v - 1 - j0;   /* the last column has no pair */
        size_t rows = v - j0;
        CUBLAS(gemm_tn(c->h, (int) rows, (int) w, (int) c->m, c->zx + j0 * c->m,
                       (int) c->m, c->zx + j0 * c->m, (int) c->m, c->g, (int) rows));
        dim3 grid((unsigned) ((rows + 255) / 256), (unsigned) w);
        pack_dist<T><<<grid, 256, 0, st>>>(c->g, v, j0, w, c->fx, c->transform,
                                          (T *) dout, c->sd0);
        LAUNCHED("pack_dist");
        dist_slab(v, j0, j0 + w, info);
    }
cleanup:
    return status;
}

template <typename T>
static int run(gpu_cor_problem *pb, char *msg, size_t msgcap)
{
    int status = GPUCOR_OK;
    gpucor_ctx *gc = NULL;
    cudaStream_t st = NULL;
    cublasHandle_t h = NULL;
    double *dx = NULL, *dy = NULL, *dtmp = NULL;
    int *drows = NULL, *dsd0 = NULL;
    T *zx = NULL, *zy = NULL, *g = NULL;
    unsigned char *fx = NULL, *fy = NULL;
    int sd0 = 0;
    int symmetric = pb->y == NULL;
    dev_problem d;
    /* m observations of v variables (x) and q (y) */
    size_t m, v, q;
    if (pb->dist_rows) { m = pb->p; v = pb->n; }
    else { m = pb->rows ? pb->nobs : pb->n; v = pb->p; }
    q = symmetric ? v : pb->q;

    status = gpucor_ctx_get(&gc, GPUCOR_SLAB_BYTES, msg, msgcap);
    if (status != GPUCOR_OK) return status;
    st = gc->st;
    h = gc->h;

    /* columns on the device, m x v (and m x q) */
    for (int side = 0; side < (symmetric ? 1 : 2); side++) {
        const double *src = side ? pb->y : pb->x;
        size_t nc = side ? q : (pb->dist_rows ? pb->p : v);
        double **dst = side ? &dy : &dx;
        size_t n = pb->n;
        DALLOC(*dst, m * (pb->dist_rows ? pb->n : nc) * sizeof(double), "input columns");
        if (pb->dist_rows) {
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
    d.dist = pb->out_kind == 1;
    d.transform = pb->dist_transform;
    d.method = pb->method;
    d.cosine = pb->cosine;
    d.pairwise = pb->pairwise;
    d.host = &pb->host; d.gc = gc;
    d.out = pb->out;
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
        int r_rule = pb->out_kind != 0 ? 0 : symmetric ? 1 : 2;
        status = gpucor_standardize<T>(dx, m, v, !pb->cosine, r_rule, zx, fx, st,
                                       msg, msgcap);
        if (status == GPUCOR_OK && !symmetric)
            status = gpucor_standardize<T>(dy, m, q, !pb->cosine, r_rule, zy, fy,
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
        c.h = h; c.zx = zx; c.zy = symmetric ? zx : zy;
        c.fx = fx; c.fy = symmetric ? fx : fy;
        c.m = m; c.v = v; c.q = q;
        c.symmetric = symmetric;
        c.dist = pb->out_kind == 1;
        c.transform = pb->dist_transform;
        c.g = NULL; c.sd0 = dsd0;
        /* slabs: the output slab and, for a dist, the GEMM slab beside it */
        slab_plan pl;
        size_t used = m * (v + (symmetric ? 0 : q)) * sizeof(T);
        status = gpucor_plan_slabs(&d, sizeof(T), c.dist ? v * sizeof(T) : 0, used,
                                   (size_t) -1, &pl, msg, msgcap);
        if (status != GPUCOR_OK) goto cleanup;
        c.w = pl.w;
        c.nslabs = pl.nslabs;
        if (c.dist && c.nslabs) DALLOC(g, v * c.w * sizeof(T), "product slab");
        c.g = g;
        size_t max_count = v * c.w;
        status = gpucor_pipeline(produce<T>, &c, c.nslabs, max_count,
                                 sizeof(T) == sizeof(float), 1.0, pb->out, &pb->host,
                                 gc, msg, msgcap);
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
    cudaFree(zx); cudaFree(zy); cudaFree(g); cudaFree(fx); cudaFree(fy);
    /* after a CUDA failure the cached context may be unusable: start over */
    if (status != GPUCOR_OK && status != GPUCOR_ERR_INTERRUPT) gpucor_ctx_drop();
    return status;
}

extern "C" int gpucor_cuda_cor(gpu_cor_problem *pb)
{
    pb->msg[0] = '\0';
    pb->sd0 = 0;
    if (pb->single) return run<float>(pb, pb->msg, sizeof pb->msg);
    return run<double>(pb, pb->msg, sizeof pb->msg);
}
