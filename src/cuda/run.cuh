/*
 * run.cuh -- the CUDA engine's runner: panels of result columns go from a
 * producer through the sink's device half to the host.
 *
 * For each panel s the producer computes its canonical tile (columns
 * [j0, j1), stats' rules applied) into its own device buffer; the sink's
 * device half (pack.cu) lays it out as one contiguous range of the result
 * -- a dense panel of whole columns already is one, a 'dist' panel is
 * packed with its epilogue -- which is copied into pinned staging buffer
 * s % 2.  Meanwhile the host commits panel s - 1 from the other staging
 * buffer into R memory with several threads (gc_sink_commit), checks for
 * interrupts and reports progress.  For large results the host write is
 * the bottleneck (fresh pages are faulted in on first touch), so
 * everything else is arranged to hide behind it.
 */
#ifndef GPUCOR_RUN_CUH
#define GPUCOR_RUN_CUH

#include "check.cuh"
#include "prep.cuh"

/* Computes the canonical tile of result columns [j0, j1) on stream st into
 * the producer's device memory and describes it in *t (t->val a device
 * pointer).  Returns a status (and a message) if an enqueue failed. */
typedef int (*gc_panel_fn)(void *self, size_t j0, size_t j1, gc_tile *t,
                           cudaStream_t st, char *msg, size_t msgcap);

/* The canonical tile of result columns [j0, j1) with rows i0 .. rows - 1
 * (leading dimension rows - i0) in val: a producer's panel; tri: only its
 * pairs i > j hold values. */
void gc_cuda_panel_tile(size_t i0, size_t rows, size_t j0, size_t j1,
                        const void *val, int is_float, double scale, int tri,
                        gc_tile *t);

/* A sink's device half: a row of pack.cu's table, indexed as
 * engine/sink.c's by gc_sink.kind.
 *  - stage: lays tile t (device memory) out as the contiguous range of the
 *    result it covers, in *dst (which may be t->val itself) at result
 *    offset *offset, *count elements (the selecting sink: what
 *    cuda/select.cu made of it, t->rec and t->nrec saying what); buf is
 *    the sink's device bytes (col_bytes per column of the panel);
 *  - col_bytes: those bytes per result column of elements of 'elt' bytes
 *    (NULL: none);
 *  - narrow: whether panels of whole columns ('whole') stage a few records
 *    per column, not the values (NULL: never). */
typedef struct {
    int (*stage)(const gc_sink *sink, gc_tile *t, void *buf, const void **dst,
                 size_t *offset, size_t *count, cudaStream_t st, char *msg, size_t msgcap);
    size_t (*col_bytes)(const gc_sink *sink, size_t elt, int narrow);
    int (*narrow)(const gc_sink *sink, size_t elt, int whole);
} gc_cuda_sink_half;
extern const gc_cuda_sink_half gc_cuda_sink_halves[SINK_COUNT];

/* Device bytes the sink's half needs per result column of elements of
 * 'elt' bytes (a 'dist' packs into a buffer beside the producer's). */
size_t gc_cuda_sink_col_bytes(const gc_sink *sink, size_t elt, int narrow);

/* The panels of plan pl, through the sink, into sink->out.  is_float:
 * the tiles hold floats. */
int gc_cuda_run(gc_panel_fn panel, void *self, const gc_plan *pl, int is_float,
                const gc_sink *sink, gc_host *host, gpucor_ctx *gc, char *msg,
                size_t msgcap);

/* The sink's device half's stage (pack.cu). */
int gc_cuda_stage(const gc_sink *sink, gc_tile *t, void *buf,
                  const void **dst, size_t *offset, size_t *count,
                  cudaStream_t st, char *msg, size_t msgcap);

/* Panels are at most this many bytes: several stages for the runner to
 * overlap, and pinned staging that is cheap to keep (2 x 64 MiB). */
#define GPUCOR_PANEL_BYTES ((size_t) 64 << 20)

/* Bytes of device memory the panels may still take, once 'used' bytes are
 * allocated for this call: 90% of what is free now, and no more than the
 * option cap (gpucor.gpu_memory) minus 'used'. */
size_t gpucor_device_budget(const gc_host *host, size_t used);

/* The plan for ncols result columns of 'rows' elements of elt bytes, each
 * column also needing 'extra' device bytes for the producer ('how': the
 * GC_PLAN_* bits); an error message when not one column fits. */
#define GC_PLAN_WHOLE 1   /* panels of whole columns (a selection may stage
                             a few records per column) */
#define GC_PLAN_SPLIT 2   /* gc_plan.split */
int gc_cuda_plan(const gc_sink *sink, size_t ncols, size_t rows, size_t elt,
                 size_t extra, size_t used, size_t align, size_t max_w, int how,
                 const gc_host *host, gc_plan *pl, char *msg, size_t msgcap);

/* Whether the selecting sink keeps each whole column's best k on the
 * device (select.cu): then a panel stages k records per column. */
int gc_cuda_select_topk(const gc_sink *sink, size_t elt);
/* Device values of a panel whose sink stages records only: wider panels,
 * fewer launches (a panel is still an interrupt and progress point).  The
 * top-k selection runs a block per column: 4 GiB keeps a million-row
 * panel 512 columns wide, four blocks per SM of an H100 (at 1 GiB its
 * 128 blocks left a quarter of the SMs' threads idle). */
#define GPUCOR_WIDE_PANEL_BYTES ((size_t) 4 << 30)

/* The selecting sink's device half (select.cu): what the pass can select
 * on the device goes into buf (the sink's device bytes), else the tile is
 * staged as it is. */
int gc_cuda_select(const gc_sink *sink, gc_tile *t, void *buf, const void **dst,
                   size_t *count, cudaStream_t st, char *msg, size_t msgcap);

#endif
