/*
 * shipfile.c -- a numeric vector written to files and read back whole:
 * how a large input reaches BiocParallel's workers on this machine, once
 * for all of them instead of once a job through BiocParallel's sockets,
 * and how a worker's large result comes back (R/shipfile.R, .bp_ship() and
 * .bp_stash(); gpu_dist()'s parts are read straight into the joined
 * vector).  The vector is cut into as many equal pieces as there are file
 * names, each written or read by a thread of its own (one thread
 * writing the page cache of a fresh file runs at about 1 GB/s).  Native
 * byte order, no header: the files live only for the call, on the machine
 * that wrote them.
 */
#include <R.h>
#include <Rinternals.h>
#include "status.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define SHIP_CHUNK ((size_t) 1 << 29)   /* bytes a call of fwrite or fread */

static size_t ship_size(int type)
{
    switch (type) {
    case REALSXP: return sizeof(double);
    case INTSXP: case LGLSXP: return sizeof(int);
    default: error("internal error: only double, integer and logical vectors are shipped");
    }
    return 0;
}

static void *ship_data(SEXP x)
{
    switch (TYPEOF(x)) {
    case REALSXP: return REAL(x);
    case INTSXP: return INTEGER(x);
    default: return LOGICAL(x);
    }
}

/* The file names, native; the pieces: piece k holds elements
 * [from(k), from(k + 1)) of n. */
static const char **ship_paths(SEXP paths)
{
    if (!isString(paths) || XLENGTH(paths) < 1 || XLENGTH(paths) > 1024)
        error("internal error: invalid paths");
    const char **fn = (const char **) R_alloc((size_t) XLENGTH(paths), sizeof(char *));
    for (R_xlen_t k = 0; k < XLENGTH(paths); k++) {
        const char *e = R_ExpandFileName(translateChar(STRING_ELT(paths, k)));   /* static */
        char *c = R_alloc(strlen(e) + 1, 1);
        strcpy(c, e);
        fn[k] = c;
    }
    return fn;
}

static size_t ship_from(size_t n, size_t pieces, size_t k)
{
    return (size_t) ((double) n * (double) k / (double) pieces);
}

static int ship_threads(SEXP threads, size_t pieces)
{
    int t = asInteger(threads);
    if (t == NA_INTEGER || t < 1) t = 1;
    return (size_t) t < pieces ? t : (int) pieces;
}

/* x's values into the files 'paths' (one piece each, 'threads' threads);
 * TRUE, or FALSE when they could not be written whole (then none is left;
 * the caller sends x through the sockets instead). */
SEXP gpucor_ship_write(SEXP x, SEXP paths, SEXP threads)
{
    size_t es = ship_size(TYPEOF(x));
    const char **fn = ship_paths(paths);
    size_t np = (size_t) XLENGTH(paths), n = (size_t) XLENGTH(x);
    const char *v = (const char *) ship_data(x);
    int failed = 0;
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(ship_threads(threads, np))
#endif
    for (size_t k = 0; k < np; k++) {
        size_t at = ship_from(n, np, k) * es, len = ship_from(n, np, k + 1) * es - at, done = 0;
        FILE *f = fopen(fn[k], "wb");
        if (f) {
            while (done < len) {
                size_t c = len - done < SHIP_CHUNK ? len - done : SHIP_CHUNK;
                if (fwrite(v + at + done, 1, c, f) != c) break;
                done += c;
            }
            if (fclose(f) != 0) done = 0;
        }
        if (!f || done != len) {
#ifdef _OPENMP
#pragma omp atomic write
#endif
            failed = 1;
        }
    }
    if (failed)
        for (size_t k = 0; k < np; k++) remove(fn[k]);
    return ScalarLogical(!failed);
}

/* One piece: the file fn's 'want' bytes into dst; 0 read whole, 1 not
 * opened (errno in *err), 2 not that file (shorter or longer). */
static int read_piece(const char *fn, char *dst, size_t want, int *err)
{
    size_t done = 0;
    FILE *f = fopen(fn, "rb");
    if (!f) {
        *err = errno;
        return 1;
    }
    while (done < want) {
        size_t c = want - done < SHIP_CHUNK ? want - done : SHIP_CHUNK;
        if (fread(dst + done, 1, c, f) != c) break;
        done += c;
    }
    int bad = done != want || fgetc(f) != EOF ? 2 : 0;
    fclose(f);
    return bad;
}

static void piece_error(int bad, int err, const char *fn)
{
    if (bad == 1)
        error("cannot open the file '%s' that another process of this call wrote (%s): "
              "are the BiocParallel workers on another machine?", fn, strerror(err));
    if (bad == 2)
        error("the file '%s' is not the one another process of this call wrote", fn);
}

static SEXPTYPE ship_type(SEXP type)
{
    if (!isString(type) || XLENGTH(type) != 1) error("internal error: invalid type");
    return str2type(CHAR(STRING_ELT(type, 0)));
}

static size_t ship_len(SEXP len)
{
    double dn = asReal(len);
    if (ISNAN(dn) || dn < 0 || dn > (double) R_XLEN_T_MAX) error("internal error: invalid length");
    return (size_t) dn;
}

/* One vector of R's type 'type' joined from 'parts', in order: each a
 * vector of that type, or a record of files (a list with 'path' and
 * 'length', as .ship_write() makes) read straight into its place -- one
 * record alone reads a shipped vector back (.ship_read()); several, the
 * join of a result the workers returned in parts without a copy of each
 * part first (R's unlist() copies a value at a time).  The threads share
 * the pieces of the files and 64 MiB pieces of the vectors. */
#define GATHER_PIECE ((size_t) 64 << 20)
typedef struct { const char *fn; const char *src; size_t at, len; int bad, err; } gather_item;

SEXP gpucor_ship_gather(SEXP parts, SEXP type, SEXP threads)
{
    if (TYPEOF(parts) != VECSXP) error("internal error: invalid parts");
    SEXPTYPE t = ship_type(type);
    size_t es = ship_size(t), np = (size_t) XLENGTH(parts), total = 0, nitems = 0;
    /* each part's length and its files (none: in memory) */
    size_t *len = (size_t *) R_alloc(np + 1, sizeof(size_t));
    size_t *nf = (size_t *) R_alloc(np + 1, sizeof(size_t));
    const char ***fns = (const char ***) R_alloc(np + 1, sizeof(char **));
    for (size_t k = 0; k < np; k++) {
        SEXP pk = VECTOR_ELT(parts, k);
        if (TYPEOF(pk) == VECSXP) {
            SEXP path = gpucor_field(pk, "path");
            fns[k] = ship_paths(path);
            nf[k] = (size_t) XLENGTH(path);
            len[k] = ship_len(gpucor_field(pk, "length"));
            nitems += nf[k];
        } else {
            if (TYPEOF(pk) != t) error("internal error: a part of another type");
            fns[k] = NULL;
            nf[k] = 0;
            len[k] = (size_t) XLENGTH(pk);
            nitems += (len[k] * es + GATHER_PIECE - 1) / GATHER_PIECE;
        }
        total += len[k];
    }
    if (total > (size_t) R_XLEN_T_MAX) error("internal error: parts too long");
    gather_item *it = (gather_item *) R_alloc(nitems + 1, sizeof(gather_item));
    size_t ni = 0, at = 0;
    for (size_t k = 0; k < np; k++) {
        size_t bytes = len[k] * es;
        for (size_t c = 0; c < nf[k]; c++) {   /* the pieces as written */
            size_t a = ship_from(len[k], nf[k], c) * es;
            it[ni++] = (gather_item) {fns[k][c], NULL, at + a,
                                      ship_from(len[k], nf[k], c + 1) * es - a, 0, 0};
        }
        if (!fns[k]) {
            const char *src = (const char *) ship_data(VECTOR_ELT(parts, k));
            for (size_t a = 0; a < bytes; a += GATHER_PIECE)
                it[ni++] = (gather_item) {NULL, src + a, at + a,
                                          bytes - a < GATHER_PIECE ? bytes - a : GATHER_PIECE,
                                          0, 0};
        }
        at += bytes;
    }
    SEXP ans = PROTECT(allocVector(t, (R_xlen_t) total));
    char *v = (char *) ship_data(ans);
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(ship_threads(threads, ni ? ni : 1))
#endif
    for (size_t k = 0; k < ni; k++) {
        if (it[k].fn) it[k].bad = read_piece(it[k].fn, v + it[k].at, it[k].len, &it[k].err);
        else memcpy(v + it[k].at, it[k].src, it[k].len);
    }
    for (size_t k = 0; k < ni; k++) piece_error(it[k].bad, it[k].err, it[k].fn);
    UNPROTECT(1);
    return ans;
}
