/*
 * engine.h -- the seam between producers and sinks, shared by the CPU
 * engine (cpu/), the CUDA engine (cuda/) and the .Call entry points.
 * R-free: it compiles as C and as CUDA C++.
 *
 * A producer computes "the value of pair (i, j)" -- a correlation with
 * stats' rules applied (NA, zero sd, the clamp to [-1, 1], the unit
 * diagonal), or a distance -- for a block of pairs: a canonical tile.  A
 * sink decides what becomes of the tiles: it applies the epilogue (1 - r,
 * 1 - |r|) once, and the layout (a p x q matrix, a packed 'dist').  The
 * CPU engine hands each tile to the sink's host half (gc_sink_emit); the
 * CUDA engine runs the sink's device half (cuda/pack.cu) on the device and
 * commits the staged range on the host (gc_sink_commit).
 */
#ifndef GPUCOR_ENGINE_H
#define GPUCOR_ENGINE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <math.h>
#include "../gpucor.h"
#include "layout.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- per-column flags: one set for both engines -------------------------- */
#define COL_HAS_NA  1u   /* a NaN/NA among the rows used */
#define COL_ZERO_SD 2u   /* zero spread: every used value equal (or < 2 values) */
/* stats' cor() outside pairwise mode keeps the spread in a double, so a
 * column whose spread underflows one has "zero sd" there -- by two rules:
 * without y it stores the variance (cov_complete1, cov_na_1), with y the
 * standard deviation (COV_SDEV of cov_complete2, cov_na_2). */
#define COL_VAR_UNDERFLOW 4u   /* (double) variance == 0 */
#define COL_SD_UNDERFLOW  8u   /* (double) sqrtl(variance) == 0 */
/* The flags that make a column's sd zero in stats' cor() outside pairwise
 * mode: x against itself (no y) or against y. */
static inline unsigned gc_zero_sd_flags(int with_y)
{
    return COL_ZERO_SD | (with_y ? COL_SD_UNDERFLOW : COL_VAR_UNDERFLOW);
}
/* stats' rule for "the standard deviation is zero" outside pairwise mode,
 * from the column flags (fy NULL: x against itself), for both engines
 * (measure.c). */
int gc_sd0_rule(const unsigned char *fx, size_t p, const unsigned char *fy, size_t q);

/* ---- data kept on the GPUs between calls ------------------------------------ */
/* x of a search that is made again and again (GpucorParam's index,
 * src/knn.c): uploaded to a device by the first search that runs there and
 * used by the next ones (the distance producer, cuda/distance.cu), freed
 * with the R object or when gpucor releases the GPUs. */
#define GC_RESIDENT_DEVICES 64
typedef struct gc_resident {
    const double *host;        /* R's n x p column-major copy (the R object keeps it) */
    size_t n, p;
    int nonfinite;             /* some value is NA, NaN or Inf */
    void *dev[GC_RESIDENT_DEVICES];   /* the copy on each CUDA ordinal, or NULL */
    unsigned uploads;          /* copies made (tests) */
    unsigned char lock;        /* held while a worker uploads */
    struct gc_resident *prev, *next;  /* every live one */
} gc_resident;

/* ---- options: from R's named list, parsed once (options.c) --------------- */
typedef struct {
    int gpu;             /* run on the GPU */
    int single;          /* GPU arithmetic in float */
    int progress;        /* a progress bar for long runs */
    double progress_delay;   /* seconds before the bar shows (2; tests 0) */
    void *bar;           /* the bar of a loop of engine calls in R that
                            this call is one step of (progress.c), or NULL */
    int profile;         /* attach stage timings / team size to the result */
    int nthreads;        /* CPU threads (engine, or the GPU's copy-out) */
    double gpu_memory;   /* bytes of device memory one call may use; <= 0: free */
    size_t gpu_panel;    /* force the GPU panel width (tests); 0: automatic */
    size_t cpu_tile;     /* force the CPU tile side (tests); 0: automatic */
    int ndevices;        /* GPUs to use: devices[0 .. ndevices - 1] (CUDA
                            ordinals; one may repeat); 0: every visible one */
    int devices[16];
    char fun[32];        /* the R function that errors name ("": the entry's own) */
    size_t col0, col1;   /* a BiocParallel worker's share of the result: only
                            the tiles or panels whose first column is in
                            [col0, col1) (col1 == 0: all of them); then the
                            GPU's panels no longer depend on the device's
                            free memory, so that every process cuts the
                            same ones (plan.c) */
    gc_resident *resident;   /* x already on the GPUs (or to be put there), or NULL */
    int col_cover;       /* the share is the tiles or panels that meet
                            [col0, col1), not those whose first column is
                            in it: a 'dist' share (gpu_dist), whose sink
                            keeps exactly the columns [col0, col1), so a
                            tile across the border is made by both sides */
} gc_opts;

/* ---- what an engine call gets: the options, and hooks called between
 * tiles or panels from the calling thread ----------------------------------- */
typedef struct {
    const gc_opts *opts;
    gpucor_interrupt_fn interrupted;          /* nonzero: stop */
    void (*progress)(void *ctx, double frac); /* may be NULL; frac of the pass */
    /* a multi-pass driver names its passes (may be NULL): pass k of npass
     * (from 1) is 'step' and takes the share 'weight' of the call's work
     * (<= 0: an equal share of what is left); progress() then runs from 0
     * to 1 within it.  Drivers call gc_progress_pass(), below. */
    void (*pass)(void *ctx, const char *step, int k, int npass, double weight);
    void *progress_ctx;
    double seconds[3];                        /* out (GPU): waiting for the device,
                                                 committing into R memory, total */
    char note[512];                           /* out: a warning for the user
                                                 (a GPU that was left out) */
} gc_host;

static inline void gc_progress_pass(const gc_host *host, const char *step, int k, int npass,
                           double weight)
{
    if (host->pass) host->pass(host->progress_ctx, step, k, npass, weight);
}

/* host, with options that name one GPU, 'device' (where a resident
 * operand lives: gpu_hclust's distances, gpu_tom's adjacency); o1 holds
 * those options. */
static inline void gc_host_on_device(const gc_host *host, int device, gc_opts *o1,
                                     gc_host *h1)
{
    *o1 = *host->opts;
    o1->ndevices = 1;
    o1->devices[0] = device;
    *h1 = *host;
    h1->opts = o1;
}

/* ---- canonical tiles ----------------------------------------------------- */
/* Pairs (i0 + a, j0 + b), a < ni, b < nj, of the p x q result, at
 * val[a + b * ld] (doubles, or floats when is_float), each to be
 * multiplied by 'scale' (an exact power of two: single-precision distances
 * are computed on scaled data).  On the CPU a tile of a symmetric result
 * holds the pairs with j <= i only (the others are undefined) and the dense
 * sink mirrors them; GPU panels are whole columns (rows from i0). */
typedef struct {
    size_t i0, ni, j0, nj;
    const void *val;
    size_t ld;
    int is_float;
    double scale;
    int rec;          /* TILE_VALUES, or what the selecting sink's device
                         half made of the tile (select.h) */
    size_t nrec;      /* records in val */
    int tri;          /* GPU panels of a 'dist': only the pairs i > j hold
                         values (the others are scratch) */
    int transposed;   /* CPU, SINK_FILE: the values of pair (i0 + a, j0 + b)
                         are at val[b + a * ld] (tiles.c's mirrored tiles) */
} gc_tile;
enum { TILE_VALUES = 0, TILE_PAIRS = 1, TILE_TOPK = 2, TILE_HIST = 3, TILE_POWSUM = 4 };

/* ---- sinks ---------------------------------------------------------------- */
/* A sink is a row of gc_sink_table (sink.c), indexed by gc_sink.kind: its
 * host half (sink_<name>.c) and what it needs of the producers; its device
 * half is the same row of cuda/pack.cu's table.  Producers read the needs,
 * never the kind. */
enum { SINK_DENSE = 0, SINK_DIST = 1, SINK_SELECT = 2, SINK_DIST_DEVICE = 3,
       SINK_DENSE_DEVICE = 4, SINK_POWSUM = 5, SINK_FILE = 6, SINK_COUNT = 7 };
/* applied by the sink, once; an NA or NaN value passes unchanged.  The
 * adjacencies of WGCNA (algo/wgcna.h) take the sink's 'beta': |r|^beta,
 * ((1 + r) / 2)^beta, r > 0 ? r^beta : 0, and sign(r) |r|^beta (the
 * adjacency a signed TOM is made of).  EPI_GAUSS_MI: minet's build.mim
 * for a correlation estimator, -0.5 log(1 - r^2) with r^2 capped at
 * 0.999999. */
enum { EPI_IDENTITY = 0, EPI_ONE_MINUS = 1, EPI_ONE_MINUS_ABS = 2,
       EPI_ADJ_UNSIGNED = 3, EPI_ADJ_SIGNED = 4, EPI_ADJ_HYBRID = 5,
       EPI_ADJ_KEEP_SIGN = 6, EPI_GAUSS_MI = 7 };

typedef struct gc_select gc_select;   /* engine/select.h */
typedef struct gc_file gc_file;       /* engine/file.h */

/* SINK_POWSUM (sink_powsum.c, cuda/pack.cu): for every column j of a
 * symmetric p x p result and every power w[t] (ascending), the sum over
 * rows i != j of a_ij^w[t], a the value after the epilogue, NA left out:
 * the connectivities of WGCNA's soft-threshold scan.  a^w[t] is built as
 * pickSoftThreshold() builds it, a^w[t-1] * a^(w[t] - w[t-1]).  The host
 * sums into per-thread slots, added up at the end. */
typedef struct {
    const double *w;     /* npow powers, ascending */
    int npow;
    int nslots;
    double *slot;        /* nslots x p x npow (the CPU's threads) */
    double *k;           /* out: p x npow, column t the powers' sums */
    int degree;          /* instead of powers, degree centrality: npow == 2,
                            the count and the sum of the a_ij > cut (i != j;
                            w unused) */
    double cut;
} gc_powsum;

typedef struct {
    int kind;            /* SINK_*: the row of gc_sink_table.  SINK_DENSE:
                            p x q column-major; SINK_DIST: the packed lower
                            triangle of p items; SINK_SELECT: pairs
                            selected, counted or ranked (select.h);
                            SINK_DIST_DEVICE, SINK_DENSE_DEVICE: a packed
                            triangle or a matrix that stays in device memory,
                            at dev_out (CUDA engine only: gpu_hclust's
                            resident distances, gpu_tom's adjacency);
                            SINK_POWSUM; SINK_FILE */
    int epilogue;        /* EPI_* */
    int symmetric;       /* dense: CPU tiles hold j <= i; the sink mirrors them */
    size_t p, q;
    double *out;         /* the R result, gc_sink_len() doubles */
    gc_select *sel;      /* SINK_SELECT: what is kept of the tiles */
    void *dev_out;       /* SINK_DIST_DEVICE: doubles, or floats when the
                            tiles are (the values times the tile's scale);
                            SINK_DENSE_DEVICE: the p x q matrix there, leading
                            dimension ld (the values after the epilogue) */
    double beta;         /* the adjacencies' power */
    size_t ld;           /* SINK_DENSE(_DEVICE): leading dimension (0: p) */
    size_t win0, win1;   /* SINK_DIST: out holds the pairs of columns
                            [win0, win1) only, from out[0] (win1 == 0: the
                            whole 'dist'); the others are dropped */
    gc_powsum *pow;      /* SINK_POWSUM: the connectivities being summed */
    gc_file *file;       /* SINK_FILE: the p x q matrix goes to a file, never
                            whole in memory (file.h) */
    const double *mul_row, *mul_col;   /* SINK_DENSE, GPU commits: each value
                            (i, j) times mul_row[i] * mul_col[j] as it lands
                            (gpu_cov's spreads: covariances from correlations
                            without another pass over the result); NULL: none */
    int mul_round;       /* ... then rounded to an integer (Kendall's) */
    void *state;         /* a new sink's own state, the struct of its
                            sink_<name>.c (sink_template.h) */
} gc_sink;

/* What a sink needs of the producers (gc_sink_ops.needs). */
#define GC_SINK_PACKED      1u   /* it keeps the pairs i > j only (a 'dist'):
                                    GPU producers may make panels of those
                                    pairs, the device half packs them */
#define GC_SINK_BOTH_HALVES 2u   /* every tile of a symmetric result: the CPU
                                    makes the tiles above the diagonal too (as
                                    mirrored lower ones, tile->transposed) and
                                    the GPU whole columns, even for a 'dist'
                                    (the file's bands of whole columns) */

/* A sink's host half.  Every function may be NULL where the sink has
 * nothing to do. */
typedef struct {
    const char *name;
    unsigned needs;                                    /* GC_SINK_* */
    /* doubles of R memory at out */
    size_t (*len)(const gc_sink *s);
    /* CPU engine: a tile in host memory into the result, from any thread
     * of the team (tiles never overlap) */
    void (*emit)(const gc_sink *s, const gc_tile *t);
    /* CUDA engine: what the device half staged in host memory, on the
     * coordinator, over nthreads threads */
    void (*commit)(const gc_sink *s, const gc_tile *t, size_t offset, size_t count,
                   int nthreads);
    /* every value NA (a problem with fewer than two observations), beyond
     * the R memory (which gc_sink_fill_na fills); nonzero: out of memory */
    int (*fill_na)(const gc_sink *s);
    /* after the CPU engine's pass */
    void (*finish)(const gc_sink *s);
} gc_sink_ops;

extern const gc_sink_ops *const gc_sink_table[SINK_COUNT];
static inline const gc_sink_ops *gc_sink_ops_of(const gc_sink *s)
{
    return gc_sink_table[s->kind];
}
static inline unsigned gc_sink_needs(const gc_sink *s)
{
    return gc_sink_ops_of(s)->needs;
}

size_t gc_sink_len(const gc_sink *s);
/* Prepares the result memory for fast first writes (huge pages where the
 * OS offers them: host_mem.c). */
void gc_sink_begin(const gc_sink *s);
/* The table's functions (engine.h's gc_sink_ops says when each runs).
 * gc_sink_commit's dense ranges: t->val[0 .. count - 1] go to
 * out[offset ...], widened from float, multiplied by t->scale, NA kept;
 * the selecting sink's t is the staged tile itself (t->val in host
 * memory). */
void gc_sink_emit(const gc_sink *s, const gc_tile *t);
void gc_sink_commit(const gc_sink *s, const gc_tile *t, size_t offset,
                    size_t count, int nthreads);
int gc_sink_fill_na(const gc_sink *s);
void gc_sink_finish(const gc_sink *s);

/* Epilogue of one value, on the host (sink_*.c) and the device (pack.cu;
 * a float's 1 - r is exact in double, so rounding it back to float gives
 * float arithmetic's result). */
/* R's x^y (arithmetic.c, R_POW): x * x for y == 2, else pow() -- which
 * is x itself for y == 1 (taken without the call: the device's pow() is
 * slow, and the soft-threshold scan raises every value to 1 first). */
GC_HOST_DEVICE static inline double gc_rpow(double x, double y)
{
    if (y == 1.0) return x;
    if (y == 2.0) return x * x;
    if (x == 1.0 || y == 0.0) return 1.0;
    return pow(x, y);
}

GC_HOST_DEVICE static inline double gc_epilogue(int epi, double beta, double r)
{
    if (epi == EPI_IDENTITY || r != r) return r;
    switch (epi) {
    case EPI_ONE_MINUS: return 1.0 - r;
    case EPI_ONE_MINUS_ABS: return 1.0 - (r < 0 ? -r : r);
    case EPI_ADJ_UNSIGNED: return gc_rpow(r < 0 ? -r : r, beta);
    case EPI_ADJ_SIGNED: return gc_rpow((1.0 + r) / 2.0, beta);
    case EPI_ADJ_HYBRID: return r > 0 ? gc_rpow(r, beta) : 0.0;
    case EPI_GAUSS_MI: {             /* minet: cor^2, capped, -0.5 log(1 - .) */
        double r2 = r * r;
        return -0.5 * log(1.0 - (r2 > 0.999999 ? 0.999999 : r2));
    }
    default: {                                   /* EPI_ADJ_KEEP_SIGN */
        double a = pow(r < 0 ? -r : r, beta);
        return signbit(r) ? -a : a;
    }
    }
}

/* ---- the host memory of results (host_mem.c) ----------------------------- */
/* Advise huge pages for the page-aligned interior of [p, p + bytes). */
void gc_advise_huge(void *p, size_t bytes);
/* dst[k] = src[k] (doubles) or (double) src[k] * scale (floats, the float
 * NA bits becoming R's NA), split over nthreads in chunks of whole huge
 * pages, so that no two threads fault the same page of fresh memory. */
void gc_copy_out(double *dst, const void *src, size_t count, int is_float,
                 double scale, int nthreads);
/* The same into the p-row matrix out at out[offset ...], each value (i, j)
 * then times mr[i] * mc[j] (rounded to an integer when round_int); with
 * src NULL, in place over out[offset .. offset + count - 1]. */
void gc_copy_out_mul(double *out, const void *src, size_t offset, size_t count,
                     int is_float, double scale, size_t p, const double *mr,
                     const double *mc, int round_int, int nthreads);
/* The n x n symmetric matrix of the 'dist' d (the pairs i > j, column by
 * column), 'diag' on its diagonal, into out, on nthreads: the columns'
 * lower parts copied, then the upper parts mirrored by 64 x 64 tiles. */
void gc_dist_expand(const double *d, size_t n, double diag, double *out, int nthreads);
/* The n x n matrix a made symmetric from one half, by 64 x 64 tiles on
 * nthreads: the lower half from the upper (lower nonzero), or the upper
 * from the lower. */
void gc_mirror(double *a, size_t n, int lower, int nthreads);

/* Copies of large inputs before the engine runs go in chunks of
 * GC_COPY_CHUNK bytes with a check for Ctrl-C between them (host may be
 * NULL: no check): a 30000-object 'dist' is 3.6 GB, 21 s to copy into
 * fresh memory on the 2-core machine (page faults), where a 16 MiB chunk
 * takes about 0.1 s; the check costs microseconds. */
#define GC_COPY_CHUNK ((size_t) 16 << 20)
static inline int gc_host_interrupted(const gc_host *host)
{
    return host && host->interrupted && host->interrupted();
}
/* dst's ncol columns (ld doubles apart) = src's (lds apart), nrow doubles
 * each, on nthreads; GPUCOR_OK, or GPUCOR_ERR_INTERRUPT (dst partly
 * written). */
int gc_copy_columns(double *dst, size_t ld, const double *src, size_t lds, size_t nrow,
                    size_t ncol, int nthreads, const gc_host *host);

/* Bits of the float NaN that stands for NA in single-precision output. */
#define GPUCOR_FLOAT_NA_BITS 0x7fc007a2u
/* Whether a float of single-precision output is that NA (R's NA when
 * widened; other NaNs stay NaN). */
static inline int gc_float_is_na(float v)
{
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    return bits == GPUCOR_FLOAT_NA_BITS;
}

/* ---- the panel planner (plan.c) ------------------------------------------ */
/* Panels of result columns [j0, j0 + w): 'ncols' columns in all, each
 * needing 'col_bytes' of device memory (the producer's and the sink's
 * buffers for one column) and 'stage_bytes' of a staging buffer of
 * 'stage_cap' bytes; 'avail' bytes of the device are left.  w is a
 * multiple of 'align' when it can be, at most 'max_w', and 'forced' when
 * that is set (tests).  Returns 0 when not one column fits. */
typedef struct {
    size_t w, npanels, ncols;
    int narrow;   /* GPU: the sink stages a few records per column, not its
                     values (cuda/select.cu), so panels may be wider */
    int split;    /* GPU: a value does not depend on the panel width, so
                     several workers may cut narrower panels to share a
                     result of few panels (cuda/worker.cu) */
    size_t first; /* panel s is panel first + s of the whole result's */
} gc_plan;
int gc_plan_panels(size_t ncols, size_t col_bytes, size_t stage_bytes,
                   size_t stage_cap, size_t avail, size_t align, size_t max_w,
                   size_t forced, gc_plan *pl);
/* Columns [j0, j1) of panel s. */
void gc_plan_range(const gc_plan *pl, size_t s, size_t *j0, size_t *j1);
/* Keeps the panels of gc_opts' share [col0, col1) (when col1 > 0; those
 * that meet it when cover, else those whose first column is in it): first
 * and npanels then count those only.  Call once the width is final. */
void gc_plan_share(gc_plan *pl, size_t col0, size_t col1, int cover);
/* The tiles or panels of a share: those of block width w whose first
 * column, a multiple of w, is in [col0, col1) (cover: whose columns meet
 * it): blocks [*b0, *b1) of nblocks (col1 == 0: all). */
static inline void gc_share_blocks(size_t col0, size_t col1, int cover, size_t w,
                                   size_t nblocks, size_t *b0, size_t *b1)
{
    *b0 = 0;
    *b1 = nblocks;
    if (col1 == 0 || w == 0) return;
    *b0 = cover ? col0 / w : (col0 + w - 1) / w;
    *b1 = (col1 + w - 1) / w;
    if (*b1 > nblocks) *b1 = nblocks;
    if (*b0 > *b1) *b0 = *b1;
}

#ifdef __cplusplus
}
#endif
#endif
