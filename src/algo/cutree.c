/*
 * cutree.c -- see cutree.h: the tree pass and the PAM stage of the hybrid
 * dynamic tree cut.  Branch numbers are 1-based, as the reference numbers
 * them: the order of branches decides which cluster is labelled first and
 * which small cluster wins an object, so it must be the reference's.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include "../gpucor.h"
#include "../engine/layout.h"
#include "cutree.h"

typedef long double ldouble;

/* Distances read below which a loop runs on one thread: a parallel region
 * costs a wake-up of every thread, and the small clusters of a large tree
 * are many. */
#define PAR_MIN ((size_t) 1 << 22)

static inline double dm(const gc_distm *d, size_t i, size_t j)
{
    if (i == j) return 0.0;
    if (!d->packed) return d->x[i + j * d->n];
    return i > j ? d->x[dist_index(d->n, i, j)] : d->x[dist_index(d->n, j, i)];
}

/* A growing list of ints. */
typedef struct { int *v; size_t len, cap; } ilist;

static int ilist_push(ilist *l, int x)
{
    if (l->len == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 8;
        int *v = realloc(l->v, cap * sizeof(int));
        if (!v) return -1;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->len++] = x;
    return 0;
}

static int ilist_append(ilist *l, const int *x, size_t k)
{
    for (size_t i = 0; i < k; i++)
        if (ilist_push(l, x[i])) return -1;
    return 0;
}

/* dynamicTreeCut's .CoreSize(). */
static size_t core_size(double branch_size, double min_cluster_size)
{
    double base = min_cluster_size / 2 + 1;
    if (base < branch_size) return (size_t) (int) (base + sqrt(branch_size - base));
    return (size_t) branch_size;
}

/* mean(colSums(distM[core, core]) / (k - 1)) of the first k objects of s. */
static double core_scatter(const gc_distm *d, const int *s, size_t k, double *work)
{
    for (size_t j = 0; j < k; j++) {
        ldouble c = 0;
        for (size_t i = 0; i < k; i++) c += dm(d, (size_t) s[i], (size_t) s[j]);
        work[j] = (double) c / (double) (k - 1);
    }
    return gc_r_mean(work, k);
}

typedef struct {
    size_t nb;                  /* branches so far (1-based ids) */
    char *basic, *top_basic, *fail_size;
    double *attach, *size, *nsingle;
    ilist *single, *basics;
} branches;

static void branches_free(branches *b, size_t mx)
{
    if (b->single) for (size_t i = 0; i <= mx; i++) free(b->single[i].v);
    if (b->basics) for (size_t i = 0; i <= mx; i++) free(b->basics[i].v);
    free(b->basic); free(b->top_basic); free(b->fail_size);
    free(b->attach); free(b->size); free(b->nsingle);
    free(b->single); free(b->basics);
}

static int branches_alloc(branches *b, size_t mx)
{
    memset(b, 0, sizeof *b);
    size_t m = mx + 1;
    b->basic = malloc(m); b->top_basic = malloc(m); b->fail_size = calloc(m, 1);
    b->attach = malloc(m * sizeof(double)); b->size = malloc(m * sizeof(double));
    b->nsingle = malloc(m * sizeof(double));
    b->single = calloc(m, sizeof(ilist)); b->basics = calloc(m, sizeof(ilist));
    if (!b->basic || !b->top_basic || !b->fail_size || !b->attach || !b->size ||
        !b->nsingle || !b->single || !b->basics) return -1;
    /* the reference's initial values of every slot */
    for (size_t i = 0; i < m; i++) {
        b->basic[i] = b->top_basic[i] = 1;
        b->attach[i] = NAN;
        b->size[i] = 2;
        b->nsingle[i] = 2;
    }
    return 0;
}

/* The singletons of a basic branch (the reference's list holds exactly
 * nSingletons of them; the rest of its vector is zero padding). */
static int *singles(const branches *b, size_t br, size_t *k)
{
    *k = b->single[br].len;
    return b->single[br].v;
}

#define FAIL(st, ...) do { snprintf(msg, msglen, __VA_ARGS__); status = (st); goto cleanup; } while (0)

/* The members of each label 0..nl of col (ascending), as offsets into
 * one array: members[start[c] .. start[c + 1]). */
static int group_members(const int *col, size_t n, int nl, size_t **start, int **members)
{
    *start = calloc((size_t) nl + 2, sizeof(size_t));
    *members = malloc((n ? n : 1) * sizeof(int));
    size_t *pos = malloc(((size_t) nl + 2) * sizeof(size_t));
    if (!*start || !*members || !pos) { free(pos); return -1; }
    for (size_t i = 0; i < n; i++) (*start)[col[i] + 1]++;
    for (int c = 0; c <= nl; c++) (*start)[c + 1] += (*start)[c];
    memcpy(pos, *start, ((size_t) nl + 2) * sizeof(size_t));
    for (size_t i = 0; i < n; i++) (*members)[pos[col[i]]++] = (int) i;
    free(pos);
    return 0;
}

/* The labels of the basic clusters of composite branch br (with 0 for
 * unlabelled ones, in the reference's order) into lab; how many. */
static size_t branch_labels(const branches *b, size_t br, const int *branch_label, int *lab)
{
    const ilist *l = &b->basics[br];
    for (size_t i = 0; i < l->len; i++) lab[i] = branch_label[l->v[i]];
    return l->len;
}

/* tapply(v, factor(colx[use]), mean) for the objects i with
 * use_lab[colx[i]], then which.min of it: the levels in increasing order,
 * each level's values summed in object order (its members list), as R's
 * mean() sums them; the first level of smallest mean, NaN skipped.
 * Returns the level (-2: none) and its mean in *mean. */
#define GROUP_MEAN_BODY(VAL)                                                         \
    int best = -2;                                                                   \
    double bv = 0;                                                                   \
    for (int c = 0; c <= nl; c++) {                                                  \
        size_t k = start[c + 1] - start[c];                                          \
        if (!use_lab[c] || k == 0) continue;                                         \
        const int *mem = members + start[c];                                         \
        ldouble s = 0;                                                               \
        for (size_t q = 0; q < k; q++) { size_t i = (size_t) mem[q]; s += (VAL); }   \
        s /= (ldouble) k;                                                            \
        if (isfinite((double) s)) {                                                  \
            ldouble t = 0;                                                           \
            for (size_t q = 0; q < k; q++) { size_t i = (size_t) mem[q]; t += (VAL) - s; } \
            s += t / (ldouble) k;                                                    \
        }                                                                            \
        double m = (double) s;                                                       \
        if (isnan(m)) continue;                                                      \
        if (best == -2 || m < bv) { best = c; bv = m; }                              \
    }                                                                                \
    *mean = bv;                                                                      \
    return best;

/* ... of the distances d(i, obj). */
static int nearest_group_obj(const gc_distm *d, size_t obj, const size_t *start,
                             const int *members, int nl, const char *use_lab, double *mean)
{
    GROUP_MEAN_BODY(dm(d, i, obj))
}

/* ... of the values v[i]. */
static int nearest_group_vec(const double *v, const size_t *start, const int *members, int nl,
                             const char *use_lab, double *mean)
{
    GROUP_MEAN_BODY(v[i])
}

/* The PAM decision for one object from means summed in plain double, in
 * any order, with a bound on their error: the nearest level and whether
 * its mean is below diam or max_pam.  Any sum order is within
 * (k - 1) 2^-53 sum|x| of the exact sum, and R's long double mean within
 * 2^-53 |mean| + k 2^-64 mean|x| of the exact mean; where every decision
 * has a margin wider than both bounds, R's decision is the same.  Returns
 * 1 with *label set (0: leave unlabelled), or 0 when a margin is too
 * narrow (or a value not finite): then the exact sums decide.  m, e: nl + 1
 * doubles of scratch. */
static int pam_fast(const gc_distm *d, size_t obj, const size_t *start, const int *members,
                    int nl, const char *use_lab, const double *diam, double max_pam,
                    double *m, double *e, int *label)
{
    const double eps = 0x1p-50;
    int best = -1;
    for (int c = 0; c <= nl; c++) {
        size_t k = start[c + 1] - start[c];
        if (!use_lab[c] || k == 0) continue;
        const int *mem = members + start[c];
        double s0 = 0, s1 = 0, a0 = 0, a1 = 0;
        size_t q = 0;
        for (; q + 1 < k; q += 2) {
            double v0 = dm(d, (size_t) mem[q], obj), v1 = dm(d, (size_t) mem[q + 1], obj);
            s0 += v0; s1 += v1; a0 += fabs(v0); a1 += fabs(v1);
        }
        if (q < k) {
            double v0 = dm(d, (size_t) mem[q], obj);
            s0 += v0; a0 += fabs(v0);
        }
        double mean = (s0 + s1) / (double) k, amean = (a0 + a1) / (double) k;
        if (!isfinite(mean) || !isfinite(amean)) return 0;
        m[c] = mean;
        e[c] = eps * ((double) (k + 4) * amean + fabs(mean)) + 0x1p-1000;
        if (best < 0 || mean < m[best]) best = c;
    }
    if (best <= 0) return 0;
    for (int c = 0; c <= nl; c++) {
        if (c == best || !use_lab[c] || start[c + 1] == start[c]) continue;
        if (!(m[c] - m[best] > e[c] + e[best])) return 0;
    }
    double v = m[best], ev = e[best], t = diam[best];
    if (isnan(t)) return 0;
    if (v < t - ev) { *label = best; return 1; }
    if (!(v > t + ev)) return 0;
    if (v < max_pam - ev) { *label = best; return 1; }
    if (!(v > max_pam + ev)) return 0;
    *label = 0;
    return 1;
}

/* which.min (first, NaN skipped); -1 if none. */
static long which_min(const double *v, size_t k)
{
    long best = -1;
    for (size_t i = 0; i < k; i++)
        if (!isnan(v[i]) && (best < 0 || v[i] < v[best])) best = (long) i;
    return best;
}

int gc_cutree_hybrid(const int *merge, const double *height, size_t n_merge,
                     const gc_distm *d, const gc_cutree_params *p, int *colors,
                     char *msg, size_t msglen)
{
    const size_t n = n_merge + 1;
    const double mcs = p->min_cluster_size;
    int status = GPUCOR_OK;
    size_t mx = 0;
    for (size_t m = 0; m < n_merge; m++) mx += height[m] <= p->cut_height;

    branches b;
    int *ind = NULL, *on_branch = NULL, *small_lab = NULL, *branch_label = NULL,
        *colx = NULL, *lab = NULL, *members = NULL, *med = NULL;
    char *is_cluster = NULL, *use_lab = NULL;
    double *work = NULL, *diam = NULL, *radius = NULL, *meds = NULL;
    size_t *start = NULL;
    char *small_seen = NULL;
    int *in = NULL;
    int nl = 0;
    if (branches_alloc(&b, mx)) FAIL(GPUCOR_ERR_ALLOC, "cannot allocate the branches");
    ind = calloc(n_merge ? n_merge : 1, sizeof(int));
    on_branch = calloc(n, sizeof(int));
    small_lab = calloc(n, sizeof(int));
    work = malloc(n * sizeof(double));
    if (!ind || !on_branch || !small_lab || !work)
        FAIL(GPUCOR_ERR_ALLOC, "cannot allocate the working memory");
    memset(colors, 0, n * sizeof(int));

    /* The reference keeps its SmallerFailSize from the last merge that set
     * it when an external split merges (-1: none yet, where it stops). */
    int last_fail = -1;

    /* ---- the pass over the merges below the cut ---- */
    for (size_t m = 0; m < n_merge; m++) {
        if (!(height[m] <= p->cut_height)) continue;
        const int a = merge[m], c = merge[m + n_merge];
        const double h = height[m];
        if (a < 0 && c < 0) {
            size_t nb = ++b.nb;
            int s2[2] = {-a - 1, -c - 1};
            if (ilist_append(&b.single[nb], s2, 2)) FAIL(GPUCOR_ERR_ALLOC, "out of memory");
            ind[m] = (int) nb;
        } else if ((a < 0) != (c < 0)) {
            int other = a > c ? a : c, gene = -(a < c ? a : c) - 1;
            size_t cl = (size_t) ind[other - 1];
            if (cl == 0) FAIL(GPUCOR_ERR_INVALID, "merge %zu joins a merge above the cut height: "
                              "the heights of 'dendro' must not decrease", m + 1);
            if (b.basic[cl]) {
                if (ilist_push(&b.single[cl], gene)) FAIL(GPUCOR_ERR_ALLOC, "out of memory");
            } else {
                on_branch[gene] = (int) cl;
            }
            b.size[cl] += 1;
            b.nsingle[cl] += 1;
            ind[m] = (int) cl;
        } else {
            size_t c1 = (size_t) ind[a - 1], c2 = (size_t) ind[c - 1];
            if (c1 == 0 || c2 == 0)
                FAIL(GPUCOR_ERR_INVALID, "merge %zu joins a merge above the cut height: "
                     "the heights of 'dendro' must not decrease", m + 1);
            size_t small = c1, large = c2;
            if (b.size[c1] > b.size[c2]) { small = c2; large = c1; }
            double sm_ave = 0, lg_ave = 0;
            size_t k;
            int *s;
            if (b.basic[small]) {
                s = singles(&b, small, &k);
                sm_ave = core_scatter(d, s, core_size(b.nsingle[small], mcs), work);
            }
            if (b.basic[large]) {
                s = singles(&b, large, &k);
                lg_ave = core_scatter(d, s, core_size(b.nsingle[large], mcs), work);
            }
            int do_merge = 0, small_fail = 0;
            int sc_sc = sm_ave > p->max_abs_core_scatter, sc_gap = h - sm_ave < p->min_abs_gap;
            if (b.basic[small] && (b.size[small] < mcs || sc_sc || sc_gap ||
                                   h < p->min_abs_split_height)) {
                do_merge = 1;
                small_fail = last_fail = !(sc_sc || sc_gap);
            } else {
                int lc_sc = lg_ave > p->max_abs_core_scatter, lc_gap = h - lg_ave < p->min_abs_gap;
                if (b.basic[large] && (b.size[large] < mcs || lc_sc || lc_gap ||
                                       h < p->min_abs_split_height)) {
                    do_merge = 1;
                    small_fail = last_fail = !(lc_sc || lc_gap);
                    size_t x = small; small = large; large = x;
                }
            }
            if (!do_merge && p->external && b.basic[small] && b.basic[large]) {
                size_t kl, ks;
                int *sl = singles(&b, large, &kl), *ss = singles(&b, small, &ks);
                if (p->external(p->external_ctx, sl, kl, ss, ks, &do_merge))
                    FAIL(GPUCOR_ERR_INVALID, "the external branch split function failed at merge %zu",
                         m + 1);
                if (do_merge) {
                    if (last_fail < 0)
                        FAIL(GPUCOR_ERR_INVALID, "an external split merges branches at merge %zu before "
                             "any other merge (dynamicTreeCut stops here too: 'SmallerFailSize' not "
                             "found)", m + 1);
                    small_fail = last_fail;
                }
            }
            if (do_merge) {
                b.fail_size[small] = (char) small_fail;
                b.attach[small] = h;
                b.top_basic[small] = 0;
                s = singles(&b, small, &k);
                if (b.basic[large]) {
                    if (ilist_append(&b.single[large], s, k)) FAIL(GPUCOR_ERR_ALLOC, "out of memory");
                    b.nsingle[large] = b.nsingle[small] + b.nsingle[large];
                } else {
                    if (!b.basic[small])
                        FAIL(GPUCOR_ERR_INVALID, "internal error: merging two composite clusters");
                    for (size_t i = 0; i < k; i++) on_branch[s[i]] = (int) large;
                }
                b.size[large] += b.size[small];
                ind[m] = (int) large;
            } else {
                if (b.basic[large] && !b.basic[small]) { size_t x = large; large = small; small = x; }
                if (b.basic[large] || (p->pam_stage && p->pam_respects_dendro)) {
                    size_t nb = ++b.nb;
                    b.attach[large] = b.attach[small] = h;
                    ilist *l = &b.basics[nb];
                    int e = b.basic[small] ? ilist_push(l, (int) small)
                        : ilist_append(l, b.basics[small].v, b.basics[small].len);
                    e = e || (b.basic[large] ? ilist_push(l, (int) large)
                              : ilist_append(l, b.basics[large].v, b.basics[large].len));
                    if (e) FAIL(GPUCOR_ERR_ALLOC, "out of memory");
                    b.basic[nb] = 0;
                    b.top_basic[nb] = 0;
                    b.size[nb] = b.size[small] + b.size[large];
                    ind[m] = (int) nb;
                } else {
                    ilist *l = &b.basics[large];
                    int e = b.basic[small] ? ilist_push(l, (int) small)
                        : ilist_append(l, b.basics[small].v, b.basics[small].len);
                    if (e) FAIL(GPUCOR_ERR_ALLOC, "out of memory");
                    b.size[large] += b.size[small];
                    b.attach[small] = h;
                    ind[m] = (int) large;
                }
            }
        }
    }

    /* ---- clusters: top-level basic branches that pass the tests ---- */
    is_cluster = calloc(b.nb + 1, 1);
    branch_label = calloc(b.nb + 1, sizeof(int));
    if (!is_cluster || !branch_label) FAIL(GPUCOR_ERR_ALLOC, "out of memory");
    for (size_t br = 1; br <= b.nb; br++) {
        if (isnan(b.attach[br])) b.attach[br] = p->cut_height;
        size_t k;
        int *s = singles(&b, br, &k);
        if (b.top_basic[br]) {
            double cs = core_scatter(d, s, core_size(b.nsingle[br], mcs), work);
            is_cluster[br] = b.size[br] >= mcs && cs < p->max_abs_core_scatter &&
                b.attach[br] - cs > p->min_abs_gap;
        }
        if (b.fail_size[br])
            for (size_t i = 0; i < k; i++) small_lab[s[i]] = (int) br;
    }
    if (!p->respect_small_clusters) memset(small_lab, 0, n * sizeof(int));
    for (size_t br = 1; br <= b.nb; br++) {
        if (!is_cluster[br]) continue;
        size_t k;
        int *s = singles(&b, br, &k);
        nl++;
        for (size_t i = 0; i < k; i++) { colors[s[i]] = nl; small_lab[s[i]] = 0; }
        branch_label[br] = nl;
    }

    /* ---- the PAM stage ---- */
    size_t n_unlab = 0;
    for (size_t i = 0; i < n; i++) n_unlab += colors[i] == 0;
    if (!(p->pam_stage && n_unlab > 0 && nl > 0)) goto cleanup;

    colx = malloc(n * sizeof(int));
    lab = malloc((b.nb + (size_t) nl + 1) * sizeof(int));
    use_lab = malloc((size_t) nl + 1);
    if (!colx || !lab || !use_lab) FAIL(GPUCOR_ERR_ALLOC, "out of memory");
    memcpy(colx, colors, n * sizeof(int));
    if (group_members(colx, n, nl, &start, &members)) FAIL(GPUCOR_ERR_ALLOC, "out of memory");
    /* the small clusters' labels, ascending, and each one's members */
    int n_small_lev = 0, max_small = 0;
    for (size_t i = 0; i < n; i++) if (small_lab[i] > max_small) max_small = small_lab[i];
    small_seen = calloc((size_t) max_small + 1, 1);
    in = malloc(n * sizeof(int));
    if (!small_seen || !in) FAIL(GPUCOR_ERR_ALLOC, "out of memory");
    for (size_t i = 0; i < n; i++) small_seen[small_lab[i]] = 1;
    for (int c = 1; c <= max_small; c++) n_small_lev += small_seen[c];

#define SMALL_MEMBERS(sc, k)                                                  \
    size_t k = 0;                                                             \
    for (size_t i = 0; i < n; i++) if (small_lab[i] == (sc)) in[k++] = (int) i;
#define ONE_BRANCH(k, onbr)                                                   \
    int onbr = on_branch[in[0]];                                              \
    for (size_t i = 1; i < k; i++)                                            \
        if (on_branch[in[i]] != onbr) {                                       \
            FAIL(GPUCOR_ERR_INVALID, "internal error: objects in a small cluster are marked to " \
                 "belong to several large branches");                        \
        }

    if (!p->use_medoids) {
        diam = calloc((size_t) nl + 1, sizeof(double));
        if (!diam) FAIL(GPUCOR_ERR_ALLOC, "out of memory");
        for (int c = 1; c <= nl; c++) {
            const int *mem = members + start[c];
            size_t k = start[c + 1] - start[c];
            if (k <= 1) continue;
            double mxv = -INFINITY;
            int nan = 0;
#ifdef _OPENMP
#pragma omp parallel for num_threads(p->nthreads) schedule(static) reduction(max:mxv) reduction(|:nan) \
    if (k * k > PAR_MIN)
#endif
            for (size_t j = 0; j < k; j++) {
                ldouble s = 0;
                for (size_t i = 0; i < k; i++) s += dm(d, (size_t) mem[i], (size_t) mem[j]);
                double v = (double) s / (double) (k - 1);
                if (isnan(v)) nan = 1; else if (v > mxv) mxv = v;
            }
            diam[c] = nan ? NAN : mxv;
        }
        if (p->respect_small_clusters && n_small_lev > 0) {
            for (int sc = 1; sc <= max_small; sc++) {
                if (!small_seen[sc]) continue;
                SMALL_MEMBERS(sc, k)
                if (p->pam_respects_dendro) {
                    ONE_BRANCH(k, onbr)
                    if (onbr <= 0) continue;
                    memset(use_lab, 0, (size_t) nl + 1);
                    size_t nlb = branch_labels(&b, (size_t) onbr, branch_label, lab);
                    for (size_t i = 0; i < nlb; i++) use_lab[lab[i]] = 1;
                } else {
                    memset(use_lab, 1, (size_t) nl + 1);
                    use_lab[0] = 0;
                }
                /* colMeans(distM[InCluster, useObjects]) */
#ifdef _OPENMP
#pragma omp parallel for num_threads(p->nthreads) schedule(static) if (k * n > PAR_MIN)
#endif
                for (size_t j = 0; j < n; j++) {
                    if (!use_lab[colx[j]]) continue;
                    ldouble s = 0;
                    for (size_t i = 0; i < k; i++) s += dm(d, (size_t) in[i], j);
                    s /= (ldouble) k;
                    work[j] = (double) s;
                }
                double best;
                int near = nearest_group_vec(work, start, members, nl, use_lab, &best);
                if (near <= 0) {
                    FAIL(GPUCOR_ERR_INVALID, "the PAM stage finds no labelled cluster nearest to small "
                         "cluster %d (dynamicTreeCut stops here too)", sc);
                }
                int lbl = (best < diam[near] || best < p->max_pam_dist) ? near : -1;
                for (size_t i = 0; i < k; i++) colors[in[i]] = lbl;
            }
        }
        /* the unlabelled objects, each on its own */
        size_t nu = 0;
        for (size_t i = 0; i < n; i++)
            if (colors[i] == 0 && (!p->pam_respects_dendro || on_branch[i] > 0)) in[nu++] = (int) i;
        int bad = 0, bad_obj = 0;
#ifdef _OPENMP
#pragma omp parallel num_threads(p->nthreads) if (nu * n > PAR_MIN)
#endif
        {
            char *tuse = malloc((size_t) nl + 1);
            int *tlab = malloc((b.nb + 1) * sizeof(int));
            double *tm = malloc(2 * ((size_t) nl + 1) * sizeof(double));
            int ok = tuse && tlab && tm;
            if (!ok) {
#ifdef _OPENMP
#pragma omp atomic write
#endif
                bad = 1;
            }
            if (ok && !p->pam_respects_dendro) {
                memset(tuse, 1, (size_t) nl + 1);
                tuse[0] = 0;
            }
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 16)
#endif
            for (size_t u = 0; u < nu; u++) {
                if (!ok) continue;
                size_t obj = (size_t) in[u];
                if (p->pam_respects_dendro) {
                    memset(tuse, 0, (size_t) nl + 1);
                    size_t nlb = branch_labels(&b, (size_t) on_branch[obj], branch_label, tlab);
                    for (size_t i = 0; i < nlb; i++) tuse[tlab[i]] = 1;
                }
                int fast;
                if (pam_fast(d, obj, start, members, nl, tuse, diam, p->max_pam_dist, tm,
                             tm + nl + 1, &fast)) {
                    if (fast > 0) colors[obj] = fast;
                    continue;
                }
                double best;
                int near = nearest_group_obj(d, obj, start, members, nl, tuse, &best);
                if (near <= 0) {
#ifdef _OPENMP
#pragma omp critical(cutree_bad)
#endif
                    { bad = 2; bad_obj = (int) obj + 1; }
                    continue;
                }
                if (best < diam[near] || best < p->max_pam_dist) colors[obj] = near;
            }
            free(tuse);
            free(tlab);
            free(tm);
        }
        if (bad) {
            if (bad == 1) FAIL(GPUCOR_ERR_ALLOC, "out of memory");
            FAIL(GPUCOR_ERR_INVALID, "the PAM stage finds no labelled cluster nearest to object %d "
                 "(dynamicTreeCut stops here too)", bad_obj);
        }
    } else {
        /* medoids: the member of least total distance to the others */
        med = malloc(((size_t) nl + 1) * sizeof(int));
        radius = malloc(((size_t) nl + 1) * sizeof(double));
        meds = malloc(((size_t) nl + b.nb + 1) * sizeof(double));
        if (!med || !radius || !meds) FAIL(GPUCOR_ERR_ALLOC, "out of memory");
        for (int c = 1; c <= nl; c++) {
            const int *mem = members + start[c];
            size_t k = start[c + 1] - start[c];
#ifdef _OPENMP
#pragma omp parallel for num_threads(p->nthreads) schedule(static) if (k * k > PAR_MIN)
#endif
            for (size_t j = 0; j < k; j++) {
                ldouble s = 0;
                for (size_t i = 0; i < k; i++) s += dm(d, (size_t) mem[i], (size_t) mem[j]);
                work[j] = (double) s;
            }
            long jm = which_min(work, k);
            med[c] = mem[jm < 0 ? 0 : jm];
            double r = -INFINITY;
            int nan = 0;
            for (size_t i = 0; i < k; i++) {
                double v = dm(d, (size_t) mem[i], (size_t) med[c]);
                if (isnan(v)) nan = 1; else if (v > r) r = v;
            }
            radius[c] = nan ? NAN : r;
        }
        /* The reference indexes Medoids[labelsOnBranch], which drops the
         * labels 0, then takes labelsOnBranch[which.min(...)] of the full
         * list: kept as it is. */
#define NEAREST_MEDOID(target, nlb, outlab, outdist)                          \
        do {                                                                  \
            size_t q = 0;                                                     \
            for (size_t i = 0; i < (nlb); i++)                                \
                if (lab[i] > 0) meds[q++] = dm(d, (size_t) med[lab[i]], (target)); \
            long w_ = which_min(meds, q);                                     \
            (outlab) = w_ < 0 ? 0 : lab[w_];                                  \
            (outdist) = w_ < 0 ? NAN : meds[w_];                              \
        } while (0)
        if (p->respect_small_clusters && n_small_lev > 0) {
            for (int sc = 1; sc <= max_small; sc++) {
                if (!small_seen[sc]) continue;
                SMALL_MEMBERS(sc, k)
                size_t nlb;
                if (p->pam_respects_dendro) {
                    ONE_BRANCH(k, onbr)
                    nlb = onbr > 0 ? branch_labels(&b, (size_t) onbr, branch_label, lab) : 0;
                } else {
                    nlb = (size_t) nl;
                    for (int c = 0; c < nl; c++) lab[c] = c + 1;
                }
                if (nlb == 0) {
                    for (size_t i = 0; i < k; i++) colors[in[i]] = -1;
                    continue;
                }
                if (k <= 1) continue;
                for (size_t j = 0; j < k; j++) {
                    ldouble s = 0;
                    for (size_t i = 0; i < k; i++) s += dm(d, (size_t) in[i], (size_t) in[j]);
                    work[j] = (double) s;
                }
                long jm = which_min(work, k);
                size_t smed = (size_t) in[jm < 0 ? 0 : jm];
                int cl;
                double dist;
                NEAREST_MEDOID(smed, nlb, cl, dist);
                if (cl <= 0) {
                    FAIL(GPUCOR_ERR_INVALID, "the PAM stage finds no labelled medoid nearest to small "
                         "cluster %d (dynamicTreeCut stops here too)", sc);
                }
                int lbl = (dist < radius[cl] || dist < p->max_pam_dist) ? cl : -1;
                for (size_t i = 0; i < k; i++) colors[in[i]] = lbl;
            }
        }
        for (size_t obj = 0; obj < n; obj++) {
            if (colors[obj] != 0) continue;
            size_t nlb;
            if (p->pam_respects_dendro) {
                if (on_branch[obj] <= 0) continue;
                nlb = branch_labels(&b, (size_t) on_branch[obj], branch_label, lab);
            } else {
                nlb = (size_t) nl;
                for (int c = 0; c < nl; c++) lab[c] = c + 1;
            }
            int cl;
            double dist;
            NEAREST_MEDOID(obj, nlb, cl, dist);
            if (cl <= 0) {
                FAIL(GPUCOR_ERR_INVALID, "the PAM stage finds no labelled medoid nearest to object %zu "
                     "(dynamicTreeCut stops here too)", obj + 1);
            }
            if (dist < radius[cl] || dist < p->max_pam_dist) colors[obj] = cl;
        }
    }

cleanup:
    branches_free(&b, mx);
    free(ind); free(on_branch); free(small_lab); free(work); free(is_cluster);
    free(branch_label); free(colx); free(lab); free(use_lab); free(members); free(start);
    free(diam); free(radius); free(med); free(meds); free(small_seen); free(in);
    return status;
}
