/*
 * correlate.c -- correlation matrices (gpu_cor) and correlation distances
 * (gpu_dist "correlation", "spearman", ...) on the CPU.
 *
 * Every column is prepared once (standardized for the product methods, dense
 * ranks for Kendall) and the tile driver then fills p x q tiles: dot products
 * of standardized columns, or Kendall's tau per pair.  Under
 * use = "pairwise.complete.obs" the pairs that involve a column with NA are
 * recomputed exactly over their shared rows; pairs of complete columns keep
 * the fast path, centred with the mean stats' pairwise code gives them.
 * fill() is the producer: each tile leaves it with stats' rules applied
 * (NA, zero sd, the clamp, the unit diagonal), and the sink puts it in its
 * final place with the epilogue (a p x q matrix, or 1 - r in a 'dist').
 */
#include <math.h>
#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include "cpu.h"

/* the engine's own context of a pass (cpu_cor_run makes it from the problem) */
typedef struct {
    const double *x;  size_t p, ldx;   /* columns are variables, contiguous */
    const double *y;  size_t q, ldy;   /* y == NULL: x against itself */
    size_t n;                          /* rows of x and y */
    const int *rows;  size_t nobs;     /* rows to use (complete modes) */
    int method;                        /* COR_* */
    int use;                           /* USE_* */
    int cosine;                        /* uncentred (cosine similarity) */
    int raw;                           /* prepared columns, products as
                                          they are (PREP_RAW) */
    int cov;                           /* pairwise Pearson: a pair with NA
                                          gives its covariance (gpu_cov) */
    int dist_rules;                    /* stats' rules of 1 - cor(t(x)) (a
                                          distance): the zero-sd warning per
                                          pair i > j, not cor()'s column rule */
    const gc_sink *sink;               /* where the tiles go */
    const gc_host *host;               /* threads, interrupts, tile size */
    int sd0;                           /* out: "the standard deviation is zero" */
    int threads_used;                  /* out: the tile driver's team size */
} cor_problem;

#define TILE_DOT     128   /* 128 x 128 doubles = 128 KiB of tile, in L2 */
#define TILE_KENDALL 32    /* per-pair work is O(n log n): small tiles balance */

typedef struct {
    cor_problem *pb;
    const double *zx, *zy;       /* standardized columns, stride ld */
    size_t ld;
    const int *dx, *dy;          /* Kendall dense ranks, stride nobs */
    const unsigned char *fx, *fy;
    const double *rawx, *rawy;   /* original columns for exact pairs */
    int symmetric, pairwise;
    int sd0;                     /* set by any thread (only ever to 1) */
} cor_ctx;

static void note_sd0(cor_ctx *c)
{
#ifdef _OPENMP
#pragma omp atomic write
#endif
    c->sd0 = 1;
}

/* The exact path for one pair with NA under pairwise.complete.obs. */
static double exact_pair(cor_ctx *c, size_t i, size_t j, void *scratch)
{
    cor_problem *pb = c->pb;
    const double *x = c->rawx + i * pb->ldx, *y = c->rawy + j * (pb->y ? pb->ldy : pb->ldx);
    int sd0 = 0;
    double r;
    if (pb->cov)
        r = cpu_cov_pair(x, y, pb->n);
    else if (pb->cosine)
        r = cpu_cosine_pair(x, y, pb->n, &sd0);
    else if (pb->method == COR_PEARSON)
        r = cpu_pearson_pair(x, y, pb->n, &sd0);
    else if (pb->method == COR_SPEARMAN)
        r = cpu_spearman_pair(x, y, pb->n, scratch,
                              (size_t *) ((double *) scratch + 4 * pb->n), &sd0);
    else
        r = cpu_kendall_dense(c->dx + i * pb->n, c->dy + j * pb->n, pb->n,
                              scratch, &sd0);
    if (sd0) note_sd0(c);
    return r;
}

/* Final value of pair (i, j) from its raw entry, with stats' rules. */
static inline double pair_value(cor_ctx *c, size_t i, size_t j, double v)
{
    unsigned f = c->fx[i] | c->fy[j];
    if (f & COL_HAS_NA)
        return c->pairwise ? v : gpucor_na_real;
    int per_pair = c->pairwise || c->pb->dist_rules;
    unsigned zero = per_pair ? COL_ZERO_SD : gc_zero_sd_flags(!c->symmetric);
    if (f & zero) {
        if (per_pair) note_sd0(c);
        return gpucor_na_real;
    }
    return v >= 1.0 ? 1.0 : (v <= -1.0 ? -1.0 : v);
}

static void fill(void *ctx, size_t i0, size_t ni, size_t j0, size_t nj,
                 double *tile, void *scratch)
{
    cor_ctx *c = ctx;
    cor_problem *pb = c->pb;
    int kendall = pb->method == COR_KENDALL && !pb->cosine;
    if (!kendall)
        cpu_dot_tile(c->zx + i0 * c->ld, c->zy + j0 * c->ld, c->ld, pb->nobs,
                     ni, nj, tile);
    for (size_t b = 0; b < nj; b++) {
        size_t j = j0 + b;
        for (size_t a = 0; a < ni; a++) {
            size_t i = i0 + a;
            if (c->symmetric && j > i) continue;   /* mirrored by the sink */
            double *r = tile + a + b * ni;
            unsigned f = c->fx[i] | c->fy[j];
            if (c->pairwise && (f & COL_HAS_NA))
                *r = exact_pair(c, i, j, scratch);
            else if (kendall && !f) {
                int sd0 = 0;
                *r = cpu_kendall_dense(c->dx + i * pb->nobs, c->dy + j * pb->nobs,
                                       pb->nobs, scratch, &sd0);
            }
            /* a distance has no diagonal; cor()'s is 1 outside pairwise mode */
            if (c->symmetric && i == j) {
                if (pb->dist_rules) continue;
                if (!c->pairwise) { *r = 1.0; continue; }
            }
            *r = pair_value(c, i, j, *r);
        }
    }
}

/* Dense ranks of each column over the used rows; flags as standardize's. */
static int prepare_kendall(const double *x, size_t p, size_t ldx,
                           const int *rows, size_t nobs, int *d,
                           unsigned char *flags, int nthreads)
{
    int failed = 0;
#ifdef _OPENMP
#pragma omp parallel num_threads(nthreads)
#endif
    {
        double *v = malloc((nobs ? nobs : 1) * sizeof(double));
        size_t *idx = malloc(2 * (nobs ? nobs : 1) * sizeof(size_t));
        if (!v || !idx) {
#ifdef _OPENMP
#pragma omp atomic write
#endif
            failed = 1;
        }
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
        for (size_t c = 0; c < p; c++) {
            if (!v || !idx) continue;
            const double *col = x + c * ldx;
            for (size_t k = 0; k < nobs; k++) v[k] = col[rows ? (size_t) rows[k] : k];
            int *dc = d + c * nobs;
            cpu_dense_rank(v, nobs, dc, idx, idx + nobs);
            unsigned char f = 0;
            int maxr = -1;
            for (size_t k = 0; k < nobs; k++) {
                if (dc[k] < 0) f |= COL_HAS_NA;
                if (dc[k] > maxr) maxr = dc[k];
            }
            if (maxr <= 0) f |= COL_ZERO_SD;
            flags[c] = f;
        }
        free(v);
        free(idx);
    }
    return failed ? GPUCOR_ERR_ALLOC : GPUCOR_OK;
}

static int cor_run(cor_problem *pb)
{
    int status = GPUCOR_OK;
    cor_ctx c = {0};
    double *zx = NULL, *zy = NULL;
    int *dx = NULL, *dy = NULL;
    unsigned char *fx = NULL, *fy = NULL;
    int kendall = pb->method == COR_KENDALL && !pb->cosine;
    int pairwise = pb->use == USE_PAIRWISE;
    size_t q = pb->y ? pb->q : pb->p;

    pb->sd0 = 0;
    pb->threads_used = 1;
    if (!pb->rows) pb->nobs = pb->n;
    if (pb->p == 0 || q == 0) return GPUCOR_OK;
    /* stats: fewer than two observations give NA throughout, silently; the
     * cosine of two one-coordinate vectors is their product's sign */
    if (pb->nobs < (pb->cosine ? 1u : 2u)) return gc_sink_fill_na(pb->sink);

    fx = malloc(pb->p);
    fy = pb->y ? malloc(q) : fx;
    if (!fx || !fy) { status = GPUCOR_ERR_ALLOC; goto cleanup; }
    size_t ld = (pb->nobs + 3) & ~(size_t) 3;
    if (kendall) {
        dx = malloc(pb->p * pb->nobs * sizeof(int));
        dy = pb->y ? malloc(q * pb->nobs * sizeof(int)) : dx;
        if (!dx || !dy) { status = GPUCOR_ERR_ALLOC; goto cleanup; }
        status = prepare_kendall(pb->x, pb->p, pb->ldx, pb->rows, pb->nobs, dx,
                                 fx, pb->host->opts->nthreads);
        if (status == GPUCOR_OK && pb->y)
            status = prepare_kendall(pb->y, q, pb->ldy, pb->rows, pb->nobs, dy,
                                     fy, pb->host->opts->nthreads);
    } else {
        zx = malloc(pb->p * ld * sizeof(double));
        zy = pb->y ? malloc(q * ld * sizeof(double)) : zx;
        if (!zx || !zy) { status = GPUCOR_ERR_ALLOC; goto cleanup; }
        int rank = pb->method == COR_SPEARMAN && !pb->cosine;
        /* pairwise Pearson of complete columns is COV_PAIRWISE_BODY in
         * stats; Spearman's pairs are re-ranked and go through the
         * two-pass code of cor(use = "all.obs") */
        int mean_kind = pb->raw ? MEAN_RAW : pb->cosine ? MEAN_NONE
                      : (pairwise && !rank) ? MEAN_PAIRWISE : MEAN_R_TWO_PASS;
        status = cpu_standardize(pb->x, pb->n, pb->p, pb->ldx, 1, pb->rows,
                                 pb->nobs, rank, mean_kind, zx, ld, fx,
                                 pb->host->opts->nthreads);
        if (status == GPUCOR_OK && pb->y)
            status = cpu_standardize(pb->y, pb->n, q, pb->ldy, 1, pb->rows,
                                     pb->nobs, rank, mean_kind, zy, ld, fy,
                                     pb->host->opts->nthreads);
    }
    if (status != GPUCOR_OK) goto cleanup;

    c.pb = pb;
    c.zx = zx; c.zy = zy; c.ld = ld;
    c.dx = dx; c.dy = dy;
    c.fx = fx; c.fy = fy;
    c.rawx = pb->x; c.rawy = pb->y ? pb->y : pb->x;
    c.symmetric = pb->y == NULL;
    c.pairwise = pairwise;

    /* per-thread scratch: Spearman's exact pairs need 4n doubles + 2n
     * size_t, Kendall 6n + 2 ints */
    size_t n = pb->n;
    size_t scratch = kendall ? (6 * n + 2) * sizeof(int)
                             : (pairwise ? 4 * n * sizeof(double) + 2 * n * sizeof(size_t) : 0);
    size_t tile = pb->host->opts->cpu_tile ? pb->host->opts->cpu_tile
                  : kendall ? TILE_KENDALL : TILE_DOT;
    status = cpu_tiles_run(pb->p, q, c.symmetric, tile, fill, &c, scratch,
                           pb->sink, pb->host, &pb->threads_used);
    if (status != GPUCOR_OK) goto cleanup;
    pb->sd0 = (pairwise || pb->dist_rules)
                  ? c.sd0 : gc_sd0_rule(fx, pb->p, pb->y ? fy : NULL, q);

cleanup:
    if (zy != zx) free(zy);
    free(zx);
    if (dy != dx) free(dy);
    free(dx);
    if (fy != fx) free(fy);
    free(fx);
    return status;
}

/* Correlation distances: the rows of x (and of y: gpu_knn(query =)) are
 * the variables, so they are copied into contiguous columns first. */
static double *rows_to_columns(const double *x, size_t n, size_t p)
{
    size_t len = n * p;
    double *xt = malloc((len ? len : 1) * sizeof(double));
    if (!xt) return NULL;
    for (size_t k = 0; k < p; k++)
        for (size_t i = 0; i < n; i++) xt[k + i * p] = x[i + k * n];
    return xt;
}

static int cor_between_rows(cor_problem *pb, const gc_problem *g)
{
    double *xt = rows_to_columns(g->x, g->n, g->p), *yt = NULL;
    if (!xt) return GPUCOR_ERR_ALLOC;
    if (g->y && !(yt = rows_to_columns(g->y, g->q, g->p))) {
        free(xt);
        return GPUCOR_ERR_ALLOC;
    }
    pb->x = xt; pb->p = g->n; pb->ldx = g->p;
    pb->y = yt; pb->q = g->y ? g->q : 0; pb->ldy = g->p;
    pb->n = g->p;
    pb->dist_rules = 1;
    int status = cor_run(pb);
    free(xt);
    free(yt);
    return status;
}

int cpu_cor_run(const gc_problem *g, const gc_sink *sink, const gc_host *host, gc_pass *out)
{
    const gc_measure *m = g->measure;
    cor_problem pb = {0};
    pb.method = m->cor;
    pb.raw = (m->prep & PREP_RAW) != 0;
    pb.cosine = pb.raw || (m->prep & PREP_UNCENTRED) != 0;
    pb.cov = (m->prep & PREP_COV) != 0;
    pb.use = g->use;
    pb.sink = sink;
    pb.host = host;
    int status;
    if (g->between_rows) {
        status = cor_between_rows(&pb, g);
    } else {
        pb.x = g->x; pb.p = g->p; pb.ldx = g->n;
        pb.y = g->y; pb.q = g->q; pb.ldy = g->n;
        pb.n = g->n;
        pb.rows = g->rows;
        pb.nobs = g->nobs;
        status = cor_run(&pb);
    }
    out->sd0 = pb.sd0;
    out->threads_used = pb.threads_used;
    return status;
}
