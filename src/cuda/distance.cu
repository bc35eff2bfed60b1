/*
 * distance.cu -- stats::dist()'s six metrics on the GPU: one generic tiled
 * pairwise kernel, and a small op per metric (init / add / finish).
 *
 * A block computes a 64 x 64 tile of pairs (rows i of the panel's row range
 * against its columns j), staging 16 coordinates of both row sets in shared
 * memory at a time; each of the 256 threads accumulates 4 x 4 pairs in
 * registers.  x stays in R's column-major layout, so the 64 rows of one
 * coordinate are contiguous and the tile loads are coalesced.  The pairs
 * i > j of the panel's columns j0 <= j < j1 go to its canonical tile (rows
 * j0 .. n - 1), which the 'dist' sink packs (no n x n buffer).
 *
 * With a query (gc_problem's y between rows: gpu_knn(query =)), the rows of
 * x and of y are stacked in one device matrix (x's n rows, then y's q):
 * the panel's columns are y's rows (offset n) against x's rows 0 .. n - 1,
 * every pair, nothing left out; the same kernel, data, scaling and fix-up.
 *
 * Two instantiations per metric: NA = false for data that is all finite
 * (padding coordinates are 0, which adds nothing), and NA = true with R's
 * rule inside the kernel: a coordinate where either value is NA/NaN or the
 * difference is NaN is skipped, the sum is rescaled by nc / count, NA when
 * nothing is left (padding is NaN there, so it is skipped too).
 * Differences are taken directly, never |x|^2 + |y|^2 - 2 x.y, so
 * near-duplicate rows keep every digit.
 *
 * Single precision keeps float's speed without float's range: the data is
 * scaled by a power of two chosen per metric so that no sum can overflow
 * (sums of squares, of p-th powers, of differences), and the sink's
 * commit undoes the scale in double (the tile's scale).  Power sums that
 * come out so small that terms may have underflowed (below 2^-100) are
 * marked, and a second kernel -- queued after every panel, returning at
 * once when nothing was marked -- recomputes just those pairs from the same
 * floats with double accumulation.  So no distance that a double can hold becomes Inf or 0
 * for float's sake.  Data spanning more than float's range (after the
 * scaling, a nonzero |value| below FLT_MIN), and minkowski with p < 1
 * (whose distances grow as count^(1/p)), are computed in double.
 */
#include <math.h>
#include <float.h>
#include <string.h>
#include "run.cuh"
#include "prep.cuh"
#include "worker.cuh"

/* The engine's own context of a pass, made from the problem (and each
 * worker's copy). */
typedef struct {
    const double *x; size_t n, p;
    const double *y; size_t q;               /* the query's q x p rows, or NULL */
    int method;                              /* DIST_EUCLIDEAN .. DIST_MINKOWSKI */
    double power;
    int single;
} gpu_dist_args;

#define BM 64
#define BN 64
#define BK 16

template <typename T> __device__ inline T big(void);
template <> __device__ inline double big<double>(void) { return DBL_MAX; }
template <> __device__ inline float big<float>(void) { return FLT_MAX; }

/* Skip rule shared by the metrics that sum |x - y| terms. */
#define SKIP_NA(x, y, d)                                                      \
    if (NA && (isnan(x) || isnan(y))) return;                                 \
    T d = (x) - (y);                                                          \
    if (NA && isnan(d)) return;

template <typename T> struct acc_t { T s; int n; int k; T m; };

/* sum rescaled by nc / n, as stats does when coordinates were skipped */
template <typename T>
__device__ inline double rescaled(const acc_t<T> &a, int nc)
{
    double s = a.s;
    if (a.n != nc) s /= ((double) a.n / (double) nc);
    return s;
}

/* A float power sum this small may have lost terms to underflow (each
 * below 2^-149): recompute the pair with double accumulation.  Terms that
 * underflow beside a sum above it change it by less than 2^-39. */
#define SUM_TOO_SMALL 0x1p-100

/* finish(acc, nc, p): the distance (in the units of the data it was given);
 * suspect(acc): single precision's sum may have underflowed */
template <typename T> struct op_euclidean {
    static const bool every_coordinate_counts = true;
    __device__ static void init(acc_t<T> &a) { a.s = 0; a.n = 0; }
    template <bool NA> __device__ static void add(acc_t<T> &a, T x, T y, T) {
        SKIP_NA(x, y, d) a.s += d * d; a.n++;
    }
    __device__ static double finish(const acc_t<T> &a, int nc, double) {
        return sqrt(rescaled(a, nc));
    }
    __device__ static bool suspect(const acc_t<T> &a) { return a.s < (T) SUM_TOO_SMALL; }
};
template <typename T> struct op_manhattan {
    static const bool every_coordinate_counts = true;
    __device__ static void init(acc_t<T> &a) { a.s = 0; a.n = 0; }
    template <bool NA> __device__ static void add(acc_t<T> &a, T x, T y, T) {
        SKIP_NA(x, y, d) a.s += fabs(d); a.n++;
    }
    __device__ static double finish(const acc_t<T> &a, int nc, double) {
        return rescaled(a, nc);
    }
    __device__ static bool suspect(const acc_t<T> &) { return false; }
};
template <typename T> struct op_maximum {
    static const bool every_coordinate_counts = true;
    __device__ static void init(acc_t<T> &a) { a.s = -big<T>(); a.n = 0; }
    template <bool NA> __device__ static void add(acc_t<T> &a, T x, T y, T) {
        SKIP_NA(x, y, d) T e = fabs(d); if (e > a.s) a.s = e; a.n++;
    }
    __device__ static double finish(const acc_t<T> &a, int, double) { return a.s; }
    __device__ static bool suspect(const acc_t<T> &) { return false; }
};
/* Canberra's last argument is not a power but stats' threshold: terms
 * where neither |x| + |y| nor |x - y| exceeds DBL_MIN of the data as given
 * are dropped -- DBL_MIN itself in double, DBL_MIN in the units of the
 * scaled floats in single precision (0 where that falls below FLT_MIN:
 * every nonzero scaled value is at least FLT_MIN then). */
template <typename T> struct op_canberra {
    /* counts depend on the values (0/0 terms, zeros): never assumed */
    static const bool every_coordinate_counts = false;
    __device__ static void init(acc_t<T> &a) { a.s = 0; a.n = 0; }
    template <bool NA> __device__ static void add(acc_t<T> &a, T x, T y, T small) {
        if (NA && (isnan(x) || isnan(y))) return;
        T sum = fabs(x) + fabs(y), diff = fabs(x - y);
        /* stats drops 0/0 terms (and rescales); Inf/Inf counts as 1 */
        if (!(sum > small || diff > small)) return;
        T dev = diff / sum;
        if (isnan(dev)) {
            if (!(!isfinite(diff) && diff == sum)) return;
            dev = 1;
        }
        a.s += dev; a.n++;
    }
    __device__ static double finish(const acc_t<T> &a, int nc, double) {
        return rescaled(a, nc);
    }
    __device__ static bool suspect(const acc_t<T> &) { return false; }
};
template <typename T> struct op_minkowski {
    static const bool every_coordinate_counts = true;
    __device__ static void init(acc_t<T> &a) { a.s = 0; a.n = 0; }
    template <bool NA> __device__ static void add(acc_t<T> &a, T x, T y, T p) {
        SKIP_NA(x, y, d)
        T e = fabs(d);
        a.s += (e == 1 || e == 0) ? e : (p == 2 ? e * e : pow(e, p));
        a.n++;
    }
    __device__ static double finish(const acc_t<T> &a, int nc, double p) {
        double s = rescaled(a, nc);
        return (s == 1 || s == 0) ? s : pow(s, 1.0 / p);
    }
    __device__ static bool suspect(const acc_t<T> &a) { return a.s < (T) SUM_TOO_SMALL; }
};
/* Single precision's double arithmetic for Euclidean (p = 2) and
 * Minkowski: the fix-up of the pairs whose float sum may have underflowed,
 * and data beyond float's range.  The sum of the p-th powers of the
 * differences divided by the largest one so far (m), as LAPACK's dnrm2
 * keeps its scaled sum of squares: no term overflows or underflows where
 * the distance itself fits a double.  (Without it a difference of 1e-8
 * units of the scaled data is 0 at p = 64 even in double, and the
 * distance 0 where stats' is 3.) */
template <typename T> struct op_minkowski_scaled {
    static const bool every_coordinate_counts = true;
    __device__ static void init(acc_t<T> &a) { a.s = 0; a.n = 0; a.m = 0; }
    __device__ static T power_of(T r, T p) { return p == 2 ? r * r : pow(r, p); }
    template <bool NA> __device__ static void add(acc_t<T> &a, T x, T y, T p) {
        SKIP_NA(x, y, d)
        T e = fabs(d);
        if (e > a.m) {
            /* the new largest: the sum so far in its units, plus 1 */
            a.s = (a.m > 0 ? a.s * power_of(a.m / e, p) : 0) + 1;
            a.m = e;
        } else if (e > 0) {
            a.s += power_of(e / a.m, p);
        }
        a.n++;
    }
    __device__ static double finish(const acc_t<T> &a, int nc, double p) {
        if (a.m == 0 || isinf((double) a.m)) return a.m;
        return a.m * pow(rescaled(a, nc), 1.0 / p);
    }
    __device__ static bool suspect(const acc_t<T> &) { return false; }
};
/* binary: n = coordinates where either is nonzero, k = where exactly one
 * is, s = coordinates used at all (stats' 'total') */
template <typename T> struct op_binary {
    /* counts depend on the values (0/0 terms, zeros): never assumed */
    static const bool every_coordinate_counts = false;
    __device__ static void init(acc_t<T> &a) { a.s = 0; a.n = 0; a.k = 0; }
    template <bool NA> __device__ static void add(acc_t<T> &a, T x, T y, T) {
        if (NA && (isnan(x) || isnan(y) || !isfinite(x) || !isfinite(y))) return;
        if (x != 0 || y != 0) { a.n++; if (!(x != 0 && y != 0)) a.k++; }
        a.s += 1;
    }
    __device__ static double finish(const acc_t<T> &a, int, double) {
        if (a.n == 0) return 0;
        return (double) a.k / (double) a.n;
    }
    __device__ static bool suspect(const acc_t<T> &) { return false; }
};

template <typename T, typename OP>
__device__ inline bool empty_acc(const acc_t<T> &a) { return a.n == 0; }
template <>
__device__ inline bool empty_acc<double, op_binary<double> >(const acc_t<double> &a) { return a.s == 0; }
template <>
__device__ inline bool empty_acc<float, op_binary<float> >(const acc_t<float> &a) { return a.s == 0; }

/* What a launch of the tile kernel does with its pairs. */
enum {
    TILE_PLAIN = 0,   /* write every pair */
    TILE_MARK = 1,    /* ... but a suspect float sum as MARK, and set *flag */
    TILE_FIX = 2      /* return unless *flag; rewrite only the pairs marked */
};

/* Bits of the float NaN that marks a pair for TILE_FIX (never seen by the
 * host: the fix-up runs before the panel is packed). */
#define MARK_BITS 0x7fc01234u

/* S: the data's type, T: the accumulators' (S widened to double in
 * TILE_FIX), O: the output's */
template <typename S, typename T, typename OP, bool NA, typename O>
__global__ static void __launch_bounds__(256)
dist_tile(const S *x, size_t n, size_t m, const S *y, size_t ny, int self, int p,
          size_t j0, size_t j1, int whole, double power, int mode, int *flag, O *out)
{
    /* x: n rows (the stride); the result's rows are its first m, its
     * columns j the rows j of y (stride ny): x's own (self: the pair
     * i == j is left out), or a query's */
    __shared__ S sa[BK][BM];
    __shared__ S sb[BK][BN];
    if (mode == TILE_FIX && *(volatile int *) flag == 0) return;
    /* rows r0 .. n - 1: j0 (a 'dist': the pairs i > j) or, whole, 0
     * (every pair i != j of the columns: a selection) */
    size_t r0 = whole ? 0 : j0;
    size_t ib = r0 + blockIdx.x * (size_t) BM, jb = j0 + blockIdx.y * (size_t) BN;
    if (!whole && ib + BM - 1 <= jb) return;   /* tile entirely on or above the diagonal */
    int t = threadIdx.x, tx = t % 16, ty = t / 16;
    acc_t<T> acc[4][4];
#pragma unroll
    for (int a = 0; a < 4; a++)
#pragma unroll
        for (int b = 0; b < 4; b++) OP::init(acc[a][b]);
    const S pad = NA ? (S) NAN : (S) 0;
    for (int k0 = 0; k0 < p; k0 += BK) {
#pragma unroll
        for (int e = 0; e < 4; e++) {
            int idx = t + 256 * e, r = idx % BM, kk = idx / BM;
            size_t i = ib + r, j = jb + r;
            int k = k0 + kk;
            sa[kk][r] = (i < m && k < p) ? x[i + (size_t) k * n] : pad;
            sb[kk][r] = (j < j1 && k < p) ? y[j + (size_t) k * ny] : pad;
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
    /* the panel's tile: rows r0 .. m - 1, pair (i, j) at off + i (unsigned
     * arithmetic: i >= r0) */
    size_t ld = m - r0;
#pragma unroll
    for (int b = 0; b < 4; b++) {
        size_t j = jb + ty + 16 * b;
        if (j >= j1) continue;
        size_t off = (j - j0) * ld - r0;
#pragma unroll
        for (int a = 0; a < 4; a++) {
            size_t i = ib + tx + 16 * a;
            if (i >= m || (self && i == j) || (!whole && i < j)) continue;
            if (mode == TILE_FIX &&
                __float_as_uint((float) out[off + i]) != MARK_BITS) continue;
            acc_t<T> c = acc[a][b];
            if (!NA && OP::every_coordinate_counts) {
                c.n = p;   /* the zero padding was counted too; all p real ones were used */
            } else if (empty_acc<T, OP>(c)) {
                out[off + i] = na_value<O>();
                continue;
            }
            if (mode == TILE_MARK && OP::suspect(c)) {
                out[off + i] = (O) __uint_as_float(MARK_BITS);
                *flag = 1;
                continue;
            }
            out[off + i] = (O) OP::finish(c, p, power);
        }
    }
}

/* flag: some value is not finite (NA, NaN, Inf): the NA kernels.  range
 * (single precision only, else NULL): the largest and the smallest nonzero
 * |value| among the finite ones, as the bits of nonnegative doubles (which
 * order as the values do).  Each thread reduces a grid-strided share, each
 * warp its threads by shuffles, and one lane per warp touches memory: an
 * atomic per value on one address cost single precision ~10%. */
#define SCAN_BLOCKS 1024
__global__ static void scan(const double *x, size_t len, int *flag,
                            unsigned long long *range)
{
    unsigned long long mx = 0, mn = ~0ULL;
    int bad = 0;
    for (size_t k = blockIdx.x * (size_t) blockDim.x + threadIdx.x; k < len;
         k += (size_t) gridDim.x * blockDim.x) {
        double v = x[k];
        if (!isfinite(v)) { bad = 1; continue; }
        unsigned long long b = (unsigned long long) __double_as_longlong(fabs(v));
        if (b == 0) continue;
        mx = b > mx ? b : mx;
        mn = b < mn ? b : mn;
    }
    for (int o = 16; o > 0; o /= 2) {
        unsigned long long m1 = __shfl_down_sync(0xffffffffu, mx, o);
        unsigned long long m2 = __shfl_down_sync(0xffffffffu, mn, o);
        mx = m1 > mx ? m1 : mx;
        mn = m2 < mn ? m2 : mn;
    }
    bad = __any_sync(0xffffffffu, bad);
    if (threadIdx.x % 32 != 0) return;
    if (bad) *flag = 1;
    if (range && mx) {
        atomicMax(range, mx);
        atomicMin(range + 1, mn);
    }
}

__global__ static void to_float(const double *x, size_t len, int E, float *y)
{
    size_t k = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
    if (k < len) y[k] = (float) ldexp(x[k], -E);
}

template <typename S>
struct dist_ctx {
    const S *x;
    size_t n, w;       /* n: x's stride (its rows, a stacked query's included) */
    size_t m;          /* the result's rows (x's) */
    const S *y;        /* the columns' rows: x's own (self), or a query's */
    size_t ny;         /* y's stride */
    int self;
    int p, method, na;
    int fix;           /* single precision with a sum that may underflow */
    int scaled;        /* single precision's data beyond float's range, in
                          double: Euclidean and Minkowski scaled (op_minkowski_scaled) */
    int *flag;         /* device: a pair of this panel was marked */
    void *buf;         /* the panel: (n - j0) x w of the output type */
    int whole;         /* panels of whole columns (a selecting sink) */
    double scale;      /* the tile's values times this are the distances */
    double power;      /* minkowski's p; canberra's threshold (op_canberra) */
};

template <typename S, typename T, typename OP, typename O>
static void launch_tile(const dist_ctx<S> *c, size_t j0, size_t j1, int mode,
                        O *out, cudaStream_t st)
{
    size_t r0 = c->whole ? 0 : j0;
    dim3 grid((unsigned) ((c->m - r0 + BM - 1) / BM),
              (unsigned) ((j1 - j0 + BN - 1) / BN));
    if (c->na)
        dist_tile<S, T, OP, true, O><<<grid, 256, 0, st>>>(c->x, c->n, c->m, c->y, c->ny,
                                                           c->self, c->p, j0, j1,
                                                           c->whole, c->power, mode,
                                                           c->flag, out);
    else
        dist_tile<S, T, OP, false, O><<<grid, 256, 0, st>>>(c->x, c->n, c->m, c->y, c->ny,
                                                            c->self, c->p, j0, j1,
                                                            c->whole, c->power, mode,
                                                            c->flag, out);
}

/* Double: the stats arithmetic.  Single: float sums (marked where they may
 * have underflowed), then the fix-up of the marked pairs in double with
 * the op FIX. */
template <typename S, template <typename> class OP, template <typename> class FIX = OP>
static int launch(const dist_ctx<S> *c, size_t j0, size_t j1, void *out,
                  cudaStream_t st, char *msg, size_t msgcap)
{
    int status = GPUCOR_OK;
    if constexpr (sizeof(S) == sizeof(double)) {
        launch_tile<S, S, OP<S>, double>(c, j0, j1, TILE_PLAIN, (double *) out, st);
    } else {
        if (c->fix) CU(cudaMemsetAsync(c->flag, 0, sizeof(int), st));
        launch_tile<S, S, OP<S>, float>(c, j0, j1, c->fix ? TILE_MARK : TILE_PLAIN,
                                        (float *) out, st);
        if (c->fix) {
            LAUNCHED("dist_tile");
            launch_tile<S, double, FIX<double>, float>(c, j0, j1, TILE_FIX, (float *) out, st);
        }
    }
    LAUNCHED("dist_tile");
cleanup:
    return status;
}

template <typename S>
static int produce(void *vctx, size_t j0, size_t j1, gc_tile *t,
                   cudaStream_t st, char *msg, size_t msgcap)
{
    dist_ctx<S> *c = (dist_ctx<S> *) vctx;
    int status = GPUCOR_OK;
    void *dout = c->buf;
    switch (c->method) {
    case DIST_EUCLIDEAN:
        status = c->scaled ? launch<S, op_minkowski_scaled>(c, j0, j1, dout, st, msg, msgcap)
                           : launch<S, op_euclidean, op_minkowski_scaled>(c, j0, j1, dout, st,
                                                                          msg, msgcap);
        break;
    case DIST_MAXIMUM:   status = launch<S, op_maximum>(c, j0, j1, dout, st, msg, msgcap); break;
    case DIST_MANHATTAN: status = launch<S, op_manhattan>(c, j0, j1, dout, st, msg, msgcap); break;
    case DIST_CANBERRA:  status = launch<S, op_canberra>(c, j0, j1, dout, st, msg, msgcap); break;
    case DIST_BINARY:    status = launch<S, op_binary>(c, j0, j1, dout, st, msg, msgcap); break;
    default:
        status = c->scaled ? launch<S, op_minkowski_scaled>(c, j0, j1, dout, st, msg, msgcap)
                           : launch<S, op_minkowski, op_minkowski_scaled>(c, j0, j1, dout, st,
                                                                          msg, msgcap);
        break;
    }
    /* rows j0 .. n - 1: a dist's pairs i > j; or whole columns (x's m rows) */
    gc_cuda_panel_tile(c->whole ? 0 : j0, c->m, j0, j1, c->buf, sizeof(S) == sizeof(float),
                       c->scale, !c->whole, t);
    return status;
}

/* Single precision: the power of two 2^-E the data is scaled by, so that
 * the largest |value| leaves room below FLT_MAX for the metric's sum over
 * p coordinates (of squares, of |d|^power, of |d|), found from the largest
 * and smallest nonzero finite |value|; *fits = 0 when the smallest would
 * then fall below float's normal range (the data spans more than float can
 * hold, and is computed in double). */
static int float_scale(double amax, double amin, size_t p, int method,
                       double power, int *fits)
{
    *fits = 1;
    if (amax == 0) return 0;                    /* every value 0 (or none finite) */
    int lp = 0;
    while (((size_t) 1 << lp) < p && lp < 62) lp++;
    /* |x - y| < 2^(top + 2) when |x|, |y| < 2^(top + 1); the sum of p of its
     * powers must stay below 2^127 */
    int room = FLT_MAX_EXP - 1 - lp;
    int top;
    if (method == DIST_EUCLIDEAN)
        top = room / 2 - 2;
    else if (method == DIST_MINKOWSKI)          /* power >= 1 here */
        top = (int) floor(room / power) - 2;
    else
        top = room - 2;
    int E = ilogb(amax) - top;
    if (ilogb(amin) - E < FLT_MIN_EXP - 1 || E <= -1000 || E >= 1000) {
        *fits = 0;
        return 0;
    }
    return E;
}

/* The copy of a resident x on this worker's device, uploaded now if it is
 * not there yet; NULL where it does not apply (no query, another x, single
 * precision) or does not fit (the search then uploads x as usual). */
static const double *resident_on_device(gc_resident *r, const gpu_dist_args *pb, int single)
{
    int dev = -1;
    if (!r || !pb->y || single || r->host != pb->x || r->n != pb->n || r->p != pb->p ||
        r->n * r->p == 0 || cudaGetDevice(&dev) != cudaSuccess || dev < 0 ||
        dev >= GC_RESIDENT_DEVICES)
        return NULL;
    while (__atomic_test_and_set(&r->lock, __ATOMIC_ACQUIRE)) { }
    if (!r->dev[dev]) {
        void *d = NULL;
        size_t bytes = r->n * r->p * sizeof(double);
        if (cudaMalloc(&d, bytes) == cudaSuccess) {
            if (cudaMemcpy(d, r->host, bytes, cudaMemcpyHostToDevice) == cudaSuccess) {
                r->dev[dev] = d;
                r->uploads++;
            } else {
                cudaFree(d);
            }
        }
        (void) cudaGetLastError();   /* a failed allocation is not this call's error */
    }
    const double *out = (const double *) r->dev[dev];
    __atomic_clear(&r->lock, __ATOMIC_RELEASE);
    return out;
}

extern "C" void gpucor_cuda_resident_free(gc_resident *r)
{
    int cur = -1;
    if (cudaGetDevice(&cur) != cudaSuccess) cur = -1;
    for (int d = 0; d < GC_RESIDENT_DEVICES; d++) {
        if (!r->dev[d]) continue;
        if (cudaSetDevice(d) == cudaSuccess) cudaFree(r->dev[d]);
        r->dev[d] = NULL;
    }
    if (cur >= 0) cudaSetDevice(cur);
    (void) cudaGetLastError();
}

static int run(const gpu_dist_args *pb, const gc_sink *sink, gc_host *host,
               char *msg, size_t msgcap)
{
    int status = GPUCOR_OK;
    gpucor_ctx *gc = NULL;
    cudaStream_t st = NULL;
    double *dx = NULL;
    float *fx = NULL;
    void *buf = NULL;
    int *flag = NULL, hflag = 0, E = 0;
    const double *xres = NULL;
    unsigned long long *range = NULL, hrange[2] = {0, ~0ULL};
    /* with a query, its rows stacked below x's: nt rows in all */
    size_t n = pb->n, q = pb->y ? pb->q : n, nt = pb->y ? n + q : n, len = nt * pb->p;
    /* minkowski with p < 1 (not a norm): (sum |d|^p)^(1/p) grows as
     * count^(1/p) -- 2^1000 for two coordinates at p = 0.001 -- whatever
     * the scale of the data, beyond float's range: computed in double */
    int single = pb->single && !(pb->method == DIST_MINKOWSKI && pb->power < 1);
    if (pb->y ? n == 0 || q == 0 : n < 2) return GPUCOR_OK;

    status = gpucor_ctx_get(&gc, GPUCOR_PANEL_BYTES, msg, msgcap);
    if (status != GPUCOR_OK) return status;
    st = gc->st;
    /* x kept on this device between searches (GpucorParam's index): only
     * the query is uploaded, into dx (nt = q rows) */
    xres = resident_on_device(host->opts->resident, pb, single);
    if (xres) {
        nt = q;
        len = q * pb->p;
    }
    DALLOC(dx, len * sizeof(double), "input");
    /* flag[0]: non-finite data; flag[1]: a pair marked in this panel; the
     * range after them (8-byte aligned) */
    DALLOC(flag, 4 * sizeof(unsigned long long), "flag");
    range = (unsigned long long *) flag + 1;
    CU(cudaMemsetAsync(flag, 0, 2 * sizeof(int), st));
    CU(cudaMemcpyAsync(range, hrange, sizeof hrange, cudaMemcpyHostToDevice, st));
    if (xres) {
        CU(cudaMemcpyAsync(dx, pb->y, len * sizeof(double), cudaMemcpyHostToDevice, st));
    } else if (pb->y) {
        /* column k: x's n values, then y's q */
        if (pb->p) {
            CU(cudaMemcpy2DAsync(dx, nt * sizeof(double), pb->x, n * sizeof(double),
                                 n * sizeof(double), pb->p, cudaMemcpyHostToDevice, st));
            CU(cudaMemcpy2DAsync(dx + n, nt * sizeof(double), pb->y, q * sizeof(double),
                                 q * sizeof(double), pb->p, cudaMemcpyHostToDevice, st));
        }
    } else {
        CU(cudaMemcpyAsync(dx, pb->x, len * sizeof(double), cudaMemcpyHostToDevice, st));
    }
    if (len) {
        size_t blocks = (len + 255) / 256;
        if (blocks > SCAN_BLOCKS) blocks = SCAN_BLOCKS;
        scan<<<(unsigned) blocks, 256, 0, st>>>(dx, len, flag, single ? range : NULL);
        LAUNCHED("scan");
    }
    CU(cudaMemcpyAsync(&hflag, flag, sizeof(int), cudaMemcpyDeviceToHost, st));
    CU(cudaMemcpyAsync(hrange, range, sizeof hrange, cudaMemcpyDeviceToHost, st));
    CU(cudaStreamSynchronize(st));
    if (xres && host->opts->resident->nonfinite) hflag = 1;
    if (single) {
        int fits = 1;
        double amax, amin;
        memcpy(&amax, &hrange[0], sizeof amax);
        memcpy(&amin, &hrange[1], sizeof amin);
        E = float_scale(amax, amin, pb->p, pb->method, pb->power, &fits);
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
    {
        /* Euclidean's p is 2 for op_minkowski_scaled (op_euclidean ignores it) */
        double power = pb->method == DIST_EUCLIDEAN ? 2 : pb->power;
        if (pb->method == DIST_CANBERRA) {
            power = single ? ldexp(DBL_MIN, -E) : DBL_MIN;
            if (single && power < FLT_MIN) power = 0;
        }
        /* single precision: floats, the scale undone by the sink's commit */
        int scales = pb->method != DIST_CANBERRA && pb->method != DIST_BINARY;
        size_t osz = single ? sizeof(float) : sizeof(double);
        /* a 'dist' takes the pairs i > j; other sinks whole columns: a
         * selection (gpu_knn) finds each column's own nearest on the
         * device, a file writes the full matrix (the distances are
         * symmetric to the bit) */
        int whole = !(gc_sink_needs(sink) & GC_SINK_PACKED);
        if (pb->y && !whole) {
            snprintf(msg, msgcap, "internal error: a query's distances into a 'dist'");
            status = GPUCOR_ERR_INVALID;
            goto cleanup;
        }
        gc_plan pl;
        status = gc_cuda_plan(sink, pb->y ? q : whole ? n : n - 1, n, osz, 0, len * osz, BN,
                              (size_t) -1, whole, host, &pl, msg, msgcap);
        if (status != GPUCOR_OK) goto cleanup;
        DALLOC(buf, n * pl.w * osz, "panel");
        /* the columns' rows: x's own, a query's stacked below x's, or a
         * query's beside a resident x */
        size_t joff = pb->y ? n : 0;
        if (single) {
            int fix = pb->method == DIST_EUCLIDEAN || pb->method == DIST_MINKOWSKI;
            dist_ctx<float> c = {fx, nt, pl.w, n, fx + joff, nt, !pb->y, (int) pb->p,
                                 pb->method, hflag != 0, fix, 0,
                                 flag + 1, buf, whole, scales ? ldexp(1.0, E) : 1.0, power};
            status = gc_cuda_run(produce<float>, &c, &pl, 1, sink, host, gc, msg,
                                 msgcap);
        } else {
            /* single precision asked for, its data beyond float's range */
            dist_ctx<double> c = {dx, nt, pl.w, n, dx + joff, nt, !pb->y, (int) pb->p,
                                  pb->method, hflag != 0, 0,
                                  pb->single, flag + 1, buf, whole, 1.0, power};
            if (xres) {
                c.x = xres;
                c.n = n;
                c.y = dx;
                c.ny = q;
            }
            status = gc_cuda_run(produce<double>, &c, &pl, 0, sink, host, gc, msg,
                                 msgcap);
        }
    }

cleanup:
    if (st) cudaStreamSynchronize(st);
    cudaFree(dx);
    cudaFree(fx);
    cudaFree(flag);
    cudaFree(buf);
    if (status != GPUCOR_OK && status != GPUCOR_ERR_INTERRUPT) gpucor_ctx_drop();
    return status;
}

static int dist_job(void *arg, const gc_sink *sink, gc_host *host, char *msg,
                    size_t msgcap)
{
    return run((const gpu_dist_args *) arg, sink, host, msg, msgcap);
}

/* stats' binary distance warns when a non-finite value meets a non-NA value
 * in the same column: an infinite entry in a column with another non-NA. */
static int binary_nonfinite(const double *x, size_t n, size_t p)
{
    for (size_t k = 0; k < p; k++) {
        const double *c = x + k * n;
        size_t nonna = 0, inf = 0;
        for (size_t i = 0; i < n; i++) {
            if (isnan(c[i])) continue;
            nonna++;
            if (!isfinite(c[i])) inf = 1;
        }
        if (inf && nonna >= 2) return 1;
    }
    return 0;
}

extern "C" int gpucor_cuda_dist(const gc_problem *pb, const gc_sink *sink, gc_host *host,
                                gc_pass *out, char *msg, size_t msgcap)
{
    gpu_dist_args a = {pb->x, pb->n, pb->p, pb->y, pb->y ? pb->q : 0, pb->measure->op,
                       pb->power, host->opts->single};
    gpu_dist_args wa[GC_MAX_WORKERS];
    gc_worker_result res[GC_MAX_WORKERS];
    int n = 0;
    msg[0] = '\0';
    int status = gc_cuda_worker_count(host, &n, msg, msgcap);
    if (status != GPUCOR_OK) return status;
    for (int k = 0; k < n; k++) wa[k] = a;
    out->threads_used = 0;
    status = gc_cuda_workers(dist_job, wa, sizeof *wa, n, sink, host, res, msg, msgcap);
    if (pb->measure->warning == WARN_NONFINITE)
        out->nonfinite = binary_nonfinite(pb->x, pb->n, pb->p);
    return status;
}
