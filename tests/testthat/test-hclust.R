# gpu_hclust() against stats::hclust: identical merge and order, heights to
# rounding (exactly for single, complete, centroid and median), on random
# tie-free data for every method, both engines, with members; ties checked
# for validity; the GPU against the CPU engine bit for bit.
methods <- c("complete", "single", "average", "mcquitty", "ward.D", "ward.D2", "centroid",
             "median")
backends <- c("cpu", if (isTRUE(as.vector(gpu_available()))) "gpu")

same_tree <- function(a, b, tol = 1e-12, info = "") {
  expect_identical(b$merge, a$merge, info = info)
  expect_identical(b$order, a$order, info = info)
  expect_equal(b$height, a$height, tolerance = tol, info = info)
  expect_identical(b$method, a$method, info = info)
  expect_identical(b$labels, a$labels, info = info)
  expect_identical(b$dist.method, a$dist.method, info = info)
}

test_that("every method gives stats::hclust's tree on random data (both engines)", {
  seed <- sample.int(1e6, 1)
  set.seed(seed)
  for (n in c(2, 3, 17, 230)) {
    x <- matrix(rnorm(n * 4), n)
    rownames(x) <- paste0("o", seq_len(n))
    d <- dist(x)
    for (m in methods) {
      ref <- stats::hclust(d, method = m)
      exact <- m %in% c("single", "complete", "centroid", "median")
      for (be in backends) {
        info <- sprintf("seed %d, n %d, %s, %s", seed, n, m, be)
        hc <- gpu_hclust(d, method = m, backend = be)
        same_tree(ref, hc, tol = if (exact) 0 else 1e-12, info = info)
        expect_s3_class(hc, "hclust")
      }
    }
  }
})

test_that("members are cluster sizes, as in stats", {
  seed <- sample.int(1e6, 1)
  set.seed(seed)
  n <- 120
  d <- dist(matrix(runif(n * 3), n))
  mem <- sample(1:6, n, replace = TRUE)
  for (m in methods) for (be in backends) {
    info <- sprintf("seed %d, %s, %s", seed, m, be)
    same_tree(stats::hclust(d, method = m, members = mem),
              gpu_hclust(d, method = m, members = mem, backend = be),
              tol = if (m %in% c("single", "complete", "centroid", "median")) 0 else 1e-12,
              info = info)
  }
})

test_that("from x: the distances of gpu_dist, clustered", {
  seed <- sample.int(1e6, 1)
  set.seed(seed)
  x <- matrix(rnorm(90 * 12), 90)
  rownames(x) <- sprintf("g%02d", 1:90)
  # (not Spearman's or Kendall's: on 12 coordinates they take few values,
  # so their distances tie)
  for (dm in c("euclidean", "manhattan", "correlation", "abscorrelation", "cosine",
               "minkowski")) {
    d <- gpu_dist(x, method = dm, p = 3, backend = "cpu")
    ref <- stats::hclust(d, method = "average")
    for (be in backends) {
      hc <- gpu_hclust(x = x, method = "average", distance = dm, p = 3, backend = be)
      same_tree(ref, hc, tol = 1e-10, info = sprintf("seed %d, %s, %s", seed, dm, be))
      expect_identical(hc$labels, rownames(x))
      expect_identical(hc$dist.method, dm)
    }
  }
  # centroid from x runs stats' algorithm on the CPU (the distances may come
  # from the GPU)
  for (be in backends)
    same_tree(stats::hclust(dist(x), "centroid"),
              gpu_hclust(x = x, method = "centroid", backend = be), tol = 1e-12)
})

test_that("the GPU engine gives the CPU engine's bits in double", {
  skip_if_not(isTRUE(as.vector(gpu_available())), "no usable GPU")
  seed <- sample.int(1e6, 1)
  set.seed(seed)
  n <- as.integer(Sys.getenv("GPUCOR_TEST_HCLUST_N", "3000"))   # smaller under the sanitizers
  x <- matrix(rnorm(n * 10), n)
  d <- dist(x)
  for (m in c("average", "ward.D2", "mcquitty", "complete")) {
    a <- gpu_hclust(d, method = m, backend = "cpu")
    b <- gpu_hclust(d, method = m, backend = "gpu")
    info <- sprintf("seed %d, %s", seed, m)
    expect_identical(b$merge, a$merge, info = info)
    expect_identical(b$height, a$height, info = info)
    expect_identical(b$order, a$order, info = info)
  }
  # from x on the device, and the float store
  a <- gpu_hclust(x = x, method = "average", distance = "correlation", backend = "cpu")
  b <- gpu_hclust(x = x, method = "average", distance = "correlation", backend = "gpu")
  expect_identical(b$merge, a$merge)
  expect_equal(b$height, a$height, tolerance = 1e-12)
  s <- gpu_hclust(d, method = "average", backend = "gpu", precision = "single")
  expect_equal(s$height, a <- gpu_hclust(d, method = "average", backend = "cpu")$height,
               tolerance = 1e-5)
  # the heights are the same to float rounding: the top of the tree agrees
  expect_identical(cutree(s, k = 5), cutree(gpu_hclust(d, method = "average", backend = "cpu"), k = 5))
})

test_that("with ties every merge is a closest pair at its height (single, complete, average)", {
  seed <- sample.int(1e6, 1)
  set.seed(seed)
  n <- 50
  x <- matrix(sample(0:3, n * 3, replace = TRUE), n)
  D <- as.matrix(dist(x, "manhattan"))   # many ties
  link <- list(single = min, complete = max, average = mean)
  for (m in names(link)) for (be in backends) {
    hc <- gpu_hclust(as.dist(D), method = m, backend = be)
    info <- sprintf("seed %d, %s, %s", seed, m, be)
    expect_false(is.unsorted(hc$height), info = info)
    # replay: each merge joins two current clusters at their linkage, and
    # no other pair of current clusters is closer
    cl <- as.list(seq_len(n))
    made <- vector("list", n - 1)
    members <- function(k) if (k < 0) -k else made[[k]]
    cur <- as.list(-seq_len(n))
    for (s in seq_len(n - 1)) {
      A <- members(hc$merge[s, 1]); B <- members(hc$merge[s, 2])
      expect_equal(hc$height[s], link[[m]](D[A, B]), info = info)
      ids <- vapply(cur, function(k) paste(sort(members(k)), collapse = ","), "")
      best <- Inf
      for (i in seq_along(cur)) for (j in seq_along(cur)) if (i < j)
        best <- min(best, link[[m]](D[members(cur[[i]]), members(cur[[j]])]))
      expect_equal(hc$height[s], best, info = info)
      made[[s]] <- c(A, B)
      cur <- c(Filter(function(k) !(k %in% hc$merge[s, ]), cur), list(s))
    }
    # single linkage's heights do not depend on how ties are broken
    if (m == "single")
      expect_identical(hc$height, stats::hclust(as.dist(D), "single")$height, info = info)
  }
})

test_that("the tree works with cutree, dendrograms and labels", {
  x <- matrix(rnorm(60), 20)
  rownames(x) <- letters[1:20]
  for (be in backends) {
    hc <- gpu_hclust(dist(x), method = "average", backend = be)
    ref <- stats::hclust(dist(x), method = "average")
    expect_identical(cutree(hc, k = 4), cutree(ref, k = 4))
    expect_identical(labels(as.dendrogram(hc)), labels(as.dendrogram(ref)))
    expect_identical(hc$call[[1]], as.name("gpu_hclust"))
  }
  # a square matrix is taken as a dist
  expect_identical(gpu_hclust(as.matrix(dist(x)), backend = "cpu")$merge,
                   stats::hclust(dist(x))$merge)
  # "ward" is ward.D, with stats' message
  expect_message(hc <- gpu_hclust(dist(x), method = "ward", backend = "cpu"), "ward.D")
  expect_identical(hc$method, "ward.D")
  # abbreviations as in stats
  expect_identical(gpu_hclust(dist(x), method = "av", backend = "cpu")$method, "average")
  # the input dist is not modified
  d <- dist(x); d0 <- d + 0
  invisible(gpu_hclust(d, method = "ward.D2", backend = "cpu"))
  expect_identical(d, d0)
})

test_that("bad input gives clear errors", {
  x <- matrix(rnorm(40), 10)
  d <- dist(x)
  expect_error(gpu_hclust(), "either 'd' or 'x'")
  expect_error(gpu_hclust(d, x = x), "either 'd' or 'x'")
  expect_error(gpu_hclust(d, method = "foo"), "invalid clustering method")
  expect_error(gpu_hclust(d, method = "ward.", backend = "cpu"), "invalid clustering method")
  expect_error(gpu_hclust(dist(x[1, , drop = FALSE])), "n >= 2")
  expect_error(gpu_hclust(d, members = 1:3), "invalid length of members")
  expect_error(gpu_hclust(d, members = c(0, rep(1, 9))), "positive")
  expect_error(gpu_hclust(1:10), "invalid dissimilarities")
  expect_error(gpu_hclust(d, p = 3), "with 'x'")
  expect_error(gpu_hclust(x = x, foo = 1), "'p' and 'assay'")
  expect_error(gpu_hclust(x = x, distance = "nope"), "invalid distance method")
  for (be in backends) {
    bad <- d; bad[3] <- NA
    expect_error(gpu_hclust(bad, backend = be), "NA/NaN/Inf in the dissimilarities \\(element 3")
    bad <- d; bad[7] <- Inf
    expect_error(gpu_hclust(bad, backend = be), "element 7")
    xc <- x; xc[4, ] <- 1   # a constant row: its correlation distances are NA
    expect_error(suppressWarnings(gpu_hclust(x = xc, distance = "correlation", backend = be)),
                 "have NA/NaN")
  }
})

test_that("the GPU says how much memory the distances need, before it starts", {
  skip_if_not(isTRUE(as.vector(gpu_available())), "no usable GPU")
  d <- dist(matrix(rnorm(4000 * 2), 4000))
  old <- options(gpucor.gpu_memory = 32e6)
  on.exit(options(old))
  expect_error(gpu_hclust(d, method = "average", backend = "gpu"),
               "need 0.06 GB of GPU memory in double.*0.03 GB are free.*precision = \"single\"")
  # float halves it
  expect_error(gpu_hclust(d, method = "average", backend = "gpu", precision = "single"),
               "0.03 GB of GPU memory in float")
})
