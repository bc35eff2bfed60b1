# gpu_module_eigengenes() and gpu_merge_close_modules() against
# WGCNA::moduleEigengenes() and WGCNA::mergeCloseModules() (issue 38), on
# planted-module data (60 samples, 4 modules of 80 genes made from shared
# latent factors plus noise, 80 unassigned genes) and random data, each test
# with a fresh seed (printed in `info`; GPUCOR_TEST_SEED=<n> replays one).
# Every element of the results is compared: numbers to 1e-8 (waldo's
# relative tolerance), names, row names, classes, labels and flags
# identical; trees' merges, order and labels identical, heights to 1e-8.

# Four modules of 80 genes on latent factors f1..f4 and 80 noise genes.  The
# factors' sample correlations are exact (orthonormal directions): f1 with
# f2 0.85, f3 with f1 0.65 and with f2 about 0.55, f4 0; the eigengene
# dissimilarities come out near 0.15 (modules 1, 2), 0.35 and 0.45 (3 with
# 1, 2) and 1 (4), so cutHeight 0.1 merges nothing, 0.2 modules 1 and 2, 0.5
# modules 1, 2 and 3 (in 300 seeds out of 300).
planted <- function(n = 60, per = 80, noise = 0.5) {
  z <- qr.Q(qr(scale(matrix(stats::rnorm(n * 4), n, 4), scale = FALSE)))
  f <- cbind(z[, 1], 0.85 * z[, 1] + sqrt(1 - 0.85^2) * z[, 2],
             0.65 * z[, 1] + sqrt(1 - 0.65^2) * z[, 3], z[, 4]) * sqrt(n)
  x <- do.call(cbind, lapply(1:4, function(k)
    f[, k] %*% t(stats::runif(per, 0.5, 1)) + noise * matrix(stats::rnorm(n * per), n, per)))
  x <- cbind(x, matrix(stats::rnorm(n * per), n, per))
  dimnames(x) <- list(paste0("s", seq_len(n)), paste0("g", seq_len(ncol(x))))
  x
}
planted_labels <- c(rep(1:4, each = 80), rep(0, 80))

wgcna_colors <- function(labels) WGCNA::labels2colors(labels)

# WGCNA's call, its printout (it prints "nothing to merge" at verbose 0)
# swallowed.
quietly <- function(expr) {
  utils::capture.output(v <- expr)
  v
}

# got and want element by element, as the header says.
expect_like_wgcna <- function(got, want, info) {
  expect_identical(names(got), names(want), info = info)
  for (nm in names(want)) {
    g <- got[[nm]]
    w <- want[[nm]]
    what <- paste0(info, ": $", nm)
    if (is.data.frame(w)) {
      expect_true(is.data.frame(g), info = what)
      expect_identical(attributes(g), attributes(w), info = what)
      expect_identical(vapply(g, typeof, ""), vapply(w, typeof, ""), info = what)
      expect_equal(unclass(g), unclass(w), tolerance = 1e-8, info = what)
    } else if (inherits(w, "hclust")) {
      expect_s3_class(g, "hclust")
      for (k in c("merge", "order", "labels", "method", "dist.method"))
        expect_identical(g[[k]], w[[k]], info = paste(what, k))
      expect_equal(g$height, w$height, tolerance = 1e-8, info = what)
    } else {
      expect_identical(g, w, info = what)
    }
  }
}

me_pair <- function(x, colors, ..., info) {
  got <- gpu_module_eigengenes(x, colors, ...)
  want <- WGCNA::moduleEigengenes(x, colors, ...)
  expect_like_wgcna(got, want, info)
  invisible(got)
}

merge_pair <- function(x, colors, ..., info) {
  got <- gpu_merge_close_modules(x, colors, ..., verbose = 0)
  want <- quietly(WGCNA::mergeCloseModules(x, colors, ..., verbose = 0))
  expect_like_wgcna(got, want, info)
  invisible(got)
}

test_that("eigengenes match WGCNA on planted modules: labels, excludeGrey, align", {
  skip_if_not_installed("WGCNA")
  info <- new_seed()
  x <- planted()
  lab <- planted_labels
  col <- wgcna_colors(lab)
  for (cl in list(lab, col, factor(col))) for (eg in c(FALSE, TRUE))
    for (al in c("along average", "")) {
      r <- me_pair(x, cl, excludeGrey = eg, align = al,
                   info = sprintf("%s %s excludeGrey %s align '%s'", info, class(cl), eg, al))
      if (!eg && al == "" && is.numeric(cl)) unaligned <- r$eigengenes
    }
  # the planted modules are found: each eigengene follows its module's genes
  r <- gpu_module_eigengenes(x, col)
  grey <- names(r$eigengenes) == "MEgrey"
  expect_true(all(r$varExplained[1, !grey] > 0.25) && r$varExplained[1, grey] < 0.15,
              info = info)
  expect_true(all(r$isPC) && r$allOK && r$allPC && r$allAEOK, info = info)
  expect_identical(names(r$eigengenes), paste0("ME", sort(unique(col))))
  expect_identical(rownames(r$eigengenes), rownames(x))
  # align = "" keeps svd's sign: each column equals the aligned one up to sign
  a <- gpu_module_eigengenes(x, lab)$eigengenes
  expect_equal(abs(as.matrix(unaligned)), abs(as.matrix(a)), tolerance = 1e-12)
})

test_that("eigengenes match WGCNA: random data, data frames, nPC, scale, softPower", {
  skip_if_not_installed("WGCNA")
  info <- new_seed()
  x <- rmat(25, 60)
  lab <- sample(0:5, 60, replace = TRUE)
  lab[1:6] <- 0:5                                    # every label present
  me_pair(x, lab, info = paste(info, "random"))
  me_pair(x, lab, nPC = 3, scale = FALSE, info = paste(info, "nPC 3 scale FALSE"))
  # a data frame: WGCNA names the rows "1", "2", ... from its automatic names
  me_pair(as.data.frame(x), wgcna_colors(lab), info = paste(info, "data frame"))
  xn <- x
  rownames(xn) <- c("a", "a", paste0("s", 3:25))    # made unique, as WGCNA does
  me_pair(xn, lab, info = paste(info, "duplicated row names"))
  me_pair(unname(x), lab, info = paste(info, "no dimnames"))
  # a module of one gene, and a module with a constant gene: svd fails on
  # its scaled genes (NaN), so the hub-gene summary is used, weighted with
  # softPower
  one <- lab
  one[7] <- 9
  xc <- x
  xc[, which(lab == 2)[1]] <- 1
  for (sp in c(6, 2)) {
    r <- me_pair(xc, one, softPower = sp, info = paste(info, "softPower", sp))
    expect_identical(r$isHub, names(r$eigengenes) == "ME2", info = info)
  }
  # without scaling the constant gene is kept (its correlation is NA)
  me_pair(xc, one, scale = FALSE, info = paste(info, "constant gene, scale FALSE"))
  expect_warning(r <- gpu_module_eigengenes(x, lab, nPC = 11), "larger than 10")
  expect_identical(nrow(r$varExplained), 10L)
  expect_like_wgcna(r, suppressWarnings(WGCNA::moduleEigengenes(x, lab, nPC = 11)),
                    paste(info, "nPC 11"))
})

test_that("eigengenes of modules smaller than, as large as and larger than the samples, cached", {
  skip_if_not_installed("WGCNA")
  info <- new_seed()
  x <- rmat(30, 130)
  # modules of 2, 12, 30 (= samples), 31 and 55 genes; 0 the rest
  lab <- rep(c(1, 2, 3, 4, 5, 0), c(2, 12, 30, 31, 55, 0))
  x[, lab == 4] <- x[, lab == 4] + stats::rnorm(30)   # a strong component
  x[, lab == 1] <- x[, lab == 1] + 2 * stats::rnorm(30)   # two correlated genes (below)
  for (np in c(1, 3)) {
    me_pair(x, lab, nPC = np, info = paste(info, "sizes, nPC", np))
    # the second call reads the summaries the first one cached
    me_pair(x, lab, nPC = np, info = paste(info, "sizes, again, nPC", np))
  }
  # the same data with one value changed (in place): not the cached summaries
  x0 <- x + 0
  x[1, 60] <- x[1, 60] + 5
  me_pair(x, lab, info = paste(info, "one value changed"))
  me_pair(x[, 130:1], rev(lab), info = paste(info, "genes reversed"))
  me_pair(x0, lab, info = paste(info, "the first data again"))
  # two anti-correlated genes: the eigengene is uncorrelated with their
  # average, so its sign is rounding (in WGCNA too); the values agree
  xa <- x0
  xa[, 2] <- -xa[, 1] + 0.3 * stats::rnorm(30)
  got <- gpu_module_eigengenes(xa, lab)$eigengenes
  want <- WGCNA::moduleEigengenes(xa, lab)$eigengenes
  expect_equal(abs(got[, 1]), abs(want[, 1]), tolerance = 1e-8, info = info)
  expect_equal(got[, -1], want[, -1], tolerance = 1e-8, info = info)
})

test_that("eigengenes with missing values match WGCNA, imputed or not", {
  skip_if_not_installed("WGCNA")
  skip_if_not_installed("impute")
  info <- new_seed()
  x <- planted(per = 20)
  lab <- c(rep(1:4, each = 20), rep(0, 20))
  col <- wgcna_colors(lab)
  x[sample(length(x), 150)] <- NA
  x[, 25] <- NA                     # a gene that is all NA (module 2)
  x[3:50, 70] <- NA                 # mostly NA (module 4)
  x[sample(60, 20), 3] <- NA
  for (imp in c(TRUE, FALSE)) {
    before <- .Random.seed
    # impute.knn warns about the mostly-NA rows (for gpucor and WGCNA alike)
    got <- suppressWarnings(gpu_module_eigengenes(x, col, impute = imp))
    expect_identical(.Random.seed, before, info = paste(info, "random state kept"))
    want <- suppressWarnings(WGCNA::moduleEigengenes(x, col, impute = imp))
    expect_like_wgcna(got, want, paste(info, "impute", imp))
    expect_false(anyNA(got$eigengenes[, "MEturquoise"]), info = info)
  }
  # a one-gene module with NA (never imputed: hub path, NaN where missing)
  one <- col
  one[3] <- "salmon"
  for (imp in c(TRUE, FALSE))
    expect_like_wgcna(suppressWarnings(gpu_module_eigengenes(x, one, impute = imp)),
                      suppressWarnings(WGCNA::moduleEigengenes(x, one, impute = imp)),
                      paste(info, "one-gene module with NA, impute", imp))
})

test_that("failing modules: trapErrors, returnValidOnly and subHubs as in WGCNA", {
  skip_if_not_installed("WGCNA")
  skip_if_not_installed("impute")
  info <- new_seed()
  x <- rmat(30, 40)
  col <- rep(c("grey", "blue", "brown", "turquoise"), each = 10)
  x[, 11:20] <- NA                  # module blue: nothing to impute from
  for (sh in c(TRUE, FALSE)) for (rv in c(TRUE, FALSE)) {
    what <- sprintf("%s subHubs %s returnValidOnly %s", info, sh, rv)
    got <- capture_conditions(gpu_module_eigengenes(x, col, trapErrors = TRUE,
                                                    subHubs = sh, returnValidOnly = rv))
    want <- capture_conditions(WGCNA::moduleEigengenes(x, col, trapErrors = TRUE,
                                                       subHubs = sh, returnValidOnly = rv))
    expect_null(got$error)
    expect_like_wgcna(got$value, want$value, what)
    # a warning for the removed module, as WGCNA's
    expect_identical(any(grepl("module blue", got$warnings)),
                     any(grepl("module blue", want$warnings)), info = what)
  }
  r <- suppressWarnings(gpu_module_eigengenes(x, col, trapErrors = TRUE, subHubs = FALSE))
  expect_false(r$allOK)
  expect_true(all(r$validColors[11:20] == "grey"))
  # without trapErrors the error stops the call, as WGCNA's does
  expect_error(gpu_module_eigengenes(x, col, subHubs = FALSE), "80 %")
  expect_error(WGCNA::moduleEigengenes(x, col, subHubs = FALSE), "80 %")
})

test_that("gpu_module_eigengenes checks its arguments", {
  info <- new_seed()
  x <- rmat(20, 12)
  col <- rep(c("blue", "grey", "brown"), each = 4)
  expect_error(gpu_module_eigengenes(x, col[-1]), "one label per gene .* 11 labels for 12 genes")
  expect_error(gpu_module_eigengenes(x, c(col, "blue")), "13 labels for 12 genes")
  expect_error(gpu_module_eigengenes(x, NULL), "'colors' is NULL")
  expect_error(gpu_module_eigengenes(NULL, col), "'expr' is NULL")
  expect_error(gpu_module_eigengenes(x[1, ], col), "must be a matrix or data frame")
  expect_error(gpu_module_eigengenes(matrix("a", 3, 12), col), "'expr' must be numeric")
  expect_error(gpu_module_eigengenes(x, replace(col, 2, NA)), "missing values")
  expect_error(gpu_module_eigengenes(x, factor(col, levels = c(unique(col), "red"))),
               "unused levels")
  expect_error(gpu_module_eigengenes(x, rep("grey", 12), excludeGrey = TRUE),
               "only color is 'grey'")
  expect_error(gpu_module_eigengenes(x, col, align = "along"), "'align'")
  expect_error(gpu_module_eigengenes(x, col, softPower = -1), "'softPower'")
  expect_error(gpu_module_eigengenes(x, col, nPC = 0), "'nPC'")
  expect_error(gpu_module_eigengenes(x, col, scale = NA), "'scale'")
  # nothing printed at verbose = 0; messages at verbose > 0
  expect_silent(gpu_module_eigengenes(x, col))
  expect_message(gpu_module_eigengenes(x, col, verbose = 1), "3 module eigengenes")
})

test_that("the backend option changes nothing and never fails", {
  info <- new_seed()
  x <- planted(per = 15)
  lab <- c(rep(1:4, each = 15), rep(0, 15))
  ref_me <- gpu_module_eigengenes(x, lab)
  ref_mg <- gpu_merge_close_modules(x, lab, cutHeight = 0.3, verbose = 0)
  for (be in c("cpu", "gpu", "auto")) {
    old <- options(gpucor.backend = be)
    expect_identical(gpu_module_eigengenes(x, lab), ref_me, info = paste(info, be))
    expect_identical(gpu_merge_close_modules(x, lab, cutHeight = 0.3, verbose = 0), ref_mg,
                     info = paste(info, be))
    options(old)
  }
})

test_that("merged colors and trees match WGCNA for cutHeight 0.1, 0.2, 0.5", {
  skip_if_not_installed("WGCNA")
  info <- new_seed()
  x <- planted()
  lab <- planted_labels
  col <- wgcna_colors(lab)
  # integer labels become double where they merge, as in WGCNA
  for (h in c(0.1, 0.2, 0.5)) for (cl in list(lab, as.integer(lab), col, factor(col)))
    merge_pair(x, cl, cutHeight = h, info = sprintf("%s cutHeight %g %s", info, h, class(cl)))
  # the planted structure: 0.2 merges modules 1 and 2, 0.5 modules 1 to 3
  n_mods <- function(h) length(setdiff(unique(
    gpu_merge_close_modules(x, lab, cutHeight = h, verbose = 0)$colors), 0))
  expect_identical(vapply(c(0.1, 0.2, 0.5), n_mods, 1L), c(4L, 3L, 2L), info = info)
})

test_that("mergeCloseModules' options match WGCNA: relabel, iterate, useAbs, new MEs", {
  skip_if_not_installed("WGCNA")
  info <- new_seed()
  x <- planted(per = 40)
  lab <- c(rep(1:4, each = 40), rep(0, 40))
  col <- wgcna_colors(lab)
  opts <- list(list(relabel = TRUE), list(iterate = FALSE), list(useAbs = TRUE),
               list(getNewMEs = FALSE), list(getNewUnassdME = FALSE),
               list(relabel = TRUE, getNewUnassdME = FALSE), list(impute = FALSE))
  for (o in opts) for (cl in list(lab, col)) for (h in c(0.2, 0.5))
    do.call(merge_pair, c(list(x, cl, cutHeight = h), o,
                          info = sprintf("%s %s %s cutHeight %g", info, deparse(o), class(cl), h)))
  merge_pair(x, lab, cutHeight = 0.5, relabel = TRUE, colorSeq = c(7, 5, 3, 1),
             info = paste(info, "colorSeq"))
  merge_pair(x, factor(col), cutHeight = 0.5, relabel = TRUE, info = paste(info, "relabel factor"))
  # relabel's colours are WGCNA's standard sequence
  expect_identical(gpucor:::.standard_colors(), WGCNA::standardColors())
})

test_that("mergeCloseModules with MEs given, one module, all merged, random data", {
  skip_if_not_installed("WGCNA")
  info <- new_seed()
  x <- planted(per = 40)
  lab <- c(rep(1:4, each = 40), rep(0, 40))
  col <- wgcna_colors(lab)
  # MEs with the grey one are used as given; without it they are recomputed
  for (eg in c(FALSE, TRUE)) for (h in c(0.2, 0.5)) {
    MEs <- WGCNA::moduleEigengenes(x, col, excludeGrey = eg)$eigengenes
    merge_pair(x, col, MEs = MEs, cutHeight = h,
               info = sprintf("%s MEs excludeGrey %s cutHeight %g", info, eg, h))
  }
  MEs <- gpu_module_eigengenes(x, col)$eigengenes
  expect_identical(gpu_merge_close_modules(x, col, MEs = MEs, cutHeight = 0.2, verbose = 0),
                   gpu_merge_close_modules(x, col, MEs = as.matrix(MEs), cutHeight = 0.2,
                                           verbose = 0))
  # one proper module: nothing to merge (no trees)
  one <- ifelse(lab == 1, "blue", "grey")
  r <- merge_pair(x, one, info = paste(info, "one module"))
  expect_null(r$dendro)
  expect_identical(r$colors, one)
  # everything but grey merges in the first round; the second has one module
  allm <- ifelse(lab %in% 1:3, lab, 0)
  r <- merge_pair(x, allm, cutHeight = 0.6, info = paste(info, "all merged"))
  expect_length(setdiff(unique(r$colors), 0), 1L)
  # random data, random labels, no grey
  xr <- rmat(30, 50)
  rl <- sample(1:6, 50, replace = TRUE)
  rl[1:6] <- 1:6
  for (h in c(0.5, 0.9)) merge_pair(xr, rl, cutHeight = h, info = paste(info, "random", h))
  # a data frame
  merge_pair(as.data.frame(x), col, cutHeight = 0.5, info = paste(info, "data frame"))
  # trapErrors: all genes unassigned fails inside (no module to summarize)
  got <- capture_conditions(gpu_merge_close_modules(x, rep("grey", ncol(x)), trapErrors = TRUE,
                                                    verbose = 0))
  want <- capture_conditions(quietly(WGCNA::mergeCloseModules(x, rep("grey", ncol(x)),
                                                              trapErrors = TRUE, verbose = 0)))
  expect_identical(got$value, want$value)
  expect_length(got$warnings, 1L)
  expect_error(gpu_merge_close_modules(x, rep("grey", ncol(x)), verbose = 0), "only color")
})

test_that("gpu_merge_close_modules checks its arguments", {
  info <- new_seed()
  x <- rmat(20, 12)
  col <- rep(c("blue", "grey", "brown"), each = 4)
  expect_error(gpu_merge_close_modules(x, col[-1], verbose = 0),
               "one label per gene .* 11 labels for 12 genes")
  # several sets are WGCNA's list of lists with 'data' (test-consensus.R)
  expect_error(gpu_merge_close_modules(list(x, x), col), "component 'data'")
  expect_error(gpu_merge_close_modules(list(list(data = x), list(data = x[, -1])), col),
               "same genes")
  expect_error(gpu_merge_close_modules(x, col, useSets = 2), "'useSets'")
  expect_error(gpu_merge_close_modules(x, col, cutHeight = 1.5), "between 0 and 1")
  expect_error(gpu_merge_close_modules(x, col, cutHeight = -0.1), "between 0 and 1")
  expect_error(gpu_merge_close_modules(x, col, MEs = data.frame(MEblue = 1:3)), "rows")
  expect_error(gpu_merge_close_modules(x, col, MEs = data.frame(a = 1:20, b = 1, c = 2),
                                       verbose = 0), "must be named")
  expect_error(gpu_merge_close_modules(x, col, checkDataFormat = FALSE), "checkDataFormat")
  expect_silent(gpu_merge_close_modules(x, col, verbose = 0))
  msgs <- capture_messages(gpu_merge_close_modules(x, col))
  expect_match(msgs[1], "less than 0.2")
})
