# bench/neighbors.R -- issue 39's single-cell targets, one run each, printing
# a table (machine, date, seconds, peak host memory, identical or not):
#   findknn   BiocNeighbors::findKNN(X, k = 30), N x 50 (N = 100,000), with
#             GpucorParam() against KmknnParam() and ExhaustiveParam()
#   query     queryKNN(), 10% of N references x N queries x 50, k = 10,
#             GpucorParam() against KmknnParam()
#   snn       bluster::makeSNNGraph(X, k = 20), N/2 x 50, GpucorParam()
#             against KmknnParam() (the whole call, graph identical or not)
# Sizes scale with GPUCOR_BENCH_N (the N above; 100000 by default): on the
# 2-core machine run it small, e.g. GPUCOR_BENCH_N=20000.  The peers run on
# the machine's cores (BPPARAM = MulticoreParam(cores) for them; GpucorParam
# uses the GPU, or its own threads on the CPU).  "identical" compares the
# index matrices (ties: the data are continuous, there are none) and the
# graphs' edges and weights.  Peak device memory is not measured here: read
# it with nvidia-smi --query-gpu=memory.used -lms 100 beside the run.
#   Rscript bench/neighbors.R [findknn] [query] [snn] [exhaustive]
# ("exhaustive": also time ExhaustiveParam in findknn, which is slow).
suppressMessages({library(gpucor); library(BiocNeighbors); library(BiocParallel)})
parts <- commandArgs(TRUE)
if (!length(parts)) parts <- c("findknn", "query", "snn")
N <- as.numeric(Sys.getenv("GPUCOR_BENCH_N", "100000"))
cores <- parallel::detectCores()
gpu <- isTRUE(as.vector(gpu_available()))
cat(sprintf("bench/neighbors.R, %s, %s, %d cores, %s, N = %d\n",
            format(Sys.time(), "%Y-%m-%d %H:%M"), R.version.string, cores,
            if (gpu) paste(gpu_info()$devices$name, collapse = " + ") else "no GPU", N))
bp <- if (cores > 1) MulticoreParam(cores) else SerialParam()
rows <- list()
# elapsed seconds and the peak of R's heap during the call (gc's max used,
# reset before; memory the engine takes outside R's heap is not in it)
timed <- function(expr) {
  invisible(gc(reset = TRUE))
  t <- system.time(v <- force(expr))[["elapsed"]]
  g <- gc()
  list(v = v, t = t, mb = sum(g[, ncol(g)]))
}
add <- function(case, how, r, ref, same)
  rows[[length(rows) + 1L]] <<- data.frame(case = case, how = how, seconds = round(r$t, 2),
                                           peak_R_MB = round(r$mb), speedup = round(ref / r$t, 2),
                                           identical = same)
gp <- GpucorParam()
set.seed(1)

if ("findknn" %in% parts) {
  x <- matrix(rnorm(N * 50), N, 50)
  invisible(findKNN(x[1:2000, ], 30, BNPARAM = gp))          # the GPU's context
  g <- timed(findKNN(x, 30, BNPARAM = gp))
  km <- timed(findKNN(x, 30, BNPARAM = KmknnParam(), BPPARAM = bp))
  add(sprintf("findKNN %d x 50, k = 30", N), "KmknnParam", km, km$t, NA)
  add(sprintf("findKNN %d x 50, k = 30", N), "GpucorParam", g, km$t,
      identical(g$v$index, km$v$index))
  if ("exhaustive" %in% parts) {
    ex <- timed(findKNN(x, 30, BNPARAM = ExhaustiveParam(), BPPARAM = bp))
    add(sprintf("findKNN %d x 50, k = 30", N), "ExhaustiveParam", ex, km$t,
        identical(g$v$index, ex$v$index))
  }
  rm(x, g, km)
}

if ("query" %in% parts) {
  ref <- matrix(rnorm(N / 10 * 50), N / 10, 50)
  q <- matrix(rnorm(N * 50), N, 50)
  g <- timed(queryKNN(ref, q, 10, BNPARAM = gp))
  km <- timed(queryKNN(ref, q, 10, BNPARAM = KmknnParam(), BPPARAM = bp))
  case <- sprintf("queryKNN %d refs x %d queries x 50, k = 10", N / 10, N)
  add(case, "KmknnParam", km, km$t, NA)
  add(case, "GpucorParam", g, km$t, identical(g$v$index, km$v$index))
  rm(ref, q, g, km)
}

if ("snn" %in% parts && requireNamespace("bluster", quietly = TRUE)) {
  n <- N / 2
  # cells of 10 types, so that the graph has structure
  centers <- matrix(rnorm(10 * 50, sd = 3), 10, 50)
  x <- centers[sample.int(10, n, TRUE), ] + matrix(rnorm(n * 50), n, 50)
  g <- timed(bluster::makeSNNGraph(x, k = 20, BNPARAM = gp))
  km <- timed(bluster::makeSNNGraph(x, k = 20, BNPARAM = KmknnParam(), BPPARAM = bp))
  same <- identical(igraph::as_edgelist(g$v), igraph::as_edgelist(km$v)) &&
    identical(igraph::E(g$v)$weight, igraph::E(km$v)$weight)
  case <- sprintf("makeSNNGraph %d x 50, k = 20", n)
  add(case, "KmknnParam", km, km$t, NA)
  add(case, "GpucorParam", g, km$t, same)
}

print(do.call(rbind, rows), row.names = FALSE)
