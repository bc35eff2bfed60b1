# Issue 37: the package's own on-disk n x n results (gpu_dist(output =
# gpu_hdf5(...)), gpu_cor(output = ...)) are inputs of the next step:
# gpu_hclust(d) reads their lower triangle in blocks of columns and clusters
# as it does the in-memory dist.

nocall_hc <- function(h) { h$call <- NULL; h }

test_that("gpu_hclust(d) of an HDF5 n x n result is gpu_hclust() of the dist in memory", {
  skip_if_not(gpucor:::.hdf5_ok(), "gpucor built without HDF5, or no HDF5Array")
  info <- new_seed()
  n <- 23
  x <- rmat(n, 4, dimnames = list(paste0("r", 1:n), NULL))
  bs <- DelayedArray::getAutoBlockSize()
  on.exit(suppressMessages(DelayedArray::setAutoBlockSize(bs)))
  h5 <- gpu_dist(x, output = gpu_hdf5(tempfile(fileext = ".h5"), "d"), backend = "cpu")
  d <- gpu_dist(x, backend = "cpu")
  r <- gpu_cor(t(x), output = gpu_hdf5(tempfile(fileext = ".h5"), "r"), backend = "cpu")
  for (cols in c(n, 5, 1)) {
    # blocks of 'cols' columns of the n x n matrix
    suppressMessages(DelayedArray::setAutoBlockSize(8 * n * cols))
    for (m in c("average", "complete", "ward.D2", "centroid")) {
      lab <- sprintf("%s, blocks of %d columns, %s", m, cols, info)
      got <- gpu_hclust(h5, m, backend = "cpu")
      # the same matrix in memory (as.dist() of it: no dist.method), and
      # the merges and heights of the dist gpu_dist() makes in memory
      want <- gpu_hclust(as.matrix(h5), m, backend = "cpu")
      expect_identical(nocall_hc(got), nocall_hc(want), info = lab)
      expect_identical(got$labels, rownames(x), info = lab)
      mem <- gpu_hclust(d, m, backend = "cpu")
      expect_identical(got$merge, mem$merge, info = lab)
      expect_identical(got$height, mem$height, info = lab)
    }
    # a lazy DelayedArray of a result (1 - r): the same as 1 - r in memory
    got <- gpu_hclust(1 - r, "average", backend = "cpu")
    want <- gpu_hclust(stats::as.dist(1 - as.matrix(r)), "average", backend = "cpu")
    expect_identical(nocall_hc(got), nocall_hc(want), info = paste(cols, info))
  }
  expect_error(gpu_hclust(h5[1:5, ], backend = "cpu"), "must be a \"dist\" or a square", fixed = TRUE)
  expect_error(gpu_hclust(h5[1, 1, drop = FALSE], backend = "cpu"), "n >= 2", fixed = TRUE)
})

# Inputs on disk are read at the disk's pace (R/blocks.R): in reads of whole
# chunks (one chunk a read here: DelayedArray's block size made one chunk),
# once when the input fits the memory budget (option gpucor.block_memory),
# else in blocks of columns (rows for gpu_dist()).  Either way the result is
# the in-memory call's, bit for bit.

# The on-disk forms of d: HDF5 with chunks of 5 x 4 (a read is one chunk),
# column chunks (a read is one column), row chunks, a delayed operation on
# one (no chunk geometry left to some), a DelayedArray of the matrix in
# memory, and a big.matrix.
ondisk_forms <- function(d) {
  h5 <- function(cd) HDF5Array::writeHDF5Array(d, tempfile(fileext = ".h5"), "m",
                                               chunkdim = as.integer(cd), with.dimnames = TRUE)
  out <- list("HDF5 5x4 chunks" = h5(c(5, 4)), "HDF5 column chunks" = h5(c(nrow(d), 1)),
              "HDF5 row chunks" = h5(c(3, ncol(d))))
  out[["delayed 0 + HDF5"]] <- 0 + out[[1L]]
  out[["DelayedMatrix"]] <- DelayedArray::DelayedArray(d)
  if (requireNamespace("bigmemory", quietly = TRUE)) out$big.matrix <- bigmemory::as.big.matrix(d)
  out
}

# Sets DelayedArray's block size to 'bytes' and option gpucor.block_memory
# to 'budget' until the calling test ends.
local_reads <- function(bytes, budget, env = parent.frame()) {
  bs <- DelayedArray::getAutoBlockSize()
  suppressMessages(DelayedArray::setAutoBlockSize(bytes))
  old <- options(gpucor.block_memory = budget)
  withr::defer({
    options(old)
    suppressMessages(DelayedArray::setAutoBlockSize(bs))
  }, envir = env)
}

test_that(".read_dense() reads each chunk once, and any rectangle of any form as as.matrix() does", {
  skip_if_not_installed("HDF5Array")
  info <- new_seed()
  d <- rmat(23, 14, na = 0.1, dimnames = list(paste0("r", 1:23), paste0("c", 1:14)))
  local_reads(8 * 5 * 4, NULL)
  forms <- ondisk_forms(d)
  for (nm in names(forms)) {
    v <- forms[[nm]]
    for (rc in list(list(NULL, NULL), list(3:21, 2:13), list(6:6, 1:14), list(1:23, 9:9))) {
      lab <- sprintf("%s, rows %s, cols %s, %s", nm, deparse(rc[[1]]), deparse(rc[[2]]), info)
      got <- gpucor:::.read_dense(v, rc[[1]], rc[[2]])
      rows <- if (is.null(rc[[1]])) 1:23 else rc[[1]]
      cols <- if (is.null(rc[[2]])) 1:14 else rc[[2]]
      expect_identical(got, d[rows, cols, drop = FALSE], label = lab)
    }
  }
  # one read a chunk: 5 x 4 chunks of 23 x 14 are 5 x 4 = 20 chunks; a
  # column of 14 column chunks; block size 8 columns: 2 reads
  k <- function(v, ...) {
    k0 <- gpucor:::.count_reads()
    gpucor:::.read_dense(v, ...)
    gpucor:::.count_reads() - k0
  }
  expect_identical(k(forms[["HDF5 5x4 chunks"]]), 20)
  expect_identical(k(forms[["HDF5 5x4 chunks"]], rows = 6:10), 4)
  expect_identical(k(forms[["HDF5 column chunks"]]), 14)
  expect_identical(k(forms[["HDF5 row chunks"]]), 8)
  suppressMessages(DelayedArray::setAutoBlockSize(8 * 23 * 8))
  expect_identical(k(forms[["HDF5 column chunks"]]), 2)
  # integer and logical data become doubles; other types are left to the
  # callers' checks
  xi <- matrix(c(1:5, NA), 3, dimnames = list(NULL, c("a", "b")))
  hi <- HDF5Array::writeHDF5Array(xi, tempfile(fileext = ".h5"), "i", with.dimnames = TRUE)
  dbl <- function(m) {
    storage.mode(m) <- "double"
    m
  }
  expect_identical(gpucor:::.read_dense(hi), dbl(xi))
  expect_identical(gpucor:::.read_dense(hi > 2L), dbl(xi > 2L))
  hc <- HDF5Array::writeHDF5Array(matrix(letters[1:6], 3), tempfile(fileext = ".h5"), "c")
  expect_error(gpu_cor(hc, backend = "cpu"), "'x' must be numeric", fixed = TRUE)
  expect_error(gpu_tom(adjacency = hc[, 1:2][1:2, ], backend = "cpu"), "'adjacency' must be numeric",
               fixed = TRUE)
})

test_that("gpu_cor(), gpu_cov(), gpu_dist() of on-disk inputs read once or in blocks are the in-memory calls' results", {
  skip_if_not_installed("HDF5Array")
  info <- new_seed()
  n <- 23
  d <- rmat(n, 14, dimnames = list(paste0("r", 1:n), paste0("c", 1:14)))
  d[, 2] <- round(d[, 2])                 # ties
  d[, 5] <- 2                             # zero sd
  d[, 9] <- 1e8 + d[, 9]
  dn <- d
  dn[sample(length(dn), 20)] <- NA
  yy <- rmat(n, 6, na = 0.05)
  # budgets: the whole input (read once), 3 columns (rows) a block
  for (dd in list(d, dn)) {
    forms <- ondisk_forms(dd)
    for (budget in c(2^30, 8 * n * 3 * 2)) {
      local_reads(8 * 5 * 4, budget)
      for (nm in names(forms)) {
        v <- forms[[nm]]
        lab <- sprintf("%s, budget %g, NA %s, %s", nm, budget, anyNA(dd), info)
        for (method in c("pearson", "spearman", "kendall"))
          for (use in c("everything", "complete.obs", "pairwise.complete.obs")) {
            l <- paste(method, use, lab)
            want <- capture_conditions(gpu_cor(dd, use = use, method = method, backend = "cpu"))
            got <- capture_conditions(gpu_cor(v, use = use, method = method, backend = "cpu"))
            expect_identical(got, want, label = l)
            want <- capture_conditions(gpu_cor(dd, yy, use, method, backend = "cpu"))
            got <- capture_conditions(gpu_cor(v, yy, use, method, backend = "cpu"))
            expect_identical(got, want, label = paste("y", l))
            want <- capture_conditions(gpu_cov(dd, use = use, method = method, backend = "cpu"))
            got <- capture_conditions(gpu_cov(v, use = use, method = method, backend = "cpu"))
            expect_identical(got, want, label = paste("cov", l))
          }
        for (method in c("euclidean", "manhattan", "canberra", "correlation", "spearman")) {
          want <- capture_conditions(gpu_dist(dd, method, backend = "cpu"))
          got <- capture_conditions(gpu_dist(v, method, backend = "cpu"))
          want$value <- unclass(want$value)
          got$value <- unclass(got$value)
          attr(want$value, "call") <- attr(got$value, "call") <- NULL
          expect_identical(got, want, label = paste(method, lab))
        }
      }
    }
  }
  # verbose says how the input was read
  # (a budget of 8 * 23 * 4 * 2 bytes: 4 columns a block, whole chunks of
  # 5 x 4, 5 reads a block, the last of 2 columns 3 (two chunks a read);
  # block a is read a times, as the first of a pair and the second)
  local_reads(8 * 5 * 4, 8 * n * 4 * 2)
  h <- ondisk_forms(d)[[1L]]
  expect_message(suppressWarnings(gpu_cor(h, backend = "cpu", verbose = TRUE)),
                 "gpu_cor: 4 x 4 blocks of up to 4 columns (1.4 KiB of memory), 42 reads",
                 fixed = TRUE)
  # the rows of t(h) are h's columns: 4 blocks of 4 rows (the last of 2),
  # read as the first of a pair (all but the last) and as the second
  expect_message(gpu_dist(t(h), backend = "cpu", verbose = TRUE),
                 "gpu_dist: 4 blocks of up to 4 rows (6 pairs of blocks; 1.4 KiB of memory), 39 reads",
                 fixed = TRUE)
  expect_error(with_options(list(gpucor.block_memory = "lots"), gpu_cor(h)),
               "option 'gpucor.block_memory' must be", fixed = TRUE)
})

test_that("gpu_bicor(), gpu_cor_edges(), gpu_knn() of an on-disk input are the in-memory calls' results", {
  skip_if_not_installed("HDF5Array")
  info <- new_seed()
  d <- rmat(30, 12, dimnames = list(paste0("r", 1:30), paste0("c", 1:12)))
  local_reads(8 * 5 * 4, NULL)
  for (nm in c("HDF5 5x4 chunks", "HDF5 column chunks", "delayed 0 + HDF5")) {
    v <- ondisk_forms(d)[[nm]]
    lab <- paste(nm, info)
    expect_identical(gpu_bicor(v, backend = "cpu"), gpu_bicor(d, backend = "cpu"), label = lab)
    expect_identical(gpu_cor_edges(v, threshold = 0.2, backend = "cpu"),
                     gpu_cor_edges(d, threshold = 0.2, backend = "cpu"), label = lab)
    expect_identical(gpu_knn(v, k = 4, backend = "cpu"), gpu_knn(d, k = 4, backend = "cpu"),
                     label = lab)
  }
})

test_that("the functions that take an n x n matrix take it on disk, read in blocks, as in memory", {
  skip_if_not_installed("HDF5Array")
  info <- new_seed()
  # genes in three modules, so that the scale-free fit has a spread of
  # connectivities to fit
  f <- rmat(40, 3)
  x <- f[, rep(1:3, length.out = 25)] + rmat(40, 25, dimnames = list(NULL, paste0("g", 1:25)))
  a <- gpu_adjacency(x, power = 4, backend = "cpu")
  a[3, 7] <- a[7, 3] <- NA                # no edge (TOM), 0 (WGCNA's checks)
  s <- abs(gpu_cor(x, backend = "cpu"))
  mi <- gpu_knnmi(x, backend = "cpu")
  h5 <- function(m, cd) HDF5Array::writeHDF5Array(m, tempfile(fileext = ".h5"), "m",
                                                  chunkdim = as.integer(cd), with.dimnames = TRUE)
  same <- function(f, disk, mem, lab)
    expect_identical(capture_conditions(f(disk)), capture_conditions(f(mem)), label = lab)
  # the whole matrix a read, or one chunk of 6 x 4 (several reads a column)
  for (bytes in c(8 * 25 * 25, 8 * 6 * 4)) for (cd in list(c(6, 4), c(25, 1))) {
    local_reads(bytes, NULL)
    lab <- sprintf("reads of %d bytes, chunks %s, %s", bytes, paste(cd, collapse = " x "), info)
    ah <- h5(a, cd)
    sh <- h5(s, cd)
    mh <- h5(mi, cd)
    same(function(v) gpu_tom(adjacency = v, backend = "cpu"), ah, a, paste("tom", lab))
    same(function(v) gpu_tom(adjMat = v, TOMDenom = "mean", dist = TRUE, backend = "cpu"),
         1 - (1 - ah), 1 - (1 - a), paste("tom, delayed", lab))
    same(function(v) gpu_tom(adjacency = v, TOMType = "signed", backend = "cpu"),
         2 * ah - 1, 2 * a - 1, paste("signed tom", lab))
    same(function(v) gpu_soft_threshold(v, dataIsExpr = FALSE, powerVector = 1:6),
         sh, s, paste("soft threshold", lab))
    same(function(v) gpu_shortest_paths(v, "one_minus", threshold = 0.3, backend = "cpu"),
         sh, s, paste("shortest paths", lab))
    same(function(v) gpu_network_metrics(v, "one_minus", threshold = 0.3, backend = "cpu"),
         sh, s, paste("network metrics", lab))
    same(function(v) gpu_aracne_a(v, backend = "cpu"), mh, mi, paste("aracne.a", lab))
    same(function(v) gpu_aracne_m(v, backend = "cpu"), mh, mi, paste("aracne.m", lab))
    same(function(v) gpu_clr(v, backend = "cpu"), mh, mi, paste("clr", lab))
    same(function(v) gpu_mrnet(v, backend = "cpu"), mh, mi, paste("mrnet", lab))
  }
  # errors as for the matrix in memory
  local_reads(8 * 6 * 4, NULL)
  asym <- s
  asym[2, 9] <- 0.01
  for (bad in list(s[, 1:5], asym, s + 1)) {
    bh <- h5(bad, c(6, 4))
    same(function(v) gpu_tom(adjacency = v, backend = "cpu"), bh, bad, "tom error")
    same(function(v) gpu_shortest_paths(v, "one_minus", backend = "cpu"), bh, bad,
         "shortest paths error")
    same(function(v) gpu_clr(v, backend = "cpu"), bh, bad, "clr error")
  }
  # results written by gpu_hdf5() fed straight back
  skip_if_not(gpucor:::.hdf5_ok(), "gpucor built without HDF5")
  ao <- gpu_adjacency(x, power = 4, backend = "cpu",
                      output = gpu_hdf5(tempfile(fileext = ".h5"), "adjacency"))
  expect_identical(gpu_tom(adjacency = ao, backend = "cpu"),
                   gpu_tom(adjacency = gpu_adjacency(x, power = 4, backend = "cpu"),
                           backend = "cpu"))
  r <- gpu_cor(x, output = gpu_hdf5(tempfile(fileext = ".h5"), "r"), backend = "cpu")
  expect_identical(gpu_shortest_paths(abs(r), "one_minus", threshold = 0.3, backend = "cpu"),
                   gpu_shortest_paths(abs(gpu_cor(x, backend = "cpu")), "one_minus",
                                      threshold = 0.3, backend = "cpu"))
})
