/*
 * distance.c -- stats::dist()'s six metrics between the rows of x: the
 * producer of distance tiles (pairs i > j) for the 'dist' sink; or, with a
 * y (gc_problem's y between rows: gpu_knn(query =)), between the rows of x
 * and the rows of y, every pair (i, j) of the n x q result.
 *
 * The rows are first copied into a row-major, zero-padded buffer so every
 * row is one contiguous vector.  A metric is a small op on the difference of
 * two coordinates (accumulate) plus a finalize; the generic 4 x 2 register
 * block below runs the op four coordinates at a time for pairs of all-finite
 * rows, which is where nearly all the time goes.  Pairs touching a row with
 * NA/NaN/Inf, and the binary and minkowski metrics, take the scalar path
 * that mirrors stats' distance.c: skip coordinates where either value is NA
 * or the difference is NaN, rescale the sum by nc/count, NA when nothing is
 * left.  Differences are taken directly (never |x|^2 + |y|^2 - 2 x.y), so
 * near-duplicate rows keep every digit.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include "cpu.h"
#include "simd.h"

/* the engine's own context of a pass (cpu_dist_run makes it from the problem) */
typedef struct {
    const double *x;  size_t n, p;     /* n x p, column-major, as R stores it */
    const double *y;  size_t q;        /* q x p, or NULL: x against itself */
    int method;                        /* DIST_EUCLIDEAN .. DIST_MINKOWSKI */
    double power;                      /* minkowski's p */
    const gc_sink *sink;               /* a 'dist' of n items */
    const gc_host *host;
    int nonfinite_binary;              /* out: binary met Inf (stats warns) */
    int threads_used;                  /* out: the tile driver's team size */
} dist_problem;

#define TILE_DIST 64   /* 64 rows x 500 columns = 256 KiB per side: L2 */

typedef struct {
    dist_problem *pb;
    const double *xt;            /* row i at xt + i * ld */
    const double *yt;            /* y's row j at yt + j * ld (xt without y) */
    size_t ld;
    const unsigned char *finite; /* row has only finite values */
    const unsigned char *finite_y;
    int symmetric;               /* x against itself: the pairs i > j */
    int nonfinite;
} dist_ctx;

/* ---- the fast path: ops on four coordinates at a time --------------------- */
#define OP_EUCLIDEAN(acc, d) acc += (d) * (d)
#define OP_MANHATTAN(acc, d) acc += V4_ABS(d)
#define OP_MAXIMUM(acc, d)   acc = V4_VMAX(acc, V4_ABS(d))

#define DEFINE_BLOCK(NAME, OP, REDUCE)                                         \
    GPUCOR_MULTIVERSION                                                        \
    static void NAME(const double *xt, size_t ld, size_t i0, size_t ni,        \
                     const double *y, double *res /* ni */)                    \
    {                                                                          \
        size_t a = 0;                                                          \
        for (; a + 4 <= ni; a += 4) {                                          \
            const double *x0 = xt + (i0 + a) * ld, *x1 = x0 + ld,              \
                         *x2 = x1 + ld, *x3 = x2 + ld;                         \
            v4d c0 = {0}, c1 = {0}, c2 = {0}, c3 = {0};                        \
            for (size_t k = 0; k < ld; k += 4) {                               \
                v4d yk, d;                                                     \
                V4_LOAD(yk, y + k);                                            \
                V4_LOAD(d, x0 + k); d -= yk; OP(c0, d);                        \
                V4_LOAD(d, x1 + k); d -= yk; OP(c1, d);                        \
                V4_LOAD(d, x2 + k); d -= yk; OP(c2, d);                        \
                V4_LOAD(d, x3 + k); d -= yk; OP(c3, d);                        \
            }                                                                  \
            res[a] = REDUCE(c0); res[a + 1] = REDUCE(c1);                      \
            res[a + 2] = REDUCE(c2); res[a + 3] = REDUCE(c3);                  \
        }                                                                      \
        for (; a < ni; a++) {                                                  \
            const double *x0 = xt + (i0 + a) * ld;                             \
            v4d c0 = {0};                                                      \
            for (size_t k = 0; k < ld; k += 4) {                               \
                v4d d, yk;                                                     \
                V4_LOAD(d, x0 + k); V4_LOAD(yk, y + k); d -= yk;               \
                OP(c0, d);                                                     \
            }                                                                  \
            res[a] = REDUCE(c0);                                               \
        }                                                                      \
    }

DEFINE_BLOCK(block_euclidean, OP_EUCLIDEAN, V4_SUM)
DEFINE_BLOCK(block_manhattan, OP_MANHATTAN, V4_SUM)
DEFINE_BLOCK(block_maximum, OP_MAXIMUM, V4_MAX)

/* Euclidean or Manhattan distances of rows i0 .. i0 + ni - 1 of xt (rows of
 * ld doubles, zero padded) to y, with the very arithmetic of fill() below:
 * the pruned k-NN search (knn_prune.c) computes the distances it keeps
 * here, so that they equal the brute force's bit for bit. */
void cpu_dist_rows(int method, const double *xt, size_t ld, size_t i0, size_t ni,
                   const double *y, double *res)
{
    if (method == DIST_MANHATTAN) {
        block_manhattan(xt, ld, i0, ni, y, res);
        return;
    }
    block_euclidean(xt, ld, i0, ni, y, res);
    for (size_t a = 0; a < ni; a++) res[a] = sqrt(res[a]);
}

/* Canberra needs a count too: 0/0 terms are dropped (and the sum rescaled)
 * by stats, so it gets its own loop; the padding is 0/0 and never counted. */
GPUCOR_MULTIVERSION
static double canberra_finite(const double *x, const double *y, size_t ld,
                              size_t nc)
{
    v4d acc = {0}, cnt = {0};
    const v4d tiny = {DBL_MIN, DBL_MIN, DBL_MIN, DBL_MIN};
    const v4d one = {1, 1, 1, 1};
    const v4d huge = {DBL_MAX, DBL_MAX, DBL_MAX, DBL_MAX};
    for (size_t k = 0; k < ld; k += 4) {
        v4d a, b;
        V4_LOAD(a, x + k); V4_LOAD(b, y + k);
        v4d sum = V4_ABS(a) + V4_ABS(b), diff = V4_ABS(a - b);
        v4i ok = (sum > tiny) | (diff > tiny);
        v4d dev = diff / sum;
        /* |x| + |y| beyond DBL_MAX: Inf/Inf, which stats counts as 1 */
        v4i inf = (diff > huge) & (sum > huge);
        dev = (v4d) (((v4i) one & inf) | ((v4i) dev & ~inf));
        acc += (v4d) ((v4i) dev & ok);
        cnt += (v4d) ((v4i) one & ok);
    }
    double dist = V4_SUM(acc), count = V4_SUM(cnt);
    if (count == 0) return gpucor_na_real;
    if (count != (double) nc) dist /= (count / (double) nc);
    return dist;
}

/* ---- the exact scalar path (stats' distance.c, coordinate by coordinate) -- */
static double r_pow(double x, double y)
{
    /* R_pow's special cases for x >= 0 */
    if (x == 1.0 || y == 0.0) return 1.0;
    if (x == 0.0) return y > 0 ? 0.0 : (y < 0 ? INFINITY : y);
    if (isfinite(x) && isfinite(y)) return y == 2.0 ? x * x : pow(x, y);
    return pow(x, y);
}

static double pair_scalar(dist_ctx *c, const double *x, const double *y,
                          int *nonfinite)
{
    dist_problem *pb = c->pb;
    size_t nc = pb->p, count = 0, total = 0;
    double dist = 0;
    switch (pb->method) {
    case DIST_EUCLIDEAN:
    case DIST_MANHATTAN:
    case DIST_MINKOWSKI:
        for (size_t k = 0; k < nc; k++) {
            if (isnan(x[k]) || isnan(y[k])) continue;
            double dev = x[k] - y[k];
            if (isnan(dev)) continue;
            dist += pb->method == DIST_EUCLIDEAN ? dev * dev
                  : pb->method == DIST_MANHATTAN ? fabs(dev)
                  : r_pow(fabs(dev), pb->power);
            count++;
        }
        if (count == 0) return gpucor_na_real;
        if (count != nc) dist /= ((double) count / (double) nc);
        return pb->method == DIST_EUCLIDEAN ? sqrt(dist)
             : pb->method == DIST_MANHATTAN ? dist
             : r_pow(dist, 1.0 / pb->power);
    case DIST_MAXIMUM:
        dist = -DBL_MAX;
        for (size_t k = 0; k < nc; k++) {
            if (isnan(x[k]) || isnan(y[k])) continue;
            double dev = fabs(x[k] - y[k]);
            if (isnan(dev)) continue;
            if (dev > dist) dist = dev;
            count++;
        }
        return count == 0 ? gpucor_na_real : dist;
    case DIST_CANBERRA:
        for (size_t k = 0; k < nc; k++) {
            if (isnan(x[k]) || isnan(y[k])) continue;
            double sum = fabs(x[k]) + fabs(y[k]), diff = fabs(x[k] - y[k]);
            if (sum > DBL_MIN || diff > DBL_MIN) {
                double dev = diff / sum;
                /* Inf/Inf (an infinity against anything but NA) counts as 1 */
                if (isnan(dev) && !isfinite(diff) && diff == sum) dev = 1.0;
                if (!isnan(dev)) {
                    dist += dev;
                    count++;
                }
            }
        }
        if (count == 0) return gpucor_na_real;
        if (count != nc) dist /= ((double) count / (double) nc);
        return dist;
    case DIST_BINARY: {
        size_t differ = 0;
        for (size_t k = 0; k < nc; k++) {
            if (isnan(x[k]) || isnan(y[k])) continue;
            if (!isfinite(x[k]) || !isfinite(y[k])) {
                *nonfinite = 1;   /* stats: treated as NA, with a warning */
                continue;
            }
            if (x[k] != 0.0 || y[k] != 0.0) {
                count++;
                if (!(x[k] != 0.0 && y[k] != 0.0)) differ++;
            }
            total++;
        }
        if (total == 0) return gpucor_na_real;
        if (count == 0) return 0;
        return (double) differ / (double) count;
    }
    }
    return gpucor_na_real;
}

static void fill(void *ctx, size_t i0, size_t ni, size_t j0, size_t nj,
                 double *tile, void *scratch)
{
    dist_ctx *c = ctx;
    dist_problem *pb = c->pb;
    (void) scratch;
    int nonfinite = 0;
    for (size_t b = 0; b < nj; b++) {
        size_t j = j0 + b;
        double *col = tile + b * ni;
        const double *yj = c->yt + j * c->ld;
        /* the fast block fills every row of the column; pairs that need
         * the exact path are overwritten below */
        int fast = c->finite_y[j];
        switch (fast ? pb->method : -1) {
        case DIST_EUCLIDEAN:
            block_euclidean(c->xt, c->ld, i0, ni, yj, col);
            for (size_t a = 0; a < ni; a++) col[a] = sqrt(col[a]);
            break;
        case DIST_MANHATTAN: block_manhattan(c->xt, c->ld, i0, ni, yj, col); break;
        case DIST_MAXIMUM:   block_maximum(c->xt, c->ld, i0, ni, yj, col); break;
        case DIST_CANBERRA:
            for (size_t a = 0; a < ni; a++)
                col[a] = canberra_finite(c->xt + (i0 + a) * c->ld, yj, c->ld, pb->p);
            break;
        default: fast = 0;
        }
        for (size_t a = 0; a < ni; a++) {
            size_t i = i0 + a;
            if ((c->symmetric && i <= j) || (fast && c->finite[i])) continue;
            col[a] = pair_scalar(c, c->xt + i * c->ld, yj, &nonfinite);
        }
    }
    if (nonfinite) {
#ifdef _OPENMP
#pragma omp atomic write
#endif
        c->nonfinite = 1;
    }
}

/* Rows of the n x p, column-major x into a row-major buffer of rows of ld
 * (zero padded), and whether each row is all finite. */
static void rows_copy(const double *x, size_t n, size_t p, size_t ld, double *xt,
                      unsigned char *finite, int nthreads)
{
#ifdef _OPENMP
#pragma omp parallel for num_threads(nthreads) schedule(static)
#endif
    for (size_t i = 0; i < n; i++) {
        double *row = xt + i * ld;
        unsigned char fin = 1;
        for (size_t k = 0; k < p; k++) {
            row[k] = x[i + k * n];
            if (!isfinite(row[k])) fin = 0;
        }
        for (size_t k = p; k < ld; k++) row[k] = 0.0;
        finite[i] = fin;
    }
}

static int dist_run(dist_problem *pb)
{
    pb->nonfinite_binary = 0;
    pb->threads_used = 1;
    int symmetric = pb->y == NULL;
    if (symmetric ? pb->n < 2 : pb->n == 0 || pb->q == 0) return GPUCOR_OK;
    size_t n = pb->n, p = pb->p, q = symmetric ? n : pb->q,
           ld = (p + 3) & ~(size_t) 3;
    if (ld == 0) ld = 4;
    int nth = pb->host->opts->nthreads;
    double *xt = malloc(n * ld * sizeof(double)), *yt = NULL;
    unsigned char *finite = malloc(n), *finite_y = NULL;
    int status = GPUCOR_OK;
    if (!xt || !finite) { status = GPUCOR_ERR_ALLOC; goto cleanup; }
    rows_copy(pb->x, n, p, ld, xt, finite, nth);
    if (!symmetric) {
        yt = malloc(q * ld * sizeof(double));
        finite_y = malloc(q);
        if (!yt || !finite_y) { status = GPUCOR_ERR_ALLOC; goto cleanup; }
        rows_copy(pb->y, q, p, ld, yt, finite_y, nth);
    }
    dist_ctx c = {pb, xt, symmetric ? xt : yt, ld, finite, symmetric ? finite : finite_y,
                  symmetric, 0};
    size_t tile = pb->host->opts->cpu_tile ? pb->host->opts->cpu_tile : TILE_DIST;
    status = cpu_tiles_run(n, q, symmetric, tile, fill, &c, 0, pb->sink, pb->host,
                           &pb->threads_used);
    pb->nonfinite_binary = c.nonfinite;
cleanup:
    free(xt);
    free(yt);
    free(finite);
    free(finite_y);
    return status;
}

int cpu_dist_run(const gc_problem *g, const gc_sink *sink, const gc_host *host, gc_pass *out)
{
    dist_problem pb = {0};
    pb.x = g->x; pb.n = g->n; pb.p = g->p;
    pb.y = g->y; pb.q = g->y ? g->q : 0;
    pb.method = g->measure->op;
    pb.power = g->power;
    pb.sink = sink;
    pb.host = host;
    int status = dist_run(&pb);
    out->nonfinite = pb.nonfinite_binary;
    out->threads_used = pb.threads_used;
    return status;
}
