# GPU engine against the CPU engine and stats.  Every test skips where no
# GPU is usable (CRAN, CI); on the GPU machine they all run (tools/device.sh).

gpu_vs <- function(got, want, tol, info) {
  expect_identical(dim(got), dim(want), info = info)
  expect_identical(is.na(got), is.na(want), info = info)
  expect_identical(is.nan(got), is.nan(want), info = info)
  d <- abs(got - want)
  expect_lt(max(c(0, d[is.finite(d)])), tol, label = paste("max abs error;", info))
}

test_that("gpu_cor matches stats for pearson/spearman x use x precision", {
  skip_if_no_gpu()
  info <- new_seed()
  x <- rmat(157, 61, dimnames = list(NULL, paste0("v", 1:61)))
  xna <- rmat(157, 61, na = 0.002)
  x[, 5] <- 3                      # constant column
  y <- rmat(157, 23)
  for (method in c("pearson", "spearman")) {
    for (use in c("everything", "all.obs", "complete.obs", "na.or.complete")) {
      for (prec in c("double", "single")) {
        tol <- if (prec == "double") 1e-10 else 1e-5
        lab <- paste(method, use, prec, info)
        want <- suppressWarnings(cor(x, method = method, use = use))
        got <- suppressWarnings(gpu_cor(x, method = method, use = use,
                                        backend = "gpu", precision = prec))
        gpu_vs(got, want, tol, lab)
        expect_identical(dimnames(got), dimnames(want))
        expect_warning(gpu_cor(x, method = method, use = use, backend = "gpu",
                               precision = prec), "the standard deviation is zero")
        gpu_vs(suppressWarnings(gpu_cor(x, y, method = method, use = use,
                                        backend = "gpu", precision = prec)),
               suppressWarnings(cor(x, y, method = method, use = use)), tol, lab)
        if (use != "all.obs") {
          gpu_vs(gpu_cor(xna, method = method, use = use, backend = "gpu",
                         precision = prec),
                 cor(xna, method = method, use = use), tol, paste("NA", lab))
        }
      }
    }
  }
})

test_that("gpu_cor: ties, offsets, Inf, tiny shapes, vectors", {
  skip_if_no_gpu()
  info <- new_seed()
  ties <- matrix(sample(1:4, 300 * 40, replace = TRUE), 300)
  gpu_vs(gpu_cor(ties, method = "spearman", backend = "gpu"),
         cor(ties, method = "spearman"), 1e-10, info)
  off <- 1e8 + rmat(500, 30)
  gpu_vs(gpu_cor(off, backend = "gpu"), cor(off), 1e-10, info)
  inf <- rmat(50, 6); inf[3, 2] <- Inf; inf[7, 4] <- -Inf
  gpu_vs(gpu_cor(inf, backend = "gpu"), cor(inf), 1e-10, info)
  gpu_vs(gpu_cor(inf, method = "spearman", backend = "gpu"),
         cor(inf, method = "spearman"), 1e-10, info)
  for (n in 1:3) for (p in 1:3) {
    z <- rmat(n, p)
    gpu_vs(suppressWarnings(gpu_cor(z, backend = "gpu")),
           suppressWarnings(cor(z)), 1e-10, paste(n, p, info))
  }
  a <- rnorm(40); b <- rnorm(40)
  expect_equal(gpu_cor(a, b, backend = "gpu"), cor(a, b), tolerance = 1e-12)
})

test_that("gpu_cor: several slabs in each direction, shapes off any tile", {
  skip_if_no_gpu()
  info <- new_seed()
  x <- rmat(211, 301); y <- rmat(211, 77)
  withr_opts <- options(gpucor.gpu_slab = 13)
  on.exit(options(withr_opts))
  for (prec in c("double", "single")) {
    tol <- if (prec == "double") 1e-10 else 1e-5
    gpu_vs(gpu_cor(x, backend = "gpu", precision = prec), cor(x), tol, info)
    gpu_vs(gpu_cor(x, y, backend = "gpu", precision = prec), cor(x, y), tol, info)
    gpu_vs(gpu_cor(x, method = "spearman", backend = "gpu", precision = prec),
           cor(x, method = "spearman"), tol, info)
  }
})

test_that("gpu_cor's symmetric result is exactly symmetric", {
  skip_if_no_gpu()
  info <- new_seed()
  x <- rmat(300, 700)
  r <- gpu_cor(x, backend = "gpu")
  expect_identical(r, t(r), info = info)
  # across slabs too (the last one narrower than the others)
  old <- options(gpucor.gpu_slab = 13); on.exit(options(old))
  r <- gpu_cor(x, backend = "gpu")
  expect_identical(r, t(r), info = info)
})

test_that("single precision computes data beyond float's range (in double)", {
  skip_if_no_gpu()
  x <- rbind(c(1e300, 1), c(-1e300, 2), c(3, 4))
  for (m in c("canberra", "manhattan", "maximum"))
    expect_equal(c(gpu_dist(x, m, backend = "gpu", precision = "single")), c(dist(x, m)),
                 tolerance = 1e-12, info = m)
  expect_equal(c(gpu_dist(x, "canberra", backend = "gpu")), c(dist(x, "canberra")),
               tolerance = 1e-12)
})

test_that("gpu_dist matches stats::dist for the six metrics, NA and Inf included", {
  skip_if_no_gpu()
  info <- new_seed()
  x <- rmat(203, 37, dimnames = list(paste0("r", 1:203), NULL))
  xna <- x; xna[sample(length(xna), 300)] <- NA
  xna[4, ] <- NA; xna[9, 1:36] <- NA
  xna[11, 3] <- Inf; xna[12, 3] <- Inf; xna[13, 5] <- -Inf
  xna[20:22, 7] <- 0
  bin <- matrix(rbinom(203 * 37, 1, 0.3), 203); bin[5, 5] <- NA
  options(gpucor.gpu_slab = 17); on.exit(options(gpucor.gpu_slab = NULL))
  for (m in c("euclidean", "maximum", "manhattan", "canberra", "binary", "minkowski")) {
    for (data in list(x, xna, bin)) {
      want <- suppressWarnings(dist(data, method = m, p = 3))
      got <- suppressWarnings(gpu_dist(data, method = m, p = 3, backend = "gpu"))
      expect_identical(attr(got, "Labels"), attr(want, "Labels"))
      expect_identical(is.na(c(got)), is.na(c(want)), info = paste(m, info))
      ok <- !is.na(c(want))
      expect_equal(c(got)[ok], c(want)[ok], tolerance = 1e-12, info = paste(m, info))
      gs <- suppressWarnings(gpu_dist(data, method = m, p = 3, backend = "gpu",
                                      precision = "single"))
      expect_equal(c(gs)[ok], c(want)[ok], tolerance = 1e-5, info = paste("single", m, info))
    }
  }
  binf <- bin * 1.0; binf[2, 2] <- Inf
  expect_warning(gpu_dist(binf, "binary", backend = "gpu"), "treating non-finite values as NA")
})

test_that("gpu_dist euclidean keeps near-duplicate rows with 1e8 offsets exact", {
  skip_if_no_gpu()
  info <- new_seed()
  base <- 1e8 + rnorm(50)
  x <- t(vapply(1:40, function(i) base + rnorm(50) * 1e-6, numeric(50)))
  got <- c(gpu_dist(x, backend = "gpu")); want <- c(dist(x))
  expect_lt(max(abs(got - want) / want), 1e-12, label = paste("relative error", info))
})

test_that("gpu_dist correlation distances match 1 - cor(t(x))", {
  skip_if_no_gpu()
  info <- new_seed()
  x <- rmat(157, 40)
  x[7, ] <- 2
  options(gpucor.gpu_slab = 11); on.exit(options(gpucor.gpu_slab = NULL))
  for (prec in c("double", "single")) {
    tol <- if (prec == "double") 1e-10 else 1e-5
    r <- suppressWarnings(cor(t(x)))
    rs <- suppressWarnings(cor(t(x), method = "spearman"))
    cs <- x %*% t(x) / sqrt(rowSums(x^2) %o% rowSums(x^2))
    for (case in list(list("correlation", 1 - r), list("abscorrelation", 1 - abs(r)),
                      list("spearman", 1 - rs), list("cosine", 1 - cs))) {
      got <- suppressWarnings(gpu_dist(x, case[[1]], backend = "gpu", precision = prec))
      want <- c(as.dist(case[[2]]))
      if (case[[1]] != "cosine") want[is.na(c(as.dist(r)))] <- NA
      gpu_vs(c(got), want, tol, paste(case[[1]], prec, info))
    }
    expect_warning(gpu_dist(x, "correlation", backend = "gpu", precision = prec),
                   "the standard deviation is zero")
  }
})

test_that("gpu_dist longer than 2^31 (70000 x 8) is right where sampled", {
  skip_if_no_gpu()
  skip_if(Sys.getenv("GPUCOR_BIG_TESTS") != "true", "set GPUCOR_BIG_TESTS=true")
  info <- new_seed()
  n <- 70000L
  x <- rmat(n, 8)
  d <- gpu_dist(x, backend = "gpu")
  expect_identical(length(d), n * (n - 1) / 2)
  # dist index of (i, j), i > j, 1-based: n*(j-1) - j*(j-1)/2 + i - j
  j <- c(1, 2, sample(n - 1, 2000), n - 1)
  i <- pmin(n, j + sample(n, length(j), TRUE))
  i[i <= j] <- j[i <= j] + 1
  k <- n * (j - 1) - j * (j - 1) / 2 + i - j
  want <- sqrt(rowSums((x[i, , drop = FALSE] - x[j, , drop = FALSE])^2))
  expect_equal(d[k], want, tolerance = 1e-12, info = info)
  rm(d); gc()
})

test_that("GPU errors are clear R errors and leave the session usable", {
  skip_if_no_gpu()
  x <- rmat(100, 50)
  old <- options(gpucor.gpu_memory = 1000); on.exit(options(old))
  expect_error(gpu_cor(x, backend = "gpu"), "GPU memory")
  expect_error(gpu_dist(x, backend = "gpu"), "GPU memory")
  xna <- x
  xna[3, 4] <- NA
  expect_error(gpu_cor(x, method = "kendall", backend = "gpu"), "GPU memory")
  expect_error(gpu_cor(xna, method = "spearman", use = "pairwise", backend = "gpu"), "GPU memory")
  expect_error(gpu_dist(xna, "correlation", backend = "gpu"), "GPU memory")
  options(old)
  expect_equal(gpu_cor(x, backend = "gpu"), cor(x), tolerance = 1e-10)
  expect_equal(gpu_cor(x, method = "kendall", backend = "gpu"), cor(x, method = "kendall"),
               tolerance = 1e-10)
})
