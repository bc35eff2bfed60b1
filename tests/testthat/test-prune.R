# gpu_aracne_a(), gpu_aracne_m(), gpu_clr(), gpu_mrnet() against parmigene
# 1.1.0's aracne.a, aracne.m, clr, mrnet: the same zero pattern and values.

seeded <- function(expr_seed, code) {
  set.seed(expr_seed)
  withCallingHandlers(code, expectation_failure = function(e) {
    message("seed: ", expr_seed)
  })
}

# a random symmetric matrix with values from 'vals' (ties), diagonal 'd'
sym_from <- function(n, vals, d = 0) {
  s <- matrix(sample(vals, n * n, TRUE), n)
  s[lower.tri(s)] <- t(s)[lower.tri(s)]
  diag(s) <- d
  s
}

# parmigene names both sides by rownames(mi); gpucor keeps mi's dimnames
expect_pruned <- function(got, want) {
  want <- unname(want)
  got <- unname(got)
  expect_identical(got == 0, want == 0)
  expect_equal(got, want, tolerance = 1e-12)
}

# every algorithm of both packages on mi, under the options given
check_all <- function(mi, backend = "cpu", eps = c(0.05, 0.01, 0.2), tau = c(0.15, 0.05, 0.5)) {
  for (e in eps) expect_pruned(gpu_aracne_a(mi, eps = e, backend = backend),
                               parmigene::aracne.a(mi, eps = e))
  for (t in tau) expect_pruned(gpu_aracne_m(mi, tau = t, backend = backend),
                               parmigene::aracne.m(mi, tau = t))
  expect_pruned(gpu_clr(mi, backend = backend), parmigene::clr(mi))
  expect_pruned(gpu_mrnet(mi, backend = backend), parmigene::mrnet(mi))
}

# the inputs: MI of random data (with negative estimates), ties with
# zeros, ties with negative values (parmigene's tree by index order)
prune_inputs <- function(seed) {
  set.seed(seed)
  x <- matrix(rnorm(70 * 30), 70)
  list(knnmi = parmigene::knnmi.all(x, k = 3, noise = 0),
       ties = sym_from(61, c(0, 0.1, 0.2, 0.3)),
       ties_diag = sym_from(40, c(0, 0.1, 0.2, 0.3), d = 1),
       negative = sym_from(33, c(-0.3, -0.2, -0.1, 0, 0.1)),
       all_negative = sym_from(9, c(-0.2, -0.1)))
}

test_that("the CPU engine is parmigene's, with the tiles small or whole", {
  skip_if_not_installed("parmigene")
  seed <- sample.int(1e6, 1)
  seeded(seed, {
    ins <- prune_inputs(seed)
    for (tile in list(NULL, 3, 8, 17)) {
      withr::with_options(list(gpucor.cpu_tile = tile), {
        for (nm in names(ins)) check_all(ins[[nm]])
      })
    }
  })
})

test_that("ARACNE's ties and tolerances: written-out cases", {
  skip_if_not_installed("parmigene")
  # a triangle of equal negative values: parmigene's tree removes (1, 3)
  # only, by the index order (the clean rule would remove all three)
  s <- matrix(-1, 3, 3); diag(s) <- 0
  expect_pruned(gpu_aracne_m(s, backend = "cpu"), parmigene::aracne.m(s))
  expect_equal(sum(gpu_aracne_m(s, backend = "cpu") == 0), 5)
  # strict comparisons: an edge exactly eps below (in floating point) stays
  s <- matrix(c(0, 0.5, 0.25, 0.5, 0, 0.5, 0.25, 0.5, 0), 3)
  expect_pruned(gpu_aracne_a(s, eps = 0.25), parmigene::aracne.a(s, eps = 0.25))
  expect_equal(gpu_aracne_a(s, eps = 0.25, backend = "cpu"), s)
  expect_equal(gpu_aracne_a(s, eps = 0.125, backend = "cpu")[1, 3], 0)
  # an equal triangle: nothing removed
  s <- matrix(0.3, 4, 4)
  expect_equal(gpu_aracne_a(s, backend = "cpu"), s)
  expect_equal(gpu_aracne_m(s, backend = "cpu"), s)
  # tau >= 1 is accepted, as parmigene does
  s <- sym_from(12, c(0, 0.1, 0.5))
  expect_pruned(gpu_aracne_m(s, tau = 1, backend = "cpu"), parmigene::aracne.m(s, tau = 1))
  expect_pruned(gpu_aracne_m(s, tau = 2, backend = "cpu"), parmigene::aracne.m(s, tau = 2))
  # small sizes
  for (n in 0:3) {
    s <- sym_from(n, c(0.1, 0.4, 0.7))
    expect_identical(dim(gpu_aracne_a(s, backend = "cpu")), c(n, n))
    if (n > 0) check_all(s)
  }
})

test_that("dimnames, data frames, integer input", {
  skip_if_not_installed("parmigene")
  s <- sym_from(7, 0:3)
  dimnames(s) <- list(letters[1:7], LETTERS[1:7])
  for (f in list(gpu_aracne_a, gpu_aracne_m, gpu_clr, gpu_mrnet))
    expect_identical(dimnames(f(s, backend = "cpu")), dimnames(s))
  d <- as.data.frame(unname(s) / 4)
  expect_pruned(gpu_aracne_a(d, backend = "cpu"), parmigene::aracne.a(unname(s) / 4))
  storage.mode(s) <- "integer"
  expect_pruned(gpu_clr(s, backend = "cpu"), parmigene::clr(unname(s) + 0))
})

test_that("errors: asymmetric, non-square, NA, Inf, non-numeric, eps/tau", {
  s <- sym_from(5, c(0.1, 0.2))
  a <- s; a[1, 2] <- 0.3
  for (f in list(gpu_aracne_a, gpu_aracne_m, gpu_clr, gpu_mrnet)) {
    expect_error(f(a, backend = "cpu"), "'mi' must be symmetric \\(mi\\[1, 2\\]")
    expect_error(f(s[, -1], backend = "cpu"), "must be a square matrix \\(it is 5 x 4\\)")
    b <- s; b[2, 3] <- b[3, 2] <- NA
    expect_error(f(b, backend = "cpu"), "'mi' has NA/NaN values")
    b <- s; b[2, 3] <- b[3, 2] <- Inf
    expect_error(f(b, backend = "cpu"), "'mi' must have finite values")
    expect_error(f(s > 0.1, backend = "cpu"), "'mi' must be a numeric matrix")
    expect_error(f(as.character(s), backend = "cpu"), "'mi' must be a numeric matrix")
    expect_error(f(backend = "cpu"), "give one of 'mi' and 'x'")
    expect_error(f(s, x = s, backend = "cpu"), "give one of 'mi' and 'x'")
  }
  a <- s; a[4, 5] <- a[4, 5] + 1e-15
  expect_error(gpu_aracne_a(a, backend = "cpu"), "symmetric")
  for (e in list(0, -1, NA, "a", c(1, 2), Inf)) {
    expect_error(gpu_aracne_a(s, eps = e, backend = "cpu"), "'eps' must be a positive number")
    expect_error(gpu_aracne_m(s, tau = e, backend = "cpu"), "'tau' must be a positive number")
  }
})

test_that("mi from data (x =) goes through gpu_knnmi()", {
  set.seed(7)
  x <- matrix(rnorm(40 * 12), 40)
  knnmi <- gpu_knnmi
  mi <- knnmi(x, k = 3, noise = 0, backend = "cpu")
  expect_identical(gpu_aracne_a(x = x, backend = "cpu"), gpu_aracne_a(mi, backend = "cpu"))
  expect_identical(gpu_aracne_m(x = x, backend = "cpu"), gpu_aracne_m(mi, backend = "cpu"))
  expect_identical(gpu_clr(x = x, backend = "cpu"), gpu_clr(mi, backend = "cpu"))
  expect_identical(gpu_mrnet(x = x, k = 4, backend = "cpu"),
                   gpu_mrnet(knnmi(x, k = 4, noise = 0, backend = "cpu"), backend = "cpu"))
  # gpu_knnmi()'s checks, before the backend is chosen
  for (b in c("cpu", "auto")) {
    expect_error(gpu_clr(x = x, k = 12, backend = b), "too few columns")
    expect_error(gpu_mrnet(x = x, k = 2.5, backend = b), "whole number")
    expect_error(gpu_aracne_a(x = x, k = 1, backend = b), "at least 2")
    expect_error(gpu_aracne_m(x = x, noise = -1, backend = b), "non-negative")
    expect_error(gpu_clr(x = x[, 1:3] > 0, backend = b), "too few columns")
    expect_error(gpu_aracne_a(x = data.frame(a = letters[1:5]), backend = b),
                 "'x' must be numeric")
  }
})

test_that("the GPU engine is parmigene's and the CPU's", {
  skip_if_not_installed("parmigene")
  skip_if_no_gpu()
  seed <- sample.int(1e6, 1)
  seeded(seed, {
    ins <- prune_inputs(seed)
    # more than one 64 x 64 tile, n not a multiple of 64
    set.seed(seed)
    ins$big_ties <- sym_from(203, c(0, 0.1, 0.2, 0.3))
    ins$big_negative <- sym_from(150, c(-0.2, -0.1, 0, 0.1, 0.2))
    for (nm in names(ins)) {
      check_all(ins[[nm]], backend = "gpu")
      expect_identical(gpu_aracne_a(ins[[nm]], backend = "gpu"),
                       gpu_aracne_a(ins[[nm]], backend = "cpu"))
      expect_identical(gpu_aracne_m(ins[[nm]], backend = "gpu"),
                       gpu_aracne_m(ins[[nm]], backend = "cpu"))
      # the decisions brought back in bands of 64 columns
      with_options(list(gpucor.gpu_slab = 4L),
                   expect_identical(gpu_aracne_a(ins[[nm]], backend = "gpu"),
                                    gpu_aracne_a(ins[[nm]], backend = "cpu")))
    }
    s <- matrix(-1, 3, 3); diag(s) <- 0
    expect_pruned(gpu_aracne_m(s, backend = "gpu"), parmigene::aracne.m(s))
    expect_identical(dim(gpu_aracne_a(matrix(0, 0, 0), backend = "gpu")), c(0L, 0L))
  })
})

test_that("CLR and MRNET on the GPU are the CPU's to the bit", {
  skip_if_no_gpu()
  seed <- sample.int(1e6, 1)
  seeded(seed, {
    x <- matrix(rnorm(150 * 40), 150)
    ins <- list(knnmi = gpu_knnmi(x, backend = "cpu"),
                ties = sym_from(203, c(0, 0.1, 0.2, 0.3)),
                ties_diag = sym_from(40, c(0, 0.1, 0.2, 0.3), d = 1),
                negative = sym_from(97, c(-0.2, -0.1, 0, 0.1, 0.2)),
                zeros = matrix(0, 6, 6),
                uniform = { u <- matrix(runif(70^2), 70); u + t(u) },
                two = sym_from(2, c(0.1, 0.2)),
                one = matrix(0.5, 1, 1),
                empty = matrix(0, 0, 0))
    for (nm in names(ins)) {
      m <- ins[[nm]]
      clr <- gpu_clr(m, backend = "cpu")
      mrnet <- gpu_mrnet(m, backend = "cpu")
      expect_identical(gpu_clr(m, backend = "gpu"), clr, label = paste("clr", nm))
      expect_identical(gpu_mrnet(m, backend = "gpu"), mrnet, label = paste("mrnet", nm))
      # MRNET's targets in batches of 7, the results back in bands of 7
      # columns (the last one short)
      with_options(list(gpucor.gpu_slab = 7L), {
        expect_identical(gpu_clr(m, backend = "gpu"), clr, label = paste("clr bands", nm))
        expect_identical(gpu_mrnet(m, backend = "gpu"), mrnet,
                         label = paste("mrnet batches", nm))
      })
    }
  })
})

test_that("x = on the GPU: the MI made on the device, the CPU's results", {
  skip_if_no_gpu()
  seed <- sample.int(1e6, 1)
  seeded(seed, {
    # 130 variables: ARACNE's padding to 192, several of the MI's panels;
    # the negative estimates of k-NN MI (aracne.m's tree)
    x <- matrix(rnorm(130 * 25), 130, dimnames = list(sprintf("g%d", 1:130), NULL))
    xt <- round(x, 1)   # ties in the data
    for (v in list(x, xt)) {
      for (k in c(3, 5)) {
        mi <- gpu_knnmi(v, k = k, backend = "cpu")
        cpu <- list(gpu_aracne_a(mi, backend = "cpu"), gpu_aracne_m(mi, backend = "cpu"),
                    gpu_aracne_m(mi, tau = 0.5, backend = "cpu"),
                    gpu_clr(mi, backend = "cpu"), gpu_mrnet(mi, backend = "cpu"))
        run <- function() list(gpu_aracne_a(x = v, k = k, backend = "gpu"),
                               gpu_aracne_m(x = v, k = k, backend = "gpu"),
                               gpu_aracne_m(x = v, k = k, tau = 0.5, backend = "gpu"),
                               gpu_clr(x = v, k = k, backend = "gpu"),
                               gpu_mrnet(x = v, k = k, backend = "gpu"))
        expect_identical(run(), cpu)
        # panels of 9 columns for the MI, bands of 9 for the result
        with_options(list(gpucor.gpu_slab = 9L), expect_identical(run(), cpu))
      }
    }
    # noise: the same draws as gpu_knnmi()'s
    set.seed(seed)
    a <- gpu_clr(x = x, noise = 1e-3, backend = "gpu")
    set.seed(seed)
    b <- gpu_clr(gpu_knnmi(x, noise = 1e-3, backend = "cpu"), backend = "cpu")
    expect_identical(a, b)
    # k past KNNMI_KMAX (32): the thread-per-pair kernel
    v <- matrix(rnorm(40 * 60), 40)
    expect_identical(gpu_aracne_a(x = v, k = 40, backend = "gpu"),
                     gpu_aracne_a(gpu_knnmi(v, k = 40, backend = "cpu"), backend = "cpu"))
    # no pair, one pair
    expect_identical(gpu_mrnet(x = x[1, , drop = FALSE], backend = "gpu"),
                     matrix(0, 1, 1, dimnames = list("g1", "g1")))
    expect_identical(gpu_aracne_a(x = x[1:2, ], backend = "gpu"),
                     gpu_aracne_a(x = x[1:2, ], backend = "cpu"))
    # the checks of gpu_knnmi()
    expect_error(gpu_clr(x = x, k = 25, backend = "gpu"), "too few columns")
    expect_error(gpu_clr(x = x, k = 2.5, backend = "gpu"), "whole number")
    expect_error(gpu_clr(x = x, noise = -1, backend = "gpu"), "non-negative")
  })
})
