# gpu_degree_centrality() against the dense route: gpu_cor() on the same
# engine (stats::cor()'s values, which test-cor.R holds it to), thresholded
# and summed per column in R.  Every case on the CPU engine and, where one
# is usable, on the GPU.

# The reference: count and sum per column of the correlations (or their
# absolute values) above t, the diagonal and NA left out; 'near' the
# number of pairs of a column within 'eps' of t (values that another
# engine's rounding may put on the other side).
degree_ref <- function(r, t, include, eps = 0) {
  diag(r) <- NA
  a <- if (include) abs(r) else r
  keep <- !is.na(a) & a > t
  list(degree = unname(colSums(keep)), strength = unname(colSums(ifelse(keep, a, 0))),
       near = unname(colSums(!is.na(a) & abs(a - t) <= eps)))
}

expect_degree <- function(x, t, method = "pearson", negative = "exclude",
                          use = "everything", backend = "cpu", info = "") {
  got <- suppressWarnings(gpu_degree_centrality(x, t, method = method, negative = negative, use = use,
                                                backend = backend))
  r <- suppressWarnings(gpu_cor(x, method = method, use = use, backend = backend))
  include <- negative == "include"
  # the CPU engine makes the same values in the same tiles: exact; the GPU's
  # panels may round another way (cuBLAS picks kernels by shape)
  eps <- if (backend == "cpu") 0 else 1e-12
  ref <- degree_ref(r, t, include, eps)
  expect_true(all(abs(got$degree - ref$degree) <= ref$near), info = info)
  ok <- ref$near == 0
  expect_equal(got$degree[ok], ref$degree[ok], info = info)
  expect_equal(got$strength[ok], ref$strength[ok], tolerance = 1e-12, info = info)
  # and stats::cor() itself, away from the threshold
  r0 <- suppressWarnings(stats::cor(x, method = method, use = use))
  ref0 <- degree_ref(r0, t, include, 1e-10)
  ok0 <- ref0$near == 0
  expect_equal(got$degree[ok0], ref0$degree[ok0], info = info)
  expect_equal(got$strength[ok0], ref0$strength[ok0], tolerance = 1e-10, info = info)
  expect_identical(got$node, if (is.null(colnames(x))) seq_len(ncol(x)) else colnames(x))
  invisible(got)
}

test_that("degree centrality equals the thresholded correlation matrix", {
  for (b in test_backends()) for (m in cor_methods) for (neg in c("exclude", "include")) {
    info <- paste(b, m, neg, new_seed())
    n <- if (m == "kendall") 30 else 60
    x <- rmat(n, 47)
    x[, 2:6] <- x[, 2:6] + 2 * x[, 1]          # a hub
    x[, 10] <- -x[, 1] + rnorm(n, sd = 0.1)    # a negative partner
    for (t in c(0.1, 0.3, 0.6))
      expect_degree(x, t, m, neg, backend = b, info = paste(info, t))
    # small tiles and panels: the sums cross many of them
    with_options(list(gpucor.cpu_tile = 7, gpucor.gpu_slab = 5),
                 expect_degree(x, 0.2, m, neg, backend = b, info = paste(info, "small tiles")))
  }
})

test_that("exact ties with the threshold, NA, constant columns, names", {
  # r is exactly 0 between the first two columns and exactly -1 with the third
  x <- cbind(a = c(1, -1, 1, -1), b = c(1, 1, -1, -1), c = c(-1, 1, -1, 1), d = c(2, 0, 1, 3))
  for (b in test_backends()) {
    r <- gpu_cor(x, backend = b)
    expect_identical(r["a", "b"], 0)
    e <- gpu_degree_centrality(x, 0, backend = b)
    ref <- degree_ref(r, 0, FALSE)
    expect_identical(e$degree, ref$degree, info = b)
    expect_identical(e$node, colnames(x))
    i <- gpu_degree_centrality(x, 0, negative = "include", backend = b)
    expect_identical(i$degree, degree_ref(r, 0, TRUE)$degree, info = b)
    expect_equal(i$strength[1:3], c(1, 0, 1) + unname(abs(r[1:3, "d"])))
    # a constant column: its correlations are NA, it counts for nobody, and
    # stats' warning
    y <- cbind(x, k = 5)
    expect_warning(k <- gpu_degree_centrality(y, 0.1, backend = b),
                   "standard deviation is zero")
    expect_identical(k$degree[5], 0)
    expect_identical(k$degree[1:4], gpu_degree_centrality(x, 0.1, backend = b)$degree)
    # pairwise NA
    z <- rmat(40, 12, na = 0.1)
    expect_degree(z, 0.2, use = "pairwise.complete.obs", backend = b, info = paste(b, "NA"))
    expect_degree(z, 0.2, "spearman", "include", use = "pairwise.complete.obs",
                  backend = b, info = paste(b, "NA spearman"))
    # a data frame, integers (ties in ranks)
    w <- as.data.frame(matrix(sample(1:5, 30 * 8, TRUE), 30, 8))
    expect_degree(w, 0.1, "kendall", backend = b, info = paste(b, "ties"))
    expect_identical(gpu_degree_centrality(w, 0.1, backend = b)$node, names(w))
  }
})

# The density's reference: the D strongest pairs' weakest value v, every
# pair at least as strong kept (ties with v too).
density_ref <- function(r, d, include) {
  diag(r) <- NA
  a <- if (include) abs(r) else r
  up <- a[upper.tri(a)]
  up <- up[!is.na(up)]
  D <- round(d * ncol(r) * (ncol(r) - 1) / 2)
  v <- if (D >= 1) sort(up, decreasing = TRUE)[min(D, length(up))] else Inf
  keep <- !is.na(a) & a >= v
  list(degree = unname(colSums(keep)), strength = unname(colSums(ifelse(keep, a, 0))),
       cut = v, edges = sum(up >= v))
}

test_that("a density's cut is exact, ties kept together", {
  for (b in test_backends()) for (m in c("pearson", "spearman", "kendall"))
    for (neg in c("exclude", "include")) {
      info <- paste(b, m, neg, new_seed())
      x <- rmat(40, 33)
      x[, 2:5] <- x[, 2:5] + x[, 1]
      r <- gpu_cor(x, method = m, backend = b)
      for (d in c(0.001, 0.05, 0.3, 1)) {
        got <- gpu_degree_centrality(x, density = d, method = m, negative = neg, backend = b)
        ref <- density_ref(r, d, neg == "include")
        expect_identical(got$degree, ref$degree, info = paste(info, d))
        expect_equal(got$strength, ref$strength, tolerance = 1e-12, info = paste(info, d))
        expect_identical(attr(got, "cut"), if (d == 1) -Inf else ref$cut, info = paste(info, d))
        expect_identical(attr(got, "edges"), as.double(ref$edges), info = paste(info, d))
        # without ties, the degrees of gpu_cor_edges(density =)'s graph
        if (neg == "exclude" && d < 1 && attr(got, "edges") == round(d * 33 * 32 / 2)) {
          e <- gpu_cor_edges(x, method = m, density = d, absolute = FALSE, backend = b)
          expect_identical(got$degree, as.double(tabulate(c(e[[1]], e[[2]]), ncol(x))),
                           info = paste(info, d, "edges"))
        }
      }
    }
  # ties: copies of columns make pairs with r exactly 1 (and 0.5 exactly
  # between the built columns); the cut lands inside a tied group
  z <- matrix(c(1, 2, 3, 4, 5, 6, 2, 1, 4, 3, 6, 5), 6)
  x <- z[, rep(1:2, c(5, 4))]
  for (b in test_backends()) {
    r <- gpu_cor(x, backend = b)
    got <- gpu_degree_centrality(x, density = 0.2, backend = b)
    ref <- density_ref(r, 0.2, FALSE)
    expect_identical(got$degree, ref$degree, info = b)
    expect_gt(attr(got, "edges"), round(0.2 * 36))
    expect_identical(attr(got, "edges"), as.double(ref$edges), info = b)
  }
})

test_that("single precision on the GPU is close", {
  skip_if_no_gpu()
  x <- rmat(200, 300)
  d <- gpu_degree_centrality(x, 0.15, backend = "gpu")
  s <- gpu_degree_centrality(x, 0.15, backend = "gpu", precision = "single")
  ref <- degree_ref(gpu_cor(x), 0.15, FALSE, 1e-5)
  ok <- ref$near == 0
  expect_equal(s$degree[ok], d$degree[ok])
  expect_equal(s$strength[ok], d$strength[ok], tolerance = 1e-5)
})

test_that("bad input is a clear error", {
  x <- rmat(20, 5)
  expect_error(gpu_degree_centrality(x, 1), "'threshold' must be one number in \\[-1, 1\\)")
  expect_error(gpu_degree_centrality(x), "one of 'threshold' and 'density'")
  expect_error(gpu_degree_centrality(x, 0.5, density = 0.1), "one of 'threshold' and 'density'")
  expect_error(gpu_degree_centrality(x, density = 0), "'density' must be one number in \\(0, 1\\]")
  expect_error(gpu_degree_centrality(x, density = 1.5), "'density'")
  expect_error(gpu_degree_centrality(x, NA), "'threshold'")
  expect_error(gpu_degree_centrality(x, c(0.1, 0.2)), "'threshold'")
  expect_error(gpu_degree_centrality(x, -0.5, negative = "include"), "\\[0, 1\\)")
  expect_error(gpu_degree_centrality(x[, 1], 0.5), "must be a matrix")
  expect_error(gpu_degree_centrality(x, 0.5, method = "cosine"), "should be one of")
  expect_error(gpu_degree_centrality(x, 0.5, use = "all.obs"), NA)
  x[1, 1] <- NA
  expect_error(gpu_degree_centrality(x, 0.5, use = "all.obs"), "missing observations")
  # no observations: every correlation NA (as stats::cor's), no edges
  expect_identical(suppressWarnings(gpu_degree_centrality(matrix(0, 0, 3), 0.5))$degree,
                   c(0, 0, 0))
})
