/*
 * sink_file.c -- the file sink: bands of result columns to an HDF5 dataset
 * by a writer thread (file.h).  Without HDF5 (configure found none) only
 * gc_file_available() and a refusing gc_file_open() are built.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine.h"
#include "file.h"

#ifndef GPUCOR_HDF5

int gc_file_available(void) { return 0; }

int gc_file_open(const gc_file_spec *spec, gc_file **out, char *msg, size_t msgcap)
{
    (void) spec;
    *out = NULL;
    snprintf(msg, msgcap, "gpucor was built without HDF5");
    return GPUCOR_ERR_INVALID;
}

void gc_file_put(gc_file *f, const void *val, size_t ld, int is_float, double scale,
                 size_t i0, size_t ni, size_t j0, size_t nj, int transposed, int epi,
                 double beta)
{
    (void) f; (void) val; (void) ld; (void) is_float; (void) scale; (void) i0;
    (void) ni; (void) j0; (void) nj; (void) transposed; (void) epi; (void) beta;
}

int gc_file_failed(gc_file *f) { (void) f; return 1; }

void gc_file_profile(gc_file *f, double *s)
{
    (void) f;
    for (int k = 0; k < 5; k++) s[k] = 0;
}

int gc_file_virtual(const char *path, const char *name, size_t p, size_t q, int out_float,
                    size_t nparts, const char *const *files, const char *const *names,
                    const double *c0, const double *c1, char *msg, size_t msgcap)
{
    (void) path; (void) name; (void) p; (void) q; (void) out_float; (void) nparts;
    (void) files; (void) names; (void) c0; (void) c1;
    snprintf(msg, msgcap, "gpucor was built without HDF5");
    return GPUCOR_ERR_INVALID;
}

void gc_file_set_hook(gc_file *f, gc_file_hook hook, void *ctx)
{
    (void) f; (void) hook; (void) ctx;
}

int gc_file_close(gc_file *f, int ok, char *msg, size_t msgcap)
{
    (void) f; (void) ok;
    snprintf(msg, msgcap, "gpucor was built without HDF5");
    return GPUCOR_ERR_INVALID;
}

#else

#include <errno.h>
#include <stdint.h>
#include <time.h>
#include <pthread.h>
#include <unistd.h>
#include <zlib.h>
#include <hdf5.h>
#ifdef _OPENMP
#include <omp.h>
#endif

struct gc_file {
    gc_file_spec s;
    size_t esz, nband, band_bytes;
    int direct;                  /* chunks of whole columns: one per band */
    int posting;                 /* post steps on complete bands (file.h) */
    int fill_float;              /* bands filled with floats (no post steps) */
    size_t alloc_bytes;          /* a band's memory: band_bytes, or its doubles
                                    when floats are made of them at the end */
    gc_file_hook hook;
    void *hook_ctx;
    void **band;                 /* NULL until a tile reaches it */
    size_t *filled;              /* elements received */
    size_t *queue, qhead, qtail; /* complete bands, for the writer */
    size_t live, queued;         /* bytes of bands allocated / queued */
    size_t written;              /* bands written */
    void **spare;                /* band buffers written, kept for reuse */
    size_t nspare, maxspare;
    int done, failed;
    char err[384];
    pthread_mutex_t mu;
    pthread_cond_t space, work;
    pthread_t writer;
    int writer_started;
    hid_t fid, did;
    int created;
    char *tmpname;
    H5E_auto2_t old_func;
    void *old_data;
    long fail_after;             /* tests: bands written before a failure (-1: none) */
    double t_open, t_write, t_wait, t_idle;   /* gc_file_profile() */
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int gc_file_available(void) { return 1; }

/* The writer's failure, once (the first message stays). */
static void fail(gc_file *f, const char *what)
{
    if (f->failed) return;
    f->failed = 1;
    snprintf(f->err, sizeof f->err, "writing '%s' in %s failed: %s%s%s", f->s.name,
             f->s.path, what, errno ? ": " : "", errno ? strerror(errno) : "");
}

/* The band's width (the last one may be narrower). */
static size_t band_w(const gc_file *f, size_t k)
{
    size_t j0 = k * f->s.cc;
    return f->s.q - j0 < f->s.cc ? f->s.q - j0 : f->s.cc;
}

/* Whether complete bands get post steps, and so the type bands are filled
 * in (before any band exists). */
static void set_posting(gc_file *f)
{
    const gc_file_post *ps = &f->s.post;
    f->posting = f->hook || ps->epi != EPI_IDENTITY || ps->na_row || ps->na_col ||
                 ps->set_diag || ps->epi2 != EPI_IDENTITY;
    f->fill_float = f->s.out_float && !f->posting;
    f->alloc_bytes = f->s.out_float && f->posting ? f->s.p * f->s.cc * sizeof(double)
                                                  : f->band_bytes;
}

/* A value of the result as the file's float: R's NA becomes the float NA
 * marker (other NaNs stay NaN). */
static inline float to_float(double r)
{
    float v = (float) r;
    uint64_t rb;
    memcpy(&rb, &r, sizeof rb);
    if (r != r && (rb & 0xffffffffu) == 1954u) {   /* R_IsNA */
        uint32_t bits = GPUCOR_FLOAT_NA_BITS;
        memcpy(&v, &bits, sizeof v);
    }
    return v;
}

static int write_band(gc_file *f, size_t k, const void *buf, size_t len)
{
    hsize_t off[2] = {(hsize_t) (k * f->s.cc), 0};
    errno = 0;
    if (f->direct) {
        /* filter mask 0: the dataset's filters applied (deflate, or none) */
        return H5Dwrite_chunk(f->did, H5P_DEFAULT, 0, off, len, buf) < 0 ? -1 : 0;
    }
    hsize_t cnt[2] = {(hsize_t) band_w(f, k), (hsize_t) f->s.p};
    hid_t fs = H5Dget_space(f->did), ms = H5Screate_simple(2, cnt, NULL);
    herr_t e = fs < 0 || ms < 0 ? -1
             : H5Sselect_hyperslab(fs, H5S_SELECT_SET, off, NULL, cnt, NULL);
    if (e >= 0)
        e = H5Dwrite(f->did, f->s.out_float ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE, ms, fs,
                     H5P_DEFAULT, buf);
    if (ms >= 0) H5Sclose(ms);
    if (fs >= 0) H5Sclose(fs);
    return e < 0 ? -1 : 0;
}

#define WRITER_BATCH 16

/* The writer thread: complete bands off the queue, compressed in parallel
 * when the chunks are deflated and written directly, written in order of
 * completion, freed. */
static void *writer_main(void *arg)
{
    gc_file *f = arg;
    /* a thread-safe HDF5 keeps its error reporting per thread: quiet here
     * too (the message is ours) */
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    size_t ks[WRITER_BATCH];
    void *zb[WRITER_BATCH];
    size_t zl[WRITER_BATCH];
    for (;;) {
        pthread_mutex_lock(&f->mu);
        double ti = now_s();
        while (f->qhead == f->qtail && !f->done) pthread_cond_wait(&f->work, &f->mu);
        f->t_idle += now_s() - ti;
        if (f->qhead == f->qtail) {
            pthread_mutex_unlock(&f->mu);
            break;
        }
        int nb = 0, want = f->direct && f->s.level > 0 ? f->s.nthreads : 1;
        if (want > WRITER_BATCH) want = WRITER_BATCH;
        if (want < 1) want = 1;
        while (nb < want && f->qhead != f->qtail) ks[nb++] = f->queue[f->qhead++];
        int failed = f->failed;
        pthread_mutex_unlock(&f->mu);

        if (!failed) {
            int zfail = 0;
            if (f->direct && f->s.level > 0) {
#ifdef _OPENMP
#pragma omp parallel for num_threads(nb) schedule(static, 1)
#endif
                for (int b = 0; b < nb; b++) {
                    uLongf dl = compressBound((uLong) f->band_bytes);
                    zb[b] = malloc(dl);
                    if (!zb[b] || compress2(zb[b], &dl, f->band[ks[b]], (uLong) f->band_bytes,
                                            f->s.level) != Z_OK) {
#ifdef _OPENMP
#pragma omp atomic write
#endif
                        zfail = 1;
                    }
                    zl[b] = dl;
                }
            } else {
                for (int b = 0; b < nb; b++) {
                    zb[b] = NULL;
                    zl[b] = f->band_bytes;
                }
            }
            double tw = now_s();
            for (int b = 0; b < nb && !zfail && !failed; b++) {
                const void *src = zb[b] ? zb[b] : f->band[ks[b]];
                if (f->fail_after >= 0 && f->written + (size_t) b >= (size_t) f->fail_after) {
                    errno = 0;   /* tests: a write that fails (GPUCOR_TEST_FILE_FAIL) */
                    failed = 1;
                } else if (write_band(f, ks[b], src, zl[b]) < 0) {
                    failed = 1;
                }
            }
            tw = now_s() - tw;
            pthread_mutex_lock(&f->mu);
            f->t_write += tw;
            if (zfail) { errno = 0; fail(f, "compression"); }
            else if (failed) fail(f, "an HDF5 write");
            else f->written += (size_t) nb;
            pthread_mutex_unlock(&f->mu);
            for (int b = 0; b < nb; b++) free(zb[b]);
        }
        pthread_mutex_lock(&f->mu);
        for (int b = 0; b < nb; b++) {
            /* fresh memory costs page faults: keep the buffer for the
             * next band (counted as live) */
            if (f->nspare < f->maxspare) {
                f->spare[f->nspare++] = f->band[ks[b]];
                f->queued -= f->alloc_bytes;
                f->band[ks[b]] = NULL;
                continue;
            }
            free(f->band[ks[b]]);
            f->band[ks[b]] = NULL;
            f->live -= f->alloc_bytes;
            f->queued -= f->alloc_bytes;
        }
        pthread_cond_broadcast(&f->space);
        pthread_mutex_unlock(&f->mu);
    }
    /* this thread's error stack (a thread-safe HDF5 keeps one per thread)
     * must be empty when it ends, or HDF5 cannot close at exit */
    H5Eclear2(H5E_DEFAULT);
    return NULL;
}

static void free_file(gc_file *f)
{
    if (f->band)
        for (size_t k = 0; k < f->nband; k++) free(f->band[k]);
    for (size_t k = 0; k < f->nspare; k++) free(f->spare[k]);
    free(f->spare);
    free(f->band);
    free(f->filled);
    free(f->queue);
    free(f->tmpname);
    free(f);
}

/* Closes what HDF5 holds; with 'keep' the temporary dataset becomes the
 * result, else it goes (and the file, when this call made it). */
static int finish_hdf5(gc_file *f, int keep)
{
    int bad = 0;
    if (!keep && f->created && truncate(f->s.path, 0) != 0) bad = 1;   /* see below */
    if (f->did >= 0 && H5Dclose(f->did) < 0) bad = 1;
    f->did = -1;
    if (f->fid >= 0) {
        if (keep && !bad) {
            hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
            H5Pset_create_intermediate_group(lcpl, 1);
            if (H5Lmove(f->fid, f->tmpname, f->fid, f->s.name, lcpl, H5P_DEFAULT) < 0) bad = 1;
            H5Pclose(lcpl);
        }
        if (!keep || bad) H5Ldelete(f->fid, f->tmpname, H5P_DEFAULT);
        /* The closes flush metadata, which fails on a full disk, so a
         * file made here was emptied first (its space freed: the flush then
         * finds room).  A close that fails anyway (a file-size limit,
         * EFBIG, or a full disk under an existing file) leaves an
         * identifier HDF5 1.10 cannot free, and its exit handler may crash
         * on it (NEWS.md says so). */
        if (H5Fclose(f->fid) < 0) bad = 1;
        f->fid = -1;
    }
    if ((!keep || bad) && f->created) unlink(f->s.path);
    H5Eset_auto2(H5E_DEFAULT, f->old_func, f->old_data);
    return bad;
}

/* The file a dataset 'name' goes to, opened for writing (*fid), or created
 * when there is none (*created = 1); NULL, or why not (errno may say more;
 * *fid is then whatever was opened, or -1). */
static const char *open_target(const char *path, const char *name, hid_t *fid, int *created)
{
    *fid = -1;
    *created = 0;
    errno = 0;
    if (access(path, F_OK) != 0) {
        errno = 0;
        if ((*fid = H5Fcreate(path, H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT)) < 0)
            return "it cannot be created";
        *created = 1;
        return NULL;
    }
    if (H5Fis_hdf5(path) <= 0) return "it exists and is not an HDF5 file";
    if ((*fid = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT)) < 0)
        return "it cannot be opened for writing";
    if (H5Lexists(*fid, name, H5P_DEFAULT) > 0) return "it has a dataset of that name already";
    return NULL;
}

int gc_file_open(const gc_file_spec *spec, gc_file **out, char *msg, size_t msgcap)
{
    *out = NULL;
    gc_file *f = calloc(1, sizeof *f);
    if (!f) {
        snprintf(msg, msgcap, "out of memory");
        return GPUCOR_ERR_ALLOC;
    }
    f->s = *spec;
    f->fid = f->did = -1;
    f->esz = spec->out_float ? sizeof(float) : sizeof(double);
    f->nband = spec->q && spec->p ? (spec->q + spec->cc - 1) / spec->cc : 0;
    f->band_bytes = spec->p * spec->cc * f->esz;
    f->direct = spec->cr == spec->p;
    set_posting(f);
    const char *env = getenv("GPUCOR_TEST_FILE_FAIL");
    f->fail_after = env && env[0] ? strtol(env, NULL, 10) : -1;
    f->band = calloc(f->nband + 1, sizeof *f->band);
    f->filled = calloc(f->nband + 1, sizeof *f->filled);
    f->queue = calloc(f->nband + 1, sizeof *f->queue);
    f->maxspare = f->alloc_bytes ? spec->cap / f->alloc_bytes : 0;
    if (f->maxspare > f->nband) f->maxspare = f->nband;
    f->spare = calloc(f->maxspare + 1, sizeof *f->spare);
    size_t nl = strlen(spec->name);
    f->tmpname = malloc(nl + 16);
    if (!f->band || !f->filled || !f->queue || !f->tmpname || !f->spare) {
        free_file(f);
        snprintf(msg, msgcap, "out of memory");
        return GPUCOR_ERR_ALLOC;
    }
    snprintf(f->tmpname, nl + 16, "%s.incomplete", spec->name);

    H5Eget_auto2(H5E_DEFAULT, &f->old_func, &f->old_data);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    const char *why = open_target(spec->path, spec->name, &f->fid, &f->created);
    if (!why && H5Lexists(f->fid, f->tmpname, H5P_DEFAULT) > 0)
        H5Ldelete(f->fid, f->tmpname, H5P_DEFAULT);   /* an earlier run's leftover */
    if (!why) {
        hsize_t dims[2] = {(hsize_t) spec->q, (hsize_t) spec->p};
        hid_t sp = H5Screate_simple(2, dims, NULL);
        hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE), lcpl = H5Pcreate(H5P_LINK_CREATE);
        H5Pset_create_intermediate_group(lcpl, 1);
        if (f->nband) {
            hsize_t ch[2] = {(hsize_t) spec->cc, (hsize_t) spec->cr};
            H5Pset_chunk(dcpl, 2, ch);
            if (spec->level > 0) H5Pset_deflate(dcpl, (unsigned) spec->level);
        }
        H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER);
        f->did = H5Dcreate2(f->fid, f->tmpname,
                            spec->out_float ? H5T_IEEE_F32LE : H5T_IEEE_F64LE, sp, lcpl,
                            dcpl, H5P_DEFAULT);
        H5Pclose(dcpl);
        H5Pclose(lcpl);
        H5Sclose(sp);
        if (f->did < 0) why = "the dataset cannot be created there";
    }
    if (why) {
        int e = errno;
        finish_hdf5(f, 0);
        snprintf(msg, msgcap, "cannot write '%s' to %s: %s%s%s", spec->name, spec->path, why,
                 e ? ": " : "", e ? strerror(e) : "");
        free_file(f);
        return GPUCOR_ERR_INVALID;
    }
    pthread_mutex_init(&f->mu, NULL);
    pthread_cond_init(&f->space, NULL);
    pthread_cond_init(&f->work, NULL);
    if (pthread_create(&f->writer, NULL, writer_main, f) != 0) {
        finish_hdf5(f, 0);
        pthread_mutex_destroy(&f->mu);
        pthread_cond_destroy(&f->space);
        pthread_cond_destroy(&f->work);
        free_file(f);
        snprintf(msg, msgcap, "cannot start the writer thread");
        return GPUCOR_ERR_ALLOC;
    }
    f->writer_started = 1;
    f->t_open = now_s();
    *out = f;
    return GPUCOR_OK;
}

void gc_file_profile(gc_file *f, double *s)
{
    pthread_mutex_lock(&f->mu);
    s[0] = now_s() - f->t_open;
    s[1] = f->t_write;
    s[2] = f->t_idle;
    s[3] = f->t_wait;
    s[4] = (double) f->written;
    pthread_mutex_unlock(&f->mu);
}

void gc_file_set_hook(gc_file *f, gc_file_hook hook, void *ctx)
{
    f->hook = hook;
    f->hook_ctx = ctx;
    /* bands of doubles now, perhaps: fewer spares (never more than the
     * spare list was allocated for) */
    set_posting(f);
    f->maxspare = f->alloc_bytes ? f->s.cap / f->alloc_bytes : 0;
    if (f->maxspare > f->nband) f->maxspare = f->nband;
}

int gc_file_failed(gc_file *f)
{
    pthread_mutex_lock(&f->mu);
    int r = f->failed;
    pthread_mutex_unlock(&f->mu);
    return r;
}

/* Band k's memory, allocated by the first tile that reaches it; NULL once
 * the file has failed. */
static void *band_of(gc_file *f, size_t k)
{
    pthread_mutex_lock(&f->mu);
    double t0 = now_s();
    while (!f->band[k] && !f->failed && !f->nspare && f->queued > 0 &&
           f->live + f->alloc_bytes > f->s.cap)
        pthread_cond_wait(&f->space, &f->mu);
    f->t_wait += now_s() - t0;
    if (!f->band[k] && !f->failed) {
        if (f->nspare) {
            f->band[k] = f->spare[--f->nspare];   /* live already */
        } else {
            f->band[k] = malloc(f->alloc_bytes);
            if (f->band[k]) f->live += f->alloc_bytes;
            else { errno = ENOMEM; fail(f, "allocating a band"); }
        }
        /* padded to a whole chunk: the pad is written too, as zeros (a
         * band narrowed to floats at the end is padded then) */
        size_t used = f->s.p * band_w(f, k) * (f->fill_float ? sizeof(float)
                                                              : sizeof(double));
        if (f->band[k] && used < f->alloc_bytes)
            memset((char *) f->band[k] + used, 0, f->alloc_bytes - used);
    }
    void *b = f->failed ? NULL : f->band[k];
    pthread_mutex_unlock(&f->mu);
    return b;
}

/* The post steps (file.h) on complete band k, in doubles, then narrowed to
 * the file's floats.  Nonzero: the hook ran out of memory. */
static int post_band(gc_file *f, size_t k)
{
    const gc_file_post *ps = &f->s.post;
    size_t p = f->s.p, j0 = f->s.col0 + k * f->s.cc, w = band_w(f, k);   /* the result's */
    double *v = f->band[k];
    if (f->hook && f->hook(f->hook_ctx, j0, w, v, p)) return 1;
    for (size_t b = 0; b < w; b++) {
        size_t j = j0 + b;
        double *col = v + b * p;
        if (ps->epi != EPI_IDENTITY)
            for (size_t i = 0; i < p; i++) col[i] = gc_epilogue(ps->epi, ps->beta, col[i]);
        if (ps->na_col && ps->na_col[j]) {
            for (size_t i = 0; i < p; i++) col[i] = gpucor_na_real;
        } else if (ps->na_row) {
            for (size_t i = 0; i < p; i++)
                if (ps->na_row[i]) col[i] = gpucor_na_real;
        }
        if (ps->set_diag && j < p) col[j] = ps->diag;
        if (ps->epi2 != EPI_IDENTITY)
            for (size_t i = 0; i < p; i++) col[i] = gc_epilogue(ps->epi2, 1.0, col[i]);
    }
    if (f->s.out_float) {
        /* in place: float e is written below double e, which was read */
        float *o = (float *) v;
        for (size_t e = 0; e < p * w; e++) o[e] = to_float(v[e]);
        if (p * w * sizeof(float) < f->band_bytes)
            memset(o + p * w, 0, f->band_bytes - p * w * sizeof(float));
    }
    return 0;
}

static void band_done(gc_file *f, size_t k, size_t count)
{
    pthread_mutex_lock(&f->mu);
    f->filled[k] += count;
    int complete = f->filled[k] == f->s.p * band_w(f, k) && f->band[k];
    if (complete && f->posting && !f->failed) {
        /* outside the lock: other tiles go on into other bands */
        pthread_mutex_unlock(&f->mu);
        int bad = post_band(f, k);
        pthread_mutex_lock(&f->mu);
        if (bad) { errno = ENOMEM; fail(f, "finishing a band (out of memory)"); }
    }
    if (complete) {
        f->queue[f->qtail++] = k;
        f->queued += f->alloc_bytes;
        pthread_cond_signal(&f->work);
    }
    pthread_mutex_unlock(&f->mu);
}

static inline double value_at(const void *val, size_t idx, int is_float)
{
    if (!is_float) return ((const double *) val)[idx];
    float v = ((const float *) val)[idx];
    return gc_float_is_na(v) ? gpucor_na_real : (double) v;
}

void gc_file_put(gc_file *f, const void *val, size_t ld, int is_float, double scale,
                 size_t i0, size_t ni, size_t j0, size_t nj, int transposed, int epi,
                 double beta)
{
    size_t j1 = j0 + nj, p = f->s.p, w0 = f->s.col0, w1 = w0 + f->s.q;
    int diag_block = f->s.symmetric && i0 == j0 && !transposed;
    int plain = !diag_block && !transposed && !is_float && !f->fill_float &&
                epi == EPI_IDENTITY && scale == 1.0 &&
                (!f->s.zero_diag || i0 >= j0 + nj || j0 >= i0 + ni);
    /* the dataset's columns [w0, w1) of the result only (a window) */
    for (size_t c = j0 > w0 ? j0 : w0, cut = j1 < w1 ? j1 : w1; c < cut;) {
        size_t k = (c - w0) / f->s.cc, bend = w0 + (k + 1) * f->s.cc;
        size_t cend = bend < cut ? bend : cut, base = w0 + k * f->s.cc;
        char *band = band_of(f, k);
        if (!band) return;
        if (plain) {
            /* whole stretches of columns, as they are (the GPU's panels) */
            for (size_t j = c; j < cend; j++)
                memcpy(band + ((j - base) * p + i0) * sizeof(double),
                       (const double *) val + (j - j0) * ld, ni * sizeof(double));
            band_done(f, k, ni * (cend - c));
            c = cend;
            continue;
        }
        for (size_t j = c; j < cend; j++) {
            size_t b = j - j0, col = (j - base) * p;
            for (size_t a = 0; a < ni; a++) {
                size_t i = i0 + a, idx = transposed ? b + a * ld : a + b * ld;
                if (diag_block && i < j) idx = b + a * ld;   /* the mirrored pair */
                double r = 0.0;   /* a distance's diagonal: 0, whatever the tile holds */
                if (i != j || !f->s.zero_diag) {
                    r = value_at(val, idx, is_float);
                    if (r == r) r = gc_epilogue(epi, beta, r * scale);
                }
                if (f->fill_float) {
                    ((float *) band)[col + i] = to_float(r);
                } else {
                    ((double *) band)[col + i] = r;
                }
            }
        }
        band_done(f, k, ni * (cend - c));
        c = cend;
    }
}

int gc_file_close(gc_file *f, int ok, char *msg, size_t msgcap)
{
    pthread_mutex_lock(&f->mu);
    f->done = 1;
    pthread_cond_broadcast(&f->work);
    pthread_mutex_unlock(&f->mu);
    if (f->writer_started) pthread_join(f->writer, NULL);
    int status = GPUCOR_OK;
    if (f->failed) {
        snprintf(msg, msgcap, "%s", f->err);
        status = GPUCOR_ERR_INVALID;
    } else if (ok && f->written != f->nband) {
        snprintf(msg, msgcap, "internal error: %zu of %zu column bands written",
                 f->written, f->nband);
        status = GPUCOR_ERR_INVALID;
    }
    int keep = ok && status == GPUCOR_OK;
    errno = 0;
    if (finish_hdf5(f, keep) && keep) {
        snprintf(msg, msgcap, "closing '%s' in %s failed%s%s", f->s.name, f->s.path,
                 errno ? ": " : "", errno ? strerror(errno) : "");
        status = GPUCOR_ERR_INVALID;
    }
    pthread_mutex_destroy(&f->mu);
    pthread_cond_destroy(&f->space);
    pthread_cond_destroy(&f->work);
    free_file(f);
    return status;
}

int gc_file_virtual(const char *path, const char *name, size_t p, size_t q, int out_float,
                    size_t nparts, const char *const *files, const char *const *names,
                    const double *c0, const double *c1, char *msg, size_t msgcap)
{
    H5E_auto2_t old_func;
    void *old_data;
    H5Eget_auto2(H5E_DEFAULT, &old_func, &old_data);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    int created = 0;
    hid_t fid = -1, did = -1, sp = -1, dcpl = -1, lcpl = -1;
    const char *why = open_target(path, name, &fid, &created);
    if (!why) {
        hsize_t dims[2] = {(hsize_t) q, (hsize_t) p};   /* HDF5's order: column j is row j */
        hid_t type = out_float ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
        double na = gpucor_na_real;
        float fna = to_float(na);
        sp = H5Screate_simple(2, dims, NULL);
        dcpl = H5Pcreate(H5P_DATASET_CREATE);
        lcpl = H5Pcreate(H5P_LINK_CREATE);
        H5Pset_create_intermediate_group(lcpl, 1);
        if (sp < 0 || dcpl < 0 || lcpl < 0 ||
            H5Pset_fill_value(dcpl, type, out_float ? (const void *) &fna : (const void *) &na) < 0)
            why = "the virtual dataset cannot be described";
        for (size_t k = 0; k < nparts && !why; k++) {
            hsize_t w = (hsize_t) (c1[k] - c0[k]);
            hsize_t off[2] = {(hsize_t) c0[k], 0}, cnt[2] = {w, (hsize_t) p};
            hid_t src = H5Screate_simple(2, cnt, NULL);
            if (src < 0 || H5Sselect_hyperslab(sp, H5S_SELECT_SET, off, NULL, cnt, NULL) < 0 ||
                H5Pset_virtual(dcpl, sp, files[k], names[k], src) < 0)
                why = "a part cannot be mapped";
            if (src >= 0) H5Sclose(src);
        }
        if (!why) {
            H5Sselect_all(sp);
            did = H5Dcreate2(fid, name, out_float ? H5T_IEEE_F32LE : H5T_IEEE_F64LE, sp, lcpl,
                             dcpl, H5P_DEFAULT);
            if (did < 0) why = "the virtual dataset cannot be created there";
        }
    }
    int e = errno, made = did >= 0;
    if (did >= 0 && H5Dclose(did) < 0 && !why) why = "closing the virtual dataset failed";
    if (why && made && !created) H5Ldelete(fid, name, H5P_DEFAULT);   /* ours only */
    if (sp >= 0) H5Sclose(sp);
    if (dcpl >= 0) H5Pclose(dcpl);
    if (lcpl >= 0) H5Pclose(lcpl);
    if (fid >= 0 && H5Fclose(fid) < 0 && !why) why = "closing the file failed";
    if (why && created) unlink(path);
    H5Eset_auto2(H5E_DEFAULT, old_func, old_data);
    if (!why) return GPUCOR_OK;
    snprintf(msg, msgcap, "cannot write '%s' to %s: %s%s%s", name, path, why, e ? ": " : "",
             e ? strerror(e) : "");
    return GPUCOR_ERR_INVALID;
}

#endif

/* ---- the row of gc_sink_table ------------------------------------------- */
static void file_emit(const gc_sink *s, const gc_tile *t)
{
    gc_file_put(s->file, t->val, t->ld, t->is_float, t->scale, t->i0, t->ni, t->j0, t->nj,
                t->transposed, s->epilogue, s->beta);
}

/* GPU commits: whole columns, their epilogue applied on the device */
static void file_commit(const gc_sink *s, const gc_tile *t, size_t offset, size_t count,
                        int nthreads)
{
    (void) nthreads;
    if (s->p)
        gc_file_put(s->file, t->val, s->p, t->is_float, t->scale, 0, s->p, offset / s->p,
                    count / s->p, 0, EPI_IDENTITY, 1.0);
}

/* NA columns through the bands, as the tiles would come */
static int file_fill_na(const gc_sink *s)
{
    if (!s->p) return GPUCOR_OK;
    double *col = malloc(s->p * sizeof(double));
    if (!col) return GPUCOR_ERR_ALLOC;
    for (size_t i = 0; i < s->p; i++) col[i] = gpucor_na_real;
    for (size_t j = 0; j < s->q; j++) {
        gc_tile t = {.i0 = 0, .ni = s->p, .j0 = j, .nj = 1, .val = col, .ld = s->p,
                     .scale = 1.0};
        file_emit(s, &t);
    }
    free(col);
    return GPUCOR_OK;
}

const gc_sink_ops gc_sink_file = {
    .name = "file", .needs = GC_SINK_BOTH_HALVES, .emit = file_emit, .commit = file_commit,
    .fill_na = file_fill_na,
};
