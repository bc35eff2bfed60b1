# Issue 38: gpu_blockwise_modules() against
# WGCNA::blockwiseModules(maxBlockSize = ncol(x)) with the same arguments,
# on the ALL data (128 samples x 12625 probe sets, t(exprs(ALL))) when the
# ALL package is installed, else on simulated planted modules (128 x
# 12625).  Each run in its own R process, so that its peak host memory
# (VmHWM) is its own; one table: seconds, whether colors and unmergedColors
# are identical to WGCNA's, the largest difference of the eigengenes, peak
# memory.
#   Rscript bench/blockwise.R [genes] [threads]
#     genes:   how many genes (the most variable ones); default all
#     threads: nThreads of both (gpucor's CPU threads; WGCNA's); default
#              every core
#   Rscript bench/blockwise.R --one <gpucor|wgcna> <genes> <threads> <out.rds>
# Both get the defaults of blockwiseModules (power 6, unsigned network,
# signed TOM, deepSplit 2, minModuleSize 20, mergeCutHeight 0.15) and
# verbose = 0; gpucor's backend is option gpucor.backend ("auto": the GPU
# when there is one).  WGCNA's run includes its collectGarbage() calls
# (full gc(), repeated), as a user's does.
script <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
source(file.path(dirname(script), "all_data.R"))   # hwm(), all_data(), run_sides()

a <- commandArgs(TRUE)
if (length(a) >= 1 && a[1] == "--one") {
  tool <- a[2]
  x <- all_data(as.numeric(a[3]))
  threads <- as.integer(a[4])
  if (tool == "gpucor") {
    suppressPackageStartupMessages(library(gpucor))
    invisible(gpu_tom(x[, 1:50]))           # the GPU context, once, outside the time
    t <- system.time(r <- gpu_blockwise_modules(x, maxBlockSize = ncol(x), nThreads = threads))
  } else {
    # blockwiseModules needs WGCNA attached (it looks "cor" up from the
    # global environment)
    suppressPackageStartupMessages(library(WGCNA))
    t <- system.time(r <- blockwiseModules(x, maxBlockSize = ncol(x), nThreads = threads))
  }
  saveRDS(list(t = t[["elapsed"]], hwm = hwm(), colors = r$colors, unmerged = r$unmergedColors,
               MEs = r$MEs, source = attr(x, "source"), genes = ncol(x)), a[5])
  quit(save = "no")
}

genes <- if (length(a) >= 1) as.numeric(a[1]) else Inf
threads <- if (length(a) >= 2) as.integer(a[2]) else parallel::detectCores()
out <- run_sides(script, genes, threads)
g <- out$gpucor
w <- out$wgcna
me <- if (identical(dim(g$MEs), dim(w$MEs)) && identical(names(g$MEs), names(w$MEs)))
  max(abs(as.matrix(g$MEs) - as.matrix(w$MEs)), na.rm = TRUE) else NA
cat(sprintf("%s; %s data, %d samples x %d genes; %d threads; %s\n", format(Sys.time(), "%Y-%m-%d"),
            g$source, nrow(g$MEs), g$genes, threads,
            if (isTRUE(as.vector(gpucor::gpu_available()))) gpucor::gpu_info()$name else "no GPU"))
cat(sprintf("%-34s %9s %8s %9s %10s %9s\n", "function", "seconds", "colors", "unmerged",
            "MEs diff", "VmHWM MB"))
cat(sprintf("%-34s %9.2f %8s %9s %10.2g %9.0f\n", "gpu_blockwise_modules", g$t,
            identical(g$colors, w$colors), identical(g$unmerged, w$unmerged), me, g$hwm))
cat(sprintf("%-34s %9.2f %8s %9s %10s %9.0f\n", "WGCNA::blockwiseModules (1 block)", w$t,
            "-", "-", "-", w$hwm))
cat(sprintf("modules: %d (gpucor), %d (WGCNA); speed-up %.1fx\n", length(unique(g$colors)),
            length(unique(w$colors)), w$t / g$t))
