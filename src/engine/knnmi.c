/*
 * knnmi.c -- the variables of a knnmi problem prepared once, for either
 * engine (knnmi.h): normalised as parmigene's normalize() (points.c) does,
 * jittered, sorted, and the table of psi.
 */
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "knnmi.h"
#include "../gpucor.h"

/* parmigene's normalize() on v[0 .. m - 1], its arithmetic step by step:
 * a plain double sum, the sd with divisor m - 1, (v - mean) / sd, then the
 * minimum subtracted.  0 when the mean or sd is infinite (then v is left
 * as it is, and every pair with it is NaN); zero sd leaves v unchanged. */
static int normalize(double *v, size_t m)
{
    double mean = 0, s = 0, lo = DBL_MAX;
    for (size_t i = 0; i < m; i++) mean += v[i];
    mean /= (double) m;
    if (isinf(mean)) return 0;
    for (size_t i = 0; i < m; i++) s += (v[i] - mean) * (v[i] - mean);
    s = sqrt(s / (double) (m - 1));
    if (isinf(s)) return 0;
    if (s > 0) {
        for (size_t i = 0; i < m; i++) {
            v[i] = (v[i] - mean) / s;
            if (v[i] < lo) lo = v[i];
        }
        for (size_t i = 0; i < m; i++) v[i] -= lo;
    }
    return 1;
}

/* ascending by value, ties by sample index (qsort is not stable) */
typedef struct { double v; int i; } keyed;
static int by_value(const void *a, const void *b)
{
    const keyed *x = (const keyed *) a, *y = (const keyed *) b;
    if (x->v < y->v) return -1;
    if (x->v > y->v) return 1;
    return (x->i > y->i) - (x->i < y->i);
}

/* values, sorted values and psi (doubles), then orders, ranks (ints) and
 * the flags */
size_t gc_knnmi_bytes(size_t n, size_t m)
{
    return (2 * n * m + m) * sizeof(double) + 2 * n * m * sizeof(int) + n;
}

gc_knnmi_view gc_knnmi_layout(void *mem, size_t n, size_t m, size_t k)
{
    double *val = (double *) mem, *sorted = val + n * m, *psi = sorted + n * m;
    int *ord = (int *) (psi + m), *rank = ord + n * m;
    return (gc_knnmi_view){.n = n, .m = m, .k = k, .val = val, .sorted = sorted,
                           .ord = ord, .rank = rank,
                           .ok = (const unsigned char *) (rank + n * m), .psi = psi};
}

int gc_knnmi_prepare(const gc_problem *pb, gc_knnmi_prep *out, char *msg, size_t msgcap)
{
    /* variables in rows (gpu_knnmi) or, between columns, in columns
     * (gpu_cor_edges); x's nx, then y's ny (gpu_knnmi(y =)): one block, so
     * that a pair of x and y is the pair (i, nx + j) of rbind(x, y), the
     * same arithmetic to the bit (each variable is normalised on its own) */
    const int rows = pb->between_rows;
    size_t nx = rows ? pb->n : pb->p, ny = pb->y ? pb->q : 0;
    size_t n = nx + ny, m = rows ? pb->p : pb->n, k = pb->k;
    memset(out, 0, sizeof *out);
    if (k < 2 || k >= m || m > (size_t) 2147483647) {
        snprintf(msg, msgcap, "knnmi needs 2 <= k < the number of samples (k = %zu, %zu samples)",
                 k, m);
        return GPUCOR_ERR_INVALID;
    }
    size_t bytes = gc_knnmi_bytes(n, m);
    char *mem = malloc(bytes ? bytes : 1);
    keyed *kv = malloc(m * sizeof *kv);
    if (!mem || !kv) {
        free(mem);
        free(kv);
        snprintf(msg, msgcap, "cannot allocate %.1f MiB for the variables", bytes / 1048576.0);
        return GPUCOR_ERR_ALLOC;
    }
    gc_knnmi_view view = gc_knnmi_layout(mem, n, m, k);
    double *val = (double *) view.val, *sorted = (double *) view.sorted;
    double *psi = (double *) view.psi;
    int *ord = (int *) view.ord, *rank = (int *) view.rank;
    unsigned char *ok = (unsigned char *) view.ok;
    for (size_t v = 0; v < n; v++) {
        double *x = val + v * m;
        /* row u of the nu x m column-major input (x, or y past nx), or its
         * column u */
        int in_y = v >= nx;
        size_t u = in_y ? v - nx : v, nu = in_y ? ny : nx;
        const double *src = in_y ? pb->y : pb->x, *jit = in_y ? pb->jitter_y : pb->jitter;
        for (size_t s = 0; s < m; s++) x[s] = src[rows ? u + s * nu : s + u * m];
        ok[v] = (unsigned char) normalize(x, m);
        /* parmigene adds its noise after the normalisation, whatever it
         * returned */
        if (jit)
            for (size_t s = 0; s < m; s++) x[s] += jit[rows ? u + s * nu : s + u * m];
        for (size_t s = 0; s < m; s++) {
            kv[s].v = x[s];
            kv[s].i = (int) s;
        }
        qsort(kv, m, sizeof *kv, by_value);
        for (size_t r = 0; r < m; r++) {
            sorted[v * m + r] = kv[r].v;
            ord[v * m + r] = kv[r].i;
            rank[v * m + (size_t) kv[r].i] = (int) r;
        }
    }
    free(kv);
    /* parmigene's init_psi: psi(1) = -gamma, psi(j + 1) = psi(j) + 1/j */
    psi[0] = -0.5772156649015328606065;
    for (size_t j = 1; j < m; j++) psi[j] = psi[j - 1] + 1.0 / (double) j;
    out->mem = mem;
    out->bytes = bytes;
    out->v = view;
    return GPUCOR_OK;
}

void gc_knnmi_free(gc_knnmi_prep *prep)
{
    free(prep->mem);
    prep->mem = NULL;
}
