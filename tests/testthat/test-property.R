# A randomized property test (issues 8 and 32): random shapes that cross
# every tile and panel boundary of both engines (CPU tiles of 32, 64 and
# 128, and forced as small as one pair; GPU tiles of 32 and 64 and panels
# forced as narrow as one column), filled with random contents, for every
# method and 'use' mode, against stats::cor and stats::dist: values, NA/NaN
# pattern, dimnames and attributes, warnings and errors.
#
# A content is a base (Gaussian, small-integer ties, a large offset, deep
# subnormal, 2^1000, near-duplicate rows, near-duplicate columns, columns on
# scales from 1e-15 to 1e15) with any of four modifiers on top (NA cells, a
# whole NA column, NA/NaN/Inf cells, constant columns and rows), in a matrix,
# a data frame or (small integers) an integer matrix.  Issue 32's GPU
# failures were all such combinations -- constant columns with NA, subnormal
# with an NA column, Inf with near-duplicates -- which the first version of
# this test never drew: each content was one class alone, and Minkowski's p
# was never above 3.
#
# Every case draws its input from a seed of its own, whatever the machine
# (the GPU's extra runs draw nothing), so the same seed gives the same cases
# on the CPU here and on the GPU machine, and a failure names its case seed:
# prop_cor_draw(<case seed>) / prop_dist_draw(<case seed>) give the input
# back.  GPUCOR_TEST_SEED=<n> replays a whole block.  Where a GPU is usable
# every case also runs on it (backend = "gpu"), and a third of them (drawn
# on every machine) in single precision too.
#
# Extreme scales are compared as REFERENCES.md says: stats' own arithmetic
# under- or overflows there, so values come from stats on the data rescaled
# by an exact power of two; stats' rules (the NA and warning of a variance
# that underflows a double) still come from stats on the data as given.
#
# GPUCOR_PROPERTY_CASES scales the number of cases (default 1 = as in CI).

prop_scale <- as.numeric(Sys.getenv("GPUCOR_PROPERTY_CASES", "1"))

prop_bases <- c("gauss", "ties", "offset", "tiny", "huge", "near_dup",
                "dup_cols", "mixed")
prop_mods <- c("na", "nacol", "nonfinite", "constant")

# A content: a base and the modifiers drawn on top of it.
prop_content <- function() {
  base <- sample(prop_bases, 1)
  c(base, prop_mods[stats::runif(length(prop_mods)) < c(0.3, 0.15, 0.2, 0.3)])
}

# Deep subnormal (small integers times 2^-1074) and huge (2^1000) data are
# exact multiples of a power of two: these undo the scale exactly.
prop_unscale <- c(tiny = 1074, huge = -1000)

# a * 2^k, exactly, for k beyond the range of 2^k itself (2^1074 is Inf)
pow2 <- function(a, k) {
  while (abs(k) > 0) {
    s <- sign(k) * min(abs(k), 1000)
    a <- a * 2^s
    k <- k - s
  }
  a
}

prop_matrix <- function(n, p, content) {
  base <- content[1]
  has <- function(m) m %in% content[-1]
  x <- matrix(stats::rnorm(n * p), n, p)
  len <- n * p
  if (len == 0) return(x)
  switch(base,
    ties = x[] <- sample(-2:2, len, replace = TRUE),
    near_dup = {     # rows that differ by 1e-6 on a base of 1 or 1e8
      b <- sample(c(1, 1e8), 1) + stats::rnorm(p)
      x <- t(b + matrix(stats::rnorm(len) * 1e-6, p, n))
    },
    dup_cols = {     # columns that differ by 1e-9 of their spread
      x <- sample(c(0, 1e3), 1) + x[, 1] + x * 1e-9
    },
    mixed = x <- sweep(x, 2, 10^sample(-15:15, p, replace = TRUE), "*"))
  if (has("constant")) {
    # constant variables (cor) and constant items (dist); a value that the
    # scale of tiny and huge data keeps finite and nonzero
    v <- sample(if (base %in% c("tiny", "huge")) c(0, 2.5, -3) else c(0, 2.5, -1e8), 1)
    x[, sample.int(p, min(p, sample(1:3, 1)))] <- v
    x[sample.int(n, min(n, sample(1:3, 1))), ] <- v
  }
  switch(base,
    offset = x <- sample(c(1e8, -1e6, 1e12), 1) + x,
    tiny = x[] <- round(x * 200) * 2^-1074,
    huge = x <- x * 2^1000)
  if (has("na"))
    x[sample.int(len, max(1, round(stats::runif(1, 0.05, 0.4) * len)))] <- NA
  if (has("nacol")) x[, sample.int(p, 1)] <- NA
  if (has("nonfinite")) {
    k <- max(1, round(0.06 * len))
    x[sample.int(len, k)] <- sample(c(NA, NaN, Inf, -Inf), k, replace = TRUE)
  }
  x
}

# The container a case hands over: the matrix, a data frame of its columns,
# or (small integers and NA only) an integer matrix.
prop_container <- function(x, content) {
  kind <- sample(c("matrix", "data.frame", "integer"), 1, prob = c(0.7, 0.2, 0.1))
  if (kind == "data.frame") return(as.data.frame(x))
  if (kind == "integer" && all(is.na(x) | (is.finite(x) & x == round(x) & abs(x) < 1e9)) &&
      !any(is.nan(x))) storage.mode(x) <- "integer"
  x
}

# GPU panel widths and CPU tile sides: automatic (0), or forced narrow so
# that every panel and tile boundary is crossed.
prop_slab <- function() sample(c(0, 1, 2, 5, 13, 33, 64), 1)
prop_tile <- function() sample(c(0, 1, 2, 3, 5, 17, 33), 1)

# The backends that run every case, and the one that also runs single
# precision (NULL without a GPU).
prop_backends <- function() {
  b <- test_backends()
  if ("gpu" %in% b) list(c("cpu", "gpu"), "gpu") else list("cpu", NULL)
}

# One seed per case, from the block's seed: the cases of a block are the
# same on every machine.
prop_case_seeds <- function(ncases) sample.int(.Machine$integer.max, ncases)

# Each column minus its first finite value: exact for data near an offset
# (Sterbenz), and correlations do not change under a shift.
shift_cols <- function(a) {
  if (is.null(a) || !length(a)) return(a)
  first <- apply(a, 2, function(v) { o <- v[is.finite(v)]; if (length(o)) o[1] else 0 })
  sweep(a, 2, first)
}

as_num_matrix <- function(a) if (is.null(a)) NULL else { a <- as.matrix(a); storage.mode(a) <- "double"; a }

# Minkowski (and Euclidean) distances between the rows of x without
# over- or underflow: each pair's differences scaled by their largest, with
# stats' rule for NA (skip, rescale by ncol / used, NA when none is left).
# Single precision promises these values, not stats' double arithmetic on
# p-th powers (which gives 0 for differences of 1e-8 at p = 64).
scaled_minkowski <- function(x, p) {
  n <- nrow(x)
  out <- numeric(0)
  for (j in seq_len(max(0L, n - 1L))) for (i in (j + 1L):n) {
    d <- abs(x[i, ] - x[j, ])
    d <- d[!is.na(d)]
    m <- if (length(d)) max(d) else NA
    out <- c(out, if (!length(d)) NA else if (m == 0 || m == Inf) m else
      m * (sum((d / m)^p) * ncol(x) / length(d))^(1 / p))
  }
  out
}

prop_cor_ns <- c(0, 1, 2, 3, 4, 5, 8, 9, 16, 17, 31, 32, 33, 64, 65)
prop_cor_ps <- c(0, 1, 2, 3, 7, 31, 32, 33, 63, 64, 65, 127, 128, 129)

# The input and call of one gpu_cor case, from its seed.
prop_cor_draw <- function(seed) {
  set.seed(seed)
  method <- sample(cor_methods, 1)
  use <- sample(cor_uses, 1)
  content <- prop_content()
  n <- sample(prop_cor_ns, 1)
  p <- sample(prop_cor_ps, 1)
  # stats' R loop re-ranks every pair (pairwise) and its Kendall is
  # O(n^2) per pair: keep those small enough for CI
  if (method != "pearson" && use == "pairwise.complete.obs") p <- min(p, 33)
  if (method == "kendall") p <- min(p, 65)
  q <- if (stats::runif(1) < 0.3) sample(c(1, 2, 5, 33, 65), 1) else 0
  x <- prop_matrix(n, p, content)
  y <- if (q > 0) prop_matrix(n, q, content)
  if (stats::runif(1) < 0.3 && p > 0) colnames(x) <- paste0("v", seq_len(p))
  x <- prop_container(x, content)
  if (!is.null(y)) y <- prop_container(y, content)
  list(x = x, y = y, method = method, use = use, content = content,
       slab = prop_slab(), tile = prop_tile(), single = stats::runif(1) < 1 / 3,
       # stats' own one-column rank pairwise bug (REFERENCES.md): not compared
       skip = is.null(y) && p == 1 && method != "pearson" && use == "pairwise.complete.obs",
       what = sprintf("%d x %d%s, %s%s", n, p, if (q) sprintf(" and y %d x %d", n, q) else "",
                      paste(content, collapse = "+"),
                      if (is.data.frame(x)) " (data frame)" else
                        if (is.integer(x)) " (integer)" else ""))
}

# gpu_cor against stats::cor for one case.
prop_cor_case <- function(cs, info) {
  x <- cs$x; y <- cs$y; method <- cs$method; use <- cs$use; base <- cs$content[1]
  bk <- prop_backends()
  run <- function(b, precision, tol) {
    # the GPU's pairwise Pearson is exact where stats' long-double mean of
    # the shared rows rounds (offsets far above the spread): compared with
    # stats on the shifted columns, as in test-reproducers.R
    shifted <- b == "gpu" && method == "pearson" && use == "pairwise.complete.obs" &&
      base %in% c("offset", "near_dup")
    if (!base %in% names(prop_unscale) && !shifted) {
      expect_same_as_stats_cor(x, y, method, use, backend = b, info = info,
                               precision = precision, tol = tol)
      return()
    }
    ref <- if (shifted) function(a) shift_cols(as_num_matrix(a)) else {
      k <- prop_unscale[[base]]
      function(a) if (is.null(a)) NULL else pow2(as_num_matrix(a), k)
    }
    want_vals <- capture_conditions(stats::cor(ref(x), ref(y), use = use, method = method))
    want <- if (base == "huge") want_vals
            else capture_conditions(stats::cor(x, y, use = use, method = method))
    if (kendall_warning_is_random(x, y, method, use) && is.null(want$error))
      want$warnings <- capture_conditions(stats::cor(x, y, use = use, method = "spearman"))$warnings
    what <- sprintf("gpu_cor(method = \"%s\", use = \"%s\", backend = \"%s\", precision = \"%s\")%s",
                    method, use, b, precision, if (is.null(y)) "" else " with y")
    got <- capture_conditions(gpucor::gpu_cor(x, y, method = method, use = use,
                                              backend = b, precision = precision))
    if (!expect_same_error(got, want, what, info)) return()
    g <- got$value
    w <- want$value
    v <- want_vals$value
    # NA where stats' rules say so (R's NA, on the data as given) or where
    # the reference data gives NA; stats' NaN from 0/0 of two subnormal
    # standard deviations is its arithmetic, not a rule
    na <- (is.na(w) & !is.nan(w)) | is.na(v)
    expect(identical(as.vector(is.na(g)), as.vector(na)),
           sprintf("%s: NA pattern differs from stats' rules. %s", what, info))
    ok <- !is.na(g) & !na
    expect_abs_equal(g[ok], v[ok], tol, what, info)
    expect(identical(dimnames(g), dimnames(w)),
           sprintf("%s: dimnames differ. %s", what, info))
    expect_same_warnings(got, want, what, info)
  }
  for (b in bk[[1]]) run(b, "double", 1e-10)
  if (cs$single && !is.null(bk[[2]])) run(bk[[2]], "single", 1e-4)
}

prop_dist_methods <- c(stats_dist_methods, cor_dist_methods, "cosine")

# The input and call of one gpu_dist case, from its seed.
prop_dist_draw <- function(seed) {
  set.seed(seed)
  method <- sample(prop_dist_methods, 1)
  content <- if (stats::runif(1) < 0.1) "binary" else prop_content()
  n <- sample(c(0, 1, 2, 3, 5, 63, 64, 65, 127, 128, 129, 130), 1)
  p <- sample(c(0, 1, 2, 3, 4, 5, 9, 16, 17), 1)
  if (method %in% c("spearman", "kendall")) n <- min(n, 65)   # stats' R loop with NA
  x <- if (content[1] == "binary") matrix(stats::rbinom(n * p, 1, 0.4), n, p)
       else prop_matrix(n, p, content)
  if (stats::runif(1) < 0.3 && n > 0) rownames(x) <- paste0("r", seq_len(n))
  mp <- sample(c(0.5, 1.5, 3, 20, 64), 1)
  x <- prop_container(x, content)
  list(x = x, method = method, p = mp, content = content,
       slab = prop_slab(), tile = prop_tile(), single = stats::runif(1) < 1 / 3,
       # stats' own one-column rank pairwise bug (t(x) of one row): not compared
       skip = n == 1 && method %in% c("spearman", "kendall") && anyNA(as.matrix(x)),
       what = sprintf("%d x %d, %s, p = %g%s", n, p, paste(content, collapse = "+"), mp,
                      if (is.data.frame(x)) " (data frame)" else
                        if (is.integer(x)) " (integer)" else ""))
}

# gpu_dist against stats::dist (the six metrics) or against 1 - cor(t(x))
# (everything without NA, pairwise with NA) and the direct cosine.
prop_dist_case <- function(cs, info) {
  x <- cs$x; method <- cs$method; p <- cs$p; base <- cs$content[1]
  bk <- prop_backends()
  extreme <- base %in% names(prop_unscale)
  six <- method %in% stats_dist_methods
  # float cannot resolve differences of 1e-6 on 1e8
  single <- cs$single && !is.null(bk[[2]]) &&
    !(six && base %in% c("offset", "near_dup", "dup_cols"))
  if (six) {
    expect_same_as_stats_dist(x, method, p = p, backend = bk[[1]], info = info)
    if (single) {
      xm <- as_num_matrix(x)
      if (method %in% c("euclidean", "minkowski")) {
        w <- scaled_minkowski(xm, if (method == "euclidean") 2 else p)
      } else {
        # float's arithmetic on data scaled by a power of two, the scale
        # undone in double: stats on the rescaled data is the reference.
        # Canberra and binary do not depend on the scale, and stats' rule
        # for Canberra (a term below DBL_MIN is dropped) is on the data as
        # given.
        fin <- abs(xm[is.finite(xm) & xm != 0])
        k <- if (length(fin) && !method %in% c("canberra", "binary"))
          -floor(log2(max(fin))) else 0
        w <- c(suppressWarnings(stats::dist(pow2(xm, k), method)))
        if (method %in% c("maximum", "manhattan")) w <- pow2(w, -k)
      }
      g <- suppressWarnings(gpucor::gpu_dist(x, method, p = p, backend = "gpu",
                                             precision = "single"))
      expect_identical(is.na(c(g)), is.na(w), info = paste("single", method, info))
      expect_identical(is.infinite(c(g)), is.infinite(w), info = paste("single", method, info))
      ok <- is.finite(w) & is.finite(c(g))
      expect_equal(c(g)[ok], w[ok], tolerance = 1e-4, info = paste("single", method, info))
    }
    return()
  }
  xr <- if (extreme) pow2(as_num_matrix(x), prop_unscale[[base]]) else x
  want <- if (method == "cosine") cosine_expected(as_num_matrix(xr))
          else if (anyNA(as.matrix(x))) capture_conditions(cor_dist_expected(xr, method))
          else capture_conditions({
            m <- switch(method, correlation = , abscorrelation = "pearson", method)
            r <- stats::cor(t(xr), method = m)
            if (method == "abscorrelation") r <- abs(r)
            stats::as.dist(1 - r)
          })
  runs <- lapply(bk[[1]], function(b) c(b, "double"))
  if (single) runs <- c(runs, list(c("gpu", "single")))
  for (r in runs) {
    what <- sprintf("gpu_dist(method = \"%s\", backend = \"%s\", precision = \"%s\")",
                    method, r[1], r[2])
    got <- capture_conditions(gpucor::gpu_dist(x, method, backend = r[1], precision = r[2]))
    if (!expect_same_error(got, want, what, info)) next
    expect_abs_equal(as.vector(unclass(got$value)), as.vector(unclass(want$value)),
                     if (r[2] == "single") 1e-4 else 1e-10, what, info)
    expect_same_warnings(got, want, what, info)
  }
}

# Runs the cases of one block: each from its own seed, with the options it
# drew (panel width, tile side).
prop_run <- function(ncases, draw, check, info) {
  old <- options(gpucor.gpu_slab = NULL, gpucor.cpu_tile = NULL)
  on.exit(options(old))
  seeds <- prop_case_seeds(ncases)
  for (case in seq_len(ncases)) {
    cs <- draw(seeds[case])
    if (cs$skip) next
    options(gpucor.gpu_slab = cs$slab, gpucor.cpu_tile = cs$tile)
    check(cs, sprintf("case %d (case seed %d: %s(%d)): %s; %s", case, seeds[case],
                      deparse(substitute(draw)), seeds[case], cs$what, info))
  }
}

test_that("property: gpu_cor equals stats::cor on random shapes and contents", {
  info <- new_seed()
  prop_run(round(1300 * prop_scale), prop_cor_draw, prop_cor_case, info)
})

test_that("property: gpu_dist equals stats::dist and 1 - cor(t(x)) on random shapes", {
  info <- new_seed()
  prop_run(round(1000 * prop_scale), prop_dist_draw, prop_dist_case, info)
})

# Issue 34's measures on random shapes and contents, each against its
# reference on every backend (the GPU where one is usable): minet's
# Gaussian MI (stats::cor under it: every content), corpcor's shrinkage
# estimates (no NA, as corpcor; compared with corpcor on centred columns,
# where its one-pass moments keep their digits), parmigene's knnmi (data
# without ties at a k-th distance: Gaussian, or on scales from 1e-15 to
# 1e15 by variable) and its four pruning rules on MI matrices from knnmi
# and on random symmetric ones with ties and zeros.
prop_new_draw <- function(seed) {
  set.seed(seed)
  fn <- sample(c("mim", "shrink", "knnmi", "prune"), 1,
               prob = c(0.3, 0.3, 0.2, 0.2))
  tag <- fn
  x <- y <- NULL
  arg <- NULL
  if (fn == "mim") {
    content <- prop_content()
    while (content[1] %in% names(prop_unscale)) content <- prop_content()
    arg <- sample(c("pearson", "spearman", "kendall"), 1)
    n <- sample(prop_cor_ns, 1)
    p <- sample(c(1, 2, 3, 7, 33, 65), 1)
    x <- prop_matrix(n, p, content)
    if (stats::runif(1) < 0.3) y <- prop_matrix(n, sample(c(1, 5, 33), 1), content)
    x <- prop_container(x, content)
  } else if (fn == "shrink") {
    content <- c(sample(c("gauss", "ties", "offset", "mixed", "near_dup"), 1),
                 if (stats::runif(1) < 0.3) "constant")
    n <- sample(c(3, 4, 9, 17, 33, 65), 1)
    p <- sample(c(1, 2, 3, 7, 33, 65, 129), 1)
    x <- prop_matrix(n, p, content)
    arg <- sample(c("cor.shrink", "pcor.shrink"), 1)
    tag <- arg
  } else if (fn == "knnmi") {
    content <- sample(c("gauss", "mixed"), 1)
    m <- sample(c(4, 5, 9, 17, 33, 65), 1)
    x <- t(prop_matrix(m, sample(c(2, 3, 5, 17, 33), 1), content))
    arg <- sample(unique(c(2, 3, min(10, m - 1), m - 1)), 1)
    n <- nrow(x); p <- m
  } else {
    content <- sample(c("knnmi", "ties"), 1)
    n <- sample(c(3, 4, 5, 17, 33, 64, 65, 66), 1)
    x <- if (content == "knnmi") gpucor::gpu_knnmi(matrix(stats::rnorm(n * 20), n), k = 3,
                                                   backend = "cpu")
         else {
           s <- matrix(sample(c(0, 0.1, 0.2, 0.3, stats::runif(3)), n * n, TRUE), n)
           s <- pmax(s, t(s)); diag(s) <- 0; s
         }
    arg <- sample(c("aracne.a", "aracne.m", "clr", "mrnet"), 1)
    tag <- arg
    p <- n
  }
  list(fn = fn, x = x, y = y, arg = arg, content = content, slab = prop_slab(),
       tile = prop_tile(), skip = FALSE,
       what = sprintf("%s(%s) %d x %d%s, %s", tag, paste(arg), n, p,
                      if (is.null(y)) "" else " with y", paste(content, collapse = "+")))
}

prop_new_case <- function(cs, info) {
  x <- cs$x; arg <- cs$arg
  for (b in test_backends()) {
    what <- paste(cs$what, "on", b)
    if (cs$fn == "mim") {
      ref <- function() {
        xm <- as_num_matrix(x)
        if (is.null(cs$y)) {
          m <- stats::cor(xm, method = arg, use = "complete.obs")^2
          diag(m) <- 0
        } else {
          ok <- stats::complete.cases(xm, cs$y)
          if (!any(ok)) stop("no complete element pairs")
          m <- stats::cor(xm[ok, , drop = FALSE], cs$y[ok, , drop = FALSE], method = arg)^2
        }
        m[which(m > 0.999999)] <- 0.999999
        -0.5 * log(1 - m)
      }
      want <- capture_conditions(ref())
      got <- capture_conditions(gpucor::gpu_build_mim(x, arg, backend = b, y = cs$y))
      if (!expect_same_error(got, want, what, info)) next
      expect(identical(is.na(got$value), is.na(want$value)),
             sprintf("%s: NA pattern differs. %s", what, info))
      # the transform's condition: d MI / d r^2 = exp(2 MI) / 2, so an r
      # near 1 that stats and gpu_cor round apart by 1e-16 moves MI by
      # about 1e-16 exp(2 MI)
      ok <- !is.na(want$value)
      expect_abs_equal(got$value[ok] * exp(-2 * want$value[ok]),
                       want$value[ok] * exp(-2 * want$value[ok]), 1e-10, what, info)
      expect(identical(dimnames(got$value), dimnames(want$value)),
             sprintf("%s: dimnames differ. %s", what, info))
    } else if (cs$fn == "shrink") {
      f <- if (arg == "cor.shrink") gpucor::gpu_cor_shrink else gpucor::gpu_pcor_shrink
      r <- if (arg == "cor.shrink") corpcor::cor.shrink else corpcor::pcor.shrink
      want <- suppressWarnings(r(sweep(x, 2, colMeans(x)), verbose = FALSE))
      got <- suppressWarnings(f(x, verbose = FALSE, backend = b))
      # corpcor's NaN: its pseudoinverse (lambda 0) of columns that are
      # exactly collinear (a few samples, constant rows); gpucor gives 0
      # there.  Not compared.
      if (anyNA(unclass(want))) next
      # the partial correlations invert the shrunk correlation, whose
      # condition is about 1 / lambda: collinear columns (a few samples,
      # constant rows) estimate lambda near 0 (1e-12), where both
      # estimates are the exact one's rounding times 1e12
      lam <- attr(want, "lambda")
      tol <- if (arg == "pcor.shrink") max(1e-10, 1e-15 / max(lam, 1e-12)) else 1e-10
      # lambda zero to rounding (below 1e-12: 0, 1e-17 or 3e-16 depending
      # on each side's order of operations) with a singular correlation:
      # exactly 0 is corpcor's pseudoinverse, 1e-17 the inverse of a
      # matrix of condition 1e17; the values are rounding on both sides
      # (documented in ?gpu_pcor_shrink): only lambda is compared then
      zero_band <- arg == "pcor.shrink" && max(lam, attr(got, "lambda")) < 1e-12
      if (!zero_band)
        expect_abs_equal(unclass(got)[TRUE], unclass(want)[TRUE], tol, what, info)
      # with fewer than two columns of nonzero scale every off-diagonal
      # value is 0 and corpcor's lambda is its rounding of 0 / 0
      if (sum(apply(x, 2, stats::var) >= .Machine$double.eps) < 2L) next
      expect(abs(attr(got, "lambda") - attr(want, "lambda")) <= 1e-10,
             sprintf("%s: lambda %g, corpcor %g. %s", what, attr(got, "lambda"),
                     attr(want, "lambda"), info))
      expect(identical(class(got), class(want)), sprintf("%s: class. %s", what, info))
    } else if (cs$fn == "knnmi") {
      want <- parmigene::knnmi.all(x, k = arg, noise = 0)
      got <- gpucor::gpu_knnmi(x, k = arg, backend = b)
      expect_abs_equal(got[TRUE], want[TRUE], 1e-10, what, info)
    } else {
      pf <- switch(arg, aracne.a = parmigene::aracne.a, aracne.m = parmigene::aracne.m,
                   clr = parmigene::clr, mrnet = parmigene::mrnet)
      gf <- switch(arg, aracne.a = gpucor::gpu_aracne_a, aracne.m = gpucor::gpu_aracne_m,
                   clr = gpucor::gpu_clr, mrnet = gpucor::gpu_mrnet)
      want <- pf(x)
      got <- gf(x, backend = b)
      expect(identical(unname(got), unname(want)),
             sprintf("%s: differs from parmigene (max %g). %s", what,
                     max(abs(got - want)), info))
    }
  }
}

test_that("property: issue 34's measures equal corpcor, parmigene and minet's formula", {
  skip_if_not_installed("corpcor")
  skip_if_not_installed("parmigene")
  info <- new_seed()
  prop_run(round(500 * prop_scale), prop_new_draw, prop_new_case, info)
})

# Issue 39's searches on random shapes and contents: gpu_knn() of x itself
# and with a query, gpu_range() likewise, for stats' metrics, against brute
# force on stats::dist() of the two sets stacked: distances to 1e-12
# (relative above 1), indices identical where the distance is not tied
# within that (exact ties -- small integers, copied rows -- to the smaller
# index), range sets identical away from the threshold.  No NA: a search
# with a query takes none.
prop_nn_draw <- function(seed) {
  set.seed(seed)
  fn <- sample(c("knn", "knn_query", "range", "range_query"), 1)
  method <- sample(setdiff(stats_dist_methods, "binary"), 1)
  content <- sample(c("gauss", "ties", "offset", "near_dup", "mixed", "copies"), 1)
  n <- sample(c(1, 2, 3, 5, 17, 63, 64, 65, 129, 130), 1)
  p <- sample(c(1, 2, 3, 5, 17), 1)
  if (fn %in% c("knn", "range") && n < 2) n <- 2
  x <- if (content == "copies") {
    b <- matrix(stats::rnorm(max(1, n %/% 3) * p), ncol = p)
    b[sample.int(nrow(b), n, TRUE), , drop = FALSE]
  } else prop_matrix(n, p, content)
  q <- NULL
  if (grepl("query", fn)) {
    nq <- sample(c(1, 2, 5, 64, 65, 130), 1)
    q <- if (content == "copies") x[sample.int(n, nq, TRUE), , drop = FALSE]
         else prop_matrix(nq, p, content)
  }
  kmax <- if (is.null(q)) n - 1 else n
  list(fn = fn, method = method, x = prop_container(x, content), q = q,
       k = sample.int(kmax, 1), mp = sample(c(0.5, 1.5, 3), 1), content = content,
       slab = prop_slab(), tile = prop_tile(), skip = FALSE,
       what = sprintf("%s(%s) %d x %d%s, %s", fn, method, n, p,
                      if (is.null(q)) "" else sprintf(", %d queries", nrow(q)), content))
}

prop_nn_case <- function(cs, info) {
  xm <- as_num_matrix(cs$x)
  q <- cs$q
  n <- nrow(xm)
  all <- as.matrix(stats::dist(rbind(xm, q), cs$method, p = cs$mp))
  d <- if (is.null(q)) { a <- all; diag(a) <- NA; a }
       else all[seq_len(n), n + seq_len(nrow(q)), drop = FALSE]
  d <- unname(d)
  tol <- function(a) 1e-12 * pmax(1, abs(a))
  # equal to tol, or both NA (canberra's all-zero pairs), or the same Inf
  same <- function(g, w) (is.na(g) & is.na(w)) |
    (!is.na(g) & !is.na(w) & (g == w | abs(g - w) <= tol(w)))
  if (grepl("range", cs$fn)) {
    thr <- stats::quantile(d, 0.2, na.rm = TRUE, names = FALSE)
    if (!is.finite(thr)) return()
  }
  for (b in test_backends()) {
    what <- paste(cs$what, "on", b)
    if (grepl("knn", cs$fn)) {
      got <- gpucor::gpu_knn(cs$x, cs$k, cs$method, p = cs$mp, query = q, backend = b)
      for (j in seq_len(ncol(d))) {
        dj <- d[, j]
        want <- order(dj, seq_along(dj), na.last = NA)[seq_len(cs$k)]
        at <- dj[want]
        expect(all(same(got$distance[j, ], at)),
               sprintf("%s: point %d's distances differ. %s", what, j, info))
        untied <- vapply(at, function(a) is.na(a) || sum(same(dj, a)) == 1, TRUE)
        expect(identical(got$index[j, untied], want[untied]),
               sprintf("%s: point %d's neighbours differ. %s", what, j, info))
        expect(all(same(dj[got$index[j, ]], got$distance[j, ])),
               sprintf("%s: point %d's indices are not at their distances. %s", what, j, info))
      }
    } else {
      got <- gpucor::gpu_range(cs$x, thr, cs$method, p = cs$mp, query = q, backend = b)
      for (j in seq_len(ncol(d))) {
        dj <- d[, j]
        want <- which(dj <= thr)
        near <- which(abs(dj - thr) <= tol(thr))      # on the threshold within rounding
        gi <- got$index[[j]]
        expect(identical(setdiff(gi, near), setdiff(want, near)) && !is.unsorted(gi),
               sprintf("%s: point %d's neighbours within %g differ. %s", what, j, thr, info))
        expect(all(same(got$distance[[j]], dj[gi])),
               sprintf("%s: point %d's distances differ. %s", what, j, info))
      }
    }
  }
}

test_that("property: gpu_knn and gpu_range (with and without a query) equal brute force", {
  info <- new_seed()
  prop_run(round(300 * prop_scale), prop_nn_draw, prop_nn_case, info)
})
