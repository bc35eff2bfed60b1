# Issue 36's CPU case: BCT's nodal and global metrics of 50 subjects x 400
# regions (correlations of simulated time series, positive weights, 10%
# proportional threshold, 10 modules), gpu_brain_metrics() on the CPU
# engine against igraph where the definitions coincide (betweenness on the
# lengths 1 / w, the binary transitivity and local clustering) and against
# the plain-R reference of BCT's definitions (tests/testthat/helper-bct.R,
# timed on `ref_subjects` subjects and scaled to all of them).
#   Rscript bench/bct.R [subjects] [regions] [ref_subjects]
# (GPUCOR_BENCH_THREADS=n: the CPU engine's threads, default 2)
suppressPackageStartupMessages(library(gpucor))
source("tests/testthat/helper-bct.R")
a <- as.integer(commandArgs(TRUE))
S <- if (length(a) >= 1) a[1] else 50L
n <- if (length(a) >= 2) a[2] else 400L
nref <- if (length(a) >= 3) a[3] else 1L
p <- 0.1
threads <- as.integer(Sys.getenv("GPUCOR_BENCH_THREADS", getOption("gpucor.threads", 2L)))
options(gpucor.threads = threads)
set.seed(1)
modules <- rep(seq_len(10), length.out = n)
x <- array(0, c(n, n, S))
for (s in seq_len(S)) {
  f <- matrix(rnorm(200 * 10), 200)          # module signals
  ts <- f[, modules] + matrix(rnorm(200 * n, sd = 2), 200)
  x[, , s] <- cor(ts)
}
tm <- function(expr) {
  gc()
  t0 <- proc.time()[["elapsed"]]
  force(expr)
  proc.time()[["elapsed"]] - t0
}
W <- lapply(seq_len(S), function(s) bct_prepare(x[, , s], "positive", p))

t_all <- tm(m <- gpu_brain_metrics(x, partition = modules, threshold = p, backend = "cpu"))
t_bc <- tm(mb <- gpu_brain_metrics(x, threshold = p, metrics = "betweenness", backend = "cpu"))
t_tr <- tm(mt <- gpu_brain_metrics(x, threshold = p, weights = "inverse",
                                   metrics = c("clustering", "transitivity"), backend = "cpu"))
# igraph from the prepared matrices (the threshold done in R, not timed):
# its graphs' construction timed with it, as a user starting from matrices
# pays for it; "igraph alone" leaves it out
Ls <- lapply(W, bct_lengths)
t_ibg <- tm(gs <- lapply(Ls, function(l)
  igraph::graph_from_adjacency_matrix(l, mode = "undirected", weighted = TRUE, diag = FALSE)))
t_ibc <- tm(ibc <- lapply(gs, function(g) igraph::betweenness(g, directed = FALSE,
                                                             weights = igraph::E(g)$weight)))
Bs <- lapply(W, function(w) (w != 0) * 1)
t_itg <- tm(gb <- lapply(Bs, function(b)
  igraph::graph_from_adjacency_matrix(b, mode = "undirected", diag = FALSE)))
t_itr <- tm(itr <- lapply(gb, function(g) list(igraph::transitivity(g, "local", isolates = "zero"),
                                               igraph::transitivity(g, "global"))))
B <- array(unlist(Bs), c(n, n, S))
# the binary clustering through gpucor, to compare like with like
t_trb <- tm(mtb <- gpu_brain_metrics(B, metrics = c("clustering", "transitivity"), backend = "cpu"))
t_ref <- tm(ref <- lapply(seq_len(nref), function(s) bct_all(W[[s]], Ci = modules))) * S / nref

err_bc <- max(abs(m$nodal$betweenness - 2 * unlist(ibc)) / pmax(1, 2 * unlist(ibc)))
err_ref <- max(vapply(seq_len(nref), function(s) {
  rows <- m$nodal$subject == s
  max(vapply(names(ref[[s]]$nodal), function(k)
    max(abs(m$nodal[[k]][rows] - ref[[s]]$nodal[[k]]) / pmax(1, abs(ref[[s]]$nodal[[k]]))), 0))
}, 0))

cat(sprintf("bench/bct.R: %d subjects x %d regions, %g proportional threshold, CPU engine with %d threads, %s\n",
            S, n, p, threads, format(Sys.time(), "%Y-%m-%d")))
tab <- data.frame(
  case = c("gpu_brain_metrics, all metrics (10 nodal, 6 global)",
           "gpu_brain_metrics, betweenness (from the matrices, threshold included)",
           "  igraph: graphs from the thresholded matrices + betweenness (same lengths)",
           "  igraph::betweenness alone",
           "gpu_brain_metrics, binary clustering + transitivity (from the matrices)",
           "  igraph: graphs from the matrices + transitivity local + global",
           "  igraph::transitivity alone",
           sprintf("plain-R BCT reference, all metrics (%d subject%s timed, x %g)", nref,
                   if (nref > 1) "s" else "", S / nref)),
  seconds = c(t_all, t_bc, t_ibg + t_ibc, t_ibc, t_trb, t_itg + t_itr, t_itr, t_ref),
  speedup = c(t_ref / t_all, (t_ibg + t_ibc) / t_bc, NA, NA, (t_itg + t_itr) / t_trb, NA, NA, NA))
tab$seconds <- sprintf("%.3f", tab$seconds)
tab$speedup <- ifelse(is.na(tab$speedup), "", sprintf("%.1fx", tab$speedup))
tab$vs_alone <- c("", sprintf("%.1fx", t_ibc / t_bc), "", "", sprintf("%.1fx", t_itr / t_trb), "", "", "")
print(tab, row.names = FALSE, right = FALSE)
cat(sprintf("largest relative difference: betweenness vs 2 x igraph %.2g; every nodal metric vs the reference %.2g\n",
            err_bc, err_ref))
