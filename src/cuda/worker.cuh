/*
 * worker.cuh -- the CUDA engine's workers and their coordinator.
 *
 * Every GPU call runs one worker per entry of option gpucor.devices (one
 * by default: the first visible GPU), each on its own host thread with its
 * own device ordinal, stream, cuBLAS handle, pinned staging pair and
 * memory budget (gpucor_ctx).  Each worker runs the producer's whole job
 * (upload, prepare, panels) on its device; the panels of the result come
 * from one plan that all workers agree on (the narrowest of their
 * widths, so that every panel is the same computation whichever device
 * makes it), and are handed out one at a time to whichever worker asks
 * first.  The calling thread -- R's main thread -- is the coordinator: it
 * commits every staged panel into R memory, checks for interrupts and
 * reports progress between commits, and stops the workers on an
 * interrupt.  A worker that fails with a CUDA or memory error drops its
 * context; the panels it made are made again by the others (so nothing
 * it reported, such as the zero-sd warning, is half-counted), and the call
 * fails only when no worker is left.
 */
#ifndef GPUCOR_WORKER_CUH
#define GPUCOR_WORKER_CUH

#include "check.cuh"

#define GC_MAX_WORKERS 16

/* One worker's whole job on its device (the producer's run): arg is the
 * worker's own copy of the producer's arguments; host is the worker's
 * host (interrupted() reads the coordinator's stop flag, no progress). */
typedef int (*gc_job_fn)(void *arg, const gc_sink *sink, gc_host *host,
                         char *msg, size_t msgcap);

typedef struct {
    int ok;          /* finished its job and is still in the call */
    size_t panels;   /* panels it made that were kept */
} gc_worker_result;

/* Runs job on every device of host->opts (args: nworkers structs of
 * arg_size bytes, one per worker, filled by the caller; *nworkers is set
 * first by gc_cuda_worker_count()).  Commits the staged panels into
 * sink->out.  Returns a status and message; res[k] says which workers'
 * outputs (flags, warnings) count.  host->note gets a line about dropped
 * devices. */
int gc_cuda_workers(gc_job_fn job, void *args, size_t arg_size, int nworkers,
                    const gc_sink *sink, gc_host *host, gc_worker_result *res,
                    char *msg, size_t msgcap);

/* The number of workers host->opts asks for (resolving "all"), or a
 * status and message when a device does not exist. */
int gc_cuda_worker_count(const gc_host *host, int *nworkers, char *msg,
                         size_t msgcap);

/* ---- called from a worker's job (run.cu) ----------------------------- */
/* Agree on the panels: *pl (this worker's own plan) becomes the common
 * one, of the panels of the share [col0, col1) (col1 == 0: all;
 * gc_plan_share).  GPUCOR_ERR_INTERRUPT when the call is being stopped. */
int gc_worker_agree(gc_plan *pl, size_t col0, size_t col1, int cover);
/* The next panel to make; -1: nothing is left (or the call stops); -2
 * (only when !may_block): none now, but a failing worker may leave some;
 * -3: fail now (tests: GPUCOR_TEST_FAIL_WORKER). */
long gc_worker_take(int may_block);
/* Waits until staging buffer b of this worker is free (committed);
 * nonzero when the call is being stopped. */
int gc_worker_wait_free(int b);
/* This worker's staging buffer b holds tile t (t->val in it: floats when
 * t->is_float, times t->scale), for the sink: count values for result
 * offset 'offset' (gc_sink_commit). */
void gc_worker_post(int b, const gc_tile *t, size_t offset, size_t count);
/* Waits until nothing this worker posted is still being read. */
void gc_worker_drain(void);
/* This worker's rank among the n that agreed on the plan (0 and 1 for a
 * call of one worker).  Call after gc_worker_agree(). */
void gc_worker_rank(int *rank, int *n);
/* Sums buf[0..len) over the n workers of gc_worker_rank(): each calls it
 * once with its share and, when every share arrived, gets the sum back in
 * buf and 1.  0 (buf unchanged) when a worker failed before its share
 * arrived, the call is being stopped, or the call has one worker: the
 * caller then makes the whole on its own.  -1: fail now (tests:
 * GPUCOR_TEST_FAIL_WORKER="k:0" names this worker).  For sums that are exact in any
 * order (integers below 2^53), so the result does not depend on the
 * number of workers. */
int gc_worker_allreduce(double *buf, size_t len);
/* Nonzero when the call is being stopped (the workers' interrupt hook). */
int gc_worker_stopped(void);

#endif
