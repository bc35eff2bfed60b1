# Calls written for the reference functions run on gpucor's (issue 37): each
# exported function's formals begin with its reference's (the names in
# order, or a stated mapping), and positional calls as users write them
# give the reference's results.

# gpucor function -> its reference: package, function, how many of the
# reference's formals must be gpucor's first ones (NULL: all), and the
# names gpucor spells otherwise (reference name = gpucor name).
familiar_refs <- list(
  gpu_cor = list("stats", "cor"),
  gpu_cov = list("stats", "cov"),
  gpu_dist = list("stats", "dist"),
  gpu_hclust = list("stats", "hclust"),
  gpu_bicor = list("WGCNA", "bicor"),
  gpu_adjacency = list("WGCNA", "adjacency"),
  gpu_tom = list("WGCNA", "TOMsimilarityFromExpr"),
  gpu_soft_threshold = list("WGCNA", "pickSoftThreshold"),
  gpu_module_eigengenes = list("WGCNA", "moduleEigengenes"),
  gpu_merge_close_modules = list("WGCNA", "mergeCloseModules"),
  gpu_blockwise_modules = list("WGCNA", "blockwiseModules"),
  gpu_blockwise_consensus_modules = list("WGCNA", "blockwiseConsensusModules"),
  gpu_cutree_dynamic = list("dynamicTreeCut", "cutreeDynamic"),
  gpu_cor_shrink = list("corpcor", "cor.shrink"),
  gpu_pcor_shrink = list("corpcor", "pcor.shrink"),
  # parmigene's matrix is 'mat', gpucor's 'x' (variables in rows in both)
  gpu_knnmi = list("parmigene", "knnmi.all", NULL, c(mat = "x")),
  gpu_aracne_a = list("parmigene", "aracne.a"),
  gpu_aracne_m = list("parmigene", "aracne.m"),
  gpu_clr = list("parmigene", "clr"),
  gpu_mrnet = list("parmigene", "mrnet"),
  # BiocNeighbors' generics (X, k, ..., BNINDEX, BNPARAM): the data and k
  # (threshold) are the first two; the rest is S4 dispatch
  gpu_knn = list("BiocNeighbors", "findKNN", 2L, c(X = "x")),
  gpu_range = list("BiocNeighbors", "findNeighbors", 2L, c(X = "x")))

test_that("each function's formals begin with its reference's", {
  for (f in names(familiar_refs)) {
    r <- familiar_refs[[f]]
    if (r[[1L]] != "stats" && !requireNamespace(r[[1L]], quietly = TRUE)) next
    want <- names(formals(getExportedValue(r[[1L]], r[[2L]])))
    if (length(r) > 2L && !is.null(r[[3L]])) want <- want[seq_len(r[[3L]])]
    if (length(r) > 3L) want <- ifelse(want %in% names(r[[4L]]), r[[4L]][want], want)
    got <- names(formals(getExportedValue("gpucor", f)))
    expect_identical(got[seq_along(want)], unname(want), info = f)
  }
  # minet (not installed here): build.mim(dataset, estimator, disc, nbins)
  expect_identical(names(formals(gpu_build_mim))[1:4], c("dataset", "estimator", "disc", "nbins"))
  # TOMsimilarity's arguments are all gpu_tom()'s, by name (its adjMat too)
  skip_if_not_installed("WGCNA")
  expect_true(all(names(formals(WGCNA::TOMsimilarity)) %in% names(formals(gpu_tom))))
  # igraph::distances(graph, v, to, mode, weights, algorithm): the graph is
  # gpu_shortest_paths()'s first argument and 'weights' its second (a numeric
  # vector of lengths, as igraph's); mode comes from the graph; all pairs
  expect_identical(names(formals(gpu_shortest_paths))[1:2], c("w", "weights"))
})

test_that("gpu_hclust(d, method, members) as hclust(d, method, members)", {
  info <- new_seed()
  x <- rmat(30, 4)
  d <- dist(x)
  for (m in c("average", "ward.D2", "centroid")) {
    got <- gpu_hclust(d, m, backend = "cpu")
    want <- hclust(d, m)
    expect_identical(got$merge, want$merge, info = paste(m, info))
    expect_equal(got$height, want$height, tolerance = 1e-14, info = paste(m, info))
  }
  w <- sample(1:3, 30, TRUE)
  expect_identical(gpu_hclust(d, "average", w, backend = "cpu")$merge,
                   hclust(d, "average", w)$merge, info = info)
  # the older named call still works
  expect_identical(gpu_hclust(x = x, method = "average", backend = "cpu")$merge,
                   hclust(d, "average")$merge, info = info)
})

test_that("gpu_bicor takes WGCNA::bicor's positions, cosine and harmless habits", {
  skip_if_not_installed("WGCNA")
  info <- new_seed()
  x <- rmat(40, 8)
  x[1, 1] <- 20
  y <- rmat(40, 3)
  expect_equal(gpu_bicor(x, y, TRUE, FALSE, backend = "cpu"),
               WGCNA::bicor(x, y, TRUE, FALSE), tolerance = 1e-14, info = info)
  expect_equal(gpu_bicor(x, NULL, TRUE, TRUE, "all.obs", 0.05, backend = "cpu"),
               WGCNA::bicor(x, NULL, TRUE, TRUE, "all.obs", 0.05), tolerance = 1e-14, info = info)
  # WGCNA's cosine bicor, every fallback (column 2 has zero MAD)
  xz <- x
  xz[1:25, 2] <- 1
  for (fb in c("none", "individual", "all")) {
    got <- suppressWarnings(gpu_bicor(xz, pearsonFallback = fb, cosine = TRUE, maxPOutliers = 0.1,
                                      backend = "cpu"))
    want <- suppressWarnings(WGCNA::bicor(xz, pearsonFallback = fb, cosine = TRUE,
                                          maxPOutliers = 0.1))
    expect_equal(got, want, tolerance = 1e-14, info = paste(fb, info))
  }
  expect_equal(gpu_bicor(x, y, robustY = FALSE, cosineX = TRUE, cosineY = TRUE, backend = "cpu"),
               WGCNA::bicor(x, y, robustY = FALSE, cosineX = TRUE, cosineY = TRUE),
               tolerance = 1e-14, info = info)
  expect_equal(gpu_bicor(x, y, cosineY = TRUE, backend = "cpu"),
               WGCNA::bicor(x, y, cosineY = TRUE), tolerance = 1e-14, info = info)
  xna <- x
  xna[2, 3] <- NA
  expect_error(gpu_bicor(xna, use = "p", cosine = TRUE), "complete data only")
  # nThreads, verbose = 0/1/2 and indent are never errors
  want <- WGCNA::bicor(x)
  for (v in 0:2)
    expect_equal(suppressMessages(gpu_bicor(x, verbose = v, nThreads = 1, indent = 1,
                                            backend = "cpu")),
                 want, tolerance = 1e-14, info = paste(v, info))
  old <- getOption("gpucor.threads")
  gpu_bicor(x, nThreads = 1, backend = "cpu")
  expect_identical(getOption("gpucor.threads"), old)
  expect_error(gpu_bicor(x, nThreads = -1), "'nThreads' must be 0 or a positive number")
})

test_that("an ignored argument is named once per session, with the reason", {
  x <- rmat(20, 4)
  rm(list = ls(gpucor:::.gpucor_state, pattern = "^ignored:gpu_bicor:"),
     envir = gpucor:::.gpucor_state)
  expect_message(gpu_bicor(x, indent = 2, backend = "cpu"),
                 "gpu_bicor\\(\\): 'indent' is ignored: gpucor's messages are not indented")
  expect_silent(gpu_bicor(x, indent = 2, backend = "cpu"))
  expect_silent(gpu_bicor(x, backend = "cpu"))
})

test_that("gpu_adjacency takes WGCNA::adjacency's positions and options", {
  skip_if_not_installed("WGCNA")
  info <- new_seed()
  x <- rmat(30, 9, dimnames = list(NULL, paste0("g", 1:9)))
  W <- matrix(runif(length(x)), nrow(x))
  cases <- list(
    list(x, NULL, "signed", 4),
    list(x, 2:3, "unsigned", 6, "bicor"),
    list(x, c("g1", "g5"), "signed hybrid", 3),
    list(x, NULL, "unsigned", 6, "cor", list(use = "p", method = "spearman")),
    list(x, NULL, "unsigned", 6, "cor", "use = 'p', cosine = TRUE"),
    list(x, NULL, "signed", 6, "bicor", list(maxPOutliers = 0.05, cosine = TRUE)),
    list(x, NULL, "unsigned", 6, "cor", list(use = "p"), W),
    list(x, 4:5, "signed", 2, "cor", list(use = "p"), W),
    list(x, NULL, "distance"),
    list(x, NULL, "distance", 2, "cor", list(), NULL, "dist", "method = 'manhattan'"))
  for (k in seq_along(cases)) {
    a <- cases[[k]]
    got <- do.call(gpu_adjacency, c(a, backend = "cpu"))
    # WGCNA finds corFnc by name from the caller (stats' cor here, WGCNA
    # not being attached): give it WGCNA's functions
    if (length(a) >= 6L && is.list(a[[6L]]))
      a[[5L]] <- getExportedValue("WGCNA", a[[5L]])
    else if (length(a) >= 5L && identical(a[[5L]], "bicor")) a[[5L]] <- WGCNA::bicor
    want <- do.call(WGCNA::adjacency, a)
    expect_equal(got, want, tolerance = 1e-13, info = paste("case", k, info))
  }
  # gpucor's named arguments of before still work
  expect_equal(gpu_adjacency(x = x, power = 5, corType = "bicor", backend = "cpu"),
               WGCNA::adjacency(x, power = 5, corFnc = WGCNA::bicor), tolerance = 1e-13, info = info)
  expect_error(gpu_adjacency(x, corFnc = "kendallcor"), "'corFnc' must be")
  expect_error(gpu_adjacency(x, corOptions = list(frob = 1)), "corOptions 'frob' not supported")
})

test_that("gpu_tom takes TOMsimilarityFromExpr's positions and extra arguments", {
  skip_if_not_installed("WGCNA")
  info <- new_seed()
  x <- rmat(30, 10)
  W <- matrix(runif(length(x)), nrow(x))
  tom <- function(...) WGCNA::TOMsimilarityFromExpr(..., verbose = 0)
  expect_equal(gpu_tom(x, NULL, "bicor", "signed", 8, backend = "cpu"),
               tom(x, NULL, "bicor", "signed", 8), tolerance = 1e-13, info = info)
  expect_equal(gpu_tom(x, W, backend = "cpu"), tom(x, W), tolerance = 1e-13, info = info)
  expect_equal(gpu_tom(x, W[, 1], backend = "cpu"), tom(x, W[, rep(1, 10)]), tolerance = 1e-13,
               info = info)
  for (ct in c("pearson", "bicor"))
    expect_equal(gpu_tom(x, corType = ct, cosineCorrelation = TRUE, backend = "cpu"),
                 tom(x, corType = ct, cosineCorrelation = TRUE), tolerance = 1e-13,
                 info = paste(ct, info))
  for (tt in c("signed", "signed Nowick", "unsigned", "signed 2", "signed Nowick 2"))
    for (nt in c("unsigned", "signed hybrid")) {
      want <- suppressMessages(capture.output(
        w <- tom(x, networkType = nt, TOMType = tt, suppressTOMForZeroAdjacencies = TRUE,
                 suppressNegativeTOM = TRUE)))
      got <- gpu_tom(x, networkType = nt, TOMType = tt, suppressTOMForZeroAdjacencies = TRUE,
                     suppressNegativeTOM = TRUE, backend = "cpu")
      lab <- paste(tt, nt, info)
      if (grepl("2", tt)) {
        # the "2" types divide differences of nearly equal sums, (L - 2a) /
        # (den - 1): an element is as exact as its condition, about
        # 1e-16 (k + 1) / (den - 1) relative (ill-conditioned where a gene's
        # connectivity outside the pair is tiny, e.g. seed 37)
        a <- gpu_adjacency(x, type = nt, power = 6, backend = "cpu")
        if (nt != "unsigned" || grepl("signed", tt)) a <- abs(a)
        diag(a) <- 1
        k <- colSums(a)
        den <- pmin(outer(k, rep(1, 10)), outer(rep(1, 10), k)) - a
        cond <- 1e-14 * (1 + (outer(k, k, pmax) + 1) / pmax(den - 1, 1e-300))
        expect_true(all(abs(got - w) <= cond * pmax(abs(w), 1e-3)), info = lab)
      } else {
        expect_equal(got, w, tolerance = 1e-13, info = lab)
      }
      # the dist is 1 - the matrix
      d <- gpu_tom(x, networkType = nt, TOMType = tt, suppressTOMForZeroAdjacencies = TRUE,
                   suppressNegativeTOM = TRUE, dist = TRUE, backend = "cpu")
      expect_equal(as.vector(d), as.vector(stats::as.dist(1 - got)), tolerance = 1e-15,
                   info = lab)
    }
  # TOMsimilarity(adjMat, ...) by its names
  r <- cor(x)
  A <- r * abs(r)^5
  capture.output(want <- WGCNA::TOMsimilarity(A, "signed", suppressTOMForZeroAdjacencies = TRUE,
                                               verbose = 0))
  expect_equal(gpu_tom(adjMat = A, TOMType = "signed", suppressTOMForZeroAdjacencies = TRUE,
                       backend = "cpu"), want, tolerance = 1e-13, info = info)
  # replaceMissingAdjacencies does what its name says (WGCNA 1.72 leaves the
  # constant gene's NAs): the TOM of the adjacency with those NAs as 0
  xc <- x
  xc[, 4] <- 1
  rc <- suppressWarnings(cor(xc))
  Ac <- rc * abs(rc)^5
  Ac[is.na(Ac)] <- 0
  diag(Ac) <- 1
  got <- gpu_tom(xc, replaceMissingAdjacencies = TRUE, backend = "cpu")
  expect_false(anyNA(got))
  expect_equal(got, WGCNA::TOMsimilarity(Ac, "signed", verbose = 0), tolerance = 1e-13,
               info = info)
  expect_warning(gpu_tom(xc, backend = "cpu"), "NA adjacencies")
  # WGCNA's habits; the old call with the power second gets a clear error
  expect_equal(suppressMessages(gpu_tom(x, verbose = 2, nThreads = 1, indent = 1,
                                        useInternalMatrixAlgebra = TRUE, backend = "cpu")),
               tom(x), tolerance = 1e-13, info = info)
  expect_error(gpu_tom(x, 6), "the power is gpu_tom\\(\\)'s fifth argument")
  expect_equal(gpu_tom(x = x, power = 6, backend = "cpu"), tom(x), tolerance = 1e-13)
})

test_that("gpu_soft_threshold takes pickSoftThreshold's positions", {
  skip_if_not_installed("WGCNA")
  info <- new_seed()
  x <- rmat(30, 25)
  W <- matrix(runif(length(x)), nrow(x))
  pst <- function(...) {
    capture.output(r <- suppressWarnings(WGCNA::pickSoftThreshold(..., verbose = 0)))
    r
  }
  cases <- list(
    list(x, TRUE, NULL, 0.8, 1:8, FALSE, 5),
    list(abs(cor(x)), FALSE, NULL, 0.8, 1:8, FALSE, 5),
    list(x, TRUE, W, 0.85, c(2, 4, 6), TRUE, 5),
    list(x, TRUE, NULL, 0.85, 1:6, FALSE, 5, NULL, "bicor", list(maxPOutliers = 0.05), "signed"))
  for (k in seq_along(cases)) {
    got <- do.call(gpu_soft_threshold, c(cases[[k]], backend = "cpu"))
    a <- cases[[k]]
    # WGCNA finds corFnc by name from where it is attached
    if (length(a) >= 9L && identical(a[[9L]], "bicor")) a[[9L]] <- WGCNA::bicor
    want <- do.call(pst, a)
    expect_equal(got, want, tolerance = 1e-10, info = paste("case", k, info))
  }
  # WGCNA's default corFnc is the function cor itself
  expect_equal(gpu_soft_threshold(x, corFnc = WGCNA::cor, powerVector = 1:4, nBreaks = 5,
                                  backend = "cpu"),
               pst(x, corFnc = WGCNA::cor, powerVector = 1:4, nBreaks = 5), tolerance = 1e-10)
  expect_error(gpu_soft_threshold(x, 1:10), "'dataIsExpr' must be TRUE or FALSE")
})

test_that("gpu_cor_edges(x, y, use, method) as gpu_cor; its edges make an igraph graph", {
  info <- new_seed()
  x <- rmat(25, 8, dimnames = list(NULL, paste0("gene", 1:8)))
  x[3, 2] <- NA
  e <- gpu_cor_edges(x, NULL, "pairwise.complete.obs", "spearman", threshold = 0, backend = "cpu")
  r <- gpu_cor(x, NULL, "pairwise.complete.obs", "spearman", backend = "cpu")
  expect_identical(names(e)[1:5], c("from", "to", "row", "col", "cor"))
  expect_equal(e$cor, r[cbind(e$row, e$col)], tolerance = 1e-14, info = info)
  expect_identical(e$from, colnames(x)[e$row])
  expect_identical(e$to, colnames(x)[e$col])
  skip_if_not_installed("igraph")
  g <- igraph::graph_from_data_frame(e, directed = FALSE)
  expect_setequal(igraph::V(g)$name, colnames(x))
  expect_identical(igraph::as_data_frame(g)$from, e$from)
  expect_equal(igraph::E(g)$cor, e$cor)
  # without names the ends are the columns' numbers
  e2 <- gpu_cor_edges(unname(x), use = "pairwise.complete.obs", top_k = 2, backend = "cpu")
  expect_identical(e2$from, e2$row)
  g2 <- igraph::graph_from_data_frame(e2, directed = FALSE)
  expect_true(all(igraph::V(g2)$name %in% as.character(1:8)))
})

test_that("gpu_shortest_paths and gpu_network_metrics take an igraph graph", {
  skip_if_not_installed("igraph")
  info <- new_seed()
  g <- igraph::sample_gnp(25, 0.2)
  igraph::V(g)$name <- paste0("v", 1:25)
  # whole-number lengths: sums exact in both (REFERENCES.md on igraph's precision)
  igraph::E(g)$weight <- sample(1:9, igraph::ecount(g), TRUE)
  expect_identical(gpu_shortest_paths(g, backend = "cpu"), igraph::distances(g), info = info)
  lens <- sample(1:5, igraph::ecount(g), TRUE)
  expect_identical(gpu_shortest_paths(g, lens, backend = "cpu"),
                   igraph::distances(g, weights = lens), info = info)
  expect_identical(gpu_shortest_paths(g, NA, backend = "cpu"),
                   igraph::distances(g, weights = NA), info = info)
  # E(g)$weight converted as asked
  expect_equal(gpu_shortest_paths(g, "inverse", backend = "cpu"),
               igraph::distances(g, weights = 1 / igraph::E(g)$weight), tolerance = 1e-12)
  gd <- igraph::sample_gnp(20, 0.15, directed = TRUE)
  igraph::E(gd)$weight <- sample(1:9, igraph::ecount(gd), TRUE)
  expect_identical(unname(gpu_shortest_paths(gd, backend = "cpu")),
                   unname(igraph::distances(gd, mode = "out")), info = info)
  m <- gpu_network_metrics(g, backend = "cpu")
  expect_identical(m$diameter, igraph::diameter(g))
  expect_identical(names(m$nodal_efficiency), igraph::V(g)$name)
  expect_error(gpu_shortest_paths(g + igraph::edges(c("v1", "v2", "v1", "v2"), weight = 2),
                                  backend = "cpu"),
               "multiple edges")
  g0 <- g
  igraph::E(g0)$weight[1] <- 0
  expect_error(gpu_shortest_paths(g0, backend = "cpu"), "edges of weight 0")
})

test_that("an input of an unknown class gets an error naming the class", {
  x <- rmat(10, 3)
  fit <- stats::lm(x[, 1] ~ x[, 2])
  expect_error(gpu_cor(fit), "'x' is an object of class \"lm\"")
  expect_error(gpu_cor(x, fit), "'y' is an object of class \"lm\"")
  expect_error(gpu_dist(fit), "'x' is an object of class \"lm\"")
  expect_error(gpu_bicor(fit), "'x' is an object of class \"lm\"")
  expect_error(gpu_tom(fit), "'datExpr' is an object of class \"lm\"")
  expect_error(gpu_cor(factor(1:3)), "class \"factor\"")
  # classed numeric data go on as before
  # (absolute differences: all.equal's relative one over the differing
  # values alone fails a 1-ulp difference of a correlation near 0, seed 189)
  expect_lt(max(abs(gpu_cor(stats::ts(x), backend = "cpu") - cor(stats::ts(x)))), 1e-14)
  expect_lt(max(abs(gpu_cor(I(x), backend = "cpu") - cor(x))), 1e-14)
})

test_that("gpu_build_mim takes minet's disc and nbins", {
  x <- rmat(30, 4)
  expect_identical(gpu_build_mim(x, "pearson", "none", 5, backend = "cpu"),
                   gpu_build_mim(x, "pearson", backend = "cpu"))
  expect_error(gpu_build_mim(x, "pearson", "equalwidth"), "'disc' must be \"none\"")
})

test_that("?gpucor names every exported function, and the table of references", {
  rd <- tools::Rd_db("gpucor")[["gpucor-package.Rd"]]
  txt <- paste(utils::capture.output(tools::Rd2txt(rd, out = stdout())), collapse = "\n")
  for (f in getNamespaceExports("gpucor"))
    expect_match(txt, paste0(f, if (f != "gpucor_options") "()"), fixed = TRUE, info = f)
  expect_match(paste(as.character(rd), collapse = ""), "From the function you use today",
               fixed = TRUE)
  for (ref in c("stats::hclust()", "WGCNA::TOMsimilarityFromExpr()", "igraph::distances()",
                "BiocNeighbors::findKNN()", "parmigene::knnmi.all()"))
    expect_match(txt, ref, fixed = TRUE, info = ref)
})
