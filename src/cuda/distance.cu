/*
 * distance.cu -- stats::dist()'s six metrics on the GPU: one generic tiled
 * pairwise kernel, and a small op per metric (init / add / finish).
 *
 * A block computes a 64 x 64 tile of pairs (rows i of the slab's row range
 * against its columns j), staging 16 coordinates of both row sets in shared
 * memory at a time; each of the 256 threads accumulates 4 x 4 pairs in
 * registers.  x stays in R's column-major layout, so the 64 rows of one
 * coordinate are contiguous and the tile loads are coalesced.  Pairs with
 * i > j are written straight into 'dist' order (no n x n buffer).
 *
 * Two instantiations per metric: NA = false for data that is all finite
 * (padding coordinates are 0, which adds nothing), and NA = true with R's
 * rule inside the kernel: a coordinate where either value is NA/NaN or the
 * difference is NaN is skipped, the sum is rescaled by nc / count, NA when
 * nothing is left (padding is NaN there, so it is skipped too).
 * Differences are taken directly, never |x|^2 + |y|^2 - 2 x.y, so
 * near-duplicate rows keep every digit.
 *
 * Single precision: the data is scaled by a power of two so that sums of
 * differences cannot overflow, the power sums (euclidean, minkowski) are
 * kept relative to each pair's largest difference, and the scale is undone
 * in double (by the host copy-out, or in the kernel where the output is
 * double), so no distance that double can hold becomes Inf or 0 for float's
 * sake.  Data spanning more than float's range (after that scaling, a
 * nonzero |value| below FLT_MIN) is computed in double instead.
 */
#include <math.h>
#include <float.h>
#include <string.h>
#include "pipeline.cuh"
#include "prep.cuh"

#define BM 64
#define BN 64
#define BK 16

template <typename T> __device__ inline T tiny(void);
template <> __device__ inline double tiny<double>(void) { return DBL_MIN; }
template <> __device__ inline float tiny<float>(void) { return FLT_MIN; }
template <typename T> __device__ inline T big(void);
template <> __device__ inline double big<double>(void) { return DBL_MAX; }
template <> __device__ inline float big<float>(void) { return FLT_MAX; }

/* Skip rule shared by the metrics that sum |x - y| terms. */
#define SKIP_NA(x, y, d)                                                      \
    if (NA && (isnan(x) || isnan(y))) return;                                 \
    T d = (x) - (y);                                                          \
    if (NA && isnan(d)) return;

/* s: the sum (or max); n: coordinates used; k: binary's count; inv: the
 * running scale of a robust sum (single precision, see robust_add) */
template <typename T> struct acc_t { T s; T inv; int n; int k; };

/* In single precision the power sums (euclidean, minkowski) are kept
 * relative to the pair's largest |difference| so far (the robust p-norm),
 * so that d^p neither overflows nor underflows float's narrow range; in
 * double they are stats' own sums, with stats' own overflow. */
template <typename T> struct robust { static const bool on = sizeof(T) == sizeof(float); };

/* s = sum (e * inv)^p, inv = 1 / the largest e so far: FLT_MAX before the
 * first (the unit is then 1/FLT_MAX), 0 once an e is infinite (the
 * distance is Inf).  One multiply per coordinate; the division and the
 * rescaling only when the largest e changes, which is rare after the
 * first few coordinates.  The rounding of inv cancels: the distance is
 * s^(1/p) / inv whatever inv is. */
template <typename T>
__device__ inline void robust_add(acc_t<T> &a, T e, T p)
{
    if (a.inv == 0) return;
    T r = e * a.inv;
    if (r > 1) {
        T inv = 1 / e, q = inv / a.inv;
        a.s = a.s * (p == 2 ? q * q : pow(q, p)) + 1;
        a.inv = inv;
    } else {
        a.s += p == 2 ? r * r : pow(r, p);
    }
}

/* sum rescaled by nc / n, as stats does when coordinates were skipped */
template <typename T>
__device__ inline double rescaled(const acc_t<T> &a, int nc)
{
    double s = a.s;
    if (a.n != nc) s /= ((double) a.n / (double) nc);
    return s;
}

/* finish(acc, nc, p, E): the distance of data that was scaled by 2^-E */
template <typename T> struct op_euclidean {
    static const bool every_coordinate_counts = true;
    __device__ static void init(acc_t<T> &a) { a.s = 0; a.inv = big<T>(); a.n = 0; }
    template <bool NA> __device__ static void add(acc_t<T> &a, T x, T y, T) {
        SKIP_NA(x, y, d)
        if (robust<T>::on) robust_add(a, (T) fabs(d), (T) 2); else a.s += d * d;
        a.n++;
    }
    __device__ static double finish(const acc_t<T> &a, int nc, double, int E) {
        if (!robust<T>::on) return sqrt(rescaled(a, nc));
        if (a.inv == 0) return INFINITY;
        return ldexp(sqrt(rescaled(a, nc)) / (double) a.inv, E);
    }
};
template <typename T> struct op_manhattan {
    static const bool every_coordinate_counts = true;
    __device__ static void init(acc_t<T> &a) { a.s = 0; a.inv = 0; a.n = 0; }
    template <bool NA> __device__ static void add(acc_t<T> &a, T x, T y, T) {
        SKIP_NA(x, y, d) a.s += fabs(d); a.n++;
    }
    __device__ static double finish(const acc_t<T> &a, int nc, double, int E) {
        return ldexp(rescaled(a, nc), E);
    }
};
template <typename T> struct op_maximum {
    static const bool every_coordinate_counts = true;
    __device__ static void init(acc_t<T> &a) { a.s = -big<T>(); a.inv = 0; a.n = 0; }
    template <bool NA> __device__ static void add(acc_t<T> &a, T x, T y, T) {
        SKIP_NA(x, y, d) T e = fabs(d); if (e > a.s) a.s = e; a.n++;
    }
    __device__ static double finish(const acc_t<T> &a, int, double, int E) {
        return ldexp((double) a.s, E);
    }
};
template <typename T> struct op_canberra {
    /* counts depend on the values (0/0 terms, zeros): never assumed */
    static const bool every_coordinate_counts = false;
    __device__ static void init(acc_t<T> &a) { a.s = 0; a.inv = 0; a.n = 0; }
    template <bool NA> __device__ static void add(acc_t<T> &a, T x, T y, T) {
        if (NA && (isnan(x) || isnan(y))) return;
        T sum = fabs(x) + fabs(y), diff = fabs(x - y);
        /* stats drops 0/0 terms (and rescales); Inf/Inf counts as 1 */
        if (!(sum > tiny<T>() || diff > tiny<T>())) return;
        T dev = diff / sum;
        if (isnan(dev)) {
            if (!(!isfinite(diff) && diff == sum)) return;
            dev = 1;
        }
        a.s += dev; a.n++;
    }
    /* a sum of ratios: the scale cancels */
    __device__ static double finish(const acc_t<T> &a, int nc, double, int) {
        return rescaled(a, nc);
    }
};
template <typename T> struct op_minkowski {
    static const bool every_coordinate_counts = true;
    __device__ static void init(acc_t<T> &a) { a.s = 0; a.inv = big<T>(); a.n = 0; }
    template <bool NA> __device__ static void add(acc_t<T> &a, T x, T y, T p) {
        SKIP_NA(x, y, d)
        T e = fabs(d);
        if (robust<T>::on) robust_add(a, e, p);
        else a.s += (e == 1 || e == 0) ? e : (p == 2 ? e * e : pow(e, p));
        a.n++;
    }
    __device__ static double finish(const acc_t<T> &a, int nc, double p, int E) {
        double s = rescaled(a, nc);
        if (!robust<T>::on) return (s == 1 || s == 0) ? s : pow(s, 1.0 / p);
        if (a.inv == 0) return INFINITY;
        if (p >= 1)              /* s^(1/p) <= s: no overflow on the way */
            return ldexp(pow(s, 1.0 / p) / (double) a.inv, E);
        /* p < 1: s^(1/p) alone may pass the double range where the
         * distance does not (1/p = 1000): its logarithm does not */
        return s == 0 ? 0.0 : exp2(log2(s) / p - log2((double) a.inv) + E);
    }
};
/* binary: n = coordinates where either is nonzero, k = where exactly one
 * is, s = coordinates used at all (stats' 'total') */
template <typename T> struct op_binary {
    /* counts depend on the values (0/0 terms, zeros): never assumed */
    static const bool every_coordinate_counts = false;
    __device__ static void init(acc_t<T> &a) { a.s = 0; a.inv = 0; a.n = 0; a.k = 0; }
    template <bool NA> __device__ static void add(acc_t<T> &a, T x, T y, T) {
        if (NA && (isnan(x) || isnan(y) || !isfinite(x) || !isfinite(y))) return;
        if (x != 0 || y != 0) { a.n++; if (!(x != 0 && y != 0)) a.k++; }
        a.s += 1;
    }
    __device__ static double finish(const acc_t<T> &a, int, double, int) {
        if (a.n == 0) return 0;
        return (double) a.k / (double) a.n;
    }
};

template <typename T, typename OP>
__device__ inline bool empty_acc(const acc_t<T> &a) { return a.n == 0; }
template <>
__device__ inline bool empty_acc<double, op_binary<double> >(const acc_t<double> &a) { return a.s == 0; }
template <>
__device__ inline bool empty_acc<float, op_binary<float> >(const acc_t<float> &a) { return a.s == 0; }

template <typename T, typename OP, bool NA, typename O>
__global__ static void __launch_bounds__(256)
dist_tile(const T *x, size_t n, int p, size_t j0, size_t j1, double power,
          int E, O *out)
{
    __shared__ T sa[BK][BM];
    __shared__ T sb[BK][BN];
    size_t ib = j0 + blockIdx.x * (size_t) BM, jb = j0 + blockIdx.y * (size_t) BN;
    if (ib + BM - 1 <= jb) return;          /* tile entirely on or above the diagonal */
    int t = threadIdx.x, tx = t % 16, ty = t / 16;
    acc_t<T> acc[4][4];
#pragma unroll
    for (int a = 0; a < 4; a++)
#pragma unroll
        for (int b = 0; b < 4; b++) OP::init(acc[a][b]);
    const T pad = NA ? (T) NAN : (T) 0;
    for (int k0 = 0; k0 < p; k0 += BK) {
#pragma unroll
        for (int e = 0; e < 4; e++) {
            int idx = t + 256 * e, r = idx % BM, kk = idx / BM;
            size_t i = ib + r, j = jb + r;
            int k = k0 + kk;
            sa[kk][r] = (i < n && k < p) ? x[i + (size_t) k * n] : pad;
            sb[kk][r] = (j < j1 && k < p) ? x[j + (size_t) k * n] : pad;
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BK; kk++) {
            T av[4], bv[4];
#pragma unroll
            for (int a = 0; a < 4; a++) av[a] = sa[kk][tx + 16 * a];
#pragma unroll
            for (int b = 0; b < 4; b++) bv[b] = sb[kk][ty + 16 * b];
#pragma unroll
            for (int a = 0; a < 4; a++)
#pragma unroll
                for (int b = 0; b < 4; b++)
                    OP::template add<NA>(acc[a][b], av[a], bv[b], (T) power);
        }
        __syncthreads();
    }
    size_t base0 = dist_offset(n, j0);
#pragma unroll
    for (int b = 0; b < 4; b++) {
        size_t j = jb + ty + 16 * b;
        if (j >= j1) continue;
        size_t off = dist_offset(n, j) - base0 - j - 1;
#pragma unroll
        for (int a = 0; a < 4; a++) {
            size_t i = ib + tx + 16 * a;
            if (i <= j || i >= n) continue;
            double r;
            if (!NA && OP::every_coordinate_counts) {
                /* the zero padding was counted too; all p real ones were used */
                acc_t<T> c = acc[a][b];
                c.n = p;
                r = OP::finish(c, p, power, E);
            } else {
                if (empty_acc<T, OP>(acc[a][b])) {
                    out[off + i] = na_value<O>();
                    continue;
                }
                r = OP::finish(acc[a][b], p, power, E);
            }
            out[off + i] = (O) r;
        }
    }
}

/* flag: some value is not finite (NA, NaN, Inf): the NA kernels.  range:
 * the largest and the smallest nonzero |value| among the finite ones, as
 * order-preserving bits of nonnegative doubles (single precision picks its
 * scale from them). */
__global__ static void scan(const double *x, size_t len, int *flag,
                            unsigned long long *range)
{
    size_t k = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (k >= len) return;
    double v = x[k];
    if (!isfinite(v)) { *flag = 1; return; }
    if (range && v != 0) {
        unsigned long long b = (unsigned long long) __double_as_longlong(fabs(v));
        atomicMax(range, b);
        atomicMin(range + 1, b);
    }
}

__global__ static void to_float(const double *x, size_t len, int E, float *y)
{
    size_t k = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (k < len) y[k] = (float) ldexp(x[k], -E);
}

template <typename T>
struct dist_ctx {
    const T *x;
    size_t n, w;
    int p, method, na;
    int E;             /* the data is scaled by 2^-E ... */
    int out_float;     /* ... and undone in the kernel (double output) or,
                          for float output, by the host copy-out */
    double power;
};

template <typename T, typename OP, typename O>
static void launch_out(const dist_ctx<T> *c, size_t j0, size_t j1, O *out,
                       int E, cudaStream_t st)
{
    dim3 grid((unsigned) ((c->n - j0 + BM - 1) / BM),
              (unsigned) ((j1 - j0 + BN - 1) / BN));
    if (c->na)
        dist_tile<T, OP, true, O><<<grid, 256, 0, st>>>(c->x, c->n, c->p, j0, j1,
                                                        c->power, E, out);
    else
        dist_tile<T, OP, false, O><<<grid, 256, 0, st>>>(c->x, c->n, c->p, j0, j1,
                                                         c->power, E, out);
}

template <typename T, typename OP>
static void launch(const dist_ctx<T> *c, size_t j0, size_t j1, void *out,
                   cudaStream_t st)
{
    if constexpr (sizeof(T) == sizeof(float)) {
        if (c->out_float) {
            launch_out<T, OP, float>(c, j0, j1, (float *) out, 0, st);
            return;
        }
    }
    launch_out<T, OP, double>(c, j0, j1, (double *) out, c->E, st);
}

template <typename T>
static int produce(void *vctx, size_t s, void *dout, slab_info *info,
                   cudaStream_t st, char *msg, size_t msgcap)
{
    dist_ctx<T> *c = (dist_ctx<T> *) vctx;
    int status = GPUCOR_OK;
    size_t n = c->n, j0 = s * c->w, j1 = j0 + c->w;
    if (j1 > n - 1) j1 = n - 1;
    void *out = dout;
    switch (c->method) {
    case DIST_EUCLIDEAN: launch<T, op_euclidean<T> >(c, j0, j1, out, st); break;
    case DIST_MAXIMUM:   launch<T, op_maximum<T> >(c, j0, j1, out, st); break;
    case DIST_MANHATTAN: launch<T, op_manhattan<T> >(c, j0, j1, out, st); break;
    case DIST_CANBERRA:  launch<T, op_canberra<T> >(c, j0, j1, out, st); break;
    case DIST_BINARY:    launch<T, op_binary<T> >(c, j0, j1, out, st); break;
    default:             launch<T, op_minkowski<T> >(c, j0, j1, out, st); break;
    }
    LAUNCHED("dist_tile");
    dist_slab(n, j0, j1, info);
cleanup:
    return status;
}

/* Single precision: the power of two 2^-E the data is scaled by, so that
 * the largest |value| leaves room for sums of p differences below FLT_MAX;
 * or 0 with *fits = 0 when the smallest nonzero |value| would then fall
 * below float's normal range (the data spans more than float can hold:
 * it is computed in double instead). */
static int float_scale(const unsigned long long range[2], size_t p, int *fits)
{
    double amax, amin;
    memcpy(&amax, &range[0], sizeof amax);
    memcpy(&amin, &range[1], sizeof amin);
    *fits = 1;
    if (range[0] == 0) return 0;                /* every value 0 (or none finite) */
    int lp = 0;
    while (((size_t) 1 << lp) < p && lp < 62) lp++;
    int top = FLT_MAX_EXP - 3 - lp;             /* |x - y| summed p times stays finite */
    int E = ilogb(amax) - top;
    if (ilogb(amin) - E < FLT_MIN_EXP - 1) {    /* below FLT_MIN after scaling */
        *fits = 0;
        return 0;
    }
    return E;
}

static int run(gpu_dist_problem *pb, char *msg, size_t msgcap)
{
    int status = GPUCOR_OK;
    gpucor_ctx *gc = NULL;
    cudaStream_t st = NULL;
    double *dx = NULL;
    float *fx = NULL;
    int *flag = NULL, hflag = 0, E = 0;
    unsigned long long *drange = NULL, hrange[2] = {0, ~0ULL};
    size_t n = pb->n, len = pb->n * pb->p;
    int single = pb->single;
    if (n < 2) return GPUCOR_OK;

    status = gpucor_ctx_get(&gc, GPUCOR_SLAB_BYTES, msg, msgcap);
    if (status != GPUCOR_OK) return status;
    st = gc->st;
    DALLOC(dx, len * sizeof(double), "input");
    DALLOC(flag, 4 * sizeof(unsigned long long), "flag");
    drange = (unsigned long long *) flag + 2;
    CU(cudaMemsetAsync(flag, 0, sizeof(int), st));
    CU(cudaMemcpyAsync(drange, hrange, sizeof hrange, cudaMemcpyHostToDevice, st));
    CU(cudaMemcpyAsync(dx, pb->x, len * sizeof(double), cudaMemcpyHostToDevice, st));
    if (len) {
        scan<<<(unsigned) ((len + 255) / 256), 256, 0, st>>>(dx, len, flag,
                                                             single ? drange : NULL);
        LAUNCHED("scan");
    }
    CU(cudaMemcpyAsync(&hflag, flag, sizeof(int), cudaMemcpyDeviceToHost, st));
    CU(cudaMemcpyAsync(hrange, drange, sizeof hrange, cudaMemcpyDeviceToHost, st));
    CU(cudaStreamSynchronize(st));
    if (single) {
        int fits = 1;
        E = float_scale(hrange, pb->p, &fits);
        if (fits) {
            DALLOC(fx, len * sizeof(float), "input");
            if (len) {
                to_float<<<(unsigned) ((len + 255) / 256), 256, 0, st>>>(dx, len, E, fx);
                LAUNCHED("to_float");
            }
            CU(cudaStreamSynchronize(st));
            cudaFree(dx);
            dx = NULL;
        } else {
            single = 0;      /* the double kernels on the double input */
        }
    }
    /* binary's warning about non-finite values is decided by the caller */
    pb->nonfinite_binary = 0;
    {
        /* Single precision returns floats, scaled back by the host copy-out
         * in double -- except where a distance may leave float's range even
         * in the scaled units (minkowski with p < 1: count^(1/p)) or the
         * scale is beyond a double's power of two: double output there. */
        int scales = pb->method != DIST_CANBERRA && pb->method != DIST_BINARY;
        int out_float = single && !(pb->method == DIST_MINKOWSKI && pb->power < 1) &&
                        E > -1000 && E < 1000;
        size_t osz = out_float ? sizeof(float) : sizeof(double);
        double out_scale = out_float && scales ? ldexp(1.0, E) : 1.0;
        size_t avail = gpucor_device_budget(&pb->host, len * (single ? sizeof(float)
                                                                     : sizeof(double)));
        size_t w = avail / (n * osz);
        size_t cap = GPUCOR_SLAB_BYTES / (n * osz);
        if (w > cap) w = cap;
        if (w >= BN) w -= w % BN;   /* whole tiles per slab */
        if (pb->host.slab_cols) w = pb->host.slab_cols < cap ? pb->host.slab_cols : cap;
        if (w < 1) {
            snprintf(msg, msgcap, "out of GPU memory: %.1f MiB free for a "
                     "slab needing %.1f MiB", avail / 1048576.0,
                     n * osz / 1048576.0);
            status = GPUCOR_ERR_ALLOC;
            goto cleanup;
        }
        if (w > n - 1) w = n - 1;
        size_t nslabs = (n - 1 + w - 1) / w;
        if (single) {
            dist_ctx<float> c = {fx, n, w, (int) pb->p, pb->method, hflag != 0, E,
                                 out_float, pb->power};
            status = gpucor_pipeline(produce<float>, &c, nslabs, n * w, out_float,
                                     out_scale, pb->out, &pb->host, gc, msg, msgcap);
        } else {
            dist_ctx<double> c = {dx, n, w, (int) pb->p, pb->method, hflag != 0, 0, 0,
                                  pb->power};
            status = gpucor_pipeline(produce<double>, &c, nslabs, n * w, 0, 1.0,
                                     pb->out, &pb->host, gc, msg, msgcap);
        }
    }

cleanup:
    if (st) cudaStreamSynchronize(st);
    cudaFree(dx);
    cudaFree(fx);
    cudaFree(flag);
    if (status != GPUCOR_OK && status != GPUCOR_ERR_INTERRUPT) gpucor_ctx_drop();
    return status;
}

extern "C" int gpucor_cuda_dist(gpu_dist_problem *pb)
{
    pb->msg[0] = '\0';
    return run(pb, pb->msg, sizeof pb->msg);
}
