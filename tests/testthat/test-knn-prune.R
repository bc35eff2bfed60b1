# The CPU engine's pruned k-NN search (src/cpu/knn_prune.c) against its
# brute force (the tiled distances into the selecting sink): indices
# identical and distances identical bit for bit (identical(), no
# tolerance), ties to the smaller index, for x against itself and with a
# query.  options(gpucor.knn_prune = FALSE) forces the brute force, TRUE
# the pruned search where the data allow it; verbose says which ran.

# gpu_knn() on the CPU with the option set, checking which search ran.
knn_path <- function(prune, x, k, query = NULL, method = "euclidean", path = NULL,
                     threads = NULL) {
  old <- options(gpucor.knn_prune = prune, gpucor.threads = threads)
  on.exit(options(old))
  msg <- NULL
  r <- withCallingHandlers(
    gpu_knn(x, k, method, query = query, backend = "cpu", verbose = TRUE),
    message = function(m) {
      msg <<- conditionMessage(m)
      invokeRestart("muffleMessage")
    })
  if (!is.null(path)) expect_match(msg, path, fixed = TRUE)
  r
}

# The brute force's answer and the pruned search's are identical.
expect_pruned_same <- function(x, k, query = NULL, method = "euclidean", info = NULL,
                               path = "pruned search") {
  a <- knn_path(FALSE, x, k, query, method, path = "brute force")
  b <- knn_path(TRUE, x, k, query, method, path = path)
  expect_identical(b$index, a$index, info = info)
  expect_identical(b$distance, a$distance, info = info)
  invisible(b)
}

# Cells of a few types of varied size and spread in 50 "PCs" whose variance
# decays (the first carry the types apart, the noise fades slower).
sim_cells <- function(n, p = 50, ntypes = 12, tail = 8) {
  sizes <- as.vector(rmultinom(1, n, prob = rexp(ntypes) + 0.1))
  j <- seq_len(p) - 1
  centers <- matrix(rnorm(ntypes * p), ntypes) * rep(6 * exp(-j / 6), each = ntypes)
  lab <- rep(seq_len(ntypes), sizes)
  x <- centers[lab, ] + matrix(rnorm(n * p), n) * rep(1.5 * exp(-j / tail), each = n) *
    runif(ntypes, 0.5, 1.5)[lab]
  x[sample.int(n), , drop = FALSE]
}

test_that("pruned k-NN equals the brute force on random and clustered data", {
  info <- new_seed()
  x <- matrix(rnorm(700 * 7), 700, 7)
  for (method in c("euclidean", "manhattan"))
    expect_pruned_same(x, 6, method = method, info = paste(info, method))
  # 50 dimensions: the partial distances over the first coordinates too
  x <- sim_cells(1500)
  for (method in c("euclidean", "manhattan")) {
    expect_pruned_same(x, 10, method = method, info = paste(info, method))
    q <- sim_cells(200) * 1.1
    expect_pruned_same(x, 12, query = q, method = method, info = paste(info, method))
  }
  # a slowly fading noise (many dimensions of it)
  expect_pruned_same(sim_cells(900, tail = 40), 8, info = info)
})

test_that("pruned k-NN keeps exact ties in index order", {
  info <- new_seed()
  # duplicated rows of small integers: many distances exactly equal
  u <- matrix(sample(-3:3, 40 * 20, replace = TRUE), 40, 20)
  x <- u[sample.int(40, 800, replace = TRUE), ]
  storage.mode(x) <- "double"
  r <- expect_pruned_same(x, 15, info = info)
  expect_true(any(r$distance == 0))
  expect_pruned_same(x, 25, query = u[1:10, ] + 0, method = "manhattan", info = info)
  # one point many times: every distance 0, neighbours by index alone
  x <- matrix(rep(c(1.5, -2, 0.25), each = 600), 600, 3)
  r <- expect_pruned_same(x, 4, info = info)
  expect_identical(r$index[1:3, ], rbind(2:5, c(1L, 3:5), c(1:2, 4:5)))
})

test_that("pruned k-NN on one cluster, offsets and extreme scales", {
  info <- new_seed()
  x <- matrix(rnorm(800 * 12), 800, 12)        # a single cluster (a blob)
  expect_pruned_same(x, 10, info = info)
  expect_pruned_same(x + 1e8, 10, info = info)  # 1e8 offsets: distances of ~1
  y <- sim_cells(600)
  expect_pruned_same(y + 1e8, 5, method = "manhattan", info = info)
  # large and tiny scales, within the bounds' range (|x| <= 2^500) ...
  expect_pruned_same(x * 2^490, 7, info = info)     # ~1e148
  expect_pruned_same(y * 1e145, 4, method = "manhattan", info = info)
  expect_pruned_same(y * 1e-160, 7, info = info)   # squares underflow
  expect_pruned_same(y * 2^-1060, 3, method = "manhattan", info = info)
  # ... and beyond it the brute force, whatever the option
  expect_pruned_same(x * 1e200, 7, info = info, path = "brute force: values")
})

test_that("pruned k-NN with k = 1, k = n - 1 and k = n, and small n", {
  info <- new_seed()
  x <- sim_cells(120, p = 9)
  for (k in c(1L, 2L, 119L)) expect_pruned_same(x, k, info = paste(info, "k", k))
  q <- x[c(5, 5, 17), ] + c(0, 1e-9, 0)   # a copy of a row: at distance 0
  for (k in c(1L, 120L)) {
    r <- expect_pruned_same(x, k, query = q, info = paste(info, "k", k))
    expect_identical(r$index[c(1, 3), 1], c(5L, 17L))
  }
  expect_pruned_same(x[1:2, ], 1, info = info)
  expect_pruned_same(x[1:3, ], 1, query = x[3:1, ], info = info)
})

test_that("pruned k-NN does not depend on the threads nor touch R's RNG", {
  info <- new_seed()
  x <- sim_cells(1200)
  seed <- .Random.seed
  a <- knn_path(TRUE, x, 9, threads = 1L, path = "pruned search")
  expect_identical(.Random.seed, seed)
  b <- knn_path(TRUE, x, 9, threads = 2L, path = "pruned search")
  expect_identical(a, b, info = info)
})

test_that("the rule picks the pruned search on clusters, the brute force on noise", {
  info <- new_seed()
  x <- sim_cells(3000)
  a <- knn_path(NA, x, 10, path = "pruned search")
  expect_identical(a, knn_path(FALSE, x, 10), info = info)
  z <- matrix(rnorm(1500 * 40), 1500, 40)
  knn_path(NA, z, 10, path = "brute force: pruning would not pay")
  knn_path(NA, x[1:300, ], 10, path = "brute force: few rows")
  knn_path(NA, x, 1000, path = "brute force: k is large")
  # NA or Inf in the data, other metrics, the option
  xn <- x[1:600, ]
  xn[3, 4] <- NA
  xn[5, 1] <- Inf
  expect_identical(suppressWarnings(knn_path(TRUE, xn, 5, path = "brute force: values")),
                   suppressWarnings(knn_path(FALSE, xn, 5)))
  knn_path(TRUE, x[1:600, ], 5, method = "maximum", path = "brute force: not a Euclidean")
  expect_error(knn_path("yes", x[1:10, ], 2), "gpucor.knn_prune")
})

test_that("GpucorParam's searches take the pruned search", {
  skip_if_not_installed("BiocNeighbors")
  info <- new_seed()
  x <- sim_cells(1000)
  q <- sim_cells(150)
  bn <- function(prune, fun, ...) {
    old <- options(gpucor.knn_prune = prune)
    on.exit(options(old))
    fun(...)
  }
  for (d in c("Euclidean", "Manhattan", "Cosine")) {
    p <- GpucorParam(d, backend = "cpu")
    expect_identical(bn(TRUE, BiocNeighbors::findKNN, x, 10, BNPARAM = p),
                     bn(FALSE, BiocNeighbors::findKNN, x, 10, BNPARAM = p), info = info)
    expect_identical(bn(TRUE, BiocNeighbors::findKNN, x, 10, BNPARAM = p, subset = 3:40),
                     bn(FALSE, BiocNeighbors::findKNN, x, 10, BNPARAM = p, subset = 3:40),
                     info = info)
    expect_identical(bn(TRUE, BiocNeighbors::queryKNN, x, q, 7, BNPARAM = p),
                     bn(FALSE, BiocNeighbors::queryKNN, x, q, 7, BNPARAM = p), info = info)
  }
})
