# gpu_knn(query =) and gpu_range() against brute force (stats::dist() and
# gpu_dist() of the two sets stacked), and GpucorParam against
# BiocNeighbors' exact search (ExhaustiveParam, rangeFindExhaustive,
# rangeQueryExhaustive) and bluster's graphs.  Every test runs on each
# backend of test_backends(): the CPU engine, and the GPU's when one is usable.

# The distances between the rows of q (columns) and of x (rows) as
# gpu_dist() makes them, held to stats::dist() for its metrics.
cross_dist <- function(x, q, method, p = 2) {
  d <- as.matrix(suppressWarnings(gpu_dist(rbind(x, q), method, p = p, backend = "cpu")))
  d <- unname(d[seq_len(nrow(x)), nrow(x) + seq_len(nrow(q)), drop = FALSE])
  if (method %in% stats_dist_methods) {
    s <- as.matrix(stats::dist(rbind(x, q), method, p = p))
    expect_equal(d, unname(s[seq_len(nrow(x)), nrow(x) + seq_len(nrow(q)), drop = FALSE]),
                 tolerance = 1e-12)
  }
  d
}

# Each query's k nearest by brute force: ties to the smaller index; NA
# distances (a constant row's correlations) are no neighbours, NA-padded.
query_ref <- function(d, k) {
  idx <- t(apply(d, 2, function(v) order(v, seq_along(v), na.last = NA)[seq_len(k)]))
  if (k == 1) idx <- t(idx)
  dist <- matrix(d[cbind(as.vector(idx), rep(seq_len(ncol(d)), k))], ncol = k)
  list(index = idx, distance = dist)
}

# got and want from findKNN()/queryKNN(): distances to 1e-12, indices
# identical where the distance is not tied (to 1e-12) within the point's
# row of the brute-force distances d (points in columns), and every index
# at the distance reported.
expect_same_knn <- function(got, want, d, rows, lab) {
  expect_identical(names(got), names(want), info = lab)
  if (!is.null(want$distance))
    expect_equal(got$distance, want$distance, tolerance = 1e-12, info = lab)
  if (is.null(want$index)) return(invisible())
  expect_identical(dim(got$index), dim(want$index), info = lab)
  for (r in seq_along(rows)) {
    dr <- d[, rows[r]]
    at <- dr[want$index[r, ]]
    # tied: another point within rounding (BiocNeighbors sums the
    # coordinates in its own order, so 1-ulp apart is a tie too)
    untied <- vapply(at, function(a) sum(abs(dr - a) <= 1e-12 * max(1, a)) == 1, TRUE)
    expect_identical(got$index[r, untied], want$index[r, untied], info = lab)
    expect_equal(dr[got$index[r, ]], at, tolerance = 1e-12, info = lab)
  }
}

# Distances (lists or matrices) equal to 1e-12, relative above 1 and
# absolute below (a correlation distance near 0 is 1 - r: one ulp of r).
expect_close <- function(got, want, lab) {
  g <- unlist(got)
  w <- unlist(want)
  expect_identical(lengths(got), lengths(want), info = lab)
  expect_true(all(abs(g - w) <= 1e-12 * pmax(1, abs(w)) | (is.na(g) & is.na(w))), info = lab)
}

# Data with exact ties: small integers and copied rows.
tied_rows <- function(n, p) {
  x <- matrix(sample(-2:2, n * p, replace = TRUE), n, p)
  x[3, ] <- x[1, ]
  x[n, ] <- x[1, ]
  storage.mode(x) <- "double"
  x
}

test_that("gpu_knn(query =): each query's k nearest rows of x, every metric, ties by index", {
  info <- new_seed()
  x <- rmat(40, 5)
  q <- rbind(rmat(7, 5), x[c(4, 9), ])          # two queries copy rows of x
  xt <- tied_rows(40, 4)
  qt <- rbind(xt[c(1, 6), ], tied_rows(6, 4))
  for (method in c("euclidean", "manhattan", "maximum", "canberra", "minkowski",
                   "correlation", "abscorrelation", "spearman", "cosine", "kendall")) {
    for (set in list(list(x, q), list(xt, qt))) {
      d <- cross_dist(set[[1]], set[[2]], method, p = 3)
      for (k in c(1, 3, 40)) {
        want <- query_ref(d, k)
        for (b in test_backends()) {
          lab <- paste(method, "k =", k, b, info)
          got <- suppressWarnings(gpu_knn(set[[1]], k, method, p = 3, query = set[[2]],
                                          backend = b))
          if (b == "cpu") {
            expect_identical(got$index, want$index, info = lab)
            expect_equal(got$distance, want$distance, tolerance = 1e-12, info = lab)
          } else {
            # the device's sums round differently: rows tied in exact
            # arithmetic (canberra's quotients) may be 1 ulp apart there
            expect_same_knn(got, want, d, seq_len(ncol(d)), lab)
          }
        }
      }
    }
  }
  # a query equal to a row of x has it first, at distance 0 exactly
  got <- gpu_knn(x, 1, query = x[c(5, 2), ])
  expect_identical(got$index[, 1], c(5L, 2L))
  expect_identical(got$distance[, 1], c(0, 0))
  rownames(q) <- paste0("q", seq_len(nrow(q)))
  expect_identical(rownames(gpu_knn(x, 2, query = q)$index), rownames(q))
  expect_identical(rownames(gpu_knn(x, 2, query = q)$distance), rownames(q))
})

test_that("gpu_knn(query =): bad input is a clear error", {
  x <- rmat(20, 3)
  q <- rmat(4, 3)
  expect_error(gpu_knn(x, 21, query = q), "'k' must be at most nrow\\(x\\) = 20")
  expect_error(gpu_knn(x, 0, query = q), "'k' must be a whole number")
  expect_error(gpu_knn(x, 2, query = rmat(4, 2)), "'query' must have the 3 columns of 'x'")
  qn <- q
  qn[2, 2] <- NaN
  expect_error(gpu_knn(x, 2, query = qn), "'query' has NA or NaN values")
  xn <- x
  xn[1, 1] <- NA
  expect_error(gpu_knn(xn, 2, query = q), "'x' has NA or NaN values")
  expect_error(gpu_knn(x, 2, query = letters[1:3]), "'query' must be numeric")
  expect_identical(dim(gpu_knn(x, 20, query = q)$index), c(4L, 20L))
})

test_that("gpu_knn(query =, BPPARAM =): the workers' shares give the same neighbours", {
  skip_if_not_installed("BiocParallel")
  skip_on_os("windows")
  info <- new_seed()
  x <- rmat(60, 4)
  q <- rbind(rmat(25, 4), x[1:3, ])
  for (b in test_backends()) {
    want <- gpu_knn(x, 5, query = q, backend = b)
    # (a fork cannot use CUDA: socket workers for the GPU)
    bp <- if (b == "gpu") BiocParallel::SnowParam(2) else BiocParallel::MulticoreParam(2)
    got <- gpu_knn(x, 5, query = q, backend = b, BPPARAM = bp)
    expect_identical(got, want, info = paste(b, info))
  }
  skip_if_not_installed("BiocNeighbors")
  # GpucorParam leaves a MulticoreParam out where the GPU may be used
  for (b in c("cpu", "auto")) {
    gp <- GpucorParam(backend = b)
    expect_identical(BiocNeighbors::queryKNN(x, q, 4, BNPARAM = gp,
                                             BPPARAM = BiocParallel::MulticoreParam(2)),
                     BiocNeighbors::queryKNN(x, q, 4, BNPARAM = gp), info = paste(b, info))
  }
})

test_that("gpu_range(): every row of x within the threshold, with and without a query", {
  info <- new_seed()
  x <- rbind(rmat(30, 3), tied_rows(10, 3))
  q <- rbind(rmat(5, 3), x[c(2, 33), ])
  rownames(q) <- paste0("q", 1:7)
  for (method in c("euclidean", "manhattan", "maximum", "correlation", "cosine")) {
    dq <- cross_dist(x, q, method)
    dx <- cross_dist(x, x, method)
    diag(dx) <- NA
    thr <- stats::quantile(dx, 0.1, na.rm = TRUE, names = FALSE)
    for (b in test_backends()) {
      lab <- paste(method, b, info)
      # (a constant row of the tied ones: "the standard deviation is zero")
      got <- suppressWarnings(gpu_range(x, thr, method, query = q, backend = b))
      want <- lapply(seq_len(nrow(q)), function(j) which(dq[, j] <= thr))
      expect_identical(unname(got$index), want, info = lab)
      expect_close(unname(got$distance), lapply(seq_len(nrow(q)), function(j) dq[want[[j]], j]),
                   lab)
      expect_identical(names(got$index), rownames(q), info = lab)
      got <- suppressWarnings(gpu_range(x, thr, method, backend = b))
      want <- lapply(seq_len(nrow(x)), function(i) which(dx[, i] <= thr))
      expect_identical(got$index, want, info = lab)
      expect_close(got$distance, lapply(seq_len(nrow(x)), function(i) dx[want[[i]], i]), lab)
    }
  }
  # copies are at distance 0: within a threshold of 0, and nothing else is
  got <- gpu_range(x, 0)
  d0 <- as.matrix(stats::dist(x))
  diag(d0) <- NA
  expect_identical(got$index, lapply(seq_len(nrow(x)), function(i) unname(which(d0[, i] == 0))))
  expect_true(all(c(33L, 40L) %in% got$index[[31]]))
  expect_identical(unique(gpu_range(x, -1)$index), list(integer(0)))
  expect_error(gpu_range(x), "'threshold' must be a single number")
  expect_error(gpu_range(x, c(1, 2)), "'threshold' must be a single number")
  expect_error(gpu_range(x, 1, query = rmat(2, 4)), "'query' must have the 3 columns")
})

# ---- GpucorParam against BiocNeighbors ----------------------------------

bn_dist <- function(x, q, distance) {
  norm <- function(m) m / sqrt(rowSums(m^2))
  if (distance == "Cosine") { x <- norm(x); q <- norm(q) }
  s <- as.matrix(stats::dist(rbind(x, q), if (distance == "Manhattan") "manhattan" else "euclidean"))
  unname(s[seq_len(nrow(x)), nrow(x) + seq_len(nrow(q)), drop = FALSE])
}

test_that("GpucorParam: findKNN() and queryKNN() as ExhaustiveParam's", {
  skip_if_not_installed("BiocNeighbors")
  info <- new_seed()
  n <- 50L
  x <- rmat(n, 6)
  x[7, ] <- x[2, ]                 # copies: ties at distance 0
  x[30, ] <- x[2, ]
  x[41:44, ] <- round(x[41:44, ])
  rownames(x) <- paste0("cell", seq_len(n))
  q <- rbind(rmat(9, 6), x[c(2, 41), ])
  for (distance in c("Euclidean", "Manhattan", "Cosine")) {
    ex <- BiocNeighbors::ExhaustiveParam(distance = distance)
    dx <- bn_dist(x, x, distance)
    dq <- bn_dist(x, q, distance)
    for (b in test_backends()) {
      gp <- GpucorParam(distance, backend = b)
      lab <- paste(distance, b, info)
      for (k in c(1, 2, 10, n - 1)) {
        want <- suppressWarnings(BiocNeighbors::findKNN(x, k, BNPARAM = ex))
        got <- BiocNeighbors::findKNN(x, k, BNPARAM = gp)
        expect_same_knn(got, want, dx, seq_len(n), paste(lab, "k =", k))
        want <- suppressWarnings(BiocNeighbors::queryKNN(x, q, k, BNPARAM = ex))
        got <- BiocNeighbors::queryKNN(x, q, k, BNPARAM = gp)
        expect_same_knn(got, want, dq, seq_len(nrow(q)), paste(lab, "query k =", k))
      }
      # last, subset (numbers, names, logical), get.* flags
      sub <- list(c(30, 2, 11), c("cell7", "cell1"), seq_len(n) %% 5 == 0)
      for (s in sub) {
        rows <- unname(setNames(seq_len(n), rownames(x))[s])
        want <- suppressWarnings(BiocNeighbors::findKNN(x, 6, last = 2, subset = s, BNPARAM = ex))
        got <- BiocNeighbors::findKNN(x, 6, last = 2, subset = s, BNPARAM = gp)
        expect_same_knn(got, want, dx, rows, paste(lab, "subset last"))
        want <- suppressWarnings(BiocNeighbors::findKNN(x, 6, subset = s, BNPARAM = ex))
        got <- BiocNeighbors::findKNN(x, 6, subset = s, BNPARAM = gp)
        expect_same_knn(got, want, dx, rows, paste(lab, "subset"))
      }
      want <- suppressWarnings(BiocNeighbors::queryKNN(x, t(q), 4, transposed = TRUE,
                                                       subset = c(11, 3), BNPARAM = ex))
      got <- BiocNeighbors::queryKNN(x, t(q), 4, transposed = TRUE, subset = c(11, 3),
                                     BNPARAM = gp)
      expect_same_knn(got, want, dq, c(11, 3), paste(lab, "transposed query subset"))
      for (flags in list(c(TRUE, FALSE), c(FALSE, TRUE), c(FALSE, FALSE))) {
        want <- suppressWarnings(BiocNeighbors::findKNN(x, 3, get.index = flags[1],
                                                        get.distance = flags[2], BNPARAM = ex))
        got <- BiocNeighbors::findKNN(x, 3, get.index = flags[1], get.distance = flags[2],
                                      BNPARAM = gp)
        expect_same_knn(got, want, dx, seq_len(n), paste(lab, "flags", toString(flags)))
      }
      # an index built once, then searched
      ix <- BiocNeighbors::buildIndex(x, BNPARAM = gp)
      expect_s4_class(ix, "BiocNeighborIndex")
      expect_identical(dim(ix), dim(x))
      want <- suppressWarnings(BiocNeighbors::findKNN(x, 5, BNPARAM = ex))
      expect_same_knn(BiocNeighbors::findKNN(BNINDEX = ix, k = 5), want, dx, seq_len(n),
                      paste(lab, "index"))
      expect_same_knn(BiocNeighbors::findKNN(BNINDEX = ix, k = 5, BNPARAM = gp), want, dx,
                      seq_len(n), paste(lab, "index + param"))
      want <- suppressWarnings(BiocNeighbors::queryKNN(x, q, 5, BNPARAM = ex))
      expect_same_knn(BiocNeighbors::queryKNN(BNINDEX = ix, query = q, k = 5), want, dq,
                      seq_len(nrow(q)), paste(lab, "index query"))
      # k too large: capped with BiocNeighbors' warning
      expect_warning(got <- BiocNeighbors::findKNN(x, n, BNPARAM = gp),
                     "'k' capped at the number of observations minus 1")
      expect_identical(dim(got$index), c(as.integer(n), n - 1L))
      expect_warning(got <- BiocNeighbors::queryKNN(x, q, n + 3, BNPARAM = gp),
                     "'k' capped at the number of observations$")
      expect_identical(dim(got$index), c(nrow(q), as.integer(n)))
    }
  }
})

test_that("GpucorParam: findNeighbors() and queryNeighbors() as the exhaustive range search", {
  skip_if_not_installed("BiocNeighbors")
  info <- new_seed()
  x <- rbind(rmat(40, 4), tied_rows(8, 4))
  q <- rbind(rmat(6, 4), x[c(3, 45), ])
  for (distance in c("Euclidean", "Manhattan", "Cosine")) {
    thr <- if (distance == "Cosine") 0.6 else if (distance == "Manhattan") 2.5 else 1.4
    for (b in test_backends()) {
      gp <- GpucorParam(distance, backend = b)
      lab <- paste(distance, b, info)
      same <- function(got, want, what) {
        expect_identical(lapply(got$index, sort), lapply(want$index, sort), info = paste(lab, what))
        o <- lapply(want$index, order)
        og <- lapply(got$index, order)
        expect_equal(Map(`[`, got$distance, og), Map(`[`, want$distance, o), tolerance = 1e-12,
                     info = paste(lab, what))
      }
      same(BiocNeighbors::findNeighbors(x, thr, BNPARAM = gp),
           BiocNeighbors::rangeFindExhaustive(x, thr, distance = distance), "find")
      same(BiocNeighbors::queryNeighbors(x, q, thr, BNPARAM = gp),
           BiocNeighbors::rangeQueryExhaustive(x, q, thr, distance = distance), "query")
      tv <- thr * c(0.5, 1, 1.5)
      same(BiocNeighbors::findNeighbors(x, tv, subset = c(44, 2, 9), BNPARAM = gp),
           BiocNeighbors::rangeFindExhaustive(x, tv, subset = c(44, 2, 9), distance = distance),
           "subset thresholds")
      same(BiocNeighbors::queryNeighbors(x, q, thr, subset = 8:6, BNPARAM = gp),
           BiocNeighbors::rangeQueryExhaustive(x, q, thr, subset = 8:6, distance = distance),
           "query subset")
      ix <- BiocNeighbors::buildIndex(x, BNPARAM = gp)
      same(BiocNeighbors::findNeighbors(BNINDEX = ix, threshold = thr),
           BiocNeighbors::rangeFindExhaustive(x, thr, distance = distance), "index")
      expect_identical(
        BiocNeighbors::findNeighbors(x, thr, get.index = FALSE, get.distance = FALSE, BNPARAM = gp),
        BiocNeighbors::rangeFindExhaustive(x, thr, get.index = FALSE, get.distance = FALSE,
                                           distance = distance), info = lab)
      got <- BiocNeighbors::queryNeighbors(x, q, thr, get.index = FALSE, BNPARAM = gp)
      expect_identical(names(got), "distance")
      xr <- x
      rownames(xr) <- paste0("cell", seq_len(nrow(x)))
      expect_identical(
        BiocNeighbors::findNeighbors(xr, thr, get.index = FALSE, get.distance = FALSE, BNPARAM = gp),
        BiocNeighbors::rangeFindExhaustive(xr, thr, get.index = FALSE, get.distance = FALSE,
                                           distance = distance), info = lab)
      same(BiocNeighbors::findNeighbors(xr, thr, BNPARAM = gp),
           BiocNeighbors::rangeFindExhaustive(xr, thr, distance = distance), "row names")
      expect_null(names(BiocNeighbors::findNeighbors(xr, thr, BNPARAM = gp)$index))
    }
  }
})

test_that("GpucorParam: bluster's SNN and kNN graphs and scran's are ExhaustiveParam's", {
  skip_if_not_installed("BiocNeighbors")
  skip_if_not_installed("bluster")
  info <- new_seed()
  # three groups of cells, and copied cells (ties)
  x <- rbind(rmat(60, 8), rmat(60, 8, offset = 3), rmat(60, 8, offset = -3))
  x[c(5, 77), ] <- x[c(4, 76), ]
  for (b in test_backends()) {
    for (type in c("rank", "jaccard")) {
      want <- suppressWarnings(bluster::makeSNNGraph(x, k = 10, type = type,
                                                     BNPARAM = BiocNeighbors::ExhaustiveParam()))
      got <- bluster::makeSNNGraph(x, k = 10, type = type, BNPARAM = GpucorParam(backend = b))
      lab <- paste(type, b, info)
      expect_identical(igraph::as_edgelist(got), igraph::as_edgelist(want), info = lab)
      expect_identical(igraph::E(got)$weight, igraph::E(want)$weight, info = lab)
    }
    want <- suppressWarnings(bluster::makeKNNGraph(x, k = 7,
                                                   BNPARAM = BiocNeighbors::ExhaustiveParam()))
    got <- bluster::makeKNNGraph(x, k = 7, BNPARAM = GpucorParam(backend = b))
    expect_identical(igraph::as_edgelist(got), igraph::as_edgelist(want), info = paste(b, info))
    # scran's buildSNNGraph() (cells in rows, no PCA of its own)
    if (requireNamespace("scran", quietly = TRUE)) {
      want <- suppressWarnings(scran::buildSNNGraph(x, transposed = TRUE, d = NA, k = 10,
                                                    BNPARAM = BiocNeighbors::ExhaustiveParam()))
      got <- scran::buildSNNGraph(x, transposed = TRUE, d = NA, k = 10,
                                  BNPARAM = GpucorParam(backend = b))
      expect_identical(igraph::as_edgelist(got), igraph::as_edgelist(want), info = paste(b, info))
      expect_identical(igraph::E(got)$weight, igraph::E(want)$weight, info = paste(b, info))
    }
  }
})

test_that("GpucorParam: bad input is a clear error", {
  skip_if_not_installed("BiocNeighbors")
  x <- rmat(20, 3)
  expect_error(GpucorParam("Minkowski"), "'arg' should be one of")
  expect_error(GpucorParam(backend = "tpu"), "'backend' must be one of")
  gp <- GpucorParam(backend = "auto")
  expect_s4_class(gp, "BiocNeighborParam")
  expect_output(print(gp), "backend: auto")
  expect_error(BiocNeighbors::findKNN(x, 0, BNPARAM = gp), "'k' must be a whole number")
  xn <- x
  xn[3, 2] <- NaN
  expect_error(BiocNeighbors::findKNN(xn, 2, BNPARAM = gp), "'X' has NA or NaN values")
  expect_error(BiocNeighbors::queryKNN(x, xn, 2, BNPARAM = gp), "'query' has NA or NaN values")
  expect_error(BiocNeighbors::queryKNN(x, rmat(2, 4), 2, BNPARAM = gp),
               "'query' must have the 3 dimensions")
  expect_error(BiocNeighbors::queryNeighbors(x, rmat(2, 4), 1, BNPARAM = gp),
               "'query' must have the 3 dimensions")
  expect_error(BiocNeighbors::findNeighbors(x, c(1, 2), BNPARAM = gp), "length of 'threshold'")
  expect_error(BiocNeighbors::findNeighbors(x, 0, BNPARAM = gp), "'threshold' should be positive")
  expect_error(BiocNeighbors::queryNeighbors(x, x, -1, BNPARAM = gp),
               "'threshold' should be positive")
  expect_error(BiocNeighbors::findKNN(x, 2, subset = 25, BNPARAM = gp), "out of range")
  x0 <- x
  x0[4, ] <- 0
  expect_error(BiocNeighbors::findKNN(x0, 2, BNPARAM = GpucorParam("Cosine")), "L2 norms of zero")
})

test_that("GpucorParam: loading gpucor does not load BiocNeighbors; loading it defines the class", {
  skip_if_not_installed("BiocNeighbors")
  rscript <- file.path(R.home("bin"), "Rscript")
  run <- function(code) system2(rscript, c("--vanilla", "-e", shQuote(code)), stdout = TRUE,
                                stderr = FALSE, env = paste0("R_LIBS=", paste(.libPaths(), collapse = ":")))
  expect_identical(run("library(gpucor); cat('BiocNeighbors' %in% loadedNamespaces())"), "FALSE")
  # loaded after gpucor (by GpucorParam(), or by the user), or before it
  expect_identical(run(paste("library(gpucor); p <- GpucorParam();",
                             "i <- BiocNeighbors::buildIndex(matrix(1:6 + 0, 3), BNPARAM = p);",
                             "cat(class(i), dim(i), dim(BiocNeighbors::bndata(i)))")),
                   "GpucorIndex 3 2 2 3")
  expect_identical(run(paste("library(BiocNeighbors); library(gpucor);",
                             "cat(findKNN(matrix(c(1, 2, 4), 3), 1, BNPARAM = GpucorParam())$index)")),
                   "2 1 2")
})

test_that("GpucorParam: an index keeps its points on each GPU between queries", {
  skip_if_not_installed("BiocNeighbors")
  skip_if_no_gpu()
  info <- new_seed()
  x <- rmat(3000, 20)
  q1 <- rmat(100, 20)
  q2 <- rmat(50, 20)
  x[7, 3] <- Inf            # the NA kernels' rule, with x never scanned again
  gp <- GpucorParam(backend = "gpu")
  ix <- BiocNeighbors::buildIndex(x, BNPARAM = gp)
  res <- function() gpucor:::.bn_resident_info(ix)
  expect_identical(res()$uploads, 0L, info = info)
  a <- BiocNeighbors::queryKNN(BNINDEX = ix, query = q1, k = 10)
  expect_identical(res(), list(devices = 0L, uploads = 1L), info = info)
  b <- BiocNeighbors::queryKNN(BNINDEX = ix, query = q2, k = 10)
  thr <- stats::median(b$distance)
  r <- BiocNeighbors::queryNeighbors(BNINDEX = ix, query = q2, threshold = thr)
  expect_identical(res()$uploads, 1L, info = info)
  # the answers of x uploaded with the query, on the GPU and on the CPU
  for (bk in c("gpu", "cpu")) {
    g1 <- gpu_knn(x, 10, query = q1, backend = bk)
    g2 <- gpu_knn(x, 10, query = q2, backend = bk)
    gr <- gpu_range(x, thr, query = q2, backend = bk)
    expect_identical(a$index, g1$index, info = paste(bk, info))
    expect_identical(b$index, g2$index, info = paste(bk, info))
    expect_identical(r$index, unname(gr$index), info = paste(bk, info))
    if (bk == "gpu") {
      expect_identical(a$distance, g1$distance, info = info)
      expect_identical(r$distance, unname(gr$distance), info = info)
    } else {
      expect_equal(a$distance, g1$distance, tolerance = 1e-12, info = info)
    }
  }
  # the points among themselves, and single precision: uploaded as before
  f <- BiocNeighbors::findKNN(BNINDEX = ix, k = 5)
  expect_identical(f$index, unname(gpu_knn(x, 5, backend = "gpu")$index), info = info)
  s <- BiocNeighbors::queryKNN(BNINDEX = BiocNeighbors::buildIndex(x, BNPARAM =
         GpucorParam(backend = "gpu", precision = "single")), query = q1, k = 10)
  expect_identical(res()$uploads, 1L, info = info)
  # every GPU of the machine keeps its own copy
  if (nrow(gpu_info()$devices) > 1) {
    ia <- BiocNeighbors::buildIndex(x, BNPARAM = GpucorParam(backend = "gpu", devices = "all"))
    big <- rmat(5000, 20)
    old <- options(gpucor.gpu_slab = 64)       # panels for every device
    on.exit(options(old), add = TRUE)
    expect_identical(BiocNeighbors::queryKNN(BNINDEX = ia, query = big, k = 10)$index,
                     gpu_knn(x, 10, query = big, backend = "gpu")$index, info = info)
    expect_identical(sort(gpucor:::.bn_resident_info(ia)$devices),
                     sort(as.integer(gpu_info()$devices$id)), info = info)
  }
  # freed with the index (or at once)
  gpucor:::.bn_resident_free(ix@resident)
  expect_identical(res()$devices, integer(0), info = info)
  expect_identical(BiocNeighbors::queryKNN(BNINDEX = ix, query = q1, k = 10), a, info = info)
})

test_that("gpu_knn(query =) and gpu_range() on the GPU in single precision", {
  skip_if_no_gpu()
  info <- new_seed()
  x <- rmat(300, 20)
  q <- rbind(rmat(40, 20), x[7, ])                # the last query copies a row of x
  for (method in c("euclidean", "manhattan", "maximum", "canberra", "minkowski")) {
    lab <- paste(method, info)
    want <- gpu_knn(x, 5, method, p = 3, query = q, backend = "cpu")
    got <- gpu_knn(x, 5, method, p = 3, query = q, backend = "gpu", precision = "single")
    expect_equal(got$distance, want$distance, tolerance = 1e-5, info = lab)
    expect_identical(got$index[, 1], want$index[, 1], info = lab)
    expect_identical(got$distance[nrow(q), 1], 0, info = lab)   # the copied row
    # every row clearly within the threshold is there, none clearly beyond
    # (float's rounding decides those within 1e-5 of it)
    d <- cross_dist(x, q, method, p = 3)
    thr <- stats::median(want$distance)
    r <- gpu_range(x, thr, method, p = 3, query = q, backend = "gpu", precision = "single")
    for (j in seq_len(nrow(q))) {
      expect_true(all(which(d[, j] < thr * (1 - 1e-5)) %in% r$index[[j]]), info = lab)
      expect_true(all(d[r$index[[j]], j] <= thr * (1 + 1e-5)), info = lab)
    }
  }
})
