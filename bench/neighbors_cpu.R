# bench/neighbors_cpu.R -- issue 39's CPU target: on 2 cores, the CPU
# engine's exact k-NN no slower than BiocNeighbors' KmknnParam():
#   find    findKNN(X, k = 20), N x 50 (N = 50,000)
#   query   queryKNN(X, Q, k = 20), N references x N/10 queries x 50
# with BNPARAM = GpucorParam(backend = "cpu") (2 threads: gpucor.threads)
# against KmknnParam() with BPPARAM = MulticoreParam(2), on three kinds of
# data:
#   gaussian     i.i.d. N(0, 1) in 50 dimensions (nothing to prune)
#   cells-steep  20 cell types of varied size (Dirichlet-like weights) and
#                spread (x 0.5 to 1.5) in 50 "PCs": the types apart in the
#                first PCs (sd 6 exp(-j/6)), the noise fading fast
#                (sd 1.5 exp(-j/8))
#   cells-flat   the same with a slowly fading noise (sd 1.5 exp(-j/30)),
#                as PCs past the first ten of real data look
# The two are interleaved case by case, and the whole table is run
# ROUNDS times (2 by default: other people use the machine), each round's
# seconds printed; the load average is printed before and after.
# "identical": the index matrices equal (continuous data: no ties);
# "max_rel_d": the largest relative difference of the distances (KmknnParam
# computes them in another order).  "path": which search gpucor ran
# (its verbose note: the pruned search or the brute force, and why).
#   GPUCOR_BENCH_N=50000 ROUNDS=2 Rscript bench/neighbors_cpu.R [find] [query] [brute]
# ("brute": also time gpucor's brute force, options(gpucor.knn_prune = FALSE)).
suppressMessages({library(gpucor); library(BiocNeighbors); library(BiocParallel)})
parts <- commandArgs(TRUE)
if (!any(c("find", "query") %in% parts)) parts <- c(parts, "find", "query")
N <- as.numeric(Sys.getenv("GPUCOR_BENCH_N", "50000"))
rounds <- as.integer(Sys.getenv("ROUNDS", "2"))
options(gpucor.threads = 2L, width = 200)
bp <- MulticoreParam(2)
load <- function() paste(scan("/proc/loadavg", what = "", quiet = TRUE)[1:3], collapse = " ")
cat(sprintf("bench/neighbors_cpu.R, %s, %s, %d cores, N = %d, load average %s\n",
            format(Sys.time(), "%Y-%m-%d %H:%M"), R.version.string, parallel::detectCores(),
            N, load()))

sim_cells <- function(n, tail, ntypes = 20, p = 50) {
  sizes <- as.vector(rmultinom(1, n, prob = rexp(ntypes) + 0.1))
  j <- seq_len(p) - 1
  centers <- matrix(rnorm(ntypes * p), ntypes) * rep(6 * exp(-j / 6), each = ntypes)
  lab <- rep(seq_len(ntypes), sizes)
  x <- centers[lab, ] + matrix(rnorm(n * p), n) * rep(1.5 * exp(-j / tail), each = n) *
    runif(ntypes, 0.5, 1.5)[lab]
  x[sample.int(n), ]
}
# the references and the queries: one draw of n + n/10 points, split
data_of <- function(kind, n) {
  set.seed(42)
  m <- n + n / 10
  x <- switch(kind, gaussian = matrix(rnorm(m * 50), m, 50),
              "cells-steep" = sim_cells(m, 8), "cells-flat" = sim_cells(m, 30))
  list(x = x[seq_len(n), ], q = x[n + seq_len(n / 10), ])
}

gp <- GpucorParam(backend = "cpu")
run_ours <- function(fun, d, prune = NA) {
  old <- options(gpucor.knn_prune = prune, gpucor.verbose = TRUE)
  on.exit(options(old))
  note <- NA_character_
  t <- system.time(v <- withCallingHandlers(
    if (fun == "find") findKNN(d$x, 20, BNPARAM = gp) else queryKNN(d$x, d$q, 20, BNPARAM = gp),
    message = function(m) {
      # "gpu_knn: CPU engine, 2 threads (<path>), <seconds> s", shortened
      p <- sub("^[^(]*\\((.*)\\), [0-9.]+ s\n?$", "\\1", conditionMessage(m))
      note <<- if (startsWith(p, "pruned"))
        sub("pruned search: ([0-9]+) clusters, ([0-9]+) distance-equivalents.*",
            "pruned, \\1 clusters, \\2 dist/row", p)
      else sub("brute force: ", "brute: ", p)
      invokeRestart("muffleMessage")
    }))[["elapsed"]]
  list(v = v, t = t, note = note)
}
run_km <- function(fun, d) {
  t <- system.time(v <- if (fun == "find") findKNN(d$x, 20, BNPARAM = KmknnParam(), BPPARAM = bp)
                        else queryKNN(d$x, d$q, 20, BNPARAM = KmknnParam(), BPPARAM = bp))
  list(v = v, t = t[["elapsed"]], note = NA_character_)
}

rows <- list()
for (r in seq_len(rounds)) {
  for (kind in c("gaussian", "cells-steep", "cells-flat")) {
    d <- data_of(kind, N)
    for (fun in intersect(c("find", "query"), parts)) {
      case <- sprintf("%sKNN %s", fun, kind)
      # alternate who goes first, round by round
      ours <- if (r %% 2) run_ours(fun, d) else NULL
      km <- run_km(fun, d)
      if (is.null(ours)) ours <- run_ours(fun, d)
      same <- identical(ours$v$index, km$v$index)
      rel <- max(abs(ours$v$distance - km$v$distance) / pmax(km$v$distance, 1e-300))
      add <- function(how, x, ident, rel)
        rows[[length(rows) + 1L]] <<- data.frame(
          round = r, case = case, how = how, seconds = round(x$t, 2),
          vs_kmknn = round(km$t / x$t, 2), identical = ident,
          max_rel_d = signif(rel, 2), path = x$note)
      add("KmknnParam", km, NA, NA)
      add("GpucorParam", ours, same, rel)
      if ("brute" %in% parts) {
        br <- run_ours(fun, d, FALSE)
        add("GpucorParam, brute force", br, identical(br$v, ours$v), NA)
      }
    }
  }
}
tab <- do.call(rbind, rows)
print(tab, row.names = FALSE, right = FALSE)
cat(sprintf("load average after: %s\n", load()))
