# bench/bp.R -- issue 14's BiocParallel targets, one run each, printing a
# table (machine, date, times, ratios, identical or not):
#   knn    gpu_knn(400000 x 50, k = 15) with SnowParam(2), one GPU each,
#          against SnowParam(1) (one worker) and the call without BPPARAM
#   edges  gpu_cor_edges(fdr = 0.05), 300 x 50000, SnowParam(2) vs (1)
#   dist   gpu_dist(), 30000 x 50 euclidean and correlation (3.6 GB 'dist'),
#          SnowParam(2) vs (1) and the call without BPPARAM
#   cpu    the CPU engine: gpu_cor_edges(top_k = 10), 300 x 5000,
#          SnowParam(2) (threads = cores / workers) against the serial call;
#          and gpu_dist(), 4000 x 50, SnowParam(2) against the serial call
# Workers are started (bpstart, and a small call that makes each one's
# CUDA context) before the timed calls; that start is timed on its own.  Usage: Rscript bench/bp.R [knn] [edges] [cpu]
suppressMessages({library(gpucor); library(BiocParallel)})
parts <- commandArgs(TRUE)
if (!length(parts)) parts <- c("knn", "edges", "dist", "cpu")
gpu <- isTRUE(as.vector(gpu_available()))
cat(sprintf("bench/bp.R, %s, %s, %d cores, %s\n", format(Sys.time(), "%Y-%m-%d %H:%M"),
            R.version.string, parallel::detectCores(),
            if (gpu) paste(gpu_info()$devices$name, collapse = " + ") else "no GPU"))
rows <- list()
timed <- function(expr) {
  t <- system.time(v <- force(expr))[["elapsed"]]
  list(v = v, t = t)
}
# started workers, each with its CUDA context made (warm(p): a small call)
started <- function(n, warm) {
  p <- SnowParam(n)
  t <- system.time({bpstart(p); warm(p)})[["elapsed"]]
  list(p = p, start = t)
}
add <- function(case, how, t, start, same, ref)
  rows[[length(rows) + 1L]] <<- data.frame(case = case, how = how, seconds = round(t, 2),
                                           start_s = round(start, 2),
                                           speedup = round(ref / t, 2), identical = same)

if ("knn" %in% parts && gpu) {
  set.seed(1)
  x <- matrix(rnorm(400000 * 50), 400000, 50)
  invisible(gpu_knn(x[1:5000, ], 15, backend = "gpu"))        # context
  one <- timed(gpu_knn(x, 15, backend = "gpu", devices = 0L))
  warm <- function(p) gpu_knn(x[1:5000, ], 15, backend = "gpu", devices = "all", BPPARAM = p)
  s1 <- started(1, warm); s2 <- started(2, warm)
  w1 <- timed(gpu_knn(x, 15, backend = "gpu", devices = "all", BPPARAM = s1$p))
  w2 <- timed(gpu_knn(x, 15, backend = "gpu", devices = "all", BPPARAM = s2$p))
  # the input inside every job's message instead of one file (as before
  # 2026-11-24), and the parts back through the sockets (as before 2026-11-24, later)
  old <- options(gpucor.bp_file_bytes = Inf)
  i1 <- timed(gpu_knn(x, 15, backend = "gpu", devices = "all", BPPARAM = s1$p))
  i2 <- timed(gpu_knn(x, 15, backend = "gpu", devices = "all", BPPARAM = s2$p))
  options(old)
  both <- timed(gpu_knn(x, 15, backend = "gpu", devices = "all"))
  bpstop(s1$p); bpstop(s2$p)
  c1 <- "knn 400000 x 50, k = 15"
  add(c1, "no BPPARAM, GPU 0", one$t, 0, TRUE, w1$t)
  add(c1, "no BPPARAM, devices = \"all\" (in-process)", both$t, 0,
      identical(both$v, one$v), w1$t)
  add(c1, "SnowParam(1), GPU 0", w1$t, s1$start, identical(w1$v, one$v), w1$t)
  add(c1, "SnowParam(2), GPUs 0, 1", w2$t, s2$start, identical(w2$v, one$v), w1$t)
  add(c1, "SnowParam(1), no files (messages)", i1$t, s1$start, identical(i1$v, one$v), w1$t)
  add(c1, "SnowParam(2), no files (messages)", i2$t, s2$start, identical(i2$v, one$v), w1$t)
}
if ("edges" %in% parts && gpu) {
  set.seed(2)
  x <- matrix(rnorm(300 * 50000), 300)
  x[, 2:200] <- x[, 2:200] + x[, 1]                 # a module: edges to find
  one <- timed(gpu_cor_edges(x, fdr = 0.05, backend = "gpu", devices = 0L))
  warm <- function(p) gpu_cor_edges(x[, 1:500], fdr = 0.05, backend = "gpu", devices = "all",
                                    BPPARAM = p)
  s1 <- started(1, warm); s2 <- started(2, warm)
  w1 <- timed(gpu_cor_edges(x, fdr = 0.05, backend = "gpu", devices = "all", BPPARAM = s1$p))
  w2 <- timed(gpu_cor_edges(x, fdr = 0.05, backend = "gpu", devices = "all", BPPARAM = s2$p))
  bpstop(s1$p); bpstop(s2$p)
  c2 <- sprintf("cor_edges fdr 0.05, 300 x 50000 (%d edges)", nrow(one$v))
  add(c2, "no BPPARAM, GPU 0", one$t, 0, TRUE, w1$t)
  add(c2, "SnowParam(1), GPU 0", w1$t, s1$start, identical(w1$v, one$v), w1$t)
  add(c2, "SnowParam(2), GPUs 0, 1", w2$t, s2$start, identical(w2$v, one$v), w1$t)
}
if ("dist" %in% parts && gpu) {
  set.seed(4)
  x <- matrix(rnorm(30000 * 50), 30000)
  nocall <- function(d) { attr(d, "call") <- NULL; d }
  warm <- function(p) gpu_dist(x[1:500, ], backend = "gpu", devices = "all", BPPARAM = p)
  s1 <- started(1, warm); s2 <- started(2, warm)
  for (m in c("euclidean", "correlation")) {
    invisible(gpu_dist(x[1:500, ], m, backend = "gpu"))
    one <- timed(nocall(gpu_dist(x, m, backend = "gpu", devices = 0L)))
    w1 <- timed(nocall(gpu_dist(x, m, backend = "gpu", devices = "all", BPPARAM = s1$p)))
    w2 <- timed(nocall(gpu_dist(x, m, backend = "gpu", devices = "all", BPPARAM = s2$p)))
    # the parts back through the sockets (as before 2026-11-24, later)
    old <- options(gpucor.bp_file_bytes = Inf)
    i1 <- timed(nocall(gpu_dist(x, m, backend = "gpu", devices = "all", BPPARAM = s1$p)))
    options(old)
    cd <- sprintf("dist %s 30000 x 50", m)
    add(cd, "no BPPARAM, GPU 0", one$t, 0, TRUE, w1$t)
    add(cd, "SnowParam(1), GPU 0", w1$t, s1$start, identical(w1$v, one$v), w1$t)
    add(cd, "SnowParam(2), GPUs 0, 1", w2$t, s2$start, identical(w2$v, one$v), w1$t)
    add(cd, "SnowParam(1), no files (messages)", i1$t, s1$start, identical(i1$v, one$v), w1$t)
    rm(one, w1, w2, i1); invisible(gc())
  }
  bpstop(s1$p); bpstop(s2$p)
}
if ("cpu" %in% parts) {
  set.seed(3)
  x <- matrix(rnorm(300 * 5000), 300)
  one <- timed(gpu_cor_edges(x, top_k = 10, backend = "cpu"))
  s2 <- started(2, function(p) NULL)
  msg <- character()
  w2 <- withCallingHandlers(
    timed(gpu_cor_edges(x, top_k = 10, backend = "cpu", BPPARAM = s2$p, verbose = TRUE)),
    message = function(m) { msg <<- c(msg, conditionMessage(m)); invokeRestart("muffleMessage") })
  bpstop(s2$p)
  c3 <- "CPU cor_edges top_k 10, 300 x 5000"
  add(c3, sprintf("serial, %d threads", gpucor:::.threads()), one$t, 0, TRUE, one$t)
  add(c3, "SnowParam(2)", w2$t, s2$start, identical(w2$v, one$v), one$t)
  cat("verbose:", msg, "\n")
  xd <- matrix(rnorm(4000 * 50), 4000)
  s2 <- started(2, function(p) NULL)
  one <- timed(gpu_dist(xd, backend = "cpu"))
  w2 <- timed(gpu_dist(xd, backend = "cpu", BPPARAM = s2$p))
  bpstop(s2$p)
  attr(one$v, "call") <- attr(w2$v, "call") <- NULL
  add("CPU dist euclidean 4000 x 50", sprintf("serial, %d threads", gpucor:::.threads()),
      one$t, 0, TRUE, one$t)
  add("CPU dist euclidean 4000 x 50", "SnowParam(2)", w2$t, s2$start,
      identical(w2$v, one$v), one$t)
}
if (length(rows)) print(do.call(rbind, rows), row.names = FALSE)
cat("speedup: against SnowParam(1) (GPU cases) or the serial call (CPU case)\n")
