# gpu_knnmi() against parmigene::knnmi.all(): 300 samples x 500 and 2000
# genes, k = 3, noise = 0, every core for both (parmigene's OpenMP through
# OMP_NUM_THREADS, gpucor's threads option).  Each case runs in a fresh R
# process (one warm-up call on 20 genes, then one timed call), which
# reports the elapsed seconds and its peak resident memory (VmHWM) less the
# process's before the call.  Prints a table.
#   Rscript bench/knnmi.R                    (both sizes)
#   BENCH_GENES=500 Rscript bench/knnmi.R    (one size)
#   BENCH_GPU_GENES=5000,20000 ...            (sizes for the GPU alone)
genes <- as.integer(strsplit(Sys.getenv("BENCH_GENES", "500,2000"), ",")[[1]])
gpu_genes <- as.integer(strsplit(Sys.getenv("BENCH_GPU_GENES", ""), ",")[[1]])
samples <- 300L
threads <- as.integer(Sys.getenv("BENCH_THREADS", parallel::detectCores()))

hwm_mib <- function() {
  s <- readLines("/proc/self/status")
  as.numeric(sub("[^0-9]*([0-9]+).*", "\\1", grep("^VmHWM", s, value = TRUE))) / 1024
}

# the child: one case, "seconds peak_MiB" on stdout
args <- commandArgs(trailingOnly = TRUE)
if (length(args) == 3L && args[1L] == "case") {
  impl <- args[2L]
  g <- as.integer(args[3L])
  set.seed(42)
  x <- matrix(rnorm(g * samples), g, samples)
  w <- x[1:20, ]
  run <- switch(impl,
    parmigene = function(x) parmigene::knnmi.all(x, k = 3, noise = 0),
    gpucor_cpu = function(x) gpucor::gpu_knnmi(x, k = 3, backend = "cpu"),
    gpucor_gpu = function(x) gpucor::gpu_knnmi(x, k = 3, backend = "gpu"))
  options(gpucor.threads = threads)
  invisible(run(w))
  gc()
  base <- hwm_mib()
  t <- system.time(r <- run(x))[["elapsed"]]
  cat(sprintf("%.3f %.1f\n", t, hwm_mib() - base))
  quit(save = "no")
}

me <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
impls <- c("parmigene", "gpucor_cpu")
if (isTRUE(as.vector(gpucor::gpu_available()))) impls <- c(impls, "gpucor_gpu")
rows <- list()
todo <- c(lapply(genes, function(g) list(g = g, impls = impls)),
          if ("gpucor_gpu" %in% impls) lapply(gpu_genes, function(g) list(g = g, impls = "gpucor_gpu")))
for (case in todo) for (impl in case$impls) {
  g <- case$g
  out <- system2(file.path(R.home("bin"), "Rscript"), c(me, "case", impl, g), stdout = TRUE,
                 env = sprintf("OMP_NUM_THREADS=%d", threads))
  v <- as.numeric(strsplit(tail(out, 1L), " ")[[1]])
  rows[[length(rows) + 1L]] <- data.frame(genes = g, samples = samples, k = 3L,
                                          impl = impl, threads = threads,
                                          seconds = v[1L], peak_MiB = v[2L])
}
tab <- do.call(rbind, rows)
tab$vs_parmigene <- round(ave(tab$seconds, tab$genes,
                              FUN = function(s) if (length(s) > 1L) s[1L] / s else NA), 2)
print(tab, row.names = FALSE)
