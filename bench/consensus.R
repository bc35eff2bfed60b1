# gpu_blockwise_consensus_modules() against
# WGCNA::blockwiseConsensusModules(maxBlockSize = ncol) with the same
# arguments, on the ALL data (t(exprs(ALL)), 128 samples x 12625 probe
# sets) split into two sets, its first 64 and its last 64 samples: from
# .all-exprs.rds in the working directory (or in ../main, the main
# checkout), else from the ALL package, else simulated planted modules
# (two sets of 64 x 12625).  Each run in its own R process, so that its
# peak host memory (VmHWM) is its own; one table: seconds, whether colors
# and unmergedColors are identical to WGCNA's, the largest difference of
# the sets' eigengenes, peak memory.
#   Rscript bench/consensus.R [genes] [threads]
#     genes:   how many genes (the most variable ones over all 128
#              samples); default all; the environment variable GENES too
#     threads: nThreads of both (gpucor's CPU threads; WGCNA's); default
#              every core
#   Rscript bench/consensus.R --one <gpucor|wgcna> <genes> <threads> <out.rds>
# Both get the defaults of blockwiseConsensusModules (power 6, unsigned
# network and TOM, "single quantile" calibration, consensusQuantile 0,
# deepSplit 2, minModuleSize 20, mergeCutHeight 0.15) and verbose = 0;
# gpucor's backend is option gpucor.backend ("auto": the GPU when there is
# one).  WGCNA's run includes its collectGarbage() calls and its disk cache
# of the sets' TOMs (its defaults), as a user's does.
script <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
source(file.path(dirname(script), "all_data.R"))   # hwm(), all_data(), run_sides()

# ALL's first 64 and last 64 samples as two sets
the_data <- function(genes) {
  x <- all_data(genes)
  structure(list(first = list(data = x[1:64, ]), last = list(data = x[65:128, ])),
            source = attr(x, "source"))
}

a <- commandArgs(TRUE)
if (length(a) >= 1 && a[1] == "--one") {
  tool <- a[2]
  me <- the_data(as.numeric(a[3]))
  threads <- as.integer(a[4])
  ng <- ncol(me[[1]]$data)
  if (tool == "gpucor") {
    suppressPackageStartupMessages(library(gpucor))
    invisible(gpu_tom(me[[1]]$data[, 1:50]))   # the GPU context, once, outside the time
    t <- system.time(r <- gpu_blockwise_consensus_modules(me, maxBlockSize = ng,
                                                          nThreads = threads, verbose = 0))
  } else {
    # WGCNA attached: its steps look functions up from the global environment
    suppressPackageStartupMessages(library(WGCNA))
    t <- system.time(utils::capture.output(r <- blockwiseConsensusModules(
      me, maxBlockSize = ng, nThreads = threads, verbose = 0)))
  }
  saveRDS(list(t = t[["elapsed"]], hwm = hwm(), colors = r$colors, unmerged = r$unmergedColors,
               MEs = lapply(r$multiMEs, `[[`, "data"), source = attr(me, "source"), genes = ng,
               samples = vapply(me, function(s) nrow(s$data), 1)), a[5])
  quit(save = "no")
}

genes <- if (length(a) >= 1) as.numeric(a[1]) else as.numeric(Sys.getenv("GENES", "Inf"))
threads <- if (length(a) >= 2) as.integer(a[2]) else parallel::detectCores()
out <- run_sides(script, genes, threads)
g <- out$gpucor
w <- out$wgcna
me <- max(vapply(seq_along(g$MEs), function(s) {
  if (identical(dim(g$MEs[[s]]), dim(w$MEs[[s]])) && identical(names(g$MEs[[s]]), names(w$MEs[[s]])))
    max(abs(as.matrix(g$MEs[[s]]) - as.matrix(w$MEs[[s]])), na.rm = TRUE) else NA_real_
}, 1))
cat(sprintf("%s; %s data, two sets of %s samples x %d genes; %d threads; %s\n",
            format(Sys.time(), "%Y-%m-%d"), g$source, paste(g$samples, collapse = " and "),
            g$genes, threads,
            if (isTRUE(as.vector(gpucor::gpu_available()))) gpucor::gpu_info()$name else "no GPU"))
cat(sprintf("%-44s %9s %8s %9s %10s %9s\n", "function", "seconds", "colors", "unmerged",
            "MEs diff", "VmHWM MB"))
cat(sprintf("%-44s %9.2f %8s %9s %10.2g %9.0f\n", "gpu_blockwise_consensus_modules", g$t,
            identical(g$colors, w$colors), identical(g$unmerged, w$unmerged), me, g$hwm))
cat(sprintf("%-44s %9.2f %8s %9s %10s %9.0f\n", "WGCNA::blockwiseConsensusModules (1 block)",
            w$t, "-", "-", "-", w$hwm))
cat(sprintf("modules: %d (gpucor), %d (WGCNA); speed-up %.1fx; colour agreement %.4f\n",
            length(unique(g$colors)), length(unique(w$colors)), w$t / g$t,
            mean(g$colors == w$colors)))
