# gpu_shortest_paths() and gpu_network_metrics() against igraph's Dijkstra
# (igraph::distances) and a plain-R reference for the metrics, on random
# dense and thresholded graphs with disconnected parts and zero-length
# edges, directed and undirected, every weights conversion, both backends,
# and CPU blocks forced small so that every phase of every round runs.

# igraph's lengths are absolutely precise (REFERENCES.md): scale by 2^32.
igraph_lengths <- function(L, directed) {
  A <- L
  A[!is.finite(A)] <- 0
  # a zero-length edge is an edge for us; igraph drops 0 entries: give it
  # the smallest positive length instead and take it back out (exact,
  # compared with the 2^32 scale)
  zero <- is.finite(L) & L == 0 & row(L) != col(L)
  A[zero] <- 2^-1074
  diag(A) <- 0
  g <- igraph::graph_from_adjacency_matrix(A * 2^32, mode = if (directed) "directed" else "undirected",
                                           weighted = TRUE, diag = FALSE)
  d <- igraph::distances(g, mode = "out") / 2^32
  d[d < 2^-1000] <- 0
  d
}

# The lengths of the edges that the weights make, as the help page says.
to_lengths <- function(w, weights, threshold = NULL) {
  L <- switch(weights, distance = w, inverse = 1 / w, neglog = -log(w), one_minus = 1 - w)
  L[is.na(w) | w == 0] <- Inf
  if (!is.null(threshold)) L[!is.na(w) & w < threshold] <- Inf
  diag(L) <- 0
  L
}

expect_lengths <- function(got, want, info) {
  expect_identical(is.finite(got), is.finite(want), info = info)
  f <- is.finite(want) & want > 0
  expect_lte(max(c(0, abs(got[f] - want[f]) / want[f])), 1e-12, label = info)
  z <- is.finite(want) & want == 0
  expect_true(all(got[z] == 0), info = info)
}

# A random graph: weights for the conversion, a fraction of non-edges (0,
# NA), a disconnected part, zero-length edges where the conversion makes
# them.
random_weights <- function(n, weights, density, directed) {
  w <- switch(weights,
              distance = matrix(stats::rexp(n * n), n),
              inverse = matrix(stats::runif(n * n, 0.05, 3), n),
              neglog = matrix(stats::runif(n * n, 0.01, 1), n),
              one_minus = matrix(stats::runif(n * n, -0.5, 1), n))
  w[matrix(stats::runif(n * n) > density, n)] <- 0
  if (n > 4) w[sample.int(n * n, n)] <- NA
  if (weights %in% c("neglog", "one_minus") && n > 3) w[sample.int(n * n, 3)] <- 1
  if (!directed) w[lower.tri(w)] <- t(w)[lower.tri(w)]
  if (n > 6) {   # the last vertices apart
    k <- n - 2:1
    w[k, -k] <- 0
    w[-k, k] <- 0
  }
  w
}

test_that("shortest paths equal igraph's on random graphs, every conversion, both backends", {
  skip_if_not_installed("igraph")
  for (backend in test_backends()) for (rep in 1:3) {
    info0 <- new_seed()
    n <- sample(c(1:5, 17, 40, 70, 130), 1)
    for (weights in c("distance", "inverse", "neglog", "one_minus"))
      for (directed in c(FALSE, TRUE)) {
        info <- paste(info0, backend, "n", n, weights, if (directed) "directed" else "undirected")
        w <- random_weights(n, weights, sample(c(0.05, 0.3, 1), 1), directed)
        thr <- if (stats::runif(1) < 0.3) stats::quantile(w[!is.na(w) & w != 0], 0.2, names = FALSE)
        if (!length(thr) || is.na(thr)) thr <- NULL
        got <- gpu_shortest_paths(w, weights, threshold = thr, directed = directed,
                                  backend = backend)
        want <- igraph_lengths(to_lengths(w, weights, thr), directed)
        expect_lengths(got, want, info)
      }
  }
})

test_that("every block side gives igraph's lengths (each phase, last partial blocks)", {
  skip_if_not_installed("igraph")
  info0 <- new_seed()
  for (directed in c(FALSE, TRUE)) {
    n <- 37
    w <- random_weights(n, "distance", 0.2, directed)
    want <- igraph_lengths(to_lengths(w, "distance"), directed)
    for (b in c(1, 2, 3, 5, 7, 16, 36, 37, 64)) {
      got <- with_options(list(gpucor.cpu_tile = b),
                          gpu_shortest_paths(w, directed = directed, backend = "cpu"))
      expect_lengths(got, want, paste(info0, "block", b, directed))
    }
  }
})

test_that("a dist gives a dist; dimnames and labels are kept", {
  info <- new_seed()
  x <- matrix(stats::rnorm(30 * 3), 30, dimnames = list(paste0("v", 1:30), NULL))
  d <- stats::dist(x)
  for (backend in test_backends()) {
    got <- gpu_shortest_paths(d, threshold = 0, backend = backend)
    expect_s3_class(got, "dist")
    expect_identical(attr(got, "Labels"), paste0("v", 1:30))
    full <- gpu_shortest_paths(as.matrix(d), backend = backend)
    expect_equal(as.matrix(got), full, tolerance = 0, info = info)
    expect_identical(dimnames(full), dimnames(as.matrix(d)))
    # a complete Euclidean graph: the direct edge is shortest (up to rounding)
    expect_true(all(abs(as.vector(got) - as.vector(d)) <= 1e-12 * as.vector(d)), info = info)
  }
})

test_that("the metrics equal a plain-R reference on the lengths", {
  ref <- function(D, directed) {
    n <- nrow(D)
    off <- row(D) != col(D)
    fin <- is.finite(D) & off
    inv <- ifelse(off, 1 / D, 0)
    ecc <- apply(ifelse(fin, D, 0), 1, max)
    list(char_path_length = sum(D[fin]) / sum(fin),
         global_efficiency = sum(inv[off]) / (n * (n - 1)),
         nodal_efficiency = rowSums(inv) / (n - 1),
         eccentricity = ecc, diameter = max(ecc))
  }
  for (backend in test_backends()) for (rep in 1:3) {
    info <- paste(new_seed(), backend)
    n <- sample(c(2, 9, 50, 90), 1)
    directed <- rep == 2
    w <- random_weights(n, "inverse", 0.3, directed)
    D <- gpu_shortest_paths(w, "inverse", directed = directed, backend = "cpu")
    want <- ref(D, directed)
    got <- gpu_network_metrics(w, "inverse", directed = directed, backend = backend)
    expect_named(got, names(want))
    for (m in names(want)) expect_equal(unname(got[[m]]), want[[m]], tolerance = 1e-12,
                                        info = paste(info, m))
    one <- gpu_network_metrics(w, "inverse", directed = directed, backend = backend,
                               metrics = c("diameter", "eccentricity"))
    expect_named(one, c("diameter", "eccentricity"))
  }
})

test_that("metrics from data are the metrics of gpu_cor's network", {
  info <- new_seed()
  x <- matrix(stats::rnorm(20 * 25), 20, dimnames = list(NULL, paste0("g", 1:25)))
  for (backend in test_backends()) {
    a <- gpu_network_metrics(x = x, weights = "one_minus", threshold = 0.3, backend = backend)
    b <- gpu_network_metrics(gpu_cor(x, backend = backend), weights = "one_minus",
                             threshold = 0.3, backend = backend)
    expect_identical(a, b)
    expect_named(a$nodal_efficiency, paste0("g", 1:25))
    s <- gpu_network_metrics(x = x, method = "spearman", weights = "one_minus",
                             threshold = 0.3, backend = backend)
    expect_identical(s, gpu_network_metrics(gpu_cor(x, method = "spearman", backend = backend),
                                            weights = "one_minus", threshold = 0.3,
                                            backend = backend))
  }
})

test_that("edge cases: no vertex, one, no edges, zero-length edges, all NA", {
  for (backend in test_backends()) {
    expect_identical(dim(gpu_shortest_paths(matrix(numeric(0), 0, 0), backend = backend)),
                     c(0L, 0L))
    expect_identical(gpu_shortest_paths(matrix(5), backend = backend), matrix(0))
    none <- gpu_shortest_paths(matrix(0, 3, 3), backend = backend)
    expect_identical(none, matrix(c(0, Inf, Inf, Inf, 0, Inf, Inf, Inf, 0), 3))
    expect_identical(gpu_shortest_paths(matrix(NA_real_, 3, 3), backend = backend), none)
    m <- gpu_network_metrics(matrix(0, 3, 3), backend = backend)
    expect_identical(m$global_efficiency, 0)
    expect_identical(m$diameter, 0)
    expect_true(is.nan(m$char_path_length))
    # a zero-length edge (correlation 1 under "one_minus") is an edge
    w <- matrix(c(0, 1, 0.5, 1, 0, 0, 0.5, 0, 0), 3)
    d <- gpu_shortest_paths(w, "one_minus", backend = backend)
    expect_identical(d[1, 2], 0)
    expect_identical(d[2, 3], 0.5)
    expect_identical(gpu_network_metrics(w, "one_minus", backend = backend,
                                         metrics = "global_efficiency")[[1]], Inf)
    # logical adjacency: TRUE is an edge of length 1
    a <- matrix(FALSE, 4, 4); a[1, 2] <- a[2, 1] <- a[2, 3] <- a[3, 2] <- TRUE
    expect_identical(gpu_shortest_paths(a, backend = backend)[1, 3], 2)
  }
})

test_that("bad input gets a clear error", {
  w <- matrix(c(0, 2, 2, 0), 2)
  expect_error(gpu_shortest_paths(matrix(1:6, 2)), "square \\(it is 2 x 3\\)")
  expect_error(gpu_shortest_paths(matrix("a", 2, 2)), "numeric")
  expect_error(gpu_shortest_paths(list(1, 2)), "square matrix or a 'dist'")
  expect_error(gpu_shortest_paths(matrix(c(0, -1, -1, 0), 2), backend = "cpu"),
               "edge 2 -> 1 has length -1 .*need lengths >= 0")
  expect_error(gpu_shortest_paths(w, "one_minus", backend = "cpu"),
               "length -1 \\(w = 2, weights = \"one_minus\"\\).*threshold")
  expect_error(gpu_shortest_paths(w, "neglog", backend = "cpu"), "weights = \"neglog\"")
  expect_error(gpu_shortest_paths(matrix(c(0, 1, 2, 0), 2)), "not symmetric .*w\\[1, 2\\] = 2")
  expect_error(gpu_shortest_paths(stats::dist(1:3), directed = TRUE), "undirected")
  expect_error(gpu_shortest_paths(w, threshold = "a"), "'threshold' must be NULL or a single number")
  expect_error(gpu_shortest_paths(w, directed = NA), "'directed' must be TRUE or FALSE")
  expect_error(gpu_shortest_paths(w, weights = "log"), "should be one of")
  expect_error(gpu_network_metrics(), "give one of 'w'")
  expect_error(gpu_network_metrics(w, x = w), "give one of 'w'")
  expect_error(gpu_network_metrics(w, metrics = "radius"), "should be one of")
  # directed graphs may be asymmetric, and a threshold removes what would be negative
  expect_identical(gpu_shortest_paths(matrix(c(0, 1, 2, 0), 2), directed = TRUE),
                   matrix(c(0, 1, 2, 0), 2))
  expect_identical(gpu_shortest_paths(w, "one_minus", threshold = 3), matrix(c(0, Inf, Inf, 0), 2))
  for (backend in test_backends())
    expect_error(gpu_shortest_paths(matrix(c(0, -1, -1, 0), 2), backend = backend),
                 "negative cycle")
})

test_that("the GPU's single precision is float-exact", {
  skip_if_no_gpu()
  skip_if_not_installed("igraph")
  info <- new_seed()
  w <- random_weights(150, "distance", 0.1, FALSE)
  got <- gpu_shortest_paths(w, backend = "gpu", precision = "single")
  want <- igraph_lengths(to_lengths(w, "distance"), FALSE)
  expect_identical(is.finite(got), is.finite(want), info = info)
  f <- is.finite(want) & want > 0
  expect_lte(max(abs(got[f] - want[f]) / want[f]), 1e-5, label = info)
})

test_that("the GPU engine says when the lengths do not fit", {
  skip_if_no_gpu()
  w <- matrix(0, 200, 200)
  expect_error(with_options(list(gpucor.gpu_memory = 1e5),
                            gpu_shortest_paths(w, backend = "gpu")),
               "need 0.00 GB of GPU memory|need .* GB of GPU memory")
  # and nothing was left allocated: the next call works
  expect_identical(gpu_shortest_paths(w, backend = "gpu")[1, 2], Inf)
})
