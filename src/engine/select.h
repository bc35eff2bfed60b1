/*
 * select.h -- the selecting sink (SINK_SELECT): what gpu_cor_edges() and
 * gpu_knn() keep of the canonical tiles, so that no n x n result is ever
 * stored.  One pass over the tiles does any of three things at once:
 *
 *  - SEL_HIST: a histogram of the pairs' keys (16-bit bins under a
 *    prefix: refining passes look inside one bin of the pass before), for
 *    the cut of a density or an FDR selection (algo/edges.c);
 *  - SEL_COLLECT: every pair whose key is at least a cut, as (i, j, value);
 *  - SEL_HEAPS: each variable's k strongest partners (bounded heaps).
 *
 * A pair's value is the tile's (a correlation, or a distance after the
 * sink's epilogue); its strength orders the pairs (|r|, r, or -d: a
 * smaller distance is stronger); its key is what the histogram and the cut
 * use: the strength, |r|, or -p (its p-value from a callback: pairs with
 * their own number of observations).  Keys map to unsigned 64-bit codes
 * in the same order (sel_code), so that bins are exact ranges.  NA and
 * NaN values are never selected nor counted.
 *
 * Tiles come from several threads at once: the CPU engine's OpenMP team
 * (gc_sink_emit) or the GPU's staged panels split over columns
 * (gc_sink_commit); each thread writes its own slot (histogram,
 * candidates) and the heaps are locked per variable.
 */
#ifndef GPUCOR_SELECT_H
#define GPUCOR_SELECT_H

#include <stdint.h>
#include <string.h>
#include "engine.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { SEL_HIST = 1, SEL_COLLECT = 2, SEL_HEAPS = 4 };
enum { STRENGTH_ABS = 0, STRENGTH_RAW = 1, STRENGTH_NEG = 2 };
enum { KEY_STRENGTH = 0, KEY_ABS = 1, KEY_PVALUE = 2 };

#define SEL_BIN_BITS 16
#define SEL_NBINS ((size_t) 1 << SEL_BIN_BITS)

typedef struct { double v; uint32_t i, j; } gc_pair;   /* i: row, j: column */
typedef struct { double s, v; uint32_t partner; } gc_hent;   /* strength, value */

/* The p-value of pair (i, j) with value r (NaN: none). */
typedef double (*gc_pvalue_fn)(void *ctx, size_t i, size_t j, double r);

struct gc_select {
    /* ---- what to do (set by the driver before a pass) ---- */
    int symmetric;        /* pairs i > j of a p x p result, each once */
    size_t p, q;
    int strength;         /* STRENGTH_* */
    int key;              /* KEY_* */
    gc_pvalue_fn pvalue;  /* KEY_PVALUE */
    void *pctx;
    int mode;             /* SEL_* bits */
    uint64_t prefix;      /* SEL_HIST: codes whose top prefix_bits are prefix */
    int prefix_bits;
    uint64_t lower;       /* SEL_COLLECT: codes >= lower */
    size_t k;             /* SEL_HEAPS: partners per variable */
    int cols_only;        /* SEL_HEAPS of a p x q result: only the q columns
                             keep heaps (heap j, partners the rows i): a
                             query's neighbours among the reference rows
                             (gpu_knn(query =)), no heap for the rows */
    int has_thr;          /* SEL_HEAPS: only strengths >= thr */
    double thr;
    /* ---- state (gc_select_alloc) ---- */
    int nslots;
    uint64_t *hist;       /* nslots x SEL_NBINS */
    uint64_t *above;      /* per slot: codes above the prefix's range */
    uint64_t *valid;      /* per slot: pairs with a key */
    struct gc_pairvec { gc_pair *v; size_t len, cap; } *cand;   /* per slot */
    size_t nvar;          /* heaps: p (symmetric), q (cols_only) or p + q
                             (y's after x's) */
    gc_hent *heap;        /* nvar x k */
    uint32_t *hlen;
    unsigned char *lock;
    double *hfloor;       /* a full heap's worst strength (-Inf until full) */
    int failed;           /* out of memory in a pass */
};

/* Order-preserving map of a key to an unsigned code (-0 as +0), and back. */
GC_HOST_DEVICE static inline uint64_t sel_code(double s)
{
    uint64_t b;
    s += 0.0;
    memcpy(&b, &s, sizeof b);
    return (b >> 63) ? ~b : b | ((uint64_t) 1 << 63);
}
static inline double sel_decode(uint64_t c)
{
    uint64_t b = (c >> 63) ? c & ~((uint64_t) 1 << 63) : ~c;
    double s;
    memcpy(&s, &b, sizeof s);
    return s;
}
/* The lowest code of bin b of the range under (prefix, bits) (the
 * histogram's SEL_NBINS bins); *top when b is one past the last bin of the
 * highest range (no edge). */
static inline uint64_t sel_bin_edge(uint64_t prefix, int bits, size_t b, int *top)
{
    int wb = 64 - bits - SEL_BIN_BITS;      /* log2 of a bin's width */
    uint64_t lo = bits ? prefix << (64 - bits) : 0;
    *top = 0;
    if (b < SEL_NBINS) return lo + ((uint64_t) b << wb);
    if (bits == 0 || prefix == (((uint64_t) 1 << bits) - 1)) { *top = 1; return 0; }
    return (prefix + 1) << (64 - bits);
}
GC_HOST_DEVICE static inline double sel_strength(int kind, double v)
{
    return kind == STRENGTH_ABS ? (v < 0 ? -v : v) : kind == STRENGTH_NEG ? -v : v;
}

/* The GPU's device half (cuda/select.cu) selects on the device where it
 * can: a collecting pass compacts the pairs at or above the cut
 * (TILE_PAIRS: gc_pair records), and a heap pass over whole columns of a
 * symmetric result keeps each column's k <= SEL_DEVICE_TOPK best partners
 * (TILE_TOPK: k records per column, i = UINT32_MAX where none), and a
 * histogram pass counts on the device (TILE_HIST: SEL_NBINS counts, then
 * the counts above the range and of valid keys, uint64); p-value keys and
 * larger k stage the tile's values. */
#define SEL_DEVICE_TOPK 32

/* Memory for nslots threads (histograms only when hist, heaps when k > 0);
 * 0, or nonzero when out of memory. */
int gc_select_alloc(gc_select *s, int nslots, int hist);
/* Room for n collected pairs in advance (a hint: more still fit). */
int gc_select_reserve(gc_select *s, size_t n);
void gc_select_free(gc_select *s);
/* Empties histograms, counts and candidates before a pass (heaps too). */
void gc_select_reset(gc_select *s);
/* The calling thread's slot. */
int gc_select_slot(void);
/* Sums of the slots: hist (SEL_NBINS), above and valid. */
void gc_select_sum(const gc_select *s, uint64_t *hist, uint64_t *above,
                   uint64_t *valid);
/* What another process's pass found (BiocParallel: network.c), added to
 * this one's: a partner offered to variable var's heap, a collected pair
 * into slot's candidates (nonzero: out of memory). */
void gc_select_offer(gc_select *s, size_t var, double st, double v, size_t partner);
int gc_select_push(gc_select *s, int slot, double v, size_t i, size_t j);
/* Variable var's kept partners, strongest first (ties: smaller index);
 * returns how many (at most k).  Sorts the heap in place. */
size_t gc_select_heap_sorted(gc_select *s, size_t var, const gc_hent **out);

#ifdef __cplusplus
}
#endif
#endif
