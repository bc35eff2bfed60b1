# Issue 13's cases: gpu_hclust() against gpu_dist() + fastcluster::hclust
# / stats::hclust on the same machine, each case in its own R process
# (VmHWM its own).
#   Rscript bench/hclust.R [cases...]   (default: the GPU cases; "cpu": the CPU ones)
#   Rscript bench/hclust.R --one <case>
# "check70000" clusters 70000 objects on the GPU (distances computed on the
# device) and with the CPU engine (on gpu_dist()'s 'dist'), and compares
# every merge.
suppressPackageStartupMessages(library(gpucor))
a <- commandArgs(TRUE)
source("bench/cases.R")
data <- function(n, p = 300) {
  set.seed(1)
  matrix(rnorm(n * p), n)
}
warm <- function() invisible(gpu_hclust(x = data(500, 10), method = "average", backend = "gpu"))
gpu_x <- function(n, method = "average", precision = "double") function() {
  x <- data(n)
  warm()
  t <- tm(hc <- gpu_hclust(x = x, method = method, distance = "correlation",
                           backend = "gpu", precision = precision))
  list(case = sprintf("gpu_hclust %s, %d x 300 correlation from x, %s", method, n, precision),
       t = t, extra = sprintf("%.4f", max(hc$height)))
}
peer <- function(n, fun, label) function() {
  x <- data(n)
  warm()
  t <- tm({
    d <- gpu_dist(x, method = "correlation", backend = "gpu")
    hc <- fun(d, method = "average")
  })
  list(case = sprintf("  peer: gpu_dist + %s, %d x 300", label, n), t = t,
       extra = sprintf("%.4f", max(hc$height)))
}
cases <- list(
  gpu20000 = gpu_x(20000),
  fc20000 = peer(20000, fastcluster::hclust, "fastcluster::hclust"),
  gpu65536 = gpu_x(65536),
  stats65536 = peer(65536, stats::hclust, "stats::hclust"),
  fc65536 = peer(65536, fastcluster::hclust, "fastcluster::hclust"),
  gpu100000 = gpu_x(100000),
  gpu100000s = gpu_x(100000, precision = "single"),
  gpu100000ward = gpu_x(100000, "ward.D2"),
  gpud65536 = function() {
    x <- data(65536)
    d <- gpu_dist(x, method = "correlation", backend = "gpu")
    warm()
    t <- tm(hc <- gpu_hclust(d, method = "average", backend = "gpu"))
    list(case = "gpu_hclust average, from the 'dist' of 65536 x 300 (host -> device)",
         t = t, extra = sprintf("%.4f", max(hc$height)))
  },
  check70000 = function() {
    x <- data(70000, 20)
    warm()
    tg <- tm(g <- gpu_hclust(x = x, method = "average", backend = "gpu"))
    d <- gpu_dist(x, backend = "gpu")
    tc <- tm(cc <- gpu_hclust(d, method = "average", backend = "cpu"))
    s <- sort(sample.int(69999, 1000))
    ok <- identical(g$merge, cc$merge) && identical(g$order, cc$order)
    list(case = sprintf("70000 x 20 average: GPU %.1f s, CPU engine %.1f s; all merges %s",
                        tg, tc, if (ok) "identical" else "DIFFER"),
         t = tg, extra = sprintf("%s/%.1e", if (identical(g$merge[s, ], cc$merge[s, ]))
                                   "1000 ok" else "BAD",
                                 max(abs(g$height - cc$height))))
  },
  cpu10000 = function() {
    d <- dist(data(10000, 20))
    t <- tm(hc <- gpu_hclust(d, method = "average", backend = "cpu"))
    list(case = sprintf("CPU engine (%d threads) average, 10000 objects",
                        as.integer(gpucor:::.threads())), t = t,
         extra = sprintf("%.4f", max(hc$height)))
  },
  cpu10000_fc = function() {
    d <- dist(data(10000, 20))
    t <- tm(hc <- fastcluster::hclust(d, method = "average"))
    list(case = "  peer: fastcluster::hclust average, same dist", t = t,
         extra = sprintf("%.4f", max(hc$height)))
  },
  cpu10000_stats = function() {
    d <- dist(data(10000, 20))
    t <- tm(hc <- stats::hclust(d, method = "average"))
    list(case = "  peer: stats::hclust average, same dist", t = t,
         extra = sprintf("%.4f", max(hc$height)))
  }
)
run_cases("bench/hclust.R", cases, a,
          c("gpu20000", "fc20000", "gpu65536", "fc65536", "stats65536", "gpud65536",
            "gpu100000", "gpu100000s", "gpu100000ward", "check70000"),
          c("cpu10000", "cpu10000_fc", "cpu10000_stats"), "top height",
          function(r) r$extra)
