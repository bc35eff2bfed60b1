/*
 * pvalue.c -- see pvalue.h.  Each formula is cor.test.default's, R
 * expression by R expression (so that the values agree to the last bits
 * where the estimate does).
 */
#include <math.h>
#include <stdlib.h>
#include <Rmath.h>
#include "pvalue.h"
#include "../gpucor.h"
#include "../engine/measure.h"

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
