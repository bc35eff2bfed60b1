/*
 * cutree_tree.c -- .Call entry point of .cutree_tree() (R/cutree_tree.R):
 * the "tree" method of dynamicTreeCut::cutreeDynamic(), that is
 * dynamicTreeCut 1.63's cutreeDynamicTree(), step for step, in O(n) per
 * level of splitting where the reference's R loops are quadratic.
 *
 * The algorithm works on one number per object, the height at which the
 * object joins the tree (its own merge), read in dendrogram order:
 *  1. a static cut at maxTreeHeight (the first K merges) gives branches;
 *     those of at least minModuleSize objects are runs of the order, found
 *     as .locateCluster() finds them (with its quirk at the last object);
 *  2. each run is split where the join heights cross a reference level
 *     (their mean, else (mean + max)/2, else (mean + min)/2) from below to
 *     above, keeping a cut only if at least minTail objects at or below the
 *     level lead to it, then merging a piece into the one before it when it
 *     is lower on average and smaller than 2 minModuleSize, and the last
 *     piece into the one before when it is too small
 *     (.processIndividualCluster());
 *  3. with deepSplit the pieces are split again until none splits.
 * The means are R's mean() (a long double sum, then a long double
 * correction by the residuals, as R 4.2's summary.c does), so every
 * comparison sees the doubles the reference sees.  The compute functions use
 * no R API; the entry point checks, allocates and returns.
 */
#include <R.h>
#include <Rinternals.h>
#include <math.h>
#include "algo/cutree.h"   /* gc_r_mean() */

/* Scratch shared by the splits: each holds 'n' (or n + 1) entries, and a
 * split uses the first m of them for its run of m objects. */
typedef struct {
    double *resid;      /* join height - reference level, per object of the run */
    R_xlen_t *cut;      /* cut positions (1-based within the run) */
    double min_size;    /* minModuleSize */
    double attach;      /* 2 minModuleSize: smaller lower pieces join the one before */
    double min_tail;    /* as.integer(minModuleSize / 3) + 1 */
} split_ctx;

/* One pass of .processIndividualCluster() with useMean = use over the join
 * heights x[0..m-1] (m >= 2) of a run.  Leaves in c->cut the ends of the
 * pieces, cut[0] = 1 standing for the start and cut[k-1] = m, and returns k:
 * k > 2 means the run splits into the k - 1 pieces (1..cut[1]),
 * (cut[1]+1..cut[2]), ..., (cut[k-2]+1..m); k = 2 means it does not. */
static R_xlen_t split_pass(const split_ctx *c, const double *x, R_xlen_t m, int use)
{
    double *d = c->resid;
    R_xlen_t *a = c->cut;
    double mx = x[0], mn = x[0];
    for (R_xlen_t i = 1; i < m; i++) {
        if (x[i] > mx) mx = x[i];
        if (x[i] < mn) mn = x[i];
    }
    double mean = gc_r_mean(x, (size_t) m);
    double level = use > 0 ? (mean + mx) / 2 : use < 0 ? (mean + mn) / 2 : mean;
    for (R_xlen_t i = 0; i < m; i++) d[i] = x[i] - level;

    /* A cut after the object at 1-based position j when it is below the
     * level and the next one above; the first and the last positions are
     * always cuts (d is 0-based: d[j - 1] is position j). */
    R_xlen_t k = 0;
    a[k++] = 1;
    for (R_xlen_t j = 2; j < m; j++)
        if (d[j - 1] < 0 && d[j] > 0) a[k++] = j;
    a[k++] = m;
    if (k == 2) return 2;

    /* Keep an inner cut only if the objects before it that are not above
     * the level, counted back from it up to the first one above, number at
     * least min_tail; none above in the whole piece counts as 0 (the
     * reference's .runlengthSign()).  Each cut is judged on the pieces of
     * the original cuts, so the compaction below reads 'prev' before it
     * may be overwritten. */
    R_xlen_t kk = 1, prev = a[0];
    for (R_xlen_t i = 1; i + 1 < k; i++) {
        R_xlen_t lo = prev, q = a[i] - 1;       /* 0-based: the piece is lo..a[i]-1 */
        while (q >= lo && !(d[q] > 0)) q--;
        double run = q >= lo ? (double) (a[i] - 1 - q) : 0.0;
        prev = a[i];
        if (!(run < c->min_tail)) a[kk++] = a[i];
    }
    a[kk++] = a[k - 1];

    /* With at least three pieces, walk them left to right: a piece lower on
     * average than the one before it and smaller than 'attach' joins it
     * (the next piece is then compared with the merged one).  The first
     * piece starts after position 1, as in the reference.  a[0..t-1] are
     * the cuts kept so far, a[t-1] the one under judgement; t <= nx. */
    if (kk > 3) {
        R_xlen_t t = 2, nx = 2;
        double pre = gc_r_mean(x + a[0], (size_t) (a[1] - a[0]));
        while (nx < kk) {
            R_xlen_t size = a[nx] - a[t - 1];
            double cur = gc_r_mean(x + a[t - 1], (size_t) size);
            if (cur < pre && size < c->attach) {
                a[t - 1] = a[nx];
                pre = gc_r_mean(x + a[t - 2], (size_t) (a[t - 1] - a[t - 2]));
            } else {
                a[t++] = a[nx];
                pre = cur;
            }
            nx++;
        }
        kk = t;
    }

    /* The last piece, counted one larger as the reference counts it, joins
     * the one before when smaller than min_size. */
    if (kk > 2 && (double) (a[kk - 1] - a[kk - 2] + 1) < c->min_size) {
        a[kk - 2] = a[kk - 1];
        kk--;
    }
    return kk;
}

/* .processIndividualCluster(): the pass with the mean as the level, and if
 * that does not split the run, with (mean + max)/2, then (mean + min)/2.
 * Returns k as split_pass() does (k = 2: the run stays whole).  A run of
 * one object stays whole (the reference fails on it: see R/cutree_tree.R);
 * one of two always does in the reference too. */
static R_xlen_t split_run(const split_ctx *c, const double *x, R_xlen_t m)
{
    if (m <= 2) {
        c->cut[0] = 1;
        c->cut[1] = m;
        return 2;
    }
    static const int uses[3] = {0, 1, -1};
    for (int u = 0; u < 3; u++) {
        R_xlen_t k = split_pass(c, x, m, uses[u]);
        if (k > 2) return k;
    }
    c->cut[0] = 1;
    c->cut[1] = m;
    return 2;
}

/* The static cut: cl[i] (object i, 0-based) is the id of its branch when
 * the first K merges are made, ids being 0..n-2 (the top merge of the
 * branch) or n + i for an object left alone.  par[j] is the row of the merge
 * that takes merge row j in (-1 for the top one); pobj[i] the row that
 * takes object i in.  Rows refer only to earlier rows, so a pass from the
 * top down finds each merge's topmost made ancestor. */
static void static_branches(const int *par, const int *pobj, R_xlen_t n, R_xlen_t K,
                            R_xlen_t *root, R_xlen_t *cl)
{
    for (R_xlen_t j = n - 2; j >= 0; j--) {
        if (j >= K) { root[j] = -1; continue; }
        R_xlen_t p = par[j];
        root[j] = (p >= 0 && p < K) ? root[p] : j;
    }
    for (R_xlen_t i = 0; i < n; i++)
        cl[i] = pobj[i] < K ? root[pobj[i]] : n + i;
}

/* .locateCluster() on the static labels in dendrogram order (lab[p] >= 0 a
 * branch of at least minModuleSize objects, -1 none): flags where the label
 * changes, at the first position if it is in a branch and at the last if
 * it is; each flag in a branch starts a run that ends before the next
 * flag, except that a run whose next flag is the last position takes it
 * in (so a branch or an unassigned object alone at the end joins the run
 * before it).  Writes 1-based starts and ends, returns their number. */
static R_xlen_t locate_runs(const R_xlen_t *lab, R_xlen_t n, R_xlen_t *flag, int *s, int *e)
{
    R_xlen_t nf = 0;
    for (R_xlen_t p = 0; p < n; p++) {
        int f = (p > 0 && lab[p] != lab[p - 1]) || (p == 0 && lab[p] >= 0) ||
                (p == n - 1 && lab[p] >= 0);
        if (f) flag[nf++] = p;
    }
    R_xlen_t nr = 0;
    for (R_xlen_t i = 0; i + 1 < nf; i++) {
        if (lab[flag[i]] < 0) continue;
        s[nr] = (int) (flag[i] + 1);
        e[nr] = flag[i + 1] == n - 1 ? (int) n : (int) flag[i + 1];
        nr++;
    }
    return nr;
}

/* merge: the (n-1) x 2 integer matrix of an hclust; height: its n - 1
 * heights; order: its order; nmade: how many merges the static cut makes;
 * params: minModuleSize, 2 minModuleSize, as.integer(minModuleSize/3) + 1;
 * deep: split the pieces again until none splits.  Returns NULL when no
 * static branch is large enough, else list(start, end) of the final pieces
 * (1-based positions in the order, in order). */
SEXP gpucor_cutree_tree(SEXP merge, SEXP height, SEXP order, SEXP nmade, SEXP params,
                        SEXP deep)
{
    if (TYPEOF(merge) != INTSXP || TYPEOF(height) != REALSXP || TYPEOF(order) != INTSXP ||
        TYPEOF(params) != REALSXP || XLENGTH(params) != 3)
        error("internal error: bad arguments to gpucor_cutree_tree");
    R_xlen_t n = XLENGTH(order);
    if (n < 2 || XLENGTH(height) != n - 1 || XLENGTH(merge) != 2 * (n - 1))
        error("internal error: 'merge', 'height' and 'order' disagree");
    double Kd = asReal(nmade);
    if (ISNAN(Kd) || Kd < 0 || Kd > (double) (n - 1)) error("internal error: bad 'nmade'");
    R_xlen_t K = (R_xlen_t) Kd;
    int dp = asLogical(deep);
    const int *mg = INTEGER(merge), *ord = INTEGER(order);
    const double *ht = REAL(height), *pm = REAL(params);

    int *par = (int *) R_alloc((size_t) n, sizeof(int));
    int *pobj = (int *) R_alloc((size_t) n, sizeof(int));
    double *join = (double *) R_alloc((size_t) n, sizeof(double));
    double *hord = (double *) R_alloc((size_t) n, sizeof(double));
    R_xlen_t *root = (R_xlen_t *) R_alloc((size_t) n, sizeof(R_xlen_t));
    R_xlen_t *cl = (R_xlen_t *) R_alloc((size_t) n, sizeof(R_xlen_t));
    R_xlen_t *size = (R_xlen_t *) R_alloc((size_t) (2 * n), sizeof(R_xlen_t));

    /* Who takes whom in, checking that merge is a tree: each object and
     * each earlier row taken in exactly once; order a permutation. */
    for (R_xlen_t i = 0; i < n; i++) par[i] = pobj[i] = -1;
    for (R_xlen_t j = 0; j < n - 1; j++) {
        for (int side = 0; side < 2; side++) {
            int v = mg[j + side * (n - 1)];
            if (v < 0 && v != NA_INTEGER && -(R_xlen_t) v <= n && pobj[-v - 1] < 0) {
                pobj[-v - 1] = (int) j;
                join[-v - 1] = ht[j];
            } else if (v > 0 && v <= j && par[v - 1] < 0) {
                par[v - 1] = (int) j;
            } else {
                error("invalid 'merge' in 'dendro' (row %.0f)", (double) j + 1);
            }
        }
    }
    for (R_xlen_t i = 0; i < 2 * n; i++) size[i] = 0;
    for (R_xlen_t p = 0; p < n; p++) {
        int o = ord[p];
        if (o == NA_INTEGER || o < 1 || o > n || size[o - 1]++)
            error("'dendro$order' is not a permutation of the objects");
        hord[p] = join[o - 1];
    }

    static_branches(par, pobj, n, K, root, cl);
    for (R_xlen_t i = 0; i < 2 * n; i++) size[i] = 0;
    for (R_xlen_t i = 0; i < n; i++) size[cl[i]]++;
    R_xlen_t *lab = root;     /* root is no longer needed */
    int any = 0;
    for (R_xlen_t p = 0; p < n; p++) {
        R_xlen_t b = cl[ord[p] - 1];
        lab[p] = (double) size[b] >= pm[0] ? b : -1;
        any |= lab[p] >= 0;
    }
    if (!any) return R_NilValue;

    int *rs = (int *) R_alloc((size_t) n, sizeof(int));
    int *re = (int *) R_alloc((size_t) n, sizeof(int));
    R_xlen_t nr = locate_runs(lab, n, cl, rs, re);

    split_ctx c;
    c.resid = (double *) R_alloc((size_t) n, sizeof(double));
    c.cut = (R_xlen_t *) R_alloc((size_t) n + 1, sizeof(R_xlen_t));
    c.min_size = pm[0];
    c.attach = pm[1];
    c.min_tail = pm[2];
    /* The final pieces, and a stack of runs still to split (deepSplit):
     * both hold disjoint runs, so at most n each. */
    int *fs = (int *) R_alloc((size_t) n, sizeof(int));
    int *fe = (int *) R_alloc((size_t) n, sizeof(int));
    int *ss = (int *) R_alloc((size_t) n, sizeof(int));
    int *se = (int *) R_alloc((size_t) n, sizeof(int));
    R_xlen_t nf = 0;
    for (R_xlen_t r = 0; r < nr; r++) {
        R_xlen_t top = 0;
        ss[top] = rs[r]; se[top] = re[r]; top++;
        while (top > 0) {
            top--;
            R_xlen_t s0 = ss[top], e0 = se[top];
            R_xlen_t k = split_run(&c, hord + s0 - 1, e0 - s0 + 1);
            if (k <= 2) {
                fs[nf] = (int) s0; fe[nf] = (int) e0; nf++;
                continue;
            }
            /* pieces (cut[i-1]+1 .. cut[i]) with cut[0] read as 0 */
            R_xlen_t *a = c.cut;
            a[0] = 0;
            if (dp == TRUE) {
                /* split again, left piece first: push right to left */
                for (R_xlen_t i = k - 1; i >= 1; i--) {
                    ss[top] = (int) (s0 + a[i - 1]); se[top] = (int) (s0 + a[i] - 1); top++;
                }
            } else {
                for (R_xlen_t i = 1; i < k; i++) {
                    fs[nf] = (int) (s0 + a[i - 1]); fe[nf] = (int) (s0 + a[i] - 1); nf++;
                }
            }
        }
    }

    SEXP ans = PROTECT(allocVector(VECSXP, 2));
    SEXP vs = allocVector(INTSXP, nf);
    SET_VECTOR_ELT(ans, 0, vs);
    SEXP ve = allocVector(INTSXP, nf);
    SET_VECTOR_ELT(ans, 1, ve);
    for (R_xlen_t i = 0; i < nf; i++) {
        INTEGER(vs)[i] = fs[i];
        INTEGER(ve)[i] = fe[i];
    }
    UNPROTECT(1);
    return ans;
}
