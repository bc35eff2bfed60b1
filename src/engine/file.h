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
 */
#ifndef GPUCOR_FILE_H
#define GPUCOR_FILE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gc_file gc_file;

typedef struct {
    const char *path, *name;
    size_t p, q;          /* the result: p x q */
    size_t cr, cc;        /* chunk: cr rows x cc columns of the result */
    int level;            /* deflate level, 0: none */
    int out_float;        /* store floats */
    int symmetric;        /* tiles are the CPU's lower ones (tiles.c) */
    int zero_diag;        /* a distance: the diagonal is 0 */
    int nthreads;         /* compression threads */
    size_t cap;           /* bytes of complete bands queued before tiles wait */
} gc_file_spec;

/* 1 when the package was built with HDF5. */
int gc_file_available(void);
/* Creates the dataset (and the file, if there is none) and starts the
 * writer.  On failure *out is NULL, nothing is left, and msg says why. */
int gc_file_open(const gc_file_spec *spec, gc_file **out, char *msg, size_t msgcap);
/* Result pairs (i0 + a, j0 + b), a < ni, b < nj, into their bands:
 * val[a + b * ld] (doubles, or floats when is_float), times scale, after the
 * epilogue; with 'transposed' at val[b + a * ld] (the CPU's tile of the
 * mirrored pairs).  A symmetric sink's tile with i0 == j0 holds the pairs
 * i >= j; the others are mirrored.  Thread-safe. */
void gc_file_put(gc_file *f, const void *val, size_t ld, int is_float, double scale,
                 size_t i0, size_t ni, size_t j0, size_t nj, int transposed, int epi,
                 double beta);
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
