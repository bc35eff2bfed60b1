# Issue 12's cases: all-pairs shortest paths (blocked Floyd-Warshall) and
# the network metrics, each case in its own R process (VmHWM its own).
#   Rscript bench/paths.R [cases...]     (default: the GPU cases; "cpu": the CPU ones)
#   Rscript bench/paths.R --one <case>
# Min-plus rate: n^3 updates (each one add and one min) per second; the
# H100 SXM's FP64 peak without tensor cores is 34 TFLOP/s (2 flops per
# cycle per FP64 unit as FMA), i.e. 17e12 dependent add+min pairs/s at best.
suppressPackageStartupMessages(library(gpucor))
a <- commandArgs(TRUE)
source("bench/cases.R")
dense <- function(n) {   # a complete undirected graph with random lengths
  set.seed(1)
  w <- matrix(runif(n * n, 0.1, 10), n)
  w[lower.tri(w)] <- t(w)[lower.tri(w)]
  w
}
gpu_case <- function(n, precision = "double") function() {
  w <- dense(n)
  invisible(gpu_shortest_paths(w[1:200, 1:200], backend = "gpu"))
  t <- tm(d <- gpu_shortest_paths(w, backend = "gpu", precision = precision))
  list(case = sprintf("gpu_shortest_paths n = %d, dense, %s", n, precision), t = t,
       rate = as.double(n)^3 / t)
}
cases <- list(
  gpu5000 = gpu_case(5000), gpu10000 = gpu_case(10000), gpu20000 = gpu_case(20000),
  gpu20000s = gpu_case(20000, "single"),
  metrics50000 = function() {
    set.seed(1)
    x <- matrix(rnorm(300 * 50000), 300)
    invisible(gpu_network_metrics(x = x[, 1:200], weights = "one_minus", backend = "gpu"))
    t <- tm(m <- gpu_network_metrics(x = x, weights = "one_minus", threshold = 0.1,
                                     backend = "gpu"))
    list(case = sprintf("gpu_network_metrics n = 50000 from x (300 x 50000), char. path %.4f",
                        m$char_path_length), t = t, rate = 50000^3 / t)
  },
  cpu2000 = function() {
    w <- dense(2000)
    t <- tm(d <- gpu_shortest_paths(w, backend = "cpu"))
    list(case = sprintf("CPU (%d threads) n = 2000, dense", as.integer(gpucor:::.threads())),
         t = t, rate = 2000^3 / t)
  },
  cpu2000_igraph = function() {
    w <- dense(2000)
    g <- igraph::graph_from_adjacency_matrix(w, mode = "undirected", weighted = TRUE, diag = FALSE)
    t <- tm(d <- igraph::distances(g))
    list(case = "  peer: igraph::distances (Dijkstra), n = 2000", t = t, rate = 2000^3 / t)
  },
  cpu2000_e1071 = function() {
    w <- dense(2000)
    t <- tm(d <- e1071::allShortestPaths(w))
    list(case = "  peer: e1071::allShortestPaths, n = 2000", t = t, rate = 2000^3 / t)
  }
)
run_cases("bench/paths.R", cases, a,
          c("gpu5000", "gpu10000", "gpu20000", "gpu20000s", "metrics50000"),
          c("cpu2000", "cpu2000_igraph", "cpu2000_e1071"), "updates/s",
          function(r) sprintf("%.3g", r$rate))
