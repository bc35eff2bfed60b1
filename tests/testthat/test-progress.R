# The progress bar (src/progress.c, R/progress.R): one bar per call across
# its passes, naming the function and the step, with the time taken and an
# estimate of the time left; 100% only at the end of the last pass, and
# one newline.  The bar is forced on in this non-interactive session with
# option gpucor.progress = "always" and the internal gpucor.progress_delay
# = 0 (every call's bar shows at once; normally after two seconds).  It is
# written with REprintf(), to R's error connection: a sink of type
# "message" to a file receives it byte for byte.  (What a terminal shows:
# bench/progress_tmux.sh.)

# What expr writes to the error connection, as one string.
bar_output <- function(expr, delay = 0, progress = "always") {
  f <- tempfile()
  on.exit(unlink(f), add = TRUE)
  con <- file(f, open = "wb")
  withr::local_options(gpucor.progress = progress, gpucor.progress_delay = delay)
  sink(con, type = "message")
  ok <- FALSE
  on.exit(if (!ok) { sink(type = "message"); close(con) }, add = TRUE)
  force(expr)
  sink(type = "message")
  close(con)
  ok <- TRUE
  size <- file.size(f)
  if (size == 0) "" else readChar(f, size, useBytes = TRUE)
}

# The bar's states: each "\r"-led redraw as (label, step, bar, pct, took,
# eta), checked to be a bar line.
bar_states <- function(out, what) {
  parts <- strsplit(sub("\n$", "", out), "\r", fixed = TRUE)[[1]]
  parts <- parts[nzchar(parts)]
  re <- "^([a-z_]+): ?(.*?) \\|([= ]{20})\\| +([0-9]+)% ([0-9:]+) ETA ([0-9:]+|--:--) *$"
  ok <- grepl(re, parts, perl = TRUE)
  expect_true(all(ok), label = paste(what, "draws bar lines:", paste(parts[!ok], collapse = " | ")))
  m <- regmatches(parts, regexec(re, parts, perl = TRUE))
  data.frame(label = vapply(m, `[`, "", 2), step = vapply(m, `[`, "", 3),
             pct = as.integer(vapply(m, `[`, "", 5)), eta = vapply(m, `[`, "", 7),
             stringsAsFactors = FALSE)
}

# The checks every bar passes: one label, percentages that never go back,
# 100% once and last, one newline and it last, an ETA on every line (a
# time once some work is done), the steps named in order.
expect_bar <- function(out, label, steps, what) {
  expect_true(endsWith(out, "\n"), label = paste(what, "ends with a newline"))
  expect_identical(lengths(regmatches(out, gregexpr("\n", out, fixed = TRUE))), 1L,
                   label = paste(what, "newlines"))
  st <- bar_states(out, what)
  expect_gt(nrow(st), 0L)
  expect_identical(unique(st$label), label, label = paste(what, "label"))
  expect_true(all(diff(st$pct) >= 0), label = paste(what, "percentages never go back"))
  expect_identical(st$pct[nrow(st)], 100L, label = paste(what, "ends at 100%"))
  expect_true(all(st$pct[-nrow(st)] < 100L), label = paste(what, "100% only at the end"))
  expect_true(all(grepl("^([0-9]+:)?[0-9]+:[0-9]{2}$", st$eta[st$pct > 0])),
              label = paste(what, "ETA times"))
  # the steps, in this order, each where the bar shows it
  seen <- unique(st$step)
  expect_identical(seen, steps, label = paste(what, "steps"))
  invisible(st)
}

set.seed(20261128)
x <- matrix(rnorm(60 * 400), 60)

test_that("gpu_tom: one bar across the adjacency and the TOM, not 100% before the end", {
  for (b in test_backends()) {
    out <- bar_output(r <- gpucor::gpu_tom(x, backend = b))
    st <- expect_bar(out, "gpu_tom", c("adjacency (1/2)", "TOM (2/2)"), paste("gpu_tom", b))
    # the adjacency's pass ends below 100%: the TOM's weight is left
    expect_lt(max(st$pct[st$step == "adjacency (1/2)"]), 100L)
    expect_equal(r, gpucor::gpu_tom(x, backend = "cpu"), tolerance = 1e-6)
  }
  # from an adjacency: one pass, no step count
  a <- abs(stats::cor(x))^6
  out <- bar_output(gpucor::gpu_tom(adjacency = a, backend = "cpu"))
  expect_bar(out, "gpu_tom", "TOM", "gpu_tom(adjacency)")
})

test_that("gpu_cor, gpu_hclust, gpu_shortest_paths, gpu_cor_edges name their steps", {
  for (b in test_backends()) {
    expect_bar(bar_output(gpucor::gpu_cor(x, backend = b)), "gpu_cor", "", paste("gpu_cor", b))
    d <- stats::dist(t(x))
    expect_bar(bar_output(gpucor::gpu_hclust(d, "average", backend = b)), "gpu_hclust",
               c("copy (1/2)", "merges (2/2)"), paste("gpu_hclust", b))
    w <- 1 - abs(stats::cor(x))
    expect_bar(bar_output(gpucor::gpu_shortest_paths(w, backend = b)), "gpu_shortest_paths",
               "Floyd-Warshall rounds", paste("gpu_shortest_paths", b))
    # a density: a cut by a histogram, then the pass that collects the pairs
    expect_bar(bar_output(gpucor::gpu_cor_edges(x, density = 0.01, backend = b)),
               "gpu_cor_edges", c("histogram (1/2)", "pairs (2/2)"), paste("gpu_cor_edges", b))
    # an FDR that keeps nothing: no collecting pass, the bar ends all the same
    expect_bar(bar_output(gpucor::gpu_cor_edges(x, fdr = 1e-12, backend = b)),
               "gpu_cor_edges", "histogram (1/2)", paste("gpu_cor_edges", b, "none"))
  }
  # gpu_hclust() of x on the CPU: the distances' engine call and the
  # clustering's, one bar (R/progress.R's frames)
  expect_bar(bar_output(gpucor::gpu_hclust(x = t(x), method = "median", backend = "cpu")),
             "gpu_hclust", c("distances (1/2)", "clustering (2/2)",
                             "clustering (2/2) > check (1/2)",
                             "clustering (2/2) > merges (2/2)"), "gpu_hclust(x)")
})

test_that("a loop of engine calls in R has one bar, labelled as the function", {
  skip_if_not_installed("DelayedArray")
  # blocks of 100 columns: a budget of two such blocks (an input within
  # the budget is read once, without a loop)
  old <- options(gpucor.block_memory = 2 * 8 * 60 * 100)
  on.exit(options(old), add = TRUE)
  dx <- DelayedArray::DelayedArray(x)
  out <- bar_output(r <- gpucor::gpu_cor(dx, backend = "cpu"))
  st <- expect_bar(out, "gpu_cor", sprintf("blocks (%d/10)", 1:10), "gpu_cor(DelayedArray)")
  expect_equal(r, stats::cor(x), tolerance = 1e-12)
})

test_that("short calls print nothing; FALSE and non-interactive defaults print nothing", {
  expect_identical(bar_output(gpucor::gpu_cor(x, backend = "cpu"), delay = 2), "")
  expect_identical(bar_output(gpucor::gpu_tom(x, backend = "cpu"), progress = FALSE), "")
  expect_identical(bar_output(gpucor::gpu_tom(x, backend = "cpu"), progress = TRUE), "")
  expect_error(bar_output(gpucor::gpu_cor(x, backend = "cpu"), progress = "sometimes"),
               "option 'gpucor.progress' must be TRUE, FALSE or \"always\"", fixed = TRUE)
})

test_that("an error in the middle of a bar leaves the line ended", {
  d <- stats::dist(t(x))
  d[length(d)] <- NA   # found by the copy, after the bar showed
  out <- bar_output(e <- tryCatch(gpucor::gpu_hclust(d, backend = "cpu"), error = identity))
  expect_s3_class(e, "error")
  expect_true(endsWith(out, "\n"))
  expect_identical(lengths(regmatches(out, gregexpr("\n", out, fixed = TRUE))), 1L)
  # the next call's bar is whole again
  expect_bar(bar_output(gpucor::gpu_cor(x, backend = "cpu")), "gpu_cor", "", "after an error")
})

test_that("gpu_blockwise_modules: one bar, its engine calls' passes inside its steps", {
  skip_if_not_installed("dynamicTreeCut")
  set.seed(2)
  f <- matrix(rnorm(40 * 3), 40)
  xm <- do.call(cbind, lapply(1:3, function(k) f[, k] + matrix(rnorm(40 * 60), 40, 60)))
  out <- bar_output(r <- gpucor::gpu_blockwise_modules(xm, power = 6, minModuleSize = 10,
                                                       backend = "cpu", verbose = 0))
  # the modules' engine calls (eigengenes' correlations) do not end the bar:
  # only the function's end does, after them
  st <- expect_bar(out, "gpu_blockwise_modules",
                   c("TOM (1/3)", "TOM (1/3) > adjacency (1/2)", "TOM (1/3) > TOM (2/2)",
                     "tree (2/3)", "tree (2/3) > copy (1/2)", "tree (2/3) > merges (2/2)",
                     "modules (3/3)"), "gpu_blockwise_modules")
  # an engine call of the last step ends at 99%, the function at 100%
  expect_identical(st$pct[nrow(st) - 1L], 99L)
  expect_gt(length(unique(r$colors)), 1L)
})

test_that("a call whose R code stops inside its bar ends the line and lets the bar go", {
  xe <- t(x)
  xe[1, ] <- NA   # NA distances: gpu_hclust(x =) stops in R after its first step
  out <- bar_output(e <- tryCatch(gpucor::gpu_hclust(x = xe, method = "median", backend = "cpu"),
                                  error = identity))
  expect_s3_class(e, "error")
  expect_match(conditionMessage(e), "NA/NaN values", fixed = TRUE)
  expect_match(out, "gpu_hclust: distances (1/2)", fixed = TRUE)
  expect_true(endsWith(out, "\n"))
  expect_identical(lengths(regmatches(out, gregexpr("\n", out, fixed = TRUE))), 1L)
  # the next engine call has a bar of its own again
  expect_null(gpucor:::.gpucor_state$bar)
  expect_bar(bar_output(gpucor::gpu_cor(x, backend = "cpu")), "gpu_cor", "", "after it")
})
