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
hwm <- function() {
  s <- readLines("/proc/self/status")
  as.numeric(sub("[^0-9]*([0-9]+).*", "\\1", grep("^VmHWM", s, value = TRUE))) / 1024
}

the_data <- function(genes) {
  rds <- c(Sys.getenv("ALL_EXPRS"), ".all-exprs.rds", "../main/.all-exprs.rds")
  rds <- rds[nzchar(rds)]
  rds <- rds[file.exists(rds)]
  x <- if (length(rds)) {
    # exprs(ALL) saved where ALL is installed:
    # saveRDS(Biobase::exprs(ALL::ALL), ".all-exprs.rds", compress = "xz")
    structure(t(readRDS(rds[1])), source = "ALL")
  } else if (requireNamespace("ALL", quietly = TRUE) &&
             requireNamespace("Biobase", quietly = TRUE)) {
    e <- new.env()
    utils::data("ALL", package = "ALL", envir = e)
    structure(t(Biobase::exprs(e$ALL)), source = "ALL")
  } else {
    # 128 x 12625: 12 modules from latent factors, 40% unassigned genes
    set.seed(38)
    n <- 128
    p <- 12625
    f <- matrix(rnorm(n * 12), n, 12)
    mod <- sample(0:12, p, TRUE, prob = c(0.4, rep(0.05, 12)))
    load <- runif(p, 0.3, 0.9) * sample(c(-1, 1), p, TRUE)
    x <- matrix(rnorm(n * p), n, p)
    for (j in which(mod > 0)) x[, j] <- load[j] * f[, mod[j]] + sqrt(1 - load[j]^2) * x[, j]
    dimnames(x) <- list(paste0("s", 1:n), paste0("g", 1:p))
    structure(x, source = "simulated")
  }
  src <- attr(x, "source")
  if (genes < ncol(x)) {
    v <- apply(x, 2, stats::var)
    x <- x[, sort(order(v, decreasing = TRUE)[seq_len(genes)])]
  }
  sets <- list(first = list(data = x[1:64, ]), last = list(data = x[65:128, ]))
  structure(sets, source = src)
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
script <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
out <- list()
for (tool in c("gpucor", "wgcna")) {
  f <- tempfile(fileext = ".rds")
  system2(file.path(R.home("bin"), "Rscript"), c(script, "--one", tool, genes, threads, f))
  out[[tool]] <- readRDS(f)
}
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
