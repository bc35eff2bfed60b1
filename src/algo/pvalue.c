/*
 * pvalue.c -- see pvalue.h.  Each formula is cor.test.default's, R
 * expression by R expression (so that the values agree to the last bits
 * where the estimate does).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <Rmath.h>
#include "pvalue.h"
#include "../gpucor.h"
#include "../engine/measure.h"
#include "../engine/select.h"   /* gc_select_slot */

double gc_p_pearson(double r, double n)
{
    if (isnan(r) || n < 3) return NAN;
    double df = n - 2;
    double t = sqrt(df) * r / sqrt(1 - r * r);
    /* cor.test's min(pt(t), pt(t, lower = FALSE)) is the tail beyond t:
     * only that one is computed (the same value) */
    if (isnan(t)) return t;
    return 2 * pt(t, df, t < 0, 0);
}

/* pspearman() of cor.test without the exact branch */
static double pspearman(double q, double n, int lower_tail)
{
    double den = (n * (n * n - 1)) / 6;
    double r = 1 - q / den;
    return pt(r / sqrt((1 - r * r) / (n - 2)), n - 2, !lower_tail, 0);
}

double gc_p_spearman(double r, double n)
{
    if (isnan(r) || n < 2) return NAN;
    double n3 = n * n * n;
    double q = (n3 - n) * (1 - r) / 6;
    double p = q > (n3 - n) / 6 ? pspearman(q, n, 0) : pspearman(q, n, 1);
    p = 2 * p;
    return p < 1 ? p : (isnan(p) ? p : 1);
}

double gc_p_kendall(double r, double n, const gc_ties *tx, const gc_ties *ty)
{
    if (!isfinite(r) || n < 2) return NAN;
    double T0 = n * (n - 1) / 2;
    double T1 = tx->a1 / 2, T2 = ty->a1 / 2;
    double S = r * sqrt((T0 - T1) * (T0 - T2));
    double v0 = n * (n - 1) * (2 * n + 5);
    double v1 = tx->a1 * ty->a1, v2 = tx->a3 * ty->a3;
    double var_S = (v0 - tx->a2 - ty->a2) / 18 + v1 / (2 * n * (n - 1)) +
                   v2 / (9 * n * (n - 1) * (n - 2));
    double z = S / sqrt(var_S);
    if (isnan(z)) return z;
    return 2 * pnorm(z, 0, 1, z < 0, 0);
}

double gc_p_value(int kind, double r, double n, const gc_ties *tx,
                  const gc_ties *ty)
{
    switch (kind) {
    case PVALUE_KENDALL: return gc_p_kendall(r, n, tx, ty);
    case PVALUE_SPEARMAN: return gc_p_spearman(r, n);
    case PVALUE_PEARSON: return gc_p_pearson(r, n);
    default: return NAN;
    }
}

static int dcmp(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

void gc_kendall_ties(double *v, size_t n, gc_ties *t)
{
    qsort(v, n, sizeof *v, dcmp);
    t->a1 = t->a2 = t->a3 = 0;
    for (size_t a = 0; a < n;) {
        size_t b = a + 1;
        while (b < n && v[b] == v[a]) b++;
        double k = (double) (b - a);
        if (k > 1) {
            t->a1 += k * (k - 1);
            t->a2 += k * (k - 1) * (2 * k + 5);
            t->a3 += k * (k - 1) * (k - 2);
        }
        a = b;
    }
}

/* ---- the p-values of a result's pairs ----------------------------------- */
/* observed-row bit masks of the columns of a (nrow x ncol) */
static uint64_t *na_masks(const double *a, size_t nrow, size_t ncol, size_t words)
{
    size_t len = ncol * words;
    uint64_t *m = calloc(len ? len : 1, sizeof(uint64_t));
    if (!m) return NULL;
    for (size_t c = 0; c < ncol; c++)
        for (size_t k = 0; k < nrow; k++)
            if (!isnan(a[k + c * nrow])) m[c * words + k / 64] |= (uint64_t) 1 << (k % 64);
    return m;
}

/* Kendall's tie statistics of the used rows of each column */
static gc_ties *column_ties(const double *a, size_t nrow, size_t ncol, const int *rows,
                            size_t nobs)
{
    gc_ties *t = malloc((ncol ? ncol : 1) * sizeof(gc_ties));
    double *v = malloc((nobs ? nobs : 1) * sizeof(double));
    if (!t || !v) {
        free(t);
        free(v);
        return NULL;
    }
    for (size_t c = 0; c < ncol; c++) {
        for (size_t k = 0; k < nobs; k++) v[k] = a[(rows ? (size_t) rows[k] : k) + c * nrow];
        gc_kendall_ties(v, nobs, &t[c]);
    }
    free(v);
    return t;
}

int gc_pv_init(gc_pv_ctx *c, int kind, const double *x, const double *y, size_t n,
               size_t p, size_t q, const int *rows, size_t nobs, int pairwise_na,
               int nslots)
{
    memset(c, 0, sizeof *c);
    c->kind = kind;
    c->n = (double) nobs;
    c->nrow = n;
    int failed = 0;
    if (pairwise_na) {
        c->words = (n + 63) / 64;
        c->mx = na_masks(x, n, p, c->words);
        c->my = y ? na_masks(y, n, q, c->words) : c->mx;
        failed = !c->mx || !c->my;
        if (kind == PVALUE_KENDALL) {
            c->x = x;
            c->y = y ? y : x;
            c->scratch = malloc((size_t) (nslots > 0 ? nslots : 1) * 2 * (n ? n : 1) *
                                sizeof(double));
            failed |= !c->scratch;
        }
    } else if (kind == PVALUE_KENDALL) {
        c->tx = column_ties(x, n, p, rows, nobs);
        c->ty = y ? column_ties(y, n, q, rows, nobs) : c->tx;
        failed = !c->tx || !c->ty;
    }
    if (failed) gc_pv_free(c);
    return failed;
}

void gc_pv_free(gc_pv_ctx *c)
{
    if (c->my != c->mx) free(c->my);
    free(c->mx);
    if (c->ty != c->tx) free(c->ty);
    free(c->tx);
    free(c->scratch);
    c->mx = c->my = NULL;
    c->tx = c->ty = NULL;
    c->scratch = NULL;
}

double gc_pv_pair_n(const gc_pv_ctx *c, size_t i, size_t j)
{
    if (!c->mx) return c->n;
    const uint64_t *a = c->mx + i * c->words, *b = c->my + j * c->words;
    size_t k = 0;
    for (size_t w = 0; w < c->words; w++) k += (size_t) __builtin_popcountll(a[w] & b[w]);
    return (double) k;
}

double gc_pv_abs(void *ctx, double absr)
{
    const gc_pv_ctx *c = ctx;
    return gc_p_value(c->kind, absr, c->n, NULL, NULL);
}

double gc_pv_pair(void *ctx, size_t i, size_t j, double r)
{
    const gc_pv_ctx *c = ctx;
    double n = gc_pv_pair_n(c, i, j);
    if (c->kind != PVALUE_KENDALL) return gc_p_value(c->kind, r, n, NULL, NULL);
    if (!c->mx) return gc_p_kendall(r, n, &c->tx[i], &c->ty[j]);
    /* the pair's own complete rows */
    double *xv = c->scratch + (size_t) gc_select_slot() * 2 * c->nrow, *yv = xv + c->nrow;
    const double *a = c->x + i * c->nrow, *b = c->y + j * c->nrow;
    size_t m = 0;
    for (size_t k = 0; k < c->nrow; k++)
        if (!isnan(a[k]) && !isnan(b[k])) { xv[m] = a[k]; yv[m] = b[k]; m++; }
    gc_ties tx, ty;
    gc_kendall_ties(xv, m, &tx);
    gc_kendall_ties(yv, m, &ty);
    return gc_p_kendall(r, (double) m, &tx, &ty);
}
