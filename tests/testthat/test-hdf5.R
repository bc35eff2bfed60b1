# gpu_hdf5(): results written to HDF5 by the engine's file sink, read back
# with HDF5Array, against the same call in memory.  On the CPU engine the
# file's values are the in-memory result's, bit for bit (the pairs above the
# diagonal are the mirrored tiles' values); on the GPU too (the same panels
# go to the file instead of R memory), which the device run checks.

skip_if_not(gpucor:::.hdf5_ok(), "gpucor built without HDF5, or no HDF5Array")

h5 <- function() tempfile(fileext = ".h5")
back <- function(r) as.matrix(r)
with_opts <- function(opts, code) {
  old <- options(opts)
  on.exit(options(old))
  code
}
# both engines where there is a GPU
backends <- c("cpu", if (isTRUE(as.vector(gpu_available()))) "gpu")

test_that("gpu_hdf5() checks its arguments", {
  f <- h5()
  expect_error(gpu_hdf5(1, "a"), "filepath")
  expect_error(gpu_hdf5(c(f, f), "a"), "filepath")
  expect_error(gpu_hdf5(f, ""), "name")
  expect_error(gpu_hdf5(f, NA_character_), "name")
  expect_error(gpu_hdf5(f, "a", chunkdim = 3), "chunkdim")
  expect_error(gpu_hdf5(f, "a", chunkdim = c(0, 2)), "chunkdim")
  expect_error(gpu_hdf5(f, "a", chunkdim = c(1.5, 2)), "chunkdim")
  expect_error(gpu_hdf5(f, "a", level = 10), "level")
  expect_error(gpu_hdf5(f, "a", level = -1), "level")
  expect_error(gpu_hdf5(f, "a", type = "int"), "should be one of")
  expect_output(print(gpu_hdf5(f, "a", level = 4, type = "float")), "float, deflate level 4")
  x <- matrix(rnorm(40), 10, 4)
  expect_error(gpu_cor(x, output = list(path = f)), "made by gpu_hdf5")
  expect_error(gpu_cor(x[, 1], x[, 2], output = gpu_hdf5(f, "a")), "matrix result")
  expect_error(gpu_cor(x, output = gpu_hdf5(f, "a"), BPPARAM = "x"),
               "'BPPARAM' must be NULL or a", fixed = TRUE)
  expect_false(file.exists(f))
})

for (b in backends) test_that(paste0("gpu_cor(output =) equals gpu_cor() for every method, use, y and tile (", b, ")"), {
  for (it in 1:14) {
    seed <- 5000 + it
    set.seed(seed)
    n <- sample(c(1:4, 12, 30), 1)
    p <- sample(c(1:3, 9, 23, 40), 1)
    q <- sample(c(1, 5, 17), 1)
    x <- matrix(rnorm(n * p), n, p)
    if (it %% 3 == 0) x[sample(length(x), max(1, length(x) %/% 8))] <- NA
    if (it %% 4 == 0) x[, 1] <- 1e8 + round(x[, 1])           # offset, ties
    if (it %% 5 == 0 && p > 1) x[, 2] <- 3                     # constant column
    y <- if (it %% 2 == 0) matrix(rnorm(n * q), n, q,
                                  dimnames = list(NULL, paste0("y", seq_len(q))))
    if (it %% 7 == 0) colnames(x) <- paste0("x", seq_len(p))
    tile <- sample(c(0, 1, 3, 7), 1)
    chunk <- list(NULL, c(1, 1), c(5, 3), c(1000, 2))[[it %% 4 + 1]]
    for (method in c("pearson", "spearman", "kendall")) {
      for (use in c("everything", "pairwise.complete.obs", "complete.obs")) {
        f <- h5()
        info <- sprintf("seed %d, %d x %d, q %s, %s, %s, tile %d, chunk %s", seed, n, p,
                        if (is.null(y)) "-" else q, method, use, tile,
                        paste(chunk, collapse = "x"))
        with_opts(list(gpucor.cpu_tile = tile), {
          ref <- tryCatch(withCallingHandlers(
            gpu_cor(x, y, use, method, backend = b),
            warning = function(w) invokeRestart("muffleWarning")),
            error = function(e) e)
          if (inherits(ref, "error")) {
            expect_error(gpu_cor(x, y, use, method, backend = b,
                                 output = gpu_hdf5(f, "r", chunkdim = chunk)),
                         conditionMessage(ref), fixed = TRUE, info = info)
            expect_false(file.exists(f), info = info)
            next
          }
          w1 <- tryCatch(gpu_cor(x, y, use, method, backend = b),
                         warning = conditionMessage)
          w2 <- tryCatch(gpu_cor(x, y, use, method, backend = b,
                                 output = gpu_hdf5(h5(), "r", chunkdim = chunk)),
                         warning = conditionMessage)
          if (is.character(w1)) expect_identical(w2, w1, info = info)
          r <- suppressWarnings(gpu_cor(x, y, use, method, backend = b,
                                        output = gpu_hdf5(f, "r", chunkdim = chunk)))
        })
        expect_s4_class(r, "HDF5Matrix")
        expect_identical(back(r), ref, info = info)
        unlink(f)
      }
    }
  }
})

for (b in backends) test_that(paste0("the file's chunks, dimnames, float type and compression (", b, ")"), {
  set.seed(11)
  x <- matrix(rnorm(30 * 300), 30, 300, dimnames = list(NULL, sprintf("g%03d", 1:300)))
  f <- h5()
  r <- gpu_cor(x, output = gpu_hdf5(f, "a/b/cor"), backend = b)
  expect_identical(back(r), gpu_cor(x, backend = b))
  expect_identical(dimnames(r), list(colnames(x), colnames(x)))
  # default: whole columns, 2^23 values a chunk at most
  expect_identical(as.integer(HDF5Array::chunkdim(r)), c(300L, 300L))
  expect_identical(gpucor:::.hdf5_spec(gpu_hdf5(f, "z"), 50000, 50000)$chunk, c(50000, 167))
  expect_identical(gpucor:::.hdf5_spec(gpu_hdf5(f, "z"), 9e6, 10)$chunk, c(2^23, 1))
  r2 <- gpu_cor(x, output = gpu_hdf5(f, "c2", chunkdim = c(64, 10)), backend = b)
  expect_identical(as.integer(HDF5Array::chunkdim(r2)), c(64L, 10L))
  expect_identical(back(r2), back(r))
  # float: each value rounded to single precision; NA stays NA (as NaN)
  xn <- x[, 1:40]
  xn[3, 5] <- NA
  r3 <- gpu_cor(xn, output = gpu_hdf5(f, "f", type = "float"), backend = b)
  ref <- gpu_cor(xn, backend = b)
  v <- back(r3)
  expect_identical(is.na(v), is.na(ref))
  ok <- !is.na(ref)
  expect_lte(max(abs(v[ok] - ref[ok]) / pmax(abs(ref[ok]), 2^-126)), 2^-24)
  # compressed: same values, a smaller file for a compressible result
  z <- cbind(x[, 1:2], matrix(rep(x[, 1], 200), 30))
  f1 <- h5(); f2 <- h5()
  a <- suppressWarnings(gpu_cor(z, output = gpu_hdf5(f1, "z"), backend = b))
  bz <- suppressWarnings(gpu_cor(z, output = gpu_hdf5(f2, "z", level = 6), backend = b))
  expect_identical(back(a), back(bz))
  expect_lt(file.size(f2), file.size(f1) / 4)
  # chunks of whole columns, several bands in flight, compressed in parallel
  with_opts(list(gpucor.hdf5_buffer = 1), {
    b2 <- gpu_cor(x, output = gpu_hdf5(f2, "z2", chunkdim = c(30000, 7), level = 1),
                  backend = b)
  })
  expect_identical(back(b2), back(r))
  # an existing file keeps its datasets
  expect_setequal(rhdf5::h5ls(f)$name[rhdf5::h5ls(f)$otype == "H5I_DATASET" &
                                        !grepl("dimnames", rhdf5::h5ls(f)$group)],
                  c("cor", "c2", "f"))
  unlink(c(f, f1, f2))
})

for (b in backends) test_that(paste0("gpu_dist(output =) writes the full matrix of every metric (", b, ")"), {
  set.seed(21)
  x <- matrix(rnorm(23 * 6), 23, 6, dimnames = list(paste0("r", 1:23), NULL))
  x[4, 2] <- NA
  x[7, ] <- x[6, ] + 1e-12                 # near duplicate rows
  x[9, 3] <- Inf
  x0 <- x                                  # no NA: the GPU's GEMM path
  x0[4, 2] <- 0.5
  x0[9, 3] <- 2
  x0[11, ] <- 3                            # a constant row: zero sd
  for (d in list(x, x0)) for (m in c("euclidean", "maximum", "manhattan", "canberra",
                                     "binary", "minkowski", "correlation", "abscorrelation",
                                     "spearman", "kendall", "cosine")) {
    # the GPU's file takes whole columns: Pearson's products (no NA) of
    # another shape than the 'dist' in memory, so the last bits may differ
    gemm <- b == "gpu" && !anyNA(d) && m %in% c("correlation", "abscorrelation", "spearman",
                                                "cosine")
    for (tile in c(0, 4)) for (panel in c(0, 3)) {
      if (b == "cpu" && panel > 0) next
      f <- h5()
      info <- paste(m, anyNA(d), tile, panel)
      with_opts(list(gpucor.cpu_tile = tile, gpucor.gpu_slab = panel), {
        w1 <- tryCatch(gpu_dist(d, m, p = 3, backend = b), warning = conditionMessage)
        w2 <- tryCatch(gpu_dist(d, m, p = 3, backend = b, output = gpu_hdf5(h5(), "d")),
                       warning = conditionMessage)
        ref <- suppressWarnings(as.matrix(gpu_dist(d, m, p = 3, backend = b)))
        r <- suppressWarnings(gpu_dist(d, m, p = 3, backend = b,
                                       output = gpu_hdf5(f, "d", chunkdim = c(5, 5))))
      })
      expect_identical(is.character(w2), is.character(w1), info = info)
      if (is.character(w1)) expect_identical(w2, w1, info = info)
      got <- back(r)
      if (gemm) {
        expect_equal(got, ref, tolerance = 1e-13, info = info)
        expect_identical(got, t(got), info = info)           # exactly symmetric
        expect_identical(is.na(got), is.na(ref), info = info)
        expect_identical(unname(diag(got)), rep(0, nrow(d)), info = info)
      } else {
        expect_identical(got, ref, info = info)
      }
      unlink(f)
    }
  }
  # one row, and no coordinate at all
  f <- h5()
  expect_identical(back(gpu_dist(x[1, , drop = FALSE], output = gpu_hdf5(f, "one"))),
                   matrix(0, 1, 1, dimnames = list("r1", "r1")))
  expect_identical(unname(back(gpu_dist(x[1:3, 0], output = gpu_hdf5(f, "none")))),
                   unname(as.matrix(dist(x[1:3, 0]))))
  unlink(f)
})

test_that("a failed write leaves no dataset, and no file it created", {
  set.seed(31)
  x <- matrix(rnorm(20 * 200), 20, 200)
  # the writer fails after two bands
  f <- h5()
  Sys.setenv(GPUCOR_TEST_FILE_FAIL = "2")
  on.exit(Sys.unsetenv("GPUCOR_TEST_FILE_FAIL"))
  for (b in backends) {
    expect_error(gpu_cor(x, backend = b, output = gpu_hdf5(f, "r", chunkdim = c(20, 9))),
                 "writing 'r' in .* failed: an HDF5 write")
    expect_false(file.exists(f))
  }
  Sys.unsetenv("GPUCOR_TEST_FILE_FAIL")
  # in an existing file, the other datasets stay and nothing of 'r' is left
  gpu_cor(x[, 1:5], output = gpu_hdf5(f, "keep"))
  Sys.setenv(GPUCOR_TEST_FILE_FAIL = "0")
  expect_error(gpu_dist(x, output = gpu_hdf5(f, "r", level = 2)), "failed")
  Sys.unsetenv("GPUCOR_TEST_FILE_FAIL")
  ls <- rhdf5::h5ls(f)
  expect_false(any(grepl("^r", ls$name)))
  expect_identical(back(HDF5Array::HDF5Array(f, "keep")), gpu_cor(x[, 1:5]))
  # a path that cannot be written, a dataset that exists, a file that is not HDF5
  expect_error(gpu_cor(x, output = gpu_hdf5(file.path(f, "sub.h5"), "r")), "cannot be created")
  expect_error(gpu_cor(x[, 1:5], output = gpu_hdf5(f, "keep")), "dataset of that name")
  txt <- tempfile()
  writeLines("not hdf5", txt)
  expect_error(gpu_cor(x, output = gpu_hdf5(txt, "r")), "not an HDF5 file")
  expect_identical(readLines(txt), "not hdf5")
  unlink(c(f, txt))
})

# output with BPPARAM: each worker writes its ranges of columns to part
# files; the dataset is a virtual one over them, and the call returns the
# parts bound by columns where HDF5Array cannot open a virtual dataset.
test_that("gpu_cor()/gpu_dist() with output and BPPARAM: the values, names and warnings of memory", {
  skip_if_not_installed("BiocParallel")
  info <- new_seed()
  ps <- list(serial = BiocParallel::SerialParam(), snow = local_snow(2))
  x <- rmat(30, 23, dimnames = list(paste0("s", 1:30), paste0("g", 1:23)))
  x[, 4] <- 2                                      # zero sd
  x[, 7] <- 1e8 + x[, 7]                           # an offset
  x[, 9] <- round(x[, 9])                          # ties
  xn <- x
  xn[sample(length(x), 40)] <- NA
  y <- rmat(30, 5)
  parts_of <- function(f, name) list.files(dirname(f), pattern = paste0("^", basename(f), "\\."))
  for (b in backends) for (bpn in names(ps)) for (tile in c(0L, 3L)) {
    old <- options(gpucor.cpu_tile = tile, gpucor.gpu_slab = tile)
    cases <- list(list(x = x, y = NULL, use = "everything", method = "pearson"),
                  list(x = xn, y = NULL, use = "pairwise.complete.obs", method = "spearman"),
                  list(x = xn, y = NULL, use = "complete.obs", method = "kendall"),
                  list(x = x, y = y, use = "everything", method = "pearson"))
    for (cs in cases) for (type in c("double", "float")) {
      lab <- paste(b, bpn, tile, cs$use, cs$method, !is.null(cs$y), type, info)
      f <- h5()
      want <- capture_conditions(gpu_cor(cs$x, cs$y, cs$use, cs$method, backend = b))
      got <- capture_conditions(gpu_cor(cs$x, cs$y, cs$use, cs$method, backend = b,
                                        BPPARAM = ps[[bpn]],
                                        output = gpu_hdf5(f, "grp/r", type = type)))
      expect_identical(got$warnings, want$warnings, label = lab)
      expect_null(got$error, label = lab)
      if (type == "double") expect_identical(back(got$value), want$value, label = lab)
      else expect_equal(back(got$value), want$value, tolerance = 1e-6, label = lab)
      expect_identical(dimnames(got$value), dimnames(want$value), label = lab)
      # the file's own dataset: the same values (rhdf5 reads the virtual one)
      v <- rhdf5::h5read(f, "grp/r")
      expect_identical(v, unname(if (type == "double") want$value
                                 else back(got$value)), label = lab)
      expect_gte(length(parts_of(f)), 2L)
      unlink(c(f, file.path(dirname(f), parts_of(f))))
    }
    # the GPU writes stats' six metrics only (the correlation distances to
    # a file are the CPU's)
    for (m in c("euclidean", "canberra", if (b == "cpu") c("correlation", "kendall"))) {
      lab <- paste(b, bpn, tile, m, info)
      f <- h5()
      d <- t(xn)
      want <- capture_conditions(as.matrix(gpu_dist(d, m, backend = b)))
      got <- capture_conditions(gpu_dist(d, m, backend = b, BPPARAM = ps[[bpn]],
                                         output = gpu_hdf5(f, "d")))
      expect_identical(got$warnings, want$warnings, label = lab)
      expect_identical(back(got$value), want$value, label = lab)
      unlink(c(f, file.path(dirname(f), parts_of(f))))
    }
    options(old)
  }
})

test_that("output with BPPARAM: part files that exist, a failed worker, a dataset that exists", {
  skip_if_not_installed("BiocParallel")
  x <- rmat(20, 40)
  bp <- BiocParallel::SerialParam()
  f <- h5()
  parts <- function() list.files(dirname(f), pattern = paste0("^", basename(f), "\\."))
  # a part file in the way: an error before any work, nothing removed
  stale <- file.path(dirname(f), paste0(basename(f), ".r.part1.h5"))
  writeLines("old", stale)
  expect_error(gpu_cor(x, BPPARAM = bp, output = gpu_hdf5(f, "r")), "exists already")
  expect_identical(readLines(stale), "old")
  unlink(stale)
  # a worker's write fails: no part and no file left
  Sys.setenv(GPUCOR_TEST_FILE_FAIL = "0")
  expect_error(gpu_cor(x, BPPARAM = bp, output = gpu_hdf5(f, "r")), "an HDF5 write")
  Sys.unsetenv("GPUCOR_TEST_FILE_FAIL")
  expect_identical(parts(), character())
  expect_false(file.exists(f))
  # the dataset exists in the file: the parts go, the file and its dataset stay
  gpu_cor(x[, 1:3], output = gpu_hdf5(f, "r"))
  expect_error(gpu_dist(x, BPPARAM = bp, output = gpu_hdf5(f, "r")), "dataset of that name")
  expect_identical(parts(), character())
  expect_identical(back(HDF5Array::HDF5Array(f, "r")), gpu_cor(x[, 1:3]))
  unlink(f)
})

test_that("a file's window: the dataset of a range of the result's columns", {
  x <- rmat(15, 31)
  whole <- gpu_cor(x, backend = "cpu")
  for (tile in c(1L, 4L, 9L, 64L)) for (w in list(c(0, 31), c(3, 17), c(30, 31), c(8, 9))) {
    f <- h5()
    spec <- gpucor:::.hdf5_spec(gpu_hdf5(f, "w", chunkdim = c(15, 2)), 31, 31, window = w)
    with_opts(list(gpucor.cpu_tile = tile),
              .Call(gpucor:::C_gpucor_cor, x, NULL, "pearson", "everything", NULL,
                    gpucor:::.engine_opts("cpu", "double"), spec))
    expect_identical(back(HDF5Array::HDF5Array(f, "w")),
                     whole[, (w[1] + 1):w[2], drop = FALSE], label = paste(tile, w))
    unlink(f)
  }
  f <- h5()
  spec <- gpucor:::.hdf5_spec(gpu_hdf5(f, "w"), 31, 31, window = c(5, 40))
  expect_error(.Call(gpucor:::C_gpucor_cor, x, NULL, "pearson", "everything", NULL,
                     gpucor:::.engine_opts("cpu", "double"), spec), "invalid output window")
  expect_false(file.exists(f))
})

test_that("a full disk is a clear error and leaves no file", {
  # a 2 MiB tmpfs: root, and a system that lets it mount one (else skip)
  skip_on_os(c("windows", "mac"))
  d <- tempfile("small")
  dir.create(d)
  on.exit(unlink(d, recursive = TRUE))
  ok <- suppressWarnings(system2("mount", c("-t", "tmpfs", "-o", "size=2m", "tmpfs", d),
                                 stdout = FALSE, stderr = FALSE)) == 0
  skip_if(!ok, "cannot mount a small tmpfs here")
  on.exit(system2("umount", d), add = TRUE, after = FALSE)
  set.seed(41)
  x <- matrix(rnorm(30 * 1000), 30)                  # an 8 MB result
  f <- file.path(d, "full.h5")
  expect_error(gpu_cor(x, output = gpu_hdf5(f, "r")),
               "writing 'r' in .* failed: an HDF5 write: No space left on device")
  expect_false(file.exists(f))
  # an existing file keeps its dataset, and gets none of the failed one
  gpu_cor(x[, 1:10], output = gpu_hdf5(f, "keep"))
  expect_error(gpu_cor(x, output = gpu_hdf5(f, "big", level = 1)), "No space left")
  expect_false(any(grepl("^big", rhdf5::h5ls(f)$name)))
  expect_identical(back(HDF5Array::HDF5Array(f, "keep")), gpu_cor(x[, 1:10]))
})

# --- the WGCNA family: gpu_bicor(), gpu_adjacency(), gpu_tom() ----------------

# The value of 'expr' (or its error) and its warnings' messages, in order.
run_warned <- function(expr) {
  w <- character()
  r <- tryCatch(withCallingHandlers(expr, warning = function(c) {
    w <<- c(w, conditionMessage(c))
    invokeRestart("muffleWarning")
  }), error = function(e) e)
  list(value = r, warnings = w)
}

# 'call' with output = gpu_hdf5(f, "r", ...) against the same call in memory
# (a 'dist' as its full matrix): the same values bit for bit, dimnames,
# warnings; an error the same error, and no file left.
expect_file_like_memory <- function(call, info, chunk = NULL, type = "double") {
  f <- h5()
  on.exit(unlink(f))
  env <- parent.frame()
  mem <- run_warned(eval(call, env))
  call$output <- gpu_hdf5(f, "r", chunkdim = chunk, type = type)
  out <- run_warned(eval(call, env))
  if (inherits(mem$value, "error")) {
    expect(inherits(out$value, "error") &&
             identical(conditionMessage(out$value), conditionMessage(mem$value)),
           sprintf("in memory: error '%s'; to a file: %s. %s", conditionMessage(mem$value),
                   if (inherits(out$value, "error")) conditionMessage(out$value) else "no error",
                   info))
    expect_false(file.exists(f), info = info)
    return(invisible(NULL))
  }
  expect(!inherits(out$value, "error"),
         sprintf("to a file: error '%s'. %s", if (inherits(out$value, "error"))
           conditionMessage(out$value) else "", info))
  if (inherits(out$value, "error")) return(invisible(NULL))
  expect_identical(out$warnings, mem$warnings, info = info)
  expect_s4_class(out$value, "HDF5Matrix")
  ref <- mem$value
  if (inherits(ref, "dist")) {
    labels <- attr(ref, "Labels")
    ref <- as.matrix(ref)
    if (is.null(labels)) dimnames(ref) <- NULL
  }
  # in memory, a matrix without names may have dimnames list(NULL, NULL)
  # (gpu_tom's TOMType "none", bicor's adjacency): none in a file
  if (!is.null(dimnames(ref)) && all(vapply(dimnames(ref), is.null, TRUE)))
    dimnames(ref) <- NULL
  got <- back(out$value)
  if (type == "float") {
    # each value rounded to single precision once; NA stays NA (as NaN)
    expect_identical(is.na(got), is.na(ref), info = info)
    ok <- !is.na(ref)
    expect_lte(max(0, abs(got[ok] - ref[ok]) / pmax(abs(ref[ok]), 2^-126)), 2^-24,
               label = paste("float error.", info))
    expect_identical(dimnames(got), dimnames(ref), info = info)
  } else {
    expect_identical(got, ref, info = info)
  }
  invisible(out$value)
}

for (b in backends) test_that(paste0("gpu_bicor(output =) equals gpu_bicor(): NAs, zero MAD, fallbacks, y (", b, ")"), {
  for (it in 1:16) {
    seed <- 6000 + it
    set.seed(seed)
    n <- sample(c(1, 3, 8, 25), 1)
    p <- sample(c(1, 4, 11, 26), 1)
    x <- matrix(rnorm(n * p), n, p)
    if (it %% 2 == 0) x[sample(length(x), max(1, length(x) %/% 6))] <- NA
    if (it %% 3 == 0 && n > 3) x[, 1] <- c(rep(2, n - 2), 5, -1)   # zero MAD
    if (it %% 5 == 0 && p > 1) x[, p] <- 7                         # constant: NA column
    if (it %% 4 == 1) colnames(x) <- paste0("g", seq_len(p))
    y <- if (it %% 3 == 1) matrix(rnorm(n * 5), n, 5,
                                  dimnames = list(NULL, paste0("y", 1:5)))
    if (!is.null(y) && it %% 2 == 0) y[sample(length(y), 3)] <- NA
    if (!is.null(y) && n > 3 && it %% 4 == 0) y[, 2] <- c(rep(0, n - 1), 1)
    use <- if (anyNA(x) || anyNA(y)) "pairwise.complete.obs" else "all.obs"
    fb <- c("individual", "none", "all")[it %% 3 + 1]
    mpo <- if (it %% 4 == 3) 0.1 else 1
    quick <- if (it %% 6 == 4) 0.3 else 0
    rx <- it %% 7 != 5
    chunk <- list(NULL, c(3, 2), c(1000, 1), c(1, 7))[[it %% 4 + 1]]
    tile <- sample(c(0, 1, 5), 1)
    prec <- if (it %% 3 == 2) "single" else "double"   # the GPU's floats, widened
    info <- sprintf("seed %d, %d x %d, y %s, %s, %s, maxP %g, quick %g, robustX %s, chunk %s, tile %d, %s",
                    seed, n, p, !is.null(y), use, fb, mpo, quick, rx,
                    paste(chunk, collapse = "x"), tile, prec)
    with_opts(list(gpucor.cpu_tile = tile), {
      expect_file_like_memory(quote(gpu_bicor(x, y, use = use, maxPOutliers = mpo, quick = quick,
                                              pearsonFallback = fb, robustX = rx,
                                              precision = prec, backend = b)), info, chunk)
      # the same on the file's floats
      if (it %% 4 == 0)
        expect_file_like_memory(quote(gpu_bicor(x, y, use = use, pearsonFallback = fb,
                                                backend = b)), paste(info, "float"), chunk,
                                "float")
    })
  }
  # several bands in flight, each finished by its own thread
  set.seed(6100)
  x <- matrix(rnorm(40 * 300), 40, 300)
  x[sample(length(x), 500)] <- NA
  with_opts(list(gpucor.hdf5_buffer = 1), {
    expect_file_like_memory(quote(gpu_bicor(x, use = "p", backend = b)), "seed 6100",
                            c(40, 7))
  })
})

for (b in backends) test_that(paste0("gpu_adjacency(output =) equals gpu_adjacency() for every type, power and corType (", b, ")"), {
  for (it in 1:12) {
    seed <- 6200 + it
    set.seed(seed)
    n <- sample(c(2, 6, 20), 1)
    p <- sample(c(1, 5, 17), 1)
    x <- matrix(rnorm(n * p), n, p)
    if (it %% 2 == 0) x[sample(length(x), max(1, length(x) %/% 7))] <- NA
    if (it %% 3 == 0 && p > 1) x[, 2] <- 1                       # constant: NA row, column
    if (it %% 4 == 0 && n > 3) x[, 1] <- c(rep(3, n - 2), 4, 1)  # zero MAD
    if (it %% 3 != 1) colnames(x) <- paste0("g", seq_len(p))
    power <- c(1, 2, 3.5, 6)[it %% 4 + 1]
    chunk <- list(NULL, c(2, 3), c(100, 1))[[it %% 3 + 1]]
    use <- if (it %% 5 == 0) "everything" else "pairwise.complete.obs"
    prec <- if (it %% 3 == 2) "single" else "double"
    for (type in c("unsigned", "signed", "signed hybrid"))
      for (ct in c("pearson", "bicor", "spearman")) {
        info <- sprintf("seed %d, %d x %d, power %g, %s, %s, %s, chunk %s, %s", seed, n, p,
                        power, type, ct, use, paste(chunk, collapse = "x"), prec)
        expect_file_like_memory(quote(gpu_adjacency(x, power = power, type = type,
                                                    corType = ct, use = use, precision = prec,
                                                    backend = b)), info, chunk)
      }
    if (it %% 4 == 2)
      expect_file_like_memory(quote(gpu_adjacency(x, power = power, corType = "bicor",
                                                  backend = b)),
                              sprintf("seed %d float", seed), NULL, "float")
  }
})

for (b in backends) test_that(paste0("gpu_tom(output =) equals gpu_tom() for every TOMType, TOMDenom, dist and input (", b, ")"), {
  for (it in 1:6) {
    seed <- 6300 + it
    set.seed(seed)
    n <- sample(c(4, 15), 1)
    p <- sample(c(2, 9, 21), 1)
    x <- matrix(rnorm(n * p), n, p)
    if (it %% 2 == 0) x[sample(length(x), max(1, length(x) %/% 8))] <- NA
    if (it %% 3 == 0) x[, 2] <- 5                                 # constant: NA TOM
    if (it != 4) colnames(x) <- paste0("g", seq_len(p))
    nt <- c("unsigned", "signed", "signed hybrid")[it %% 3 + 1]
    chunk <- list(NULL, c(3, 4))[[it %% 2 + 1]]
    prec <- if (it %% 3 == 1) "single" else "double"
    for (tt in c("none", "unsigned", "signed", "signed Nowick", "unsigned 2", "signed 2",
                 "signed Nowick 2"))
      for (ct in c("pearson", "bicor"))
        for (dist in c(FALSE, TRUE)) {
          denom <- if (it %% 2 == 0) "mean" else "min"
          info <- sprintf("seed %d, %d x %d, %s network, TOMType %s, %s, %s, dist %s, chunk %s, %s",
                          seed, n, p, nt, tt, denom, ct, dist, paste(chunk, collapse = "x"), prec)
          expect_file_like_memory(quote(gpu_tom(x, power = 3, networkType = nt, TOMType = tt,
                                                TOMDenom = denom, corType = ct, dist = dist,
                                                precision = prec, backend = b)), info, chunk)
        }
    # from an adjacency (NA counts as 0), and as floats
    A <- abs(suppressWarnings(gpu_cor(x, use = "p")))^2
    A[is.na(A)] <- 0
    A[1, p] <- A[p, 1] <- NA
    for (tt in c("unsigned", "signed 2"))
      expect_file_like_memory(quote(gpu_tom(adjacency = A, TOMType = tt, backend = b)),
                              sprintf("seed %d, adjacency, %s", seed, tt))
    expect_file_like_memory(quote(gpu_tom(x, dist = it %% 2 == 0, backend = b)),
                            sprintf("seed %d float", seed), NULL, "float")
  }
  # 300 genes: several bands; the GPU's panels
  set.seed(6400)
  x <- matrix(rnorm(20 * 300), 20, 300)
  with_opts(list(gpucor.hdf5_buffer = 1, gpucor.gpu_slab = 64), {
    expect_file_like_memory(quote(gpu_tom(x, backend = b)), "seed 6400", c(300, 7))
    expect_file_like_memory(quote(gpu_tom(x, dist = TRUE, TOMType = "unsigned 2", backend = b)),
                            "seed 6400 dist", c(300, 7))
  })
})

test_that("the WGCNA functions' output: arguments, dimnames, chunks, failures leave nothing", {
  set.seed(6500)
  x <- matrix(rnorm(20 * 30), 20, 30, dimnames = list(NULL, paste0("g", 1:30)))
  y <- matrix(rnorm(20 * 4), 20, 4)
  f <- h5()
  expect_error(gpu_bicor(x, output = list(path = f)), "made by gpu_hdf5")
  expect_error(gpu_adjacency(x, output = "a.h5"), "made by gpu_hdf5")
  expect_error(gpu_tom(x, output = 1), "made by gpu_hdf5")
  expect_false(file.exists(f))
  r <- gpu_bicor(x, y, output = gpu_hdf5(f, "xy"))
  expect_identical(dimnames(r), list(colnames(x), NULL))
  r <- gpu_adjacency(x, output = gpu_hdf5(f, "a"))
  expect_identical(dimnames(r), list(colnames(x), colnames(x)))
  expect_identical(as.integer(HDF5Array::chunkdim(r)), c(30L, 30L))
  r <- gpu_tom(x, dist = TRUE, output = gpu_hdf5(f, "d", chunkdim = c(4, 5)))
  expect_identical(as.integer(HDF5Array::chunkdim(r)), c(4L, 5L))
  expect_true(all(diag(back(r)) == 0))
  expect_setequal(rhdf5::h5ls(f)$name[rhdf5::h5ls(f)$otype == "H5I_DATASET" &
                                        !grepl("dimnames", rhdf5::h5ls(f)$group)],
                  c("xy", "a", "d"))
  # a dataset that exists; an error before the engine leaves the file as it was
  expect_error(gpu_tom(x, output = gpu_hdf5(f, "a")), "dataset of that name")
  expect_error(gpu_tom(x, TOMType = "bad", output = gpu_hdf5(f, "t")), "TOMType")
  expect_false(any(grepl("^t", rhdf5::h5ls(f)$name)))
  unlink(f)
  # a write that fails: no file, and in an existing file no dataset
  xn <- x
  xn[sample(length(x), 40)] <- NA
  Sys.setenv(GPUCOR_TEST_FILE_FAIL = "1")
  on.exit(Sys.unsetenv("GPUCOR_TEST_FILE_FAIL"))
  for (b in backends) {
    calls <- list(
      quote(gpu_bicor(xn, use = "p", backend = b, output = out)),
      quote(gpu_bicor(x, y, backend = b, output = out)),
      quote(gpu_adjacency(xn, corType = "bicor", backend = b, output = out)),
      quote(gpu_adjacency(xn, backend = b, output = out)),
      quote(gpu_tom(xn, TOMType = "none", dist = TRUE, backend = b, output = out)),
      quote(gpu_tom(xn, corType = "bicor", backend = b, output = out)),
      quote(gpu_tom(x, dist = TRUE, backend = b, output = out)))
    for (k in seq_along(calls)) {
      f <- h5()
      out <- gpu_hdf5(f, "r", chunkdim = c(30, 2))
      expect_error(suppressWarnings(eval(calls[[k]])), "writing 'r' in .* failed",
                   info = paste(b, deparse(calls[[k]])))
      expect_false(file.exists(f), info = paste(b, deparse(calls[[k]])))
    }
  }
  Sys.unsetenv("GPUCOR_TEST_FILE_FAIL")
  f <- h5()
  gpu_adjacency(x[, 1:3], output = gpu_hdf5(f, "keep"))
  Sys.setenv(GPUCOR_TEST_FILE_FAIL = "0")
  expect_error(gpu_tom(x, output = gpu_hdf5(f, "r")), "failed")
  Sys.unsetenv("GPUCOR_TEST_FILE_FAIL")
  expect_false(any(grepl("^r", rhdf5::h5ls(f)$name)))
  expect_identical(back(HDF5Array::HDF5Array(f, "keep")), gpu_adjacency(x[, 1:3]))
  unlink(f)
})
