# gpu_brain_metrics() against helper-bct.R's plain-R reference of the Brain
# Connectivity Toolbox's definitions (every metric, to 1e-12), and against
# igraph where the definitions coincide (betweenness on lengths, the binary
# transitivity and clustering): random weighted networks of every sign,
# thresholds of both kinds with ties, disconnected graphs, isolated nodes,
# tiny networks, many subjects against one at a time; and the errors.

# got and want agree: the same NaN/NA and infinite cells, the finite ones
# to 1e-12 relative (absolute below 1).
expect_close <- function(got, want, info) {
  expect_identical(is.nan(got), is.nan(want), info = info)
  expect_identical(is.infinite(got) & got > 0, is.infinite(want) & want > 0, info = info)
  f <- is.finite(want)
  expect_true(all(is.finite(got[f])), info = info)
  err <- abs(got[f] - want[f]) / pmax(1, abs(want[f]))
  expect_lte(max(c(0, err)), 1e-12, label = info)
}

# A symmetric signed network: correlation-like weights in (-1, 1), a few
# exact zeros, optionally the last nodes apart and one isolated.
random_net <- function(n, apart = FALSE) {
  w <- matrix(stats::runif(n * n, -1, 1), n)
  w[matrix(stats::runif(n * n) < 0.15, n)] <- 0
  w[lower.tri(w)] <- t(w)[lower.tri(w)]
  diag(w) <- 1
  if (apart && n > 5) {
    k <- n - 1:2
    w[k, -k] <- 0
    w[-k, k] <- 0
    w[1, -1] <- w[-1, 1] <- 0   # node 1 isolated
  }
  w
}

compare_all <- function(got, want, s, n, info) {
  rows <- got$nodal$subject == s
  for (m in names(want$nodal))
    expect_close(got$nodal[[m]][rows], as.double(want$nodal[[m]]), paste(info, m))
  for (m in names(want$global))
    expect_close(got$global[[m]][match(s, got$global$subject)], want$global[[m]], paste(info, m))
}

test_that("every metric equals the BCT reference: random networks, signs, thresholds", {
  for (rep in 1:6) {
    info0 <- new_seed()
    n <- sample(c(1:4, 7, 12, 20), 1)
    apart <- stats::runif(1) < 0.5
    x <- random_net(n, apart)
    part <- sample.int(min(n, 3), n, replace = TRUE)
    for (sign in c("positive", "absolute", "negative")) {
      thr <- switch(sample(3, 1), NULL, sample(c(0.1, 0.3, 0.75, 1), 1), "abs")
      type <- "proportional"
      if (identical(thr, "abs")) { thr <- 0.2; type <- "absolute" }
      inf <- stats::runif(1) < 0.5
      norm <- stats::runif(1) < 0.3
      info <- paste(info0, "n", n, sign, type, format(thr), "inf", inf, "norm", norm)
      got <- gpu_brain_metrics(x, partition = part, threshold = thr, threshold_type = type,
                               sign = sign, normalize = norm, include_infinite = inf,
                               backend = "cpu")
      W <- bct_prepare(x, sign, thr, type, norm)
      compare_all(got, bct_all(W, Ci = part, infinite_dist = inf), 1L, n, info)
      expect_identical(got$nodal$degree, as.integer(rowSums(W != 0)), info = info)
    }
  }
})

test_that("the other weight-to-length conversions follow the reference's lengths", {
  info <- new_seed()
  n <- 15
  x <- abs(random_net(n, TRUE))
  x[x == 1] <- 0.99
  diag(x) <- 0
  for (weights in c("distance", "neglog", "one_minus")) {
    W <- bct_prepare(x)
    L <- W
    L[W != 0] <- switch(weights, distance = W[W != 0], neglog = -log(W[W != 0]),
                        one_minus = 1 - W[W != 0])
    want <- bct_all(W, L)
    got <- gpu_brain_metrics(x, weights = weights, backend = "cpu")
    compare_all(got, want, 1L, n, paste(info, weights))
  }
})

test_that("betweenness and binary clustering equal igraph's", {
  skip_if_not_installed("igraph")
  for (rep in 1:3) {
    info <- new_seed()
    n <- sample(c(8, 30, 60), 1)
    x <- abs(random_net(n, rep == 2))
    got <- gpu_brain_metrics(x, threshold = 0.3, metrics = c("betweenness", "betweenness_norm"),
                             backend = "cpu")
    W <- bct_prepare(x, threshold = 0.3)
    # lengths 1 / w, scaled by 2^32 for igraph's absolute precision (REFERENCES.md)
    g <- igraph::graph_from_adjacency_matrix(bct_lengths(W) * 2^32, mode = "undirected",
                                             weighted = TRUE, diag = FALSE)
    want <- igraph::betweenness(g, directed = FALSE, weights = igraph::E(g)$weight)
    expect_close(got$nodal$betweenness, 2 * want, info)
    expect_close(got$nodal$betweenness_norm, 2 * want / ((n - 1) * (n - 2)), info)
    # integer lengths: many equal-length paths, each counted as BCT and igraph count them
    xi <- x
    xi[xi != 0] <- sample(1:3, sum(xi != 0), replace = TRUE)
    xi[lower.tri(xi)] <- t(xi)[lower.tri(xi)]
    got <- gpu_brain_metrics(xi, weights = "distance", metrics = "betweenness", backend = "cpu")
    Wi <- bct_prepare(xi)
    gi <- igraph::graph_from_adjacency_matrix(Wi, mode = "undirected", weighted = TRUE, diag = FALSE)
    expect_close(got$nodal$betweenness,
                 2 * igraph::betweenness(gi, directed = FALSE, weights = igraph::E(gi)$weight),
                 paste(info, "integer lengths"))
    expect_close(got$nodal$betweenness, bct_betweenness_wei(Wi), paste(info, "integer, BCT"))
    # binary network: Onnela's clustering and transitivity are igraph's
    b <- (W != 0) * 1
    got <- gpu_brain_metrics(b, metrics = c("clustering", "transitivity"), backend = "cpu")
    gb <- igraph::graph_from_adjacency_matrix(b, mode = "undirected", diag = FALSE)
    expect_close(got$nodal$clustering,
                 igraph::transitivity(gb, type = "local", isolates = "zero"), info)
    expect_close(got$global$transitivity, igraph::transitivity(gb, type = "global"), info)
  }
})

test_that("ties at the proportional threshold are kept in BCT's order", {
  # every weight equal: keep round(6 p) of the 6 pairs of the upper
  # triangle, in column-major order: (1,2), (1,3), (2,3), (1,4), (2,4), (3,4)
  x <- matrix(0.5, 4, 4)
  keep <- function(p) {
    m <- gpu_brain_metrics(x, threshold = p, metrics = "degree", backend = "cpu")
    m$nodal$degree
  }
  expect_identical(keep(0.5), c(2L, 2L, 2L, 0L))     # (1,2) (1,3) (2,3)
  expect_identical(keep(1 / 6), c(1L, 1L, 0L, 0L))   # (1,2)
  expect_identical(keep(0.25), c(2L, 1L, 1L, 0L))    # round(1.5) = 2: (1,2) (1,3)
  # MATLAB's round() takes halves away from zero, R's to even: 2.5 -> 3, not 2
  x5 <- matrix(0.5, 5, 5)   # 10 pairs; p = 0.25 -> 2.5 -> 3 pairs kept
  m <- gpu_brain_metrics(x5, threshold = 0.25, metrics = "degree", backend = "cpu")
  expect_identical(sum(m$nodal$degree), 6L)
  # random ties from a few levels, against the reference
  for (rep in 1:3) {
    info <- new_seed()
    n <- 14
    w <- matrix(sample(c(0.1, 0.2, 0.3), n * n, replace = TRUE), n)
    w[lower.tri(w)] <- t(w)[lower.tri(w)]
    p <- stats::runif(1, 0.05, 0.9)
    got <- gpu_brain_metrics(w, threshold = p, metrics = c("degree", "strength"), backend = "cpu")
    W <- bct_threshold_proportional(w, p)
    expect_identical(got$nodal$degree, as.integer(rowSums(W != 0)), info = info)
    expect_close(got$nodal$strength, rowSums(W), info)
  }
})

test_that("many subjects in one call equal one call each; lists and arrays; threads", {
  info <- new_seed()
  n <- 16
  S <- 7
  xs <- lapply(seq_len(S), function(s) random_net(n, s %% 3 == 0))
  names(xs) <- paste0("sub", seq_len(S))
  part <- matrix(sample.int(4, n * S, replace = TRUE), n, S)
  run <- function(x, p, threads)
    withr::with_options(list(gpucor.threads = threads),
                        gpu_brain_metrics(x, partition = p, threshold = 0.3, backend = "cpu"))
  all <- run(xs, part, 2L)
  expect_identical(unique(all$nodal$subject), names(xs))
  expect_identical(all$global$subject, names(xs))
  arr <- array(unlist(xs), c(n, n, S), dimnames = list(NULL, NULL, names(xs)))
  expect_identical(run(arr, part, 2L), all)
  expect_identical(run(xs, lapply(seq_len(S), function(s) part[, s]), 1L)$nodal$strength,
                   all$nodal$strength)
  for (s in seq_len(S)) {
    one <- run(xs[[s]], part[, s], 2L)
    rows <- all$nodal$subject == names(xs)[s]
    for (m in setdiff(names(one$nodal), c("subject", "node")))
      expect_equal(one$nodal[[m]], all$nodal[[m]][rows], tolerance = 1e-13, info = paste(info, m))
    for (m in setdiff(names(one$global), "subject"))
      expect_equal(one$global[[m]], all$global[[m]][s], tolerance = 1e-13, info = paste(info, m))
    want <- bct_all(bct_prepare(xs[[s]], threshold = 0.3), Ci = part[, s])
    compare_all(all, want, names(xs)[s], n, paste(info, "subject", s))
  }
  one_thread <- run(xs[[1]], part[, 1], 1L)
  two <- run(xs[[1]], part[, 1], 2L)
  expect_equal(one_thread, two, tolerance = 1e-13)
})

test_that("the result's shape: names, metrics chosen, module metrics only with a partition", {
  x <- random_net(5)
  dimnames(x) <- list(letters[1:5], letters[1:5])
  m <- gpu_brain_metrics(x, backend = "cpu")
  expect_identical(names(m), c("nodal", "global"))
  expect_identical(m$nodal$node, letters[1:5])
  expect_identical(m$nodal$subject, rep(1L, 5))
  expect_false("participation" %in% names(m$nodal))
  expect_false("modularity" %in% names(m$global))
  m <- gpu_brain_metrics(x, metrics = c("modularity", "strength"), partition = c(1, 1, 2, 2, 2),
                         backend = "cpu")
  expect_identical(names(m$nodal), c("subject", "node", "strength"))
  expect_identical(names(m$global), c("subject", "modularity"))
  # labels of any kind: the same modules give the same values
  m2 <- gpu_brain_metrics(x, metrics = "modularity", partition = factor(c("u", "u", "v", "v", "v")),
                          backend = "cpu")
  expect_identical(m2$global$modularity, m$global$modularity)
})

test_that("bad input is a clear error", {
  x <- random_net(6)
  expect_error(gpu_brain_metrics(matrix(1, 3, 4)), "must be square")
  y <- x
  y[1, 2] <- 0.123
  expect_error(gpu_brain_metrics(y, backend = "cpu"), "not symmetric \\(\\[1, 2\\]")
  expect_error(gpu_brain_metrics(list(x, y), backend = "cpu"), "subject 2 is not symmetric")
  expect_error(gpu_brain_metrics(list(x, random_net(5))), "must have one size")
  expect_error(gpu_brain_metrics(x, partition = 1:5), "one label per region \\(6\\), not 5")
  expect_error(gpu_brain_metrics(x, partition = c(1:5, NA)), "NA labels")
  expect_error(gpu_brain_metrics(x, threshold = 0), "in \\(0, 1\\]")
  expect_error(gpu_brain_metrics(x, threshold = 1.5), "in \\(0, 1\\]")
  expect_error(gpu_brain_metrics(x, threshold = c(0.1, 0.2)), "single finite number")
  expect_error(gpu_brain_metrics(x, metrics = "participation"), "need[s]? a 'partition'")
  expect_error(gpu_brain_metrics(x, metrics = "nope"), "unknown metric \"nope\"")
  y <- x
  y[2, 3] <- y[3, 2] <- NA
  expect_error(gpu_brain_metrics(y, backend = "cpu"), "not a finite number at \\[2, 3\\]")
  z <- abs(x)
  z[1, 2] <- z[2, 1] <- 1
  expect_error(gpu_brain_metrics(z, weights = "one_minus", backend = "cpu"),
               "edge 1 - 2 .* length 0")
  expect_error(gpu_brain_metrics("a"), "numeric")
  expect_error(gpu_brain_metrics(x, sign = "both"), "'arg' should be one of")
  # the diagonal is ignored, NA there too
  d <- x
  diag(d) <- NA
  expect_identical(gpu_brain_metrics(d, backend = "cpu"), gpu_brain_metrics(x, backend = "cpu"))
})

test_that("time series are correlated first (series = TRUE)", {
  info <- new_seed()
  ts <- array(stats::rnorm(9 * 40 * 3), c(9, 40, 3))
  nets <- lapply(1:3, function(s) stats::cor(t(ts[, , s])))
  got <- gpu_brain_metrics(ts, series = TRUE, threshold = 0.4, backend = "cpu")
  want <- gpu_brain_metrics(nets, threshold = 0.4, backend = "cpu")
  expect_equal(got, want, tolerance = 1e-12, info = info)
  sp <- gpu_brain_metrics(lapply(1:3, function(s) ts[, , s]), series = TRUE, method = "spearman",
                          metrics = "strength", backend = "cpu")
  want <- gpu_brain_metrics(lapply(1:3, function(s) stats::cor(t(ts[, , s]), method = "spearman")),
                            metrics = "strength", backend = "cpu")
  expect_equal(sp, want, tolerance = 1e-12, info = info)
  expect_error(gpu_brain_metrics(list(ts[, , 1], ts[1:8, , 2]), series = TRUE, backend = "cpu"),
               "same regions")
})

test_that("small-worldness: sigma and omega from the random networks and lattices it makes", {
  info <- new_seed()
  n <- 18
  x <- abs(random_net(n))
  W <- bct_prepare(x, threshold = 0.35)
  got <- gpu_brain_metrics(list(x, x), metrics = c("sigma", "omega"), threshold = 0.35,
                           n_random = 3, rewire = 4, seed = 11, backend = "cpu")
  lam <- function(w) bct_charpath(bct_distance_wei(bct_lengths(w)))$lambda
  cc <- function(w) mean(bct_clustering_coef_wu(w))
  for (s in 1:2) {
    rnd <- lapply(1:3, function(k) .Call(gpucor:::C_gpucor_bct_rewire, W, FALSE, 4L, 11, s, k))
    lat <- lapply(1:3, function(k) .Call(gpucor:::C_gpucor_bct_rewire, W, TRUE, 4L, 11, s, k))
    for (r in c(rnd, lat)) {   # degrees, weights and symmetry kept; edges moved
      expect_identical(rowSums(r != 0), rowSums(W != 0), info = info)
      expect_identical(sort(r[r != 0]), sort(W[W != 0]), info = info)
      expect_identical(r, t(r), info = info)
    }
    expect_false(identical(rnd[[1]], W), info = info)
    expect_false(identical(rnd[[1]], rnd[[2]]), info = info)
    Cr <- mean(vapply(rnd, cc, 0)); Lr <- mean(vapply(rnd, lam, 0))
    Cl <- mean(vapply(lat, cc, 0))
    expect_close(got$global$sigma[s], (cc(W) / Cr) / (lam(W) / Lr), paste(info, "sigma", s))
    expect_close(got$global$omega[s], Lr / lam(W) - cc(W) / Cl, paste(info, "omega", s))
  }
  # finite values where the path lengths are (connected pairs only)
  big <- abs(random_net(40))
  m <- gpu_brain_metrics(big, metrics = c("sigma", "omega"), threshold = 0.3, n_random = 4,
                         seed = 3, include_infinite = FALSE, backend = "cpu")
  expect_true(is.finite(m$global$sigma) && is.finite(m$global$omega), info = info)
  # reproducible: the seed, not the threads; set.seed() for seed = NULL
  again <- withr::with_options(list(gpucor.threads = 1L),
                               gpu_brain_metrics(list(x, x), metrics = c("sigma", "omega"),
                                                 threshold = 0.35, n_random = 3, rewire = 4,
                                                 seed = 11, backend = "cpu"))
  expect_identical(again, got)
  set.seed(1)
  a <- gpu_brain_metrics(x, metrics = "sigma", threshold = 0.35, n_random = 2, backend = "cpu")
  set.seed(1)
  b <- gpu_brain_metrics(x, metrics = "sigma", threshold = 0.35, n_random = 2, backend = "cpu")
  expect_identical(a, b)
  expect_false("sigma" %in% names(gpu_brain_metrics(x, backend = "cpu")$global))
  expect_error(gpu_brain_metrics(x, metrics = "sigma", n_random = 0), "positive whole number")
  expect_error(gpu_brain_metrics(x, metrics = "sigma", seed = -1), "whole number >= 0")
  # a star: no two edges with four distinct ends; the rewiring gives up
  star <- matrix(0, 5, 5); star[1, -1] <- star[-1, 1] <- 1
  expect_silent(gpu_brain_metrics(star, metrics = "sigma", seed = 1, backend = "cpu"))
})

test_that("a network larger than a chunk of searches: one subject's threads as several subjects'", {
  skip_if_not_installed("igraph")
  info <- new_seed()
  n <- 300
  x <- abs(random_net(n))
  ms <- c("betweenness", "eccentricity", "local_efficiency", "global_efficiency")
  one <- withr::with_options(list(gpucor.threads = 2L),
                             gpu_brain_metrics(x, metrics = ms, threshold = 0.05, backend = "cpu"))
  two <- withr::with_options(list(gpucor.threads = 2L),
                             gpu_brain_metrics(list(x, x), metrics = ms, threshold = 0.05,
                                               backend = "cpu"))
  for (m in c("betweenness", "eccentricity", "local_efficiency"))
    expect_equal(one$nodal[[m]], two$nodal[[m]][1:n], tolerance = 1e-13, info = paste(info, m))
  expect_equal(two$global$global_efficiency, rep(one$global$global_efficiency, 2),
               tolerance = 1e-13)
  W <- bct_prepare(x, threshold = 0.05)
  g <- igraph::graph_from_adjacency_matrix(bct_lengths(W) * 2^32, mode = "undirected",
                                           weighted = TRUE, diag = FALSE)
  expect_close(one$nodal$betweenness,
               2 * igraph::betweenness(g, directed = FALSE, weights = igraph::E(g)$weight), info)
})

test_that("igraph graphs are networks too", {
  skip_if_not_installed("igraph")
  x <- abs(random_net(8))
  diag(x) <- 0
  dimnames(x) <- list(LETTERS[1:8], LETTERS[1:8])
  g <- igraph::graph_from_adjacency_matrix(x, mode = "undirected", weighted = TRUE, diag = FALSE)
  expect_identical(gpu_brain_metrics(g, backend = "cpu"), gpu_brain_metrics(x, backend = "cpu"))
  expect_identical(gpu_brain_metrics(list(a = g, b = g), backend = "cpu")$global$subject, c("a", "b"))
  d <- igraph::graph_from_adjacency_matrix(x, mode = "directed", weighted = TRUE)
  expect_error(gpu_brain_metrics(d), "directed graph")
})
