/*
 * worker.cu -- see worker.cuh: the per-worker contexts kept between calls,
 * the coordinator, and the worker threads.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "worker.cuh"

/* ---- contexts: one per worker slot, kept between calls ------------------ */

static gpucor_ctx ctxs[GC_MAX_WORKERS];
static int ctx_dev[GC_MAX_WORKERS];
static int have_ctx[GC_MAX_WORKERS];

struct gc_coord;
typedef struct {
    struct gc_coord *co;
    int slot, device;
} gc_self;
/* the worker this thread is (NULL on R's thread) */
static thread_local gc_self *self_tl = NULL;

static void drop_slot(int k)
{
    if (!have_ctx[k]) return;
    int cur = -1;
    if (cudaGetDevice(&cur) != cudaSuccess) cur = -1;
    if (cur != ctx_dev[k]) (void) cudaSetDevice(ctx_dev[k]);
    gpucor_ctx *c = &ctxs[k];
    if (c->st) cudaStreamSynchronize(c->st);
    for (int b = 0; b < 2; b++)
        if (c->pinned[b]) cudaFreeHost(c->pinned[b]);
    if (c->h) cublasDestroy(c->h);
    if (c->st) cudaStreamDestroy(c->st);
    memset(c, 0, sizeof *c);
    have_ctx[k] = 0;
    if (cur >= 0 && cur != ctx_dev[k]) (void) cudaSetDevice(cur);
    (void) cudaGetLastError();
}

void gpucor_ctx_drop(void)
{
    drop_slot(self_tl ? self_tl->slot : 0);
}

extern "C" void gpucor_cuda_release(void)
{
    for (int k = 0; k < GC_MAX_WORKERS; k++) drop_slot(k);
}

extern "C" void gpucor_cuda_forget(void)
{
    memset(ctxs, 0, sizeof ctxs);
    memset(have_ctx, 0, sizeof have_ctx);
}

int gpucor_ctx_get(gpucor_ctx **ctx, size_t pinned_bytes, char *msg,
                   size_t msgcap)
{
    int status = GPUCOR_OK;
    int k = self_tl ? self_tl->slot : 0, dev = self_tl ? self_tl->device : 0;
    gpucor_ctx *c = &ctxs[k];
    if (have_ctx[k] && ctx_dev[k] != dev) drop_slot(k);
    if (!have_ctx[k]) {
        memset(c, 0, sizeof *c);
        have_ctx[k] = 1;
        ctx_dev[k] = dev;
        CU(cudaStreamCreateWithFlags(&c->st, cudaStreamNonBlocking));
        CUBLAS(cublasCreate(&c->h));
        CUBLAS(cublasSetStream(c->h, c->st));
        CU(cudaDeviceGetAttribute(&c->sms, cudaDevAttrMultiProcessorCount, dev));
    }
    if (pinned_bytes > c->pinned_bytes) {
        for (int b = 0; b < 2; b++) {
            if (c->pinned[b]) cudaFreeHost(c->pinned[b]);
            c->pinned[b] = NULL;
        }
        c->pinned_bytes = 0;
        for (int b = 0; b < 2; b++)
            CU(cudaHostAlloc(&c->pinned[b], pinned_bytes, cudaHostAllocDefault));
        c->pinned_bytes = pinned_bytes;
    }
    *ctx = c;
    return GPUCOR_OK;
cleanup:
    drop_slot(k);
    *ctx = NULL;
    return status;
}

/* ---- the coordinator ----------------------------------------------------- */

typedef struct {
    int w, b;
    gc_tile t;
    size_t offset, count;
} gc_post;

typedef struct gc_coord {
    pthread_mutex_t mu;
    pthread_cond_t cv;            /* broadcast on every change of state */
    int n;                        /* workers */
    int joined, left, lost;       /* agreed on the plan; returned without
                                     agreeing; failed after agreeing */
    int idle;                     /* waiting in gc_worker_take() */
    int done;                     /* every panel is made: no more work */
    int stop;                     /* interrupted, or a failure nobody can absorb */
    int finished;                 /* worker threads that returned */
    size_t minw;
    int plan_ready;
    gc_plan plan;
    size_t next;                  /* the next fresh panel */
    long *todo;                   /* panels to make again */
    size_t ntodo;
    int *owner;                   /* per panel: the worker that made it */
    int rank[GC_MAX_WORKERS];     /* order of agreeing (gc_worker_rank) */
    double *sum;                  /* gc_worker_allreduce: the running sum, */
    int arrived, reduce_state;    /* the workers in it, 1 done, -1 failed */
    gc_post q[2 * GC_MAX_WORKERS];
    int nq;
    int busy[GC_MAX_WORKERS][2];  /* staging buffer posted, not yet committed */
    int joined_me[GC_MAX_WORKERS];
    size_t committed;
    int inline_mode;              /* one worker: it runs on R's thread and
                                     commits each panel as it posts it */
    gc_host *main_host;
    int inject_slot, inject_at;   /* tests: this worker fails when it takes
                                     its panel number inject_at (from 0) */
    int inject_fired;
    size_t taken[GC_MAX_WORKERS];
    int fatal;                    /* status that stopped the call */
    char fatal_msg[512];
    /* the job */
    gc_job_fn job;
    char *args;
    size_t arg_size;
    const gc_sink *sink;
    int devices[GC_MAX_WORKERS];
    gc_host whost[GC_MAX_WORKERS];
    int status[GC_MAX_WORKERS];
    char msg[GC_MAX_WORKERS][512];
    gc_self selves[GC_MAX_WORKERS];
} gc_coord;

static void stop_call(gc_coord *co, int status, const char *why)
{
    if (co->stop) return;
    co->stop = 1;
    co->fatal = status;
    snprintf(co->fatal_msg, sizeof co->fatal_msg, "%s", why);
}

/* one worker on R's thread: R's own interrupt check */
static int inline_interrupted(gc_coord *co)
{
    gc_host *h = co->main_host;
    if (!co->stop && h->interrupted && h->interrupted())
        stop_call(co, GPUCOR_ERR_INTERRUPT, "interrupted");
    return co->stop;
}

int gc_worker_stopped(void)
{
    gc_coord *co = self_tl ? self_tl->co : NULL;
    if (!co) return 0;
    if (co->inline_mode) return inline_interrupted(co);
    pthread_mutex_lock(&co->mu);
    int s = co->stop;
    pthread_mutex_unlock(&co->mu);
    return s;
}

int gc_worker_agree(gc_plan *pl, size_t col0, size_t col1, int cover)
{
    gc_coord *co = self_tl ? self_tl->co : NULL;
    if (!co) {
        gc_plan_share(pl, col0, col1, cover);
        return GPUCOR_OK;
    }
    int me = self_tl->slot, status = GPUCOR_OK;
    pthread_mutex_lock(&co->mu);
    co->rank[me] = co->joined;
    co->joined++;
    co->joined_me[me] = 1;
    if (co->joined == 1 || pl->w < co->minw) co->minw = pl->w;
    pthread_cond_broadcast(&co->cv);
    while (!co->stop && !co->plan_ready && co->joined + co->left < co->n)
        pthread_cond_wait(&co->cv, &co->mu);
    if (!co->stop && !co->plan_ready) {
        gc_plan p = *pl;
        p.w = co->minw;
        p.npanels = p.ncols ? (p.ncols + p.w - 1) / p.w : 0;
        /* a result of few panels (Kendall's 2000 columns of 50000
         * observations: one) would leave workers idle; where the values do
         * not depend on the panel width, cut a multiple of the worker
         * count, equally wide (each worker prepares its whole input once
         * per panel, so not more than that) */
        size_t nw = (size_t) (co->joined > 0 ? co->joined : 1);
        if (p.split && nw > 1 && p.npanels > 0 && p.npanels < 4 * nw) {
            size_t want = (p.npanels + nw - 1) / nw * nw;
            size_t w = (p.ncols + want - 1) / want;
            if (w >= 1 && w < p.w) {
                p.w = w;
                p.npanels = (p.ncols + w - 1) / w;
            }
        }
        gc_plan_share(&p, col0, col1, cover);
        co->todo = (long *) malloc((p.npanels + 1) * sizeof(long));
        co->owner = (int *) malloc((p.npanels + 1) * sizeof(int));
        if (!co->todo || !co->owner) {
            stop_call(co, GPUCOR_ERR_ALLOC, "out of host memory");
        } else {
            for (size_t s = 0; s < p.npanels; s++) co->owner[s] = -1;
            co->plan = p;
            co->plan_ready = 1;
        }
        pthread_cond_broadcast(&co->cv);
    }
    if (co->stop) status = GPUCOR_ERR_INTERRUPT;
    else *pl = co->plan;
    pthread_mutex_unlock(&co->mu);
    return status;
}

void gc_worker_rank(int *rank, int *n)
{
    gc_coord *co = self_tl ? self_tl->co : NULL;
    *rank = 0;
    *n = 1;
    if (!co || co->inline_mode) return;
    pthread_mutex_lock(&co->mu);
    if (co->plan_ready) {
        *rank = co->rank[self_tl->slot];
        *n = co->joined;
    }
    pthread_mutex_unlock(&co->mu);
}

int gc_worker_allreduce(double *buf, size_t len)
{
    gc_coord *co = self_tl ? self_tl->co : NULL;
    if (!co || co->inline_mode) return 0;
    pthread_mutex_lock(&co->mu);
    if (co->inject_slot == self_tl->slot && co->inject_at == 0 && !co->inject_fired) {
        /* tests: this worker fails before its share arrives (k:0) */
        pthread_mutex_unlock(&co->mu);
        return -1;
    }
    if (co->reduce_state == 0 && !co->sum) {
        co->sum = (double *) calloc(len ? len : 1, sizeof(double));
        if (!co->sum) co->reduce_state = -1;
    }
    if (co->reduce_state == 0)
        for (size_t k = 0; k < len; k++) co->sum[k] += buf[k];
    co->arrived++;
    pthread_cond_broadcast(&co->cv);
    /* every worker still in the call arrives; one that failed before it
     * did leaves its share out, and then nobody's sum is the whole */
    while (!co->stop && co->reduce_state == 0 && co->arrived < co->joined - co->lost)
        pthread_cond_wait(&co->cv, &co->mu);
    if (co->reduce_state == 0)
        co->reduce_state = co->stop || co->lost > 0 ? -1 : 1;
    int ok = co->reduce_state == 1;
    if (ok) memcpy(buf, co->sum, len * sizeof(double));
    pthread_mutex_unlock(&co->mu);
    return ok;
}

long gc_worker_take(int may_block)
{
    gc_coord *co = self_tl ? self_tl->co : NULL;
    int me = self_tl->slot;
    long r;
    pthread_mutex_lock(&co->mu);
    for (;;) {
        if (co->stop || co->done) { r = -1; break; }
        if (co->inject_slot >= 0 && !co->inject_fired) {
            /* tests: the others wait until the failing worker has failed,
             * so that it has made the panels it was meant to */
            if (me != co->inject_slot) {
                pthread_cond_wait(&co->cv, &co->mu);
                continue;
            }
            if (co->taken[me] == (size_t) co->inject_at) { r = -3; break; }
        }
        if (co->ntodo) { r = co->todo[--co->ntodo]; break; }
        if (co->next < co->plan.npanels) { r = (long) co->next++; break; }
        if (co->inject_slot >= 0 && !co->inject_fired) {
            co->inject_fired = 1;     /* too few panels to fail where asked */
            pthread_cond_broadcast(&co->cv);
        }
        /* nothing now: done once every worker still in the call waits too */
        if (co->idle + 1 >= co->joined - co->lost) {
            co->done = 1;
            pthread_cond_broadcast(&co->cv);
            r = -1;
            break;
        }
        if (!may_block) { r = -2; break; }
        co->idle++;
        pthread_cond_wait(&co->cv, &co->mu);
        co->idle--;
    }
    if (r >= 0) {
        co->owner[r] = me;
        co->taken[me]++;
    }
    pthread_mutex_unlock(&co->mu);
    return r;
}

int gc_worker_wait_free(int b)
{
    gc_coord *co = self_tl->co;
    int me = self_tl->slot;
    pthread_mutex_lock(&co->mu);
    while (co->busy[me][b] && !co->stop) pthread_cond_wait(&co->cv, &co->mu);
    int s = co->stop;
    pthread_mutex_unlock(&co->mu);
    return s;
}

void gc_worker_post(int b, const gc_tile *tile, size_t offset, size_t count)
{
    gc_coord *co = self_tl->co;
    int me = self_tl->slot;
    if (co->inline_mode) {
        gc_host *h = co->main_host;
        double t = gpucor_now();
        gc_sink_commit(co->sink, tile, offset, count, h->opts->nthreads);
        h->seconds[1] += gpucor_now() - t;
        co->committed++;
        if (h->progress)
            h->progress(h->progress_ctx, (double) co->committed / co->plan.npanels);
        inline_interrupted(co);
        return;
    }
    pthread_mutex_lock(&co->mu);
    co->busy[me][b] = 1;
    gc_post *p = &co->q[co->nq++];
    p->w = me; p->b = b; p->t = *tile; p->offset = offset; p->count = count;
    pthread_cond_broadcast(&co->cv);
    pthread_mutex_unlock(&co->mu);
}

void gc_worker_drain(void)
{
    gc_coord *co = self_tl ? self_tl->co : NULL;
    if (!co) return;
    int me = self_tl->slot;
    pthread_mutex_lock(&co->mu);
    while (co->busy[me][0] || co->busy[me][1]) pthread_cond_wait(&co->cv, &co->mu);
    pthread_mutex_unlock(&co->mu);
}

/* errors that drop one device, not the call */
static int droppable(int status)
{
    return status == GPUCOR_ERR_ALLOC || status == GPUCOR_ERR_CUDA ||
           status == GPUCOR_ERR_NO_DEVICE;
}

/* Worker k returned 'status' (the lock held): a failure after agreeing on
 * the plan gives its panels to the others, when there are others. */
static void worker_finish(gc_coord *co, int k, int status)
{
    co->status[k] = status;
    if (k == co->inject_slot) co->inject_fired = 1;
    if (!co->joined_me[k]) co->left++;
    if (status != GPUCOR_OK && status != GPUCOR_ERR_INTERRUPT && !co->stop) {
        if (co->joined_me[k]) co->lost++;
        int others = co->joined - co->lost + (co->n - co->joined - co->left);
        if (droppable(status) && !co->done && others > 0) {
            if (co->plan_ready)
                for (size_t s = 0; s < co->plan.npanels; s++)
                    if (co->owner[s] == k) {
                        co->owner[s] = -1;
                        co->todo[co->ntodo++] = (long) s;
                    }
        } else if (!droppable(status) || co->done) {
            stop_call(co, status, co->msg[k]);
        }
    } else if (status != GPUCOR_OK && co->joined_me[k]) {
        co->lost++;
    }
    co->finished++;
    pthread_cond_broadcast(&co->cv);
}

static void *worker_main(void *arg)
{
    gc_self *me = (gc_self *) arg;
    gc_coord *co = me->co;
    int k = me->slot;
    char *msg = co->msg[k];
    size_t msgcap = sizeof co->msg[k];
    int status = GPUCOR_OK;
    self_tl = me;
    CU(cudaSetDevice(me->device));
    status = co->job(co->args + k * co->arg_size, co->sink, &co->whost[k], msg,
                     msgcap);
cleanup:
    pthread_mutex_lock(&co->mu);
    worker_finish(co, k, status);
    pthread_mutex_unlock(&co->mu);
    self_tl = NULL;
    return NULL;
}

int gc_cuda_worker_count(const gc_host *host, int *nworkers, char *msg,
                         size_t msgcap)
{
    const gc_opts *o = host->opts;
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
        (void) cudaGetLastError();
        snprintf(msg, msgcap, "no usable CUDA device: %s", cudaGetErrorString(e));
        return GPUCOR_ERR_NO_DEVICE;
    }
    if (o->ndevices <= 0) {          /* "all" */
        *nworkers = count < GC_MAX_WORKERS ? count : GC_MAX_WORKERS;
        return *nworkers > 0 ? GPUCOR_OK : GPUCOR_ERR_NO_DEVICE;
    }
    for (int k = 0; k < o->ndevices; k++)
        if (o->devices[k] >= count) {
            snprintf(msg, msgcap, "GPU %d does not exist: %d visible (ordinals 0 to %d; "
                     "see gpu_info()$devices)", o->devices[k], count, count - 1);
            return GPUCOR_ERR_INVALID;
        }
    *nworkers = o->ndevices;
    return GPUCOR_OK;
}

int gc_cuda_workers(gc_job_fn job, void *args, size_t arg_size, int n,
                    const gc_sink *sink, gc_host *host, gc_worker_result *res,
                    char *msg, size_t msgcap)
{
    gc_coord *co = (gc_coord *) calloc(1, sizeof *co);
    pthread_t th[GC_MAX_WORKERS];
    int started = 0, status = GPUCOR_OK;
    double t0 = gpucor_now(), t;
    if (!co) {
        snprintf(msg, msgcap, "out of host memory");
        return GPUCOR_ERR_ALLOC;
    }
    pthread_mutex_init(&co->mu, NULL);
    pthread_cond_init(&co->cv, NULL);
    co->job = job;
    co->args = (char *) args;
    co->arg_size = arg_size;
    co->sink = sink;
    co->n = n;
    co->inject_slot = -1;
    {
        /* tests: GPUCOR_TEST_FAIL_WORKER="k:m" makes worker k (from 1) fail
         * as a broken GPU would, when it takes its panel m + 1 */
        const char *inj = getenv("GPUCOR_TEST_FAIL_WORKER");
        int ks = 0, m = 0;
        if (inj && sscanf(inj, "%d:%d", &ks, &m) >= 1 && ks >= 1 && ks <= n && m >= 0) {
            co->inject_slot = ks - 1;
            co->inject_at = m;
        }
    }
    for (int k = 0; k < n; k++) {
        co->devices[k] = host->opts->ndevices > 0 ? host->opts->devices[k] : k;
        co->whost[k] = *host;
        co->whost[k].interrupted = gc_worker_stopped;
        co->whost[k].progress = NULL;
        co->whost[k].note[0] = '\0';
        co->selves[k].co = co;
        co->selves[k].slot = k;
        co->selves[k].device = co->devices[k];
    }
    gc_sink_begin(sink);
    co->main_host = host;
    if (n == 1) {
        /* one worker: on this thread, committing as it goes (no hand-over
         * between threads on the path of every panel) */
        int prev = -1, st;
        co->inline_mode = 1;
        if (cudaGetDevice(&prev) != cudaSuccess) prev = -1;
        self_tl = &co->selves[0];
        cudaError_t e = cudaSetDevice(co->devices[0]);
        if (e != cudaSuccess)
            st = gpucor_cuda_fail(co->msg[0], sizeof co->msg[0], "cudaSetDevice", e);
        else
            st = job(co->args, sink, &co->whost[0], co->msg[0], sizeof co->msg[0]);
        self_tl = NULL;
        if (prev >= 0 && prev != co->devices[0]) (void) cudaSetDevice(prev);
        host->seconds[0] = co->whost[0].seconds[0];
        worker_finish(co, 0, st);
        started = 1;
        goto outcome;
    }
    for (int k = 0; k < n; k++) {
        if (pthread_create(&th[k], NULL, worker_main, &co->selves[k]) != 0) {
            /* run with the workers that started */
            pthread_mutex_lock(&co->mu);
            co->n = k;
            pthread_cond_broadcast(&co->cv);
            pthread_mutex_unlock(&co->mu);
            break;
        }
        started++;
    }
    if (started == 0) {
        snprintf(msg, msgcap, "could not start a worker thread");
        status = GPUCOR_ERR_ALLOC;
        goto out;
    }

    /* the coordinator: commit what the workers stage, between commits check
     * for interrupts and report progress */
    pthread_mutex_lock(&co->mu);
    for (;;) {
        if (co->nq > 0) {
            gc_post p = co->q[0];
            memmove(co->q, co->q + 1, (size_t) (co->nq - 1) * sizeof *co->q);
            co->nq--;
            int skip = co->stop;
            pthread_mutex_unlock(&co->mu);
            if (!skip) {
                t = gpucor_now();
                gc_sink_commit(sink, &p.t, p.offset, p.count, host->opts->nthreads);
                host->seconds[1] += gpucor_now() - t;
            }
            pthread_mutex_lock(&co->mu);
            co->busy[p.w][p.b] = 0;
            co->committed++;
            size_t np = co->plan.npanels;
            double frac = np ? (double) co->committed / np : 1;
            pthread_cond_broadcast(&co->cv);
            pthread_mutex_unlock(&co->mu);
            if (host->progress && !skip) host->progress(host->progress_ctx, frac < 1 ? frac : 1);
        } else {
            if (co->finished == started) break;
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_nsec += 20 * 1000 * 1000;
            if (ts.tv_nsec >= 1000000000L) { ts.tv_sec++; ts.tv_nsec -= 1000000000L; }
            t = gpucor_now();
            pthread_cond_timedwait(&co->cv, &co->mu, &ts);
            host->seconds[0] += gpucor_now() - t;
            pthread_mutex_unlock(&co->mu);
        }
        if (host->interrupted && host->interrupted()) {
            pthread_mutex_lock(&co->mu);
            stop_call(co, GPUCOR_ERR_INTERRUPT, "interrupted");
            pthread_cond_broadcast(&co->cv);
        } else {
            pthread_mutex_lock(&co->mu);
        }
    }
    pthread_mutex_unlock(&co->mu);
    for (int k = 0; k < started; k++) pthread_join(th[k], NULL);

outcome:
    host->note[0] = '\0';
    if (co->stop) {
        status = co->fatal ? co->fatal : GPUCOR_ERR_INTERRUPT;
        snprintf(msg, msgcap, "%s", co->fatal_msg);
    } else {
        int any = 0, first_bad = -1;
        for (int k = 0; k < started; k++) {
            res[k].ok = co->status[k] == GPUCOR_OK;
            res[k].panels = 0;
            if (res[k].ok) any = 1;
            else if (first_bad < 0) first_bad = k;
        }
        if (co->plan_ready)
            for (size_t s = 0; s < co->plan.npanels; s++)
                if (co->owner[s] >= 0) res[co->owner[s]].panels++;
        if (!any) {
            status = first_bad >= 0 ? co->status[first_bad] : GPUCOR_ERR_INVALID;
            if (started > 1)
                snprintf(msg, msgcap, "GPU %d: %s", co->devices[first_bad],
                         co->msg[first_bad]);
            else
                snprintf(msg, msgcap, "%s", co->msg[first_bad]);
        } else if (first_bad >= 0) {
            snprintf(host->note, sizeof host->note,
                     "GPU %d failed and was left out (%s); the others made its part",
                     co->devices[first_bad], co->msg[first_bad]);
        }
    }
    for (int k = started; k < n; k++) res[k].ok = 0;
out:
    host->seconds[2] = gpucor_now() - t0;
    pthread_mutex_destroy(&co->mu);
    pthread_cond_destroy(&co->cv);
    free(co->todo);
    free(co->owner);
    free(co->sum);
    free(co);
    return status;
}
