# gpu_cor_edges() and gpu_knn() against brute force: cor() + which()/order(),
# cor.test() per pair, p.adjust(, "BH"), dist() + order().  Every case runs
# on the CPU engine, and on the GPU where one is usable (tools/device.sh).

backends <- function() if (isTRUE(as.vector(gpucor::gpu_available()))) c("cpu", "gpu") else "cpu"

# Every pair of the correlations with its p-value from cor.test(exact = FALSE)
# on the rows the correlation used, and its number of observations.  The
# values are gpu_cor()'s on the same engine (which the other tests hold to
# stats::cor()), so that ties in strength are ties here too.
all_pairs <- function(x, y, method, use, backend = "cpu") {
  r <- suppressWarnings(gpu_cor(x, y, method = method, use = use, backend = backend))
  r0 <- suppressWarnings(stats::cor(x, y, method = method, use = use))
  expect_equal(r, r0, tolerance = 1e-10)
  sym <- is.null(y)
  yy <- if (sym) x else y
  idx <- if (sym) which(upper.tri(r), arr.ind = TRUE) else
    which(matrix(TRUE, nrow(r), ncol(r)), arr.ind = TRUE)
  d <- data.frame(row = idx[, 1], col = idx[, 2], cor = r[idx])
  d <- d[order(d$row, d$col), ]
  rows <- seq_len(nrow(x))
  if (use %in% c("complete.obs", "na.or.complete"))
    rows <- which(if (sym) stats::complete.cases(x) else stats::complete.cases(x, y))
  test <- function(i, j) {
    a <- x[rows, i]; b <- yy[rows, j]
    list(n = sum(!is.na(a) & !is.na(b)),
         p = tryCatch(suppressWarnings(
           stats::cor.test(a, b, method = method, exact = FALSE)$p.value),
           error = function(e) NA_real_))
  }
  t <- mapply(test, d$row, d$col, SIMPLIFY = FALSE)
  d$n <- vapply(t, `[[`, 1, "n")
  d$p <- vapply(t, `[[`, 1, "p")
  d$p[is.na(d$cor)] <- NA
  rownames(d) <- NULL
  d
}

# What gpu_cor_edges() should keep of the pairs d.
edges_ref <- function(d, sym, threshold = NULL, top_k = NULL, density = NULL,
                      fdr = NULL, absolute = TRUE) {
  s <- if (absolute) abs(d$cor) else d$cor
  keep <- !is.na(d$cor)
  d$fdr <- stats::p.adjust(d$p, "BH")
  if (!is.null(fdr)) keep <- keep & !is.na(d$fdr) & d$fdr <= fdr
  if (!is.null(threshold)) keep <- keep & s >= threshold
  if (!is.null(density)) {
    D <- round(density * nrow(d))
    cand <- which(keep)
    o <- cand[order(-s[cand], d$row[cand], d$col[cand])]
    keep[] <- FALSE
    keep[utils::head(o, D)] <- TRUE
  }
  if (!is.null(top_k)) {
    cand <- which(keep)
    ends <- rbind(data.frame(var = d$row[cand], partner = d$col[cand], pair = cand),
                  data.frame(var = if (sym) d$col[cand] else -d$col[cand],
                             partner = d$row[cand], pair = cand))
    ends$s <- s[ends$pair]
    ends <- ends[order(ends$var, -ends$s, ends$partner), ]
    rank <- stats::ave(seq_along(ends$var), ends$var, FUN = seq_along)
    keep[] <- FALSE
    keep[ends$pair[rank <= top_k]] <- TRUE
  }
  d[keep, ]
}

expect_edges <- function(got, want, info, tol = 1e-10, p = FALSE, fdr = FALSE,
                         n = FALSE) {
  expect_identical(got$row, as.integer(want$row), info = info)
  expect_identical(got$col, as.integer(want$col), info = info)
  if (!identical(got$row, as.integer(want$row)) ||
      !identical(got$col, as.integer(want$col))) return(invisible())
  expect_equal(got$cor, want$cor, tolerance = tol, info = info)
  if (p) expect_equal(got$p.value, want$p, tolerance = 1e-8, info = info)
  if (fdr) expect_equal(got$fdr, want$fdr, tolerance = 1e-8, info = info)
  if (n) expect_identical(got$n, as.integer(want$n), info = info)
}

test_that("every criterion matches brute force, for every method, use and backend", {
  info <- new_seed()
  x <- rmat(37, 23)
  x[, 2] <- x[, 1] + stats::rnorm(37, sd = 0.4)   # strong pairs
  x[, 4] <- x[, 3]                                # a tie in |r| with others
  x[, 7] <- -x[, 3]
  x[, 9] <- round(x[, 9])                         # ties within a column
  xna <- x
  xna[sample.int(length(x), 25)] <- NA
  crits <- list(list(threshold = 0.3), list(fdr = 0.2), list(density = 0.03),
                list(top_k = 2), list(fdr = 0.3, top_k = 1),
                list(threshold = 0.2, density = 0.01), list(top_k = 3, threshold = 0.25),
                list(density = 0.05, absolute = FALSE), list(threshold = 0.1, absolute = FALSE),
                list(top_k = 2, absolute = FALSE))
  for (method in c("pearson", "spearman", "kendall")) {
    for (use in c("everything", "complete.obs", "pairwise.complete.obs")) {
      xx <- if (use == "everything") x else xna
      for (b in backends()) {
        d <- all_pairs(xx, NULL, method, use, b)
        for (cr in crits) {
          want <- do.call(edges_ref, c(list(d, TRUE), cr))
          lab <- paste(method, use, b, deparse(cr), info)
          got <- do.call(gpu_cor_edges, c(list(xx, method = method, use = use,
                                               p_value = TRUE, backend = b), cr))
          expect_edges(got, want, lab, p = TRUE, fdr = !is.null(cr$fdr),
                       n = use == "pairwise.complete.obs")
          if (use == "pairwise.complete.obs") expect_true("n" %in% names(got), info = lab)
        }
      }
    }
  }
})

test_that("with y: pairs (column of x, column of y), top-k on both sides", {
  info <- new_seed()
  x <- rmat(29, 11, na = 0.03)
  y <- cbind(x[, 1:3] + rmat(29, 3) * 0.5, rmat(29, 6))
  for (method in c("pearson", "spearman", "kendall")) {
    for (b in backends()) {
      d <- all_pairs(x, y, method, "pairwise.complete.obs", b)
      for (cr in list(list(threshold = 0.3), list(fdr = 0.25), list(top_k = 2),
                      list(density = 0.1), list(fdr = 0.5, top_k = 1))) {
        want <- do.call(edges_ref, c(list(d, FALSE), cr))
        lab <- paste(method, b, deparse(cr), info)
        got <- do.call(gpu_cor_edges, c(list(x, y, method = method, p_value = TRUE,
                                             use = "pairwise.complete.obs", backend = b), cr))
        expect_edges(got, want, lab, p = TRUE, fdr = !is.null(cr$fdr), n = TRUE)
      }
    }
  }
})

test_that("the other use modes: all.obs and na.or.complete", {
  info <- new_seed()
  x <- rmat(31, 15)
  xna <- x
  xna[sample.int(length(x), 8)] <- NA
  for (method in c("pearson", "spearman", "kendall")) {
    for (b in backends()) {
      d <- all_pairs(x, NULL, method, "all.obs", b)
      want <- edges_ref(d, TRUE, fdr = 0.5, top_k = 2)
      got <- gpu_cor_edges(x, method = method, use = "all.obs", fdr = 0.5, top_k = 2, backend = b)
      expect_edges(got, want, paste(method, "all.obs", b, info), p = TRUE, fdr = TRUE)
      expect_error(gpu_cor_edges(xna, method = method, use = "all.obs", threshold = 0.1,
                                 backend = b), "missing observations")
      d <- all_pairs(xna, NULL, method, "na.or.complete", b)
      want <- edges_ref(d, TRUE, threshold = 0.2)
      got <- gpu_cor_edges(xna, method = method, use = "na.or.complete", threshold = 0.2,
                           p_value = TRUE, backend = b)
      expect_edges(got, want, paste(method, "na.or.complete", b, info), p = TRUE)
    }
  }
})

test_that("the FDR cut is exact when the histogram bins are refined", {
  info <- new_seed()
  x <- rmat(40, 60)
  x[, 31:60] <- x[, 1:30] + rmat(40, 30) * 0.8
  x[, 5] <- x[, 6]                                # tied p-values
  old <- Sys.getenv("GPUCOR_TEST_BIN_LIMIT")
  on.exit(Sys.setenv(GPUCOR_TEST_BIN_LIMIT = old))
  for (limit in c("", "3", "0")) {
    Sys.setenv(GPUCOR_TEST_BIN_LIMIT = limit)
    for (b in backends()) {
      d <- all_pairs(x, NULL, "pearson", "everything", b)
      for (q in c(0.001, 0.05, 0.5, 1)) {
        want <- edges_ref(d, TRUE, fdr = q)
        got <- gpu_cor_edges(x, fdr = q, backend = b)
        expect_edges(got, want, paste("limit", limit, "fdr", q, b, info), p = TRUE, fdr = TRUE)
        want <- edges_ref(d, TRUE, density = q)
        got <- gpu_cor_edges(x, density = q, backend = b)
        expect_edges(got, want, paste("limit", limit, "density", q, b, info))
      }
    }
  }
})

test_that("many candidates (the radix sorts) keep exact order and values", {
  info <- new_seed()
  x <- rmat(30, 85)
  x[, 40:85] <- x[, 1:46] + rmat(30, 46)
  x[, 12] <- x[, 11]
  for (b in backends()) {
    d <- all_pairs(x, NULL, "pearson", "everything", b)
    for (cr in list(list(threshold = 0), list(fdr = 1), list(density = 0.8),
                    list(density = 0.6, absolute = FALSE), list(fdr = 0.9, density = 0.5))) {
      want <- do.call(edges_ref, c(list(d, TRUE), cr))
      got <- do.call(gpu_cor_edges, c(list(x, backend = b, p_value = TRUE), cr))
      expect_edges(got, want, paste(b, deparse(cr), info), p = TRUE, fdr = !is.null(cr$fdr))
    }
  }
})

test_that("edges survive small tiles and panels, and single precision is close", {
  info <- new_seed()
  x <- rmat(33, 70, dimnames = list(NULL, paste0("g", 1:70)))
  old <- options(gpucor.cpu_tile = 7, gpucor.gpu_slab = 5)
  on.exit(options(old))
  for (b in backends()) {
    d <- all_pairs(x, NULL, "pearson", "everything", b)
    want <- edges_ref(d, TRUE, top_k = 3)
    got <- gpu_cor_edges(x, top_k = 3, backend = b)
    expect_edges(got, want, paste(b, info))
    expect_identical(got$from, paste0("g", want$row), info = info)
    expect_identical(got$to, paste0("g", want$col), info = info)
  }
  skip_if_no_gpu()
  d <- all_pairs(x, NULL, "pearson", "everything", "gpu")
  want <- edges_ref(d, TRUE, threshold = 0.3)
  got <- gpu_cor_edges(x, threshold = 0.3, backend = "gpu", precision = "single")
  # float values can move a pair across the threshold only within 1e-5 of
  # it: such pairs may be on either side, and are left out of both
  near <- paste(d$row, d$col)[abs(abs(d$cor) - 0.3) < 1e-5]
  gk <- paste(got$row, got$col)
  wk <- paste(want$row, want$col)
  expect_identical(gk[!gk %in% near], wk[!wk %in% near], info = info)
  expect_equal(got$cor[!gk %in% near], want$cor[!wk %in% near], tolerance = 1e-5, info = info)
})

test_that("edge cases: nothing passes, everything passes, k beyond ncol, NA columns", {
  info <- new_seed()
  x <- rmat(20, 8)
  x[, 3] <- 1                        # constant: NA correlations
  x[, 5] <- NA                       # NA everywhere in a column
  for (b in backends()) {
    lab <- paste(b, info)
    e <- suppressWarnings(gpu_cor_edges(x, threshold = 1, backend = b))
    expect_identical(nrow(e), 0L, info = lab)
    expect_identical(names(e), c("from", "to", "row", "col", "cor"), info = lab)
    e <- suppressWarnings(gpu_cor_edges(x, threshold = 0, backend = b))
    r <- suppressWarnings(cor(x))
    expect_identical(nrow(e), sum(!is.na(r[upper.tri(r)])), info = lab)
    expect_false(any(e$row %in% c(3, 5) | e$col %in% c(3, 5)), info = lab)
    e <- suppressWarnings(gpu_cor_edges(x, top_k = 100, backend = b))
    expect_identical(nrow(e), sum(!is.na(r[upper.tri(r)])), info = lab)
    expect_warning(gpu_cor_edges(x, threshold = 0.5, backend = b),
                   "the standard deviation is zero")
    e <- gpu_cor_edges(x[, -c(3, 5)], fdr = 1, backend = b)
    expect_identical(nrow(e), 15L, info = lab)
    expect_equal(e$fdr, stats::p.adjust(all_pairs(x[, -c(3, 5)], NULL, "pearson",
                                                  "everything")$p, "BH"), tolerance = 1e-8)
  }
  # one row, two rows: no correlation to keep (and p-values NA for Pearson n < 3)
  expect_identical(nrow(suppressWarnings(gpu_cor_edges(x[1, , drop = FALSE], threshold = 0))), 0L)
  e <- gpu_cor_edges(rmat(2, 4), threshold = 0, p_value = TRUE)
  expect_true(all(is.na(e$p.value)))
  expect_identical(nrow(gpu_cor_edges(rmat(2, 4), fdr = 1)), 0L)
  expect_identical(nrow(gpu_cor_edges(rmat(5, 1), top_k = 1)), 0L)
})

test_that("format = 'sparse' gives the kept correlations as a Matrix", {
  skip_if_not_installed("Matrix")
  info <- new_seed()
  x <- rmat(25, 12, dimnames = list(NULL, letters[1:12]))
  y <- rmat(25, 5)
  s <- gpu_cor_edges(x, threshold = 0.2, format = "sparse")
  expect_s4_class(s, "dsCMatrix")
  r <- cor(x)
  r[abs(r) < 0.2] <- 0
  diag(r) <- 0
  expect_equal(as.matrix(s), r, tolerance = 1e-12, info = info)
  s <- gpu_cor_edges(x, y, top_k = 1, format = "sparse")
  expect_s4_class(s, "dgCMatrix")
  expect_identical(dim(s), c(12L, 5L))
  expect_identical(dimnames(s), list(letters[1:12], NULL))
})

test_that("bad criteria give clear errors", {
  x <- rmat(10, 4)
  expect_error(gpu_cor_edges(x), "at least one of")
  expect_error(gpu_cor_edges(x, threshold = 1.5), "'threshold' must be in \\[0, 1\\]")
  expect_error(gpu_cor_edges(x, threshold = -0.5), "'threshold' must be in \\[0, 1\\]")
  expect_silent(gpu_cor_edges(x, threshold = -0.5, absolute = FALSE))
  expect_error(gpu_cor_edges(x, top_k = 0), "'top_k' must be a whole number")
  expect_error(gpu_cor_edges(x, top_k = 1.5), "'top_k' must be a whole number")
  expect_error(gpu_cor_edges(x, density = 0), "'density' must be in \\(0, 1\\]")
  expect_error(gpu_cor_edges(x, density = 2), "'density' must be in \\(0, 1\\]")
  expect_error(gpu_cor_edges(x, fdr = 0), "'fdr' must be in \\(0, 1\\]")
  expect_error(gpu_cor_edges(x, fdr = NA), "'fdr' must be a single number")
  expect_error(gpu_cor_edges(x, threshold = c(0.1, 0.2)), "single number")
  expect_error(gpu_cor_edges(x, threshold = 0.1, absolute = NA), "'absolute'")
  expect_error(gpu_cor_edges(x, threshold = 0.1, use = "bogus"), "invalid 'use'")
  expect_error(gpu_cor_edges(x[, 1], threshold = 0.1), "matrix-like")
  expect_error(gpu_cor_edges(x, x[1:5, ], threshold = 0.1), "incompatible dimensions")
})

# The distances are gpu_dist()'s on the same engine (held to stats::dist()
# and to 1 - cor() by the other tests), so that ties are ties here too.
knn_ref <- function(x, k, method, p = 2, backend = "cpu") {
  d <- as.matrix(suppressWarnings(gpu_dist(x, method, p = p, backend = backend)))
  if (method %in% .dist_methods_stats)
    expect_equal(d, as.matrix(stats::dist(x, method, p = p)), tolerance = 1e-12)
  diag(d) <- NA
  n <- nrow(x)
  idx <- t(vapply(seq_len(n), function(i) {
    o <- order(d[i, ], seq_len(n), na.last = NA)[seq_len(k)]
    o
  }, integer(k)))
  dist <- t(vapply(seq_len(n), function(i) d[i, idx[i, ]], numeric(k)))
  if (k == 1) { idx <- t(idx); dist <- t(dist) }
  list(index = unname(idx), distance = unname(dist))
}
.dist_methods_stats <- c("euclidean", "maximum", "manhattan", "canberra", "minkowski")

test_that("gpu_knn matches dist() + order() for every metric, with ties and NA", {
  info <- new_seed()
  x <- rmat(45, 6)
  x[2, ] <- x[1, ]                  # a duplicate row: distance 0
  x[10:12, ] <- round(x[10:12, ])   # ties among distances
  xna <- x
  xna[sample.int(length(x), 12)] <- NA
  for (method in c("euclidean", "manhattan", "maximum", "canberra", "minkowski",
                   "correlation", "abscorrelation", "spearman", "cosine")) {
    for (xx in list(x, xna)) {
      for (b in backends()) {
        want <- knn_ref(xx, 4, method, p = 3, b)
        lab <- paste(method, b, anyNA(xx), info)
        got <- suppressWarnings(gpu_knn(xx, 4, method = method, p = 3, backend = b))
        expect_identical(got$index, want$index, info = lab)
        expect_equal(got$distance, want$distance, tolerance = 1e-10, info = lab)
      }
    }
  }
  expect_identical(gpu_knn(x, 44)$index[1, ], order(as.matrix(dist(x))[1, -1]) + 1L)
  expect_error(gpu_knn(x, 45), "at most nrow\\(x\\) - 1")
  expect_error(gpu_knn(x, 0), "'k' must be a whole number")
  rownames(x) <- paste0("c", 1:45)
  expect_identical(rownames(gpu_knn(x, 2)$index), rownames(x))
})
