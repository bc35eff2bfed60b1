/*
 * file.h -- the file sink (SINK_FILE): a p x q result written to an HDF5
 * dataset as it is made, never whole in memory (sink_file.c).
 *
 * Tiles and panels go into column bands of 'cc' result columns (the
 * dataset's chunk width): a band is a p x cc block of host memory in the
 * output type, filled by whichever tiles cover it (from any thread; tiles
 * never overlap).  A band that is complete goes to the writer thread's
 * queue; the writer writes it as one hyperslab (with chunks of whole
 * columns: one chunk, written directly, compressed by several threads when
 * 'level' > 0) and frees it.  A tile waits for memory only while complete
 * bands are queued, so the queue stays near 'cap' bytes and nothing can
 * wait on a band that is not complete.
 *
 * R stores a p x q matrix by columns and HDF5 by rows, so the dataset is
 * q x p in HDF5's order: result column j is HDF5 row j, as HDF5Array reads
 * it.  The dataset is written under a temporary name ("<name>.incomplete")
 * and renamed when every band is in; a failure or an interrupt deletes it
 * (and the file, when this call created it).
 *
 * What R does to a result in memory after the engine (R/wgcna.R: bicor's
 * pairs with NAs recomputed, NA rows and columns, an adjacency's power of
 * those pairs, a diagonal, 1 - x) is done to each band once it is complete,
 * before it is written (gc_file_post): the bands are then filled in double
 * even when the file stores floats, so that each value is rounded to float
 * once, after those steps, as the in-memory result would be.
 */
#ifndef GPUCOR_FILE_H
#define GPUCOR_FILE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gc_file gc_file;

/* Steps applied to a complete band, in this order, each as R applies it
 * to a matrix in memory: the hook (gc_file_set_hook); 'epi' with 'beta' to
 * every value (engine.h's EPI_*; NA passes); NA in the rows na_row[i] != 0
 * and the columns na_col[j] != 0 (NULL: none); the diagonal set to 'diag'
 * when set_diag; 'epi2' to every value. */
typedef struct {
    int epi;
    double beta;
    const int *na_row, *na_col;   /* p and q flags (R logicals), or NULL */
    int set_diag;
    double diag;
    int epi2;
} gc_file_post;

/* A caller's step on columns [j0, j0 + nj) of the result, val[a + b * ld]
 * (doubles: the values as the engine made them), in place; called from
 * whichever engine thread completed the band (never R's API).  Nonzero:
 * out of memory (the file fails). */
typedef int (*gc_file_hook)(void *ctx, size_t j0, size_t nj, double *val, size_t ld);

typedef struct {
    const char *path, *name;
    size_t p, q;          /* the dataset: p x q */
    size_t col0;          /* its column 0 is the result's column col0 (a
                             BiocParallel worker's range: the tiles' other
                             columns are dropped); 0 for the whole result */
    size_t cr, cc;        /* chunk: cr rows x cc columns of the result */
    int level;            /* deflate level, 0: none */
    int out_float;        /* store floats */
    int symmetric;        /* tiles are the CPU's lower ones (tiles.c) */
    int zero_diag;        /* a distance: the diagonal is 0 */
    int nthreads;         /* compression threads */
    size_t cap;           /* bytes of complete bands queued before tiles wait */
    gc_file_post post;    /* what is done to a complete band (all 0: nothing) */
} gc_file_spec;

/* A virtual dataset 'name' in 'path' (created, or opened when it is an
 * HDF5 file without that dataset): the p x q result of which columns
 * [c0[k], c1[k]) are the p x (c1[k] - c0[k]) dataset names[k] of the file
 * files[k] (a name relative to path's folder); what no part covers reads
 * as NA.  Returns GPUCOR_OK, or an error with msg (nothing left). */
int gc_file_virtual(const char *path, const char *name, size_t p, size_t q, int out_float,
                    size_t nparts, const char *const *files, const char *const *names,
                    const double *c0, const double *c1, char *msg, size_t msgcap);
/* 1 when the package was built with HDF5. */
int gc_file_available(void);
/* Creates the dataset (and the file, if there is none) and starts the
 * writer.  On failure *out is NULL, nothing is left, and msg says why. */
int gc_file_open(const gc_file_spec *spec, gc_file **out, char *msg, size_t msgcap);
/* Result pairs (i0 + a, j0 + b), a < ni, b < nj, into their bands (those
 * of the dataset's columns; j0 is the result's):
 * val[a + b * ld] (doubles, or floats when is_float), times scale, after the
 * epilogue; with 'transposed' at val[b + a * ld] (the CPU's tile of the
 * mirrored pairs).  A symmetric sink's tile with i0 == j0 holds the pairs
 * i >= j; the others are mirrored.  Thread-safe. */
void gc_file_put(gc_file *f, const void *val, size_t ld, int is_float, double scale,
                 size_t i0, size_t ni, size_t j0, size_t nj, int transposed, int epi,
                 double beta);
/* The hook of the post steps (before the engine runs). */
void gc_file_set_hook(gc_file *f, gc_file_hook hook, void *ctx);
/* Where the time went (bench): s[0] seconds since the open, s[1] of them
 * the writer spent writing (and compressing), s[2] waiting for bands, s[3]
 * the engine's threads waiting for band memory (summed), s[4] the bands
 * written. */
void gc_file_profile(gc_file *f, double *s);
/* Nonzero once a write has failed (the engine should stop). */
int gc_file_failed(gc_file *f);
/* Stops the writer.  ok: the engine finished, so every band is in; then the
 * dataset is renamed, else it is deleted.  Frees f.  Returns GPUCOR_OK or
 * an error with msg. */
int gc_file_close(gc_file *f, int ok, char *msg, size_t msgcap);

#ifdef __cplusplus
}
#endif
#endif
