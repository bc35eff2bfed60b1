# gpu_bicor(), gpu_adjacency(), gpu_tom() and gpu_soft_threshold() against
# WGCNA (bicor, adjacency, TOMsimilarityFromExpr / TOMsimilarity,
# pickSoftThreshold) on random data with a fresh seed per test (printed in
# `info`; GPUCOR_TEST_SEED=<n> replays one): values to 1e-10 absolute (the
# fit indices to 1e-8), identical NA patterns, the same warnings, on the CPU
# engine and, where a GPU is usable, on the GPU engine.  Every test skips
# without WGCNA.
backends <- c("cpu", if (isTRUE(as.vector(gpu_available()))) "gpu")

tom_types <- c("none", "unsigned", "signed", "signed Nowick", "unsigned 2", "signed 2",
               "signed Nowick 2")
network_types <- c("unsigned", "signed", "signed hybrid")

# got and want (matrices, dist or data frames made into matrices) have the
# same shape and NA pattern, and their other values differ by at most `tol`
# (absolutely, or relatively to max(|want|, 1) with rel = TRUE).
expect_wgcna_equal <- function(got, want, tol, what, info, rel = FALSE) {
  expect(identical(dim(got), dim(want)) && length(got) == length(want),
         sprintf("%s: shape differs: got dim %s length %d, WGCNA dim %s length %d. %s", what,
                 deparse(dim(got)), length(got), deparse(dim(want)), length(want), info))
  if (length(got) != length(want)) return(invisible(FALSE))
  g <- as.vector(unclass(got))
  w <- as.vector(unclass(want))
  expect(is.double(g), sprintf("%s: result is %s, not double. %s", what, typeof(g), info))
  bad <- which(is.na(g) != is.na(w))
  expect(length(bad) == 0L,
         sprintf("%s: NA pattern differs at %d element(s), first [%d]: got %s, WGCNA %s. %s",
                 what, length(bad), bad[1], format(g[bad[1]]), format(w[bad[1]]), info))
  ok <- !is.na(g) & !is.na(w)
  d <- abs(g[ok] - w[ok])
  if (rel) d <- d / pmax(abs(w[ok]), 1)
  err <- if (length(d)) max(d) else 0
  at <- if (length(d)) which(ok)[which.max(d)] else NA
  expect(err <= tol,
         sprintf("%s: max %s difference %.3g > %.3g at [%d]: got %.17g, WGCNA %.17g. %s", what,
                 if (rel) "relative" else "abs", err, tol, at, g[at], w[at], info))
  invisible(TRUE)
}

# Both ran, and gave the same set of warning messages.
expect_same_wgcna_warnings <- function(got, want, what, info) {
  expect(is.null(got$error), sprintf("%s: gpucor errors with \"%s\". %s", what, got$error, info))
  expect(is.null(want$error), sprintf("%s: WGCNA errors with \"%s\". %s", what, want$error, info))
  g <- sort(unique(got$warnings))
  w <- sort(unique(want$warnings))
  expect(identical(g, w),
         sprintf("%s: warnings differ.\n  WGCNA : %s\n  gpucor: %s\n%s", what,
                 if (length(w)) paste(dQuote(w, FALSE), collapse = ", ") else "(none)",
                 if (length(g)) paste(dQuote(g, FALSE), collapse = ", ") else "(none)", info))
}

# dimnames, with list(NULL, NULL) as NULL (gpucor's dimnames of unnamed
# input are list(NULL, NULL), WGCNA's NULL: that is checked once, on its
# own, in "gpu_bicor warns as WGCNA::bicor does, and keeps dimnames").
loose_dimnames <- function(m) {
  d <- dimnames(m)
  if (is.null(d) || all(vapply(d, is.null, logical(1)))) NULL else d
}

# gpu_bicor(...) against WGCNA::bicor(...) with the same arguments, on every
# backend: values, NA pattern, dimnames and (with warnings = TRUE) warnings.
check_bicor <- function(x, y = NULL, ..., info, tol = 1e-10, rel = FALSE, warnings = TRUE) {
  want <- capture_conditions(WGCNA::bicor(x, y, ...))
  for (be in backends) {
    what <- sprintf("gpu_bicor(%s%s, backend = \"%s\")", if (is.null(y)) "x" else "x, y",
                    paste0(", ", names(list(...)), " = ",
                           vapply(list(...), function(v) deparse(v), ""), collapse = ""), be)
    got <- capture_conditions(gpu_bicor(x, y, ..., backend = be))
    if (warnings) {
      expect_same_wgcna_warnings(got, want, what, info)
    } else {
      expect(is.null(got$error),
             sprintf("%s: gpucor errors with \"%s\". %s", what, got$error, info))
    }
    if (is.null(got$error) && is.null(want$error)) {
      expect_wgcna_equal(got$value, want$value, tol, what, info, rel = rel)
      expect(identical(loose_dimnames(got$value), loose_dimnames(want$value)),
             sprintf("%s: dimnames differ: got %s, WGCNA %s. %s", what,
                     deparse(dimnames(got$value)), deparse(dimnames(want$value)), info))
    }
  }
}

# WGCNA::adjacency() with the correlation of corType, as gpu_adjacency()
# documents it.
wgcna_adjacency <- function(x, power, type, corType) {
  fn <- switch(corType, pearson = WGCNA::cor, bicor = WGCNA::bicor, spearman = WGCNA::cor)
  opt <- if (corType == "spearman") list(use = "p", method = "spearman") else list(use = "p")
  WGCNA::adjacency(x, power = power, type = type, corFnc = fn, corOptions = opt)
}

# WGCNA::pickSoftThreshold() without its printout (and the foreach notice).
wgcna_pick <- function(x, corType = "pearson", ...) {
  fn <- if (corType == "bicor") WGCNA::bicor else WGCNA::cor
  out <- NULL
  utils::capture.output(out <- suppressWarnings(
    WGCNA::pickSoftThreshold(x, corFnc = fn, corOptions = list(use = "p"), verbose = 0, ...)))
  out
}

check_pick <- function(got, want, what, info) {
  expect(identical(names(got$fitIndices), names(want$fitIndices)),
         sprintf("%s: fitIndices columns %s, WGCNA %s. %s", what,
                 toString(names(got$fitIndices)), toString(names(want$fitIndices)), info))
  expect_wgcna_equal(as.matrix(got$fitIndices), as.matrix(want$fitIndices), 1e-8,
                     paste(what, "fitIndices"), info)
  # the value (the type is checked on its own, in "powerEstimate and Power
  # have WGCNA's type")
  expect(identical(as.double(got$powerEstimate), as.double(want$powerEstimate)),
         sprintf("%s: powerEstimate %s, WGCNA %s. %s", what, format(got$powerEstimate),
                 format(want$powerEstimate), info))
}

# n samples x p genes (p >= 8) with ties (columns 2 and 8), a zero-MAD
# column (3), a constant column (5) and an outlier (column 7).  The tied and
# repeated values are multiples of 1/4: a run of equal values that are not
# (0.7, 0.1, ...) can escape WGCNA's test of zero variance (see "a constant
# column of 0.7 on 3 rows"), and a pairwise subset of a tied column may be
# such a run.
bicor_data <- function(n, p = 12) {
  x <- rmat(n, p, dimnames = list(NULL, sprintf("g%02d", seq_len(p))))
  x[, c(2, 8)] <- round(4 * x[, c(2, 8)]) / 4
  k <- floor(n / 2) + 2
  x[, 3] <- c(rep(0.75, k), stats::rnorm(n - k))[sample.int(n)]
  x[, 5] <- 2.5
  x[1, 7] <- 50
  x
}

# n samples x p genes in a few modules (latent factors with gene-specific
# loadings and noise), so that the scale-free fit is good at some power.
module_data <- function(n = 60, p = 400, k = 4) {
  f <- matrix(stats::rnorm(n * k), n, k)
  mod <- sample(0:k, p, replace = TRUE)
  x <- matrix(stats::rnorm(n * p), n, p)
  for (j in which(mod > 0))
    x[, j] <- f[, mod[j]] * stats::runif(1, 0.5, 2) + x[, j] * stats::runif(1, 0.3, 1.5)
  x
}

# --- gpu_bicor ---------------------------------------------------------------

test_that("gpu_bicor matches WGCNA::bicor: ties, zero MAD, constant, outlier, every fallback", {
  skip_if_not_installed("WGCNA")
  info <- new_seed()
  for (n in c(40, 41)) {
    x <- bicor_data(n)
    for (fb in c("individual", "none", "all")) for (mp in c(1, 0.05))
      check_bicor(x, maxPOutliers = mp, pearsonFallback = fb, info = paste(info, "n", n))
    # without the zero-MAD and constant columns
    check_bicor(x[, -c(3, 5)], info = paste(info, "n", n))
    check_bicor(x[, -c(3, 5)], maxPOutliers = 0.05, info = paste(info, "n", n))
    # robustX = FALSE: WGCNA's cor(x) (a constant column NA on the diagonal too)
    check_bicor(x, robustX = FALSE, info = paste(info, "n", n))
  }
})

test_that("gpu_bicor(x, y) matches WGCNA::bicor(x, y), robustX/robustY and fallbacks", {
  skip_if_not_installed("WGCNA")
  info <- new_seed()
  n <- 45
  x <- bicor_data(n, 10)
  y <- rmat(n, 6, dimnames = list(NULL, paste0("y", 1:6)))
  y[, 2] <- c(rep(-1, 30), stats::rnorm(n - 30))      # zero MAD in y
  y[5, 4] <- -40
  for (rx in c(TRUE, FALSE)) for (ry in c(TRUE, FALSE)) for (fb in c("individual", "none", "all"))
    check_bicor(x, y, robustX = rx, robustY = ry, pearsonFallback = fb, info = info)
  check_bicor(x, y, maxPOutliers = 0.05, info = info)
  check_bicor(y, x[, -c(3, 5)], maxPOutliers = 0.1, pearsonFallback = "all", info = info)
})

test_that("gpu_bicor with NA (pairwise, quick = 0 and 0.5) matches WGCNA::bicor", {
  skip_if_not_installed("WGCNA")
  info <- new_seed()
  n <- 40
  x <- bicor_data(n, 14)
  x[sample.int(length(x), round(0.08 * length(x)))] <- NA
  x[, 9] <- NA                                  # all NA
  x[, 10] <- c(stats::rnorm(3), rep(NA, n - 3)) # three values ...
  x[1:2, 11] <- NA                              # ... of which one in common with column 11
  x[, 12] <- c(rep(NA, 20), rep(1.5, 12), stats::rnorm(8))  # zero MAD on its rows
  y <- rmat(n, 5, na = 0.1, dimnames = list(NULL, paste0("y", 1:5)))
  y[, 3] <- c(rep(0, 25), stats::rnorm(n - 25))
  # (the warnings are compared in "gpu_bicor warns as WGCNA::bicor does":
  # here a zero MAD that only a pair's common rows have, which WGCNA warns
  # of, comes and goes with the random data)
  for (q in c(0, 0.5)) {
    for (fb in c("individual", "none", "all")) for (mp in c(1, 0.05))
      check_bicor(x, use = "pairwise.complete.obs", quick = q, pearsonFallback = fb,
                  maxPOutliers = mp, info = paste(info, "quick", q), warnings = FALSE)
    check_bicor(x, y, use = "pairwise.complete.obs", quick = q, info = paste(info, "quick", q),
                warnings = FALSE)
    check_bicor(x, y, use = "p", quick = q, robustY = FALSE, pearsonFallback = "none",
                info = paste(info, "quick", q), warnings = FALSE)
    check_bicor(y, x[, -9], use = "p", quick = q, maxPOutliers = 0.05,
                info = paste(info, "quick", q), warnings = FALSE)
  }
})

test_that("pearsonFallback = \"all\" with NA: WGCNA recomputes the pairs as Pearson", {
  skip_if_not_installed("WGCNA")
  # A zero-MAD column makes WGCNA prepare all of x as Pearson's, and the
  # pairs recomputed on their common rows are then Pearson's too: the
  # result is stats::cor(x, use = "pairwise.complete.obs").
  x <- cbind(a = c(-0.62, 0.18, -0.84, rep(NA, 9)),
             b = c(0.75, 0.75, 1.25, rep(0.75, 5), NA, -0.3, 1.6, 0.4),
             c = c(1.51, 0.39, -0.62, -2.21, 1.12, -0.04, -0.02, 0.94, 0.82, 0.59, 0.92, 0.78))
  check_bicor(x, use = "p", pearsonFallback = "all", info = "fixed data")
  expect_equal(suppressWarnings(WGCNA::bicor(x, use = "p", pearsonFallback = "all")),
               stats::cor(x, use = "p"), tolerance = 1e-12)
  # the same with random data, quick = 0 and 0.5
  info <- new_seed()
  x <- bicor_data(30, 10)[, -5]
  x[sample.int(length(x), 25)] <- NA
  x[4:30, 6] <- NA
  for (q in c(0, 0.5))
    check_bicor(x, use = "p", pearsonFallback = "all", quick = q, info = paste(info, "quick", q))
})

test_that("a constant column of 0.7 on 3 rows is NA, where WGCNA's rounding gives 0", {
  skip_if_not_installed("WGCNA")
  # WGCNA's Pearson preparation (prepareColCor: a one-pass
  # sqrt(sum(x^2) - n mean^2) in long double) does not come out as exactly
  # 0 for this column, so WGCNA's bicor and cor give it correlations 0 (its
  # diagonal too); it gives NA for 2.5 on 3 rows, or for 0.7 on 10 rows.
  # gpucor (two-pass) sees a constant column and gives NA, as WGCNA does
  # for the constant columns it recognises and as stats::cor does; the
  # other pairs are WGCNA's.
  x <- cbind(c(0.7, 0.7, 0.7), c(0.1, -1.2, 0.5), c(2, 1, 0.25))
  want <- suppressWarnings(WGCNA::bicor(x))
  wadj <- WGCNA::adjacency(x, power = 2, corFnc = WGCNA::cor, corOptions = list(use = "p"))
  for (be in backends) {
    got <- suppressWarnings(gpu_bicor(x, backend = be))
    expect_true(all(is.na(got[1, ])) && all(is.na(got[, 1])), info = be)
    expect_wgcna_equal(got[-1, -1], want[-1, -1], 1e-10, paste("gpu_bicor(0.7 x 3)", be),
                       "fixed data")
    adj <- gpu_adjacency(x, power = 2, backend = be)
    expect_true(all(is.na(adj[1, ])) && all(is.na(adj[, 1])), info = be)
    expect_wgcna_equal(adj[-1, -1], wadj[-1, -1], 1e-10, paste("gpu_adjacency(0.7 x 3)", be),
                       "fixed data")
  }
  x[, 1] <- 2.5
  check_bicor(x, info = "fixed data")
})

test_that("gpu_bicor on 1, 2 and 3 samples matches WGCNA::bicor", {
  skip_if_not_installed("WGCNA")
  info <- new_seed()
  for (n in 1:3) {
    x <- rmat(n, 5)
    check_bicor(x, info = paste(info, "n", n))
    check_bicor(x, rmat(n, 3), info = paste(info, "n", n))
    for (fb in c("none", "all")) check_bicor(x, pearsonFallback = fb, info = paste(info, "n", n))
  }
})

test_that("gpu_bicor on data offset by 1e8 matches WGCNA::bicor", {
  skip_if_not_installed("WGCNA")
  info <- new_seed()
  x <- rmat(40, 8, offset = 1e8)
  # both lose the same digits: compare to 1e-8 relative
  check_bicor(x, info = info, tol = 1e-8, rel = TRUE)
  check_bicor(x, maxPOutliers = 0.05, info = info, tol = 1e-8, rel = TRUE)
  # a zero-MAD column: WGCNA's one-pass Pearson fallback loses up to about
  # 1e-5 here, so compare with WGCNA on the same data without the offset
  x[, 3] <- 1e8 + c(rep(0.5, 25), stats::rnorm(15))
  want <- suppressWarnings(WGCNA::bicor(x - 1e8))
  for (be in backends) {
    got <- suppressWarnings(gpu_bicor(x, backend = be))
    expect_wgcna_equal(got, want, 1e-8, sprintf("gpu_bicor(x + 1e8, backend = \"%s\")", be),
                       info, rel = TRUE)
  }
})

test_that("gpu_bicor of vectors is WGCNA::bicor's one-column matrices (issue 32)", {
  skip_if_not_installed("WGCNA")
  info <- new_seed()
  a <- stats::rnorm(25); b <- stats::rnorm(25); m <- rmat(25, 3)
  a[3] <- 10                                    # an outlier: bicor differs from cor
  for (be in backends) for (args in list(list(a, b), list(a), list(m, b), list(a, m),
                                         list(as.integer(round(a)), b))) {
    got <- do.call(gpu_bicor, c(args, backend = be))
    want <- do.call(WGCNA::bicor, args)
    expect_identical(dim(got), dim(want), info = info)
    expect_equal(got, want, tolerance = 1e-12, info = paste(be, info))
  }
})

test_that("gpu_bicor warns as WGCNA::bicor does, and keeps dimnames", {
  skip_if_not_installed("WGCNA")
  info <- new_seed()
  x <- bicor_data(30, 8)[, -c(5, 7, 8)]        # g01 g02 g03 g04 g06; g03 of zero MAD
  y <- rmat(30, 3, dimnames = list(NULL, c("a", "b", "c")))
  y[, 2] <- c(rep(4, 20), stats::rnorm(10))
  for (be in backends) {
    expect_warning(gpu_bicor(x, backend = be),
                   "bicor: zero MAD in variable 'x'. Pearson correlation was used for individual columns with zero (or missing) MAD.",
                   fixed = TRUE)
    expect_warning(gpu_bicor(x, pearsonFallback = "none", backend = be),
                   "bicor: zero MAD in variable 'x'. Some results will be NA.", fixed = TRUE)
    expect_warning(gpu_bicor(x, pearsonFallback = "all", backend = be),
                   "bicor: zero MAD in variable 'x'. Pearson correlation was used for entire variable.",
                   fixed = TRUE)
    expect_warning(gpu_bicor(x[, -3], y, backend = be),
                   "bicor: zero MAD in variable 'y'. Pearson correlation was used for individual columns with zero (or missing) MAD.",
                   fixed = TRUE)
    expect_no_warning(gpu_bicor(x[, -3], backend = be))
    r <- suppressWarnings(gpu_bicor(x, y, backend = be))
    expect_identical(dimnames(r), list(colnames(x), c("a", "b", "c")), info = info)
    expect_identical(dimnames(suppressWarnings(gpu_bicor(x, backend = be))),
                     list(colnames(x), colnames(x)), info = info)
    # unnamed input: WGCNA's result has no dimnames (NULL)
    xu <- unname(x[, -3])
    expect_identical(dimnames(gpu_bicor(xu, backend = be)), dimnames(WGCNA::bicor(xu)),
                     info = paste("gpu_bicor(unnamed x)", be, info))
    # data frames
    expect_identical(suppressWarnings(gpu_bicor(as.data.frame(x), backend = be)),
                     suppressWarnings(gpu_bicor(x, backend = be)), info = info)
  }
  # the warning on NA results of the pairwise recomputation, as WGCNA's
  # (two columns with one common row)
  xn <- rmat(30, 4)
  xn[, 1] <- c(stats::rnorm(3), rep(NA, 27))
  xn[1:2, 2] <- NA
  want <- suppressWarnings(WGCNA::bicor(xn, use = "p"))
  for (be in backends) {
    got <- capture_conditions(gpu_bicor(xn, use = "p", backend = be))
    expect_wgcna_equal(got$value, want, 1e-10, paste("gpu_bicor(xn, use = \"p\")", be), info)
    expect(any(grepl("Missing values generated in calculation of bicor", got$warnings,
                     fixed = TRUE)),
           sprintf("gpu_bicor(xn, use = \"p\", backend = \"%s\"): no \"Missing values\" %s. %s",
                   be, "warning", info))
  }
  # a zero MAD that only the common rows of a pair have (column 1 on rows
  # 1:3): WGCNA warns of it (and with "none" of the NA it makes), in x or y
  x3 <- rmat(30, 4)
  x3[1:3, 1] <- c(1, 1, 2)
  x3[4:30, 2] <- NA
  for (fb in c("individual", "none")) check_bicor(x3, use = "p", pearsonFallback = fb, info = info)
  y3 <- rmat(30, 2)
  y3[4:30, 1] <- NA
  check_bicor(x3[, -2], y3, use = "p", info = info)
  check_bicor(y3, x3[, -2], use = "p", info = info)
  # WGCNA's pairwise pass (threadSlowCalcBicor2) keeps one zeroMAD flag for
  # both columns of a pair, and a Pearson column (robustY = FALSE) does not
  # reset it: when both are recomputed and x's has zero MAD, it warns of y
  # too.  gpucor does not copy that: the values are WGCNA's, the warning
  # names x only.
  y3[4:29, 1] <- NA
  y3[30, 1] <- 0.3
  x3[30, 1] <- NA
  check_bicor(x3[, 1, drop = FALSE], y3, use = "p", robustY = FALSE, info = info,
              warnings = FALSE)
  for (be in backends)
    expect_warning(gpu_bicor(x3[, 1, drop = FALSE], y3, use = "p", robustY = FALSE, backend = be),
                   "zero MAD in variable 'x'", fixed = TRUE)
})

# --- gpu_adjacency -----------------------------------------------------------

test_that("gpu_adjacency matches WGCNA::adjacency for every type and corType", {
  skip_if_not_installed("WGCNA")
  info <- new_seed()
  x <- rmat(35, 20, dimnames = list(NULL, paste0("gene", 1:20)))
  x[, 4] <- round(2 * x[, 4]) / 2
  x[2, 6] <- 30
  xna <- x
  xna[sample.int(length(x), 50)] <- NA
  xc <- xna
  xc[, 7] <- 1.25
  xc[3, 7] <- NA
  for (d in list(list(x, "plain"), list(xna, "NA"), list(xc, "NA + constant"))) {
    for (ty in network_types) for (ct in c("pearson", "bicor", "spearman"))
      for (pw in c(2.5, 6)) {
        want <- suppressWarnings(wgcna_adjacency(d[[1]], pw, ty, ct))
        for (be in backends) {
          what <- sprintf(paste("gpu_adjacency(%s data, power = %g, type = \"%s\",",
                                "corType = \"%s\", backend = \"%s\")"), d[[2]], pw, ty, ct, be)
          got <- suppressWarnings(gpu_adjacency(d[[1]], power = pw, type = ty, corType = ct,
                                                backend = be))
          expect_wgcna_equal(got, want, 1e-10, what, info)
          expect(identical(dimnames(got), dimnames(want)),
                 sprintf("%s: dimnames differ. %s", what, info))
        }
      }
  }
})

test_that("gpu_adjacency of unnamed data has WGCNA's (NULL) dimnames", {
  skip_if_not_installed("WGCNA")
  info <- new_seed()
  x <- rmat(20, 6)
  want <- wgcna_adjacency(x, 6, "unsigned", "pearson")
  for (be in backends)
    expect_identical(dimnames(gpu_adjacency(x, backend = be)), dimnames(want),
                     info = paste("gpu_adjacency(unnamed x)", be, info))
})

test_that("gpu_adjacency passes bicor's options as WGCNA::adjacency's corOptions", {
  skip_if_not_installed("WGCNA")
  info <- new_seed()
  x <- bicor_data(40, 10)[, -5]
  x[sample.int(length(x), 20)] <- NA
  for (fb in c("individual", "none")) for (q in c(0, 0.5)) {
    want <- suppressWarnings(WGCNA::adjacency(
      x, power = 3, type = "signed", corFnc = WGCNA::bicor,
      corOptions = list(use = "p", maxPOutliers = 0.1, quick = q, pearsonFallback = fb)))
    for (be in backends) {
      got <- suppressWarnings(gpu_adjacency(x, power = 3, type = "signed", corType = "bicor",
                                            maxPOutliers = 0.1, quick = q,
                                            pearsonFallback = fb, backend = be))
      expect_wgcna_equal(got, want, 1e-10, sprintf("gpu_adjacency(bicor, %s, quick %g, %s)",
                                                  fb, q, be), info)
    }
  }
})

# --- gpu_tom -----------------------------------------------------------------

test_that("gpu_tom matches WGCNA::TOMsimilarityFromExpr: every network, TOM type, denominator", {
  skip_if_not_installed("WGCNA")
  info <- new_seed()
  x <- rmat(30, 25)
  x[, 3] <- round(4 * x[, 3]) / 4
  x[4, 9] <- 12
  for (ct in c("pearson", "bicor")) for (nt in network_types) for (tt in tom_types)
    for (dn in c("min", "mean")) {
      want <- WGCNA::TOMsimilarityFromExpr(x, corType = ct, power = 4, networkType = nt,
                                           TOMType = tt, TOMDenom = dn, verbose = 0)
      for (be in backends) {
        what <- sprintf(paste("gpu_tom(corType = \"%s\", networkType = \"%s\", TOMType = \"%s\",",
                              "TOMDenom = \"%s\", backend = \"%s\")"), ct, nt, tt, dn, be)
        got <- gpu_tom(x, power = 4, networkType = nt, TOMType = tt, TOMDenom = dn,
                       corType = ct, backend = be)
        expect_wgcna_equal(got, want, 1e-10, what, info)
      }
    }
  # the defaults (power 6, signed TOM of an unsigned network), non-integer power
  for (be in backends) {
    expect_wgcna_equal(gpu_tom(x, backend = be),
                       WGCNA::TOMsimilarityFromExpr(x, verbose = 0), 1e-10,
                       sprintf("gpu_tom(x) defaults, %s", be), info)
    expect_wgcna_equal(gpu_tom(x, power = 2.5, TOMType = "unsigned", backend = be),
                       WGCNA::TOMsimilarityFromExpr(x, power = 2.5, TOMType = "unsigned",
                                                    verbose = 0), 1e-10,
                       sprintf("gpu_tom(x, power = 2.5), %s", be), info)
    expect_wgcna_equal(gpu_tom(x, corType = "bicor", maxPOutliers = 0.05, backend = be),
                       WGCNA::TOMsimilarityFromExpr(x, corType = "bicor", maxPOutliers = 0.05,
                                                    verbose = 0), 1e-10,
                       sprintf("gpu_tom(x, bicor, maxPOutliers = 0.05), %s", be), info)
  }
})

test_that("gpu_tom(dist = TRUE) is as.dist(1 - TOM) of WGCNA, with Size and Labels", {
  skip_if_not_installed("WGCNA")
  info <- new_seed()
  x <- rmat(30, 20)
  for (tt in c("signed", "unsigned", "signed Nowick 2", "none")) for (nm in c(FALSE, TRUE)) {
    xx <- if (nm) `colnames<-`(x, paste0("g", 1:20)) else x
    want <- stats::as.dist(1 - WGCNA::TOMsimilarityFromExpr(xx, TOMType = tt, verbose = 0))
    for (be in backends) {
      what <- sprintf("gpu_tom(TOMType = \"%s\", dist = TRUE, backend = \"%s\")", tt, be)
      got <- gpu_tom(xx, TOMType = tt, dist = TRUE, backend = be)
      expect_s3_class(got, "dist")
      expect_wgcna_equal(as.vector(got), as.vector(want), 1e-10, what, info)
      expect_identical(attr(got, "Size"), attr(want, "Size"), info = paste(what, info))
      expect_identical(attr(got, "Labels"), if (nm) colnames(xx) else NULL,
                       info = paste(what, info))
      expect_identical(as.vector(got), as.vector(stats::as.dist(1 - gpu_tom(xx, TOMType = tt,
                                                                          backend = be))),
                       info = paste(what, info))
    }
  }
})

test_that("gpu_tom(adjacency = A) matches WGCNA::TOMsimilarity", {
  skip_if_not_installed("WGCNA")
  info <- new_seed()
  x <- rmat(30, 22, dimnames = list(NULL, paste0("g", 1:22)))
  r <- stats::cor(x)
  A <- abs(r)^3
  An <- A
  An[2, 5] <- An[5, 2] <- NA                     # NA counts as 0
  As <- sign(r) * abs(r)^3                       # a signed adjacency
  # (TOMsimilarity calls gc(), about 0.4 s a call: its results are made once;
  # it sets the diagonal of its argument to 1 in place, so it gets a copy)
  cases <- list()
  for (tt in tom_types[-1]) for (dn in c("min", "mean"))
    cases[[length(cases) + 1L]] <- list(a = A, tt = tt, dn = dn, what = "A")
  for (tt in c("unsigned", "signed Nowick 2"))
    cases[[length(cases) + 1L]] <- list(a = An, tt = tt, dn = "min", what = "A with NA")
  for (dn in c("min", "mean"))
    cases[[length(cases) + 1L]] <- list(a = As, tt = "signed", dn = dn, what = "signed A")
  for (cs in cases) {
    want <- WGCNA::TOMsimilarity(cs$a + 0, TOMType = cs$tt, TOMDenom = cs$dn, verbose = 0)
    for (be in backends) {
      a0 <- cs$a + 0
      got <- gpu_tom(adjacency = cs$a, TOMType = cs$tt, TOMDenom = cs$dn, backend = be)
      what <- sprintf("gpu_tom(adjacency = %s, TOMType = \"%s\", TOMDenom = \"%s\", %s)",
                      cs$what, cs$tt, cs$dn, be)
      expect_wgcna_equal(got, want, 1e-10, what, info)
      expect_identical(dimnames(got), dimnames(cs$a), info = what)
      expect_identical(cs$a, a0, info = paste(what, "changed its input"))
      # the default TOMType from an adjacency is "unsigned", as TOMsimilarity's
      if (cs$tt == "unsigned" && cs$dn == "min")
        expect_identical(gpu_tom(adjacency = cs$a, backend = be), got, info = what)
    }
  }
})

test_that("gpu_tom with NA data (pairwise) matches WGCNA::TOMsimilarityFromExpr", {
  skip_if_not_installed("WGCNA")
  info <- new_seed()
  x <- rmat(40, 20, na = 0.06)
  for (ct in c("pearson", "bicor")) for (tt in c("signed", "unsigned", "signed 2", "none"))
    for (nt in c("unsigned", "signed hybrid")) {
      want <- WGCNA::TOMsimilarityFromExpr(x, corType = ct, networkType = nt, TOMType = tt,
                                           power = 5, verbose = 0)
      for (be in backends)
        expect_wgcna_equal(gpu_tom(x, corType = ct, networkType = nt, TOMType = tt, power = 5,
                                   backend = be), want, 1e-10,
                           sprintf("gpu_tom(NA data, %s, %s, %s, %s)", ct, nt, tt, be), info)
    }
})

test_that("gpu_tom with a constant gene gives WGCNA's NA pattern and a warning", {
  skip_if_not_installed("WGCNA")
  info <- new_seed()
  x <- rmat(30, 12)
  x[, 4] <- 0.5
  for (ct in c("pearson", "bicor")) for (tt in c("signed", "unsigned", "signed Nowick 2"))
    for (be in backends) {
      want <- WGCNA::TOMsimilarityFromExpr(x, corType = ct, TOMType = tt, verbose = 0)
      what <- sprintf("gpu_tom(constant gene, %s, %s, %s)", ct, tt, be)
      if (ct == "pearson") {
        expect_warning(got <- gpu_tom(x, corType = ct, TOMType = tt, backend = be),
                       "with NA adjacencies", fixed = TRUE)
      } else {
        # (bicor also warns of the constant gene's zero MAD)
        cc <- capture_conditions(gpu_tom(x, corType = ct, TOMType = tt, backend = be))
        got <- cc$value
        expect(any(grepl("with NA adjacencies", cc$warnings, fixed = TRUE)),
               sprintf("%s: no NA warning. %s", what, info))
      }
      expect_wgcna_equal(got, want, 1e-10, what, info)
      expect_true(all(diag(got) == 1), info = what)
    }
  # the adjacency (TOMType "none") has NA only in the constant gene's row
  # and column, as WGCNA's
  for (be in backends)
    expect_wgcna_equal(gpu_tom(x, TOMType = "none", backend = be),
                       WGCNA::TOMsimilarityFromExpr(x, TOMType = "none", verbose = 0), 1e-10,
                       sprintf("gpu_tom(constant gene, none, %s)", be), info)
})

test_that("small tiles and panels give the values of the default ones", {
  skip_if_not_installed("WGCNA")
  info <- new_seed()
  x <- rmat(33, 23, dimnames = list(NULL, paste0("g", 1:23)))
  xn <- x
  xn[sample.int(length(x), 30)] <- NA
  run <- function(be) list(
    tom = gpu_tom(x, backend = be),
    tom_u2 = gpu_tom(xn, TOMType = "unsigned 2", TOMDenom = "mean", backend = be),
    tom_b = gpu_tom(x, corType = "bicor", networkType = "signed", TOMType = "signed Nowick",
                    backend = be),
    tom_d = gpu_tom(x, dist = TRUE, backend = be),
    tom_a = gpu_tom(adjacency = abs(stats::cor(x))^4, backend = be),
    adj = gpu_adjacency(xn, power = 3, type = "signed hybrid", backend = be),
    bic = gpu_bicor(x, backend = be),
    sft = gpu_soft_threshold(xn, powerVector = 1:6, backend = be)$fitIndices)
  want <- list(
    tom = WGCNA::TOMsimilarityFromExpr(x, verbose = 0),
    tom_u2 = WGCNA::TOMsimilarityFromExpr(xn, TOMType = "unsigned 2", TOMDenom = "mean",
                                          verbose = 0),
    tom_b = WGCNA::TOMsimilarityFromExpr(x, corType = "bicor", networkType = "signed",
                                         TOMType = "signed Nowick", verbose = 0))
  for (be in backends) {
    def <- run(be)
    small <- (function() {
      op <- options(gpucor.cpu_tile = 7, gpucor.gpu_slab = 5)
      on.exit(options(op))
      run(be)
    })()
    for (k in names(def)) {
      what <- sprintf("%s with small tiles, %s", k, be)
      # (the connectivities of gpu_soft_threshold are sums whose order
      # follows the tiles: equal to rounding only)
      if (be == "cpu" && k != "sft")
        expect_identical(small[[k]], def[[k]], info = paste(what, info))
      else expect_wgcna_equal(if (k == "sft") as.matrix(small[[k]]) else small[[k]],
                              if (k == "sft") as.matrix(def[[k]]) else def[[k]],
                              1e-12, what, info)
    }
    for (k in names(want))
      expect_wgcna_equal(small[[k]], want[[k]], 1e-10,
                         sprintf("%s small tiles vs WGCNA, %s", k, be), info)
  }
})

# --- gpu_soft_threshold ------------------------------------------------------

test_that("gpu_soft_threshold matches WGCNA::pickSoftThreshold on module data", {
  skip_if_not_installed("WGCNA")
  info <- new_seed()
  x <- module_data()
  found <- FALSE
  for (nt in network_types) for (ct in c("pearson", "bicor")) {
    want <- wgcna_pick(x, corType = ct, networkType = nt)
    found <- found || !is.na(want$powerEstimate)
    for (be in backends)
      check_pick(gpu_soft_threshold(x, networkType = nt, corType = ct, backend = be), want,
                 sprintf("gpu_soft_threshold(networkType = \"%s\", corType = \"%s\", %s)",
                         nt, ct, be), info)
  }
  # the data are built so that WGCNA estimates a power somewhere
  expect(found, paste("WGCNA's powerEstimate is NA everywhere: the test data are too weak.", info))
})

test_that("powerEstimate and Power have WGCNA's type", {
  skip_if_not_installed("WGCNA")
  # WGCNA's powerEstimate is powerVector[index], so NA_real_ for the default
  # (double) powerVector and an integer for an integer one; its Power column
  # is powerVector.
  info <- new_seed()
  x <- module_data(40, 60, 3)
  for (pv in list(c(1:10, seq(12, 20, 2)), 1:8)) for (cut in c(0.3, 1)) {
    want <- wgcna_pick(x, powerVector = pv, RsquaredCut = cut)
    for (be in backends) {
      what <- sprintf("gpu_soft_threshold(powerVector = %s, RsquaredCut = %g, backend = \"%s\")",
                      deparse(pv), cut, be)
      got <- gpu_soft_threshold(x, powerVector = pv, RsquaredCut = cut, backend = be)
      expect(identical(got$powerEstimate, want$powerEstimate),
             sprintf("%s: powerEstimate %s, WGCNA %s. %s", what,
                     deparse(got$powerEstimate), deparse(want$powerEstimate), info))
      expect(identical(got$fitIndices$Power, want$fitIndices$Power),
             sprintf("%s: Power %s, WGCNA %s. %s", what, deparse(got$fitIndices$Power),
                     deparse(want$fitIndices$Power), info))
    }
  }
})

test_that("gpu_soft_threshold options: moreNetworkConcepts, removeFirst, powers, nBreaks, NA", {
  skip_if_not_installed("WGCNA")
  info <- new_seed()
  x <- module_data(50, 120, 3)
  xn <- x
  xn[sample.int(length(x), round(0.03 * length(x)))] <- NA
  cases <- list(
    list(x = x, args = list(networkType = "signed", moreNetworkConcepts = TRUE),
         what = "more concepts"),
    list(x = x, args = list(networkType = "signed hybrid", removeFirst = TRUE),
         what = "removeFirst"),
    list(x = x, args = list(powerVector = c(1.5, 3, 2), moreNetworkConcepts = TRUE),
         what = "powerVector c(1.5, 3, 2)"),
    list(x = x, args = list(powerVector = c(4, 1:3, 7.25), nBreaks = 8, removeFirst = TRUE),
         what = "nBreaks 8"),
    list(x = x, args = list(RsquaredCut = 0.5, nBreaks = 8), what = "RsquaredCut 0.5"),
    list(x = xn, args = list(moreNetworkConcepts = TRUE), what = "NA"),
    list(x = xn, args = list(networkType = "signed"), what = "NA signed"),
    list(x = xn, args = list(networkType = "signed hybrid", powerVector = c(2.5, 1, 6)),
         what = "NA signed hybrid"))
  for (cs in cases) for (ct in c("pearson", "bicor")) {
    want <- do.call(wgcna_pick, c(list(cs$x, corType = ct), cs$args))
    for (be in backends) {
      got <- do.call(gpu_soft_threshold, c(list(cs$x, corType = ct, backend = be), cs$args))
      check_pick(got, want, sprintf("gpu_soft_threshold(%s, %s, %s)", cs$what, ct, be), info)
    }
  }
})

# --- bad inputs --------------------------------------------------------------

test_that("bad powers and options give clear errors", {
  skip_if_not_installed("WGCNA")
  x <- rmat(20, 6)
  for (pw in list(-1, 0, NA, NA_real_, "6", c(2, 3), Inf, NULL)) {
    expect_error(gpu_adjacency(x, power = pw, backend = "cpu"),
                 "'power' must be one positive number")
    expect_error(gpu_tom(x, power = pw, backend = "cpu"), "'power' must be one positive number")
  }
  for (pv in list(c(1, -2), c(1, NA), "3", numeric(0), c(2, Inf), 0))
    expect_error(gpu_soft_threshold(x, powerVector = pv, backend = "cpu"),
                 "'powerVector' must hold positive numbers")
  expect_error(gpu_adjacency(x, type = "distanse"), "'type' must be one of")
  expect_error(gpu_adjacency(x, type = NA), "'type' must be one of")
  expect_error(gpu_tom(x, networkType = "unsinged"), "'networkType' must be one of")
  expect_error(gpu_soft_threshold(x, networkType = "distance"), "'networkType' must be one of")
  expect_error(gpu_tom(x, TOMType = "nowick"), "'TOMType' must be one of")
  expect_error(gpu_tom(x, TOMType = c("signed", "unsigned")), "'TOMType' must be one of")
  expect_error(gpu_tom(x, TOMDenom = "max"), "'TOMDenom' must be one of")
  expect_error(gpu_adjacency(x, corType = "kendall"), "'corType' must be one of")
  expect_error(gpu_tom(x, corType = "spearman"), "'corType' must be one of")
  expect_error(gpu_soft_threshold(x, corType = "kendall"), "'corType' must be one of")
  expect_error(gpu_bicor(x, pearsonFallback = "some"), "'pearsonFallback' must be one of")
  expect_error(gpu_adjacency(x, corType = "bicor", pearsonFallback = "x"),
               "'pearsonFallback' must be one of")
  expect_error(gpu_tom(x, pearsonFallback = 1), "'pearsonFallback' must be one of")
  expect_error(gpu_bicor(x, use = "everything"), "'use' must be one of")
  for (mp in list(0, -0.1, 1.5, NA, "0.5", c(0.1, 0.2))) {
    expect_error(gpu_bicor(x, maxPOutliers = mp), "'maxPOutliers' must be a number in \\(0, 1\\]")
    expect_error(gpu_adjacency(x, maxPOutliers = mp),
                 "'maxPOutliers' must be a number in \\(0, 1\\]")
    expect_error(gpu_tom(x, maxPOutliers = mp), "'maxPOutliers' must be a number in \\(0, 1\\]")
    expect_error(gpu_soft_threshold(x, maxPOutliers = mp),
                 "'maxPOutliers' must be a number in \\(0, 1\\]")
  }
  expect_error(gpu_bicor(x, quick = -1), "'quick' must be a number >= 0")
  expect_error(gpu_tom(x, quickCor = NA), "'quick' must be a number >= 0")
  expect_error(gpu_bicor(x, robustX = NA), "'robustX' must be TRUE or FALSE")
  expect_error(gpu_bicor(x, x, robustY = "yes"), "'robustY' must be TRUE or FALSE")
  expect_error(gpu_tom(x, dist = NA), "'dist' must be TRUE or FALSE")
  expect_error(gpu_soft_threshold(x, nBreaks = 3), "'nBreaks' must be a whole number of at least 4")
  expect_error(gpu_soft_threshold(x, RsquaredCut = NA), "'RsquaredCut' must be a number")
  expect_error(gpu_soft_threshold(x[, 1:2]), "at least 3 genes")
  expect_error(gpu_tom(x[1, , drop = FALSE]), "at least 2 samples")
  expect_error(gpu_bicor(x, rmat(19, 2)), "'x' and 'y' must have the same number of rows")
  expect_error(gpu_bicor(matrix(letters[1:12], 6)), "'x' must be numeric")
  expect_error(gpu_tom(matrix(letters[1:12], 6)), "'datExpr' must be numeric")
  expect_error(gpu_adjacency(list(1, 2)), "'datExpr' must be a matrix")
})

test_that("missing values with use = \"all.obs\" are errors", {
  skip_if_not_installed("WGCNA")
  x <- rmat(20, 5)
  x[3, 2] <- NA
  y <- rmat(20, 3)
  expect_error(gpu_bicor(x), "missing values in 'x'")
  expect_error(gpu_bicor(x, use = "all.obs"), "missing values in 'x'")
  expect_error(gpu_bicor(y, x), "missing values in 'y'")
  expect_error(gpu_adjacency(x, use = "all.obs"), "missing observations")
  expect_error(gpu_soft_threshold(x, use = "all.obs"), "missing observations")
  expect_error(gpu_adjacency(x, use = "complete.obs"), "'use' must be \"pairwise.complete.obs\"")
  # but they go through without NA
  expect_no_error(gpu_adjacency(y, use = "all.obs", backend = "cpu"))
  expect_no_error(gpu_bicor(y, use = "all.obs", backend = "cpu"))
})

test_that("bad adjacencies and x/adjacency combinations give clear errors", {
  skip_if_not_installed("WGCNA")
  A <- abs(stats::cor(rmat(20, 5)))^2
  expect_error(gpu_tom(adjacency = A[, 1:4]), "'adjacency' must be square, not 5 x 4")
  B <- A
  B[1, 2] <- B[1, 2] + 0.01
  expect_error(gpu_tom(adjacency = B), "'adjacency' is not symmetric")
  C <- A
  C[1, 2] <- C[2, 1] <- 1.2
  expect_error(gpu_tom(adjacency = C), "'adjacency' has values outside \\[0, 1\\]")
  expect_error(gpu_tom(adjacency = C, TOMType = "signed"),
               "'adjacency' has values outside \\[-1, 1\\]")
  S <- A
  S[1, 2] <- S[2, 1] <- -0.3
  for (tt in c("unsigned", "signed Nowick", "unsigned 2", "signed 2", "signed Nowick 2"))
    expect_error(gpu_tom(adjacency = S, TOMType = tt),
                 "outside \\[0, 1\\] \\(negative adjacencies need TOMType = \"signed\"\\)")
  expect_no_error(gpu_tom(adjacency = S, TOMType = "signed", backend = "cpu"))
  expect_error(gpu_tom(adjacency = A, TOMType = "none"), "'TOMType' cannot be \"none\"")
  expect_error(gpu_tom(adjacency = as.character(A)), "'adjacency' must be a matrix")
  expect_error(gpu_tom(adjacency = matrix(letters[1:4], 2)), "'adjacency' must be numeric")
  expect_error(gpu_tom(rmat(20, 5), adjacency = A),
               "give either 'datExpr' \\(expression data\\) or 'adjacency'")
  expect_error(gpu_tom(), "give either 'datExpr' \\(expression data\\) or 'adjacency'")
})

test_that("gpu_cor_edges(method = \"bicor\") keeps WGCNA::bicor's pairs, with Student p-values", {
  skip_if_not_installed("WGCNA")
  info <- new_seed()
  x <- rmat(40, 30)
  x[, 2] <- x[, 1] + stats::rnorm(40, sd = 0.5)
  x[3, 4] <- 25
  b <- WGCNA::bicor(x)
  for (be in backends) {
    e <- gpu_cor_edges(x, method = "bicor", threshold = 0.3, p_value = TRUE, backend = be)
    want <- which(abs(b) >= 0.3 & upper.tri(b), arr.ind = TRUE)
    want <- want[order(want[, 1], want[, 2]), , drop = FALSE]
    expect_equal(unname(cbind(e$row, e$col)), unname(want), info = paste(be, info))
    expect_equal(e$cor, b[cbind(e$row, e$col)], tolerance = 1e-10, info = paste(be, info))
    expect_equal(e$p.value, WGCNA::corPvalueStudent(b[cbind(e$row, e$col)], 40),
                 tolerance = 1e-10, info = paste(be, info))
    k <- gpu_cor_edges(x, method = "bicor", top_k = 1, backend = be)
    expect_true(all(c(1, 2) %in% c(k$row[k$col == 2], k$col[k$row == 1])), info = be)
  }
  xn <- x
  xn[1, 1] <- NA
  expect_error(gpu_cor_edges(xn, method = "bicor", threshold = 0.3), "without NA")
})

test_that("gpu_tom(verbose = TRUE) names the one GPU it ran on (issue 32)", {
  skip_if_no_gpu()
  x <- rmat(20, 30)
  for (dv in list(c(0L, 0L), "all")) {
    msgs <- character()
    withCallingHandlers(gpu_tom(x, backend = "gpu", devices = dv, verbose = TRUE),
                        message = function(m) {
                          msgs <<- c(msgs, conditionMessage(m)); invokeRestart("muffleMessage") })
    tom <- grep("^gpu_tom: GPU engine", msgs, value = TRUE)
    expect_length(tom, 1L)
    expect_match(tom, "on GPU 0 (", fixed = TRUE)
    expect_false(grepl("GPU 0 .*, GPU", tom))          # one GPU named
    expect_match(tom, "gpu_tom() uses one GPU, the first of 'devices'", fixed = TRUE)
  }
})
