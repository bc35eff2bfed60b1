/*
 * eigengene.c -- module eigengenes in one pass; see eigengene.h.
 */
#define USE_FC_LEN_T
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include <R_ext/Lapack.h>
#ifndef FCONE
#define FCONE
#endif

#include "eigengene.h"

/* A module is "large" (its Gram matrix made by all threads, one module at
 * a time) above this many multiply-adds; smaller ones run one per thread. */
#define LARGE_WORK ((double) (1 << 24))
/* Below this correlation with the average the eigengene's sign is left to
 * R (base::svd()'s, as WGCNA's). */
#define SIGN_MIN 1e-10
/* Rows of M per pass of the Gram product (a cache-sized panel). */
#define GRAM_ROWS 512

typedef struct {
    size_t n, m;       /* samples, genes */
    int by_gene;       /* M is samples x genes (m <= n), else genes x samples */
    size_t r, c;       /* M's rows and columns; c = min(m, n) */
    double *M, *G, *gm, *gss;
} module_t;

/* One thread's buffers, for modules of up to m genes over n samples and k
 * components (allocated once per call: a module's buffers are often past
 * malloc's mmap threshold, and unmapping them in a team of threads costs
 * more than the module). */
typedef struct {
    size_t m, c;
    double *M, *G, *gm, *gss, *Z, *v, *w, *ew, *work, *ez;
    int *isuppz, *iwork;
} work_t;

static void work_free(work_t *ws)
{
    free(ws->M); free(ws->G); free(ws->gm); free(ws->gss); free(ws->Z); free(ws->v);
    free(ws->w); free(ws->ew); free(ws->work); free(ws->ez); free(ws->isuppz); free(ws->iwork);
    memset(ws, 0, sizeof *ws);
}

static int work_alloc(work_t *ws, size_t m, size_t n, int k)
{
    size_t c = m < n ? m : n;
    if (c < 1) c = 1;
    memset(ws, 0, sizeof *ws);
    ws->m = m; ws->c = c;
    ws->M = malloc(sizeof(double) * n * (m ? m : 1));
    ws->G = malloc(sizeof(double) * c * c);
    ws->gm = malloc(sizeof(double) * (m ? m : 1));
    ws->gss = malloc(sizeof(double) * (m ? m : 1));
    ws->Z = malloc(sizeof(double) * c * (size_t) k);
    ws->v = malloc(sizeof(double) * n * (size_t) k);
    ws->w = malloc(sizeof(double) * (m ? m : 1));
    ws->ew = malloc(sizeof(double) * c);
    ws->work = malloc(sizeof(double) * 26 * c);
    ws->ez = malloc(sizeof(double) * c * (size_t) k);
    ws->isuppz = malloc(sizeof(int) * 2 * (size_t) k);
    ws->iwork = malloc(sizeof(int) * 10 * c);
    if (!ws->M || !ws->G || !ws->gm || !ws->gss || !ws->Z || !ws->v || !ws->w || !ws->ew ||
        !ws->work || !ws->ez || !ws->isuppz || !ws->iwork) {
        work_free(ws);
        return 1;
    }
    return 0;
}

/* M (r x c) from the module's genes, each scaled as R's
 * t(scale(t(dm))) does it (the mean and the sum of squared residuals in
 * long double, divided by n - 1); gm, gss: each scaled gene's mean and sum
 * of squared residuals (for its correlation with a component).  Returns 1
 * where R must summarize the module (a non-finite value, a constant gene). */
static int scale_module(const double *x, const int *genes, module_t *md)
{
    size_t n = md->n, m = md->m;
    for (size_t g = 0; g < m; g++) {
        const double *col = x + (size_t) genes[g] * n;
        long double s = 0;
        for (size_t i = 0; i < n; i++) {
            if (!isfinite(col[i])) return 1;
            s += col[i];
        }
        double mean = (double) (s / (long double) n);
        long double ss = 0;
        for (size_t i = 0; i < n; i++) {
            double d = col[i] - mean;
            ss += d * d;
        }
        double sd = sqrt((double) ss / (n > 1 ? (double) (n - 1) : 1.0));
        if (!(sd > 0) || !isfinite(sd)) return 1;
        long double t = 0, tt = 0;
        for (size_t i = 0; i < n; i++) {
            double v = (col[i] - mean) / sd;
            if (md->by_gene) md->M[i + g * n] = v;
            else md->M[g + i * m] = v;
            t += v;
        }
        double vm = (double) (t / (long double) n);
        for (size_t i = 0; i < n; i++) {
            double d = (md->by_gene ? md->M[i + g * n] : md->M[g + i * m]) - vm;
            tt += d * d;
        }
        md->gm[g] = vm;
        md->gss[g] = (double) tt;
    }
    return 0;
}

/* The upper triangle of G = M'M (c x c), in panels of GRAM_ROWS rows.
 * Each thread fills its own columns of G (the same cyclic share of them in
 * every panel: no barrier between panels, no line of G shared). */
static void gram(const double *M, size_t r, size_t c, double *G, int nth)
{
    memset(G, 0, c * c * sizeof(double));
#pragma omp parallel num_threads(nth) if (nth > 1)
    for (size_t r0 = 0; r0 < r; r0 += GRAM_ROWS) {
        size_t rl = r - r0 < GRAM_ROWS ? r - r0 : GRAM_ROWS;
#pragma omp for schedule(static, 1) nowait
        for (size_t a = 0; a < c; a++) {
            const double *ma = M + a * r + r0;
            for (size_t b = 0; b <= a; b++) {
                const double *mb = M + b * r + r0;
                double s = 0;
#pragma omp simd reduction(+:s)
                for (size_t i = 0; i < rl; i++) s += ma[i] * mb[i];
                G[b + a * c] += s;
            }
        }
    }
}

/* The k eigenvectors of G's largest eigenvalues (G destroyed), the
 * largest first, into Z (c x k).  Returns 1 on a LAPACK failure. */
static int top_vectors(double *G, size_t c, int k, double *Z, work_t *ws)
{
    int N = (int) c, il = N - k + 1, iu = N, found = 0, info = 0;
    int lwork = 26 * N, liwork = 10 * N;
    double vl = 0, vu = 0, abstol = 0;
    F77_CALL(dsyevr)("V", "I", "U", &N, G, &N, &vl, &vu, &il, &iu, &abstol, &found, ws->ew,
                     ws->ez, &N, ws->isuppz, ws->work, &lwork, ws->iwork, &liwork, &info
                     FCONE FCONE FCONE);
    if (info != 0 || found != k) return 1;
    for (int j = 0; j < k; j++)   /* dsyevr orders them ascending */
        memcpy(Z + (size_t) j * c, ws->ez + (size_t) (k - 1 - j) * c, sizeof(double) * c);
    return 0;
}

/* Pearson correlation of two n-vectors. */
static double pearson(const double *a, const double *b, size_t n)
{
    long double sa = 0, sb = 0;
    for (size_t i = 0; i < n; i++) { sa += a[i]; sb += b[i]; }
    double ma = (double) (sa / (long double) n), mb = (double) (sb / (long double) n);
    long double sab = 0, saa = 0, sbb = 0;
    for (size_t i = 0; i < n; i++) {
        double da = a[i] - ma, db = b[i] - mb;
        sab += da * db; saa += da * da; sbb += db * db;
    }
    return (double) (sab / sqrtl(saa * sbb));
}

/* The summary of one scaled module; the Gram matrix already in md->G. */
static int summarize(module_t *md, int nve, double *pc, double *ve, double *ae, work_t *ws)
{
    size_t n = md->n, m = md->m, c = md->c, r = md->r;
    int k = nve < (int) c ? nve : (int) c;
    double *Z = ws->Z, *v = ws->v, *w = ws->w;
    int bad = top_vectors(md->G, c, k, Z, ws);
    if (!bad && md->by_gene) {
        /* v_j = M z_j, normalized: the right vector from the genes' left one */
        double top = 0;
        for (int j = 0; j < k && !bad; j++) {
            double *vj = v + (size_t) j * n;
            memset(vj, 0, sizeof(double) * n);
            for (size_t g = 0; g < m; g++) {
                double zg = Z[g + (size_t) j * c];
                const double *col = md->M + g * n;
                for (size_t i = 0; i < n; i++) vj[i] += col[i] * zg;
            }
            double s = 0;
            for (size_t i = 0; i < n; i++) s += vj[i] * vj[i];
            if (j == 0) top = s;
            if (!(s > 1e-20 * top) || !isfinite(s)) { bad = 1; break; }
            s = sqrt(s);
            for (size_t i = 0; i < n; i++) vj[i] /= s;
        }
    } else if (!bad) memcpy(v, Z, sizeof(double) * n * (size_t) k);
    /* the variance explained: the mean squared correlation with the genes */
    for (int j = 0; j < k && !bad; j++) {
        const double *vj = v + (size_t) j * n;
        long double sv = 0, ssv = 0;
        for (size_t i = 0; i < n; i++) sv += vj[i];
        double mv = (double) (sv / (long double) n);
        for (size_t i = 0; i < n; i++) ssv += (vj[i] - mv) * (vj[i] - mv);
        if (md->by_gene)
            for (size_t g = 0; g < m; g++) {
                const double *col = md->M + g * n;
                double s = 0;
                for (size_t i = 0; i < n; i++) s += col[i] * vj[i];
                w[g] = s;
            }
        else {
            memset(w, 0, sizeof(double) * m);
            for (size_t i = 0; i < n; i++) {
                const double *col = md->M + i * r;
                double vi = vj[i];
                for (size_t g = 0; g < m; g++) w[g] += col[g] * vi;
            }
        }
        long double acc = 0;
        size_t cnt = 0;
        for (size_t g = 0; g < m; g++) {
            double cg = (w[g] - (double) n * mv * md->gm[g]) / sqrt((double) ssv * md->gss[g]);
            if (isfinite(cg)) { acc += cg * cg; cnt++; }
        }
        ve[j] = cnt ? (double) (acc / (long double) cnt) : NAN;
    }
    if (!bad) {
        /* the average scaled expression; the eigengene's sign along it */
        for (size_t i = 0; i < n; i++) {
            long double s = 0;
            if (md->by_gene) for (size_t g = 0; g < m; g++) s += md->M[i + g * n];
            else for (size_t g = 0; g < m; g++) s += md->M[g + i * m];
            ae[i] = (double) (s / (long double) m);
        }
        /* an eigengene (nearly) uncorrelated with the average (two
         * anti-correlated genes): its sign is rounding, left to R's svd */
        double rho = pearson(ae, v, n);
        if (!isfinite(rho) || fabs(rho) < SIGN_MIN) bad = 1;
        else for (size_t i = 0; i < n; i++) pc[i] = rho < 0 ? -v[i] : v[i];
    }
    return bad;
}

static int module_run(const double *x, const int *genes, size_t n, size_t m, int nve, int nth,
                      double *pc, double *ve, double *ae, work_t *ws)
{
    if (m < 2) return 1;
    module_t md = {n, m, m <= n, 0, 0, ws->M, ws->G, ws->gm, ws->gss};
    md.r = md.by_gene ? n : m;
    md.c = md.by_gene ? m : n;
    if (scale_module(x, genes, &md)) return 1;
    gram(md.M, md.r, md.c, md.G, nth);
    return summarize(&md, nve, pc, ve, ae, ws);
}

int gc_module_eigengenes(const double *x, size_t n, size_t p, const int *code, int nmod,
                         int nve, int nthreads, double *pc, double *ve, double *ae,
                         int *status)
{
    size_t *start = calloc((size_t) nmod + 1, sizeof(size_t));
    int *genes = malloc(sizeof(int) * (p ? p : 1));
    for (int k = 0; k < nmod; k++) status[k] = 1;
    if (!start || !genes) { free(start); free(genes); return -1; }
    for (size_t g = 0; g < p; g++)
        if (code[g] >= 1 && code[g] <= nmod) start[code[g]]++;
    for (int k = 0; k < nmod; k++) start[k + 1] += start[k];
    {
        size_t *fill = malloc(sizeof(size_t) * ((size_t) nmod + 1));
        if (!fill) { free(start); free(genes); return -1; }
        memcpy(fill, start, sizeof(size_t) * ((size_t) nmod + 1));
        for (size_t g = 0; g < p; g++)
            if (code[g] >= 1 && code[g] <= nmod) genes[fill[code[g] - 1]++] = (int) g;
        free(fill);
    }
    /* large modules one at a time with every thread, then the rest in
     * parallel, each thread with buffers for the largest of them */
    size_t big = 0, small = 0, nsmall = 0;
    for (int k = 0; k < nmod; k++) {
        double m = (double) (start[k + 1] - start[k]), c = m < (double) n ? m : (double) n;
        size_t mk = start[k + 1] - start[k];
        if (m * c * c > LARGE_WORK) { if (mk > big) big = mk; }
        else { if (mk > small) small = mk; nsmall++; }
    }
    int rc = 0, kk = nve;
    if (big) {
        work_t ws;
        if (work_alloc(&ws, big, n, kk)) rc = -1;
        else {
            for (int k = 0; k < nmod; k++) {
                size_t mk = start[k + 1] - start[k];
                double m = (double) mk, c = m < (double) n ? m : (double) n;
                if (m * c * c <= LARGE_WORK) continue;
                status[k] = module_run(x, genes + start[k], n, mk, nve, nthreads,
                                       pc + (size_t) k * n, ve + (size_t) k * nve,
                                       ae + (size_t) k * n, &ws);
            }
            work_free(&ws);
        }
    }
    int team = nthreads < (int) nsmall ? nthreads : (int) nsmall;
    if (nsmall && rc == 0) {
#pragma omp parallel num_threads(team > 0 ? team : 1)
        {
            work_t ws;
            int ok = !work_alloc(&ws, small, n, kk);
#pragma omp for schedule(dynamic, 1)
            for (int k = 0; k < nmod; k++) {
                size_t mk = start[k + 1] - start[k];
                double m = (double) mk, c = m < (double) n ? m : (double) n;
                if (m * c * c > LARGE_WORK || !ok) continue;
                status[k] = module_run(x, genes + start[k], n, mk, nve, 1, pc + (size_t) k * n,
                                       ve + (size_t) k * nve, ae + (size_t) k * n, &ws);
            }
            if (ok) work_free(&ws);
        }
    }
    free(start); free(genes);
    return rc;
}

unsigned long long gc_hash_bytes(const void *data, size_t len, unsigned long long seed)
{
    const unsigned long long P = 0x9E3779B97F4A7C15ULL, Q = 0xC2B2AE3D27D4EB4FULL;
    unsigned long long h[4] = {seed ^ P, seed ^ Q, seed + P, seed - Q};
    const unsigned char *b = data;
    size_t words = len / 8, i = 0;
    for (; i + 4 <= words; i += 4)
        for (int l = 0; l < 4; l++) {
            unsigned long long w;
            memcpy(&w, b + 8 * (i + l), 8);
            h[l] = (h[l] ^ w) * P;
            h[l] ^= h[l] >> 29;
        }
    unsigned long long out = len * Q;
    for (int l = 0; l < 4; l++) out = (out ^ h[l]) * Q, out ^= out >> 31;
    for (; i < words; i++) {
        unsigned long long w;
        memcpy(&w, b + 8 * i, 8);
        out = (out ^ w) * P, out ^= out >> 29;
    }
    for (size_t j = words * 8; j < len; j++) out = (out ^ b[j]) * P;
    return out ^ (out >> 32);
}
