# The vignette's "whole WGCNA network in one block" on the ALL data (all
# 12625 probe sets x 128 samples): gpucor's pipeline against
# WGCNA::blockwiseModules(maxBlockSize = 12625) on the same machine, with
# timings and the agreement of the modules; saves inst/extdata/wgcna-all.rds
# (the vignette prints it).  Run on the GPU machine:
#   bash tools/device.sh wgcna-all      (the data from .all-exprs.rds, made by
#   Rscript -e 'saveRDS(Biobase::exprs(ALL::ALL), ".all-exprs.rds", compress = "xz")'
#   where the ALL package is installed, or from the ALL package)
suppressPackageStartupMessages({
  library(gpucor); library(WGCNA); library(fastcluster); library(dynamicTreeCut)
})
e <- if (file.exists(".all-exprs.rds")) readRDS(".all-exprs.rds") else {
  data("ALL", package = "ALL", envir = environment()); Biobase::exprs(ALL)
}
x <- t(e)                       # 128 samples x 12625 probe sets
stopifnot(ncol(x) == 12625)
nthreads <- 16
tm <- function(expr) system.time(expr)[["elapsed"]]
invisible(gpu_tom(x[, 1:100], backend = "gpu"))   # the GPU context, once

## gpucor
t_sft <- tm(sft <- gpu_soft_threshold(x))
power <- 6                      # blockwiseModules' default, so both use the same network
t_tom <- tm(d <- gpu_tom(x, power = power, dist = TRUE))   # unsigned network, signed TOM
t_tree <- tm(tree <- fastcluster::hclust(d, method = "average"))
t_cut <- tm(mods <- cutreeDynamic(tree, distM = as.matrix(d), deepSplit = 2,
                                  cutHeight = 0.995, minClusterSize = 20,
                                  pamRespectsDendro = TRUE, verbose = 0))
t_me <- tm(me <- moduleEigengenes(x, mods)$eigengenes)

## WGCNA, one block
allowWGCNAThreads(nthreads)
t_bw <- tm(bw <- blockwiseModules(x, maxBlockSize = 12625, power = power,
                                  numericLabels = TRUE, nThreads = nthreads, verbose = 0))
w <- as.vector(bw$unmergedColors)   # modules before mergeCloseModules
# the same with WGCNA's kME pruning and reassignment after the cut turned off
t_bw0 <- tm(bw0 <- blockwiseModules(x, maxBlockSize = 12625, power = power,
                                    numericLabels = TRUE, nThreads = nthreads, verbose = 0,
                                    minCoreKME = 0, minKMEtoStay = 0, reassignThreshold = 0))
w0 <- as.vector(bw0$unmergedColors)
# WGCNA's TOM of the same data, against gpu_tom's
tw <- TOMsimilarityFromExpr(x, power = power, nThreads = nthreads, verbose = 0)
tom_diff <- max(abs(as.vector(d) - as.vector(as.dist(1 - tw))))
rm(tw)
t_ghc <- tm(tree2 <- gpu_hclust(d, method = "average", backend = "gpu"))

# agreement: each gpucor module's best-matching WGCNA module
ari <- function(a, b) {
  tab <- table(a, b); n <- sum(tab); s <- function(v) sum(choose(v, 2))
  e <- s(rowSums(tab)) * s(colSums(tab)) / choose(n, 2)
  (s(tab) - e) / ((s(rowSums(tab)) + s(colSums(tab))) / 2 - e)
}
tab <- table(gpucor = mods, WGCNA = w)
best <- apply(tab, 1, which.max)
agree <- data.frame(gpucor_module = as.integer(rownames(tab)),
                    genes = as.vector(rowSums(tab)),
                    WGCNA_module = as.integer(colnames(tab)[best]),
                    shared = tab[cbind(seq_len(nrow(tab)), best)])
agree$fraction <- round(agree$shared / agree$genes, 4)
res <- list(
  date = format(Sys.Date()), machine = gpu_info()$name, threads = nthreads,
  genes = ncol(x), samples = nrow(x),
  fit = sft$fitIndices, powerEstimate = sft$powerEstimate,
  timings = data.frame(
    step = c("gpu_soft_threshold (15 powers)", "gpu_tom(dist = TRUE)", "fastcluster::hclust average",
             "dynamicTreeCut::cutreeDynamic", "WGCNA::moduleEigengenes", "gpucor pipeline, total",
             "WGCNA::blockwiseModules(maxBlockSize = 12625), total"),
    seconds = c(t_sft, t_tom, t_tree, t_cut, t_me, t_sft + t_tom + t_tree + t_cut + t_me, t_bw)),
  agreement = agree,
  same_module_fraction = sum(agree$shared[agree$gpucor_module != 0]) /
    sum(agree$genes[agree$gpucor_module != 0]),
  ari = ari(mods, w), modules = c(gpucor = length(setdiff(unique(mods), 0)),
                                  WGCNA = length(setdiff(unique(w), 0))),
  grey = c(gpucor = sum(mods == 0), WGCNA = sum(w == 0)),
  identical_labels = identical(as.integer(mods), as.integer(w)),
  identical_labels_unpruned = identical(as.integer(mods), as.integer(w0)),
  ari_unpruned = ari(mods, w0), seconds_unpruned = t_bw0,
  tom_max_diff = tom_diff,
  gpu_hclust_seconds = t_ghc,
  gpu_hclust_same_tree = identical(tree$merge, tree2$merge) && identical(tree$order, tree2$order))
print(res$timings); print(res$agreement)
str(res[c("ari", "identical_labels", "identical_labels_unpruned", "ari_unpruned", "tom_max_diff",
          "gpu_hclust_seconds", "gpu_hclust_same_tree")])
out <- Sys.getenv("OUT", "inst/extdata")
dir.create(out, showWarnings = FALSE, recursive = TRUE)
saveRDS(res, file.path(out, "wgcna-all.rds"))
