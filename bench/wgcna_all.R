# The vignette's "whole WGCNA network in one block" on the ALL data (all
# 12625 probe sets x 128 samples): gpu_blockwise_modules() against
# WGCNA::blockwiseModules(maxBlockSize = 12625) with the same (default)
# arguments on the same machine, then gpucor's steps one by one
# (gpu_soft_threshold, gpu_tom, gpu_hclust, gpu_cutree_dynamic,
# gpu_module_eigengenes) against WGCNA's and dynamicTreeCut's; saves
# inst/extdata/wgcna-all.rds (the vignette prints it).  Run on the GPU
# machine:
#   bash tools/device.sh wgcna-all      (the data from .all-exprs.rds, made by
#   Rscript -e 'saveRDS(Biobase::exprs(ALL::ALL), ".all-exprs.rds", compress = "xz")'
#   where the ALL package is installed, or from the ALL package)
suppressPackageStartupMessages({
  library(gpucor); library(WGCNA); library(dynamicTreeCut)
})
e <- if (file.exists(".all-exprs.rds")) readRDS(".all-exprs.rds") else {
  data("ALL", package = "ALL", envir = environment()); Biobase::exprs(ALL)
}
x <- t(e)                       # 128 samples x 12625 probe sets
stopifnot(ncol(x) == 12625)
nthreads <- 16
tm <- function(expr) system.time(expr)[["elapsed"]]
invisible(gpu_tom(x[, 1:100], backend = "gpu"))   # the GPU context, once
allowWGCNAThreads(nthreads)

## the whole pipeline, one call each
t_gbw <- tm(gbw <- gpu_blockwise_modules(x, maxBlockSize = 12625, verbose = 0))
t_bw <- tm(bw <- blockwiseModules(x, maxBlockSize = 12625, nThreads = nthreads, verbose = 0))

## the steps
t_sft <- tm(sft <- gpu_soft_threshold(x))
t_tom <- tm(d <- gpu_tom(x, power = 6, dist = TRUE))      # unsigned network, signed TOM
t_tree <- tm(tree <- gpu_hclust(d, method = "average"))
t_cut <- tm(mods <- gpu_cutree_dynamic(tree, distM = d, deepSplit = 2, cutHeight = 0.995,
                                       minClusterSize = 20, verbose = 0))
t_me <- tm(me <- gpu_module_eigengenes(x, mods)$eigengenes)
t_cut_ref <- tm(mods_ref <- cutreeDynamic(tree, distM = as.matrix(d), deepSplit = 2,
                                          cutHeight = 0.995, minClusterSize = 20, verbose = 0))
t_me_ref <- tm(me_ref <- moduleEigengenes(x, mods)$eigengenes)
tw <- TOMsimilarityFromExpr(x, power = 6, nThreads = nthreads, verbose = 0)
tom_diff <- max(abs(as.vector(d) - as.vector(as.dist(1 - tw))))
rm(tw)

# each gpucor module's best-matching WGCNA module (they are identical: a check)
ari <- function(a, b) {
  tab <- table(a, b); n <- sum(tab); s <- function(v) sum(choose(v, 2))
  e <- s(rowSums(tab)) * s(colSums(tab)) / choose(n, 2)
  (s(tab) - e) / ((s(rowSums(tab)) + s(colSums(tab))) / 2 - e)
}
tab <- table(gpucor = gbw$colors, WGCNA = bw$colors)
agree <- data.frame(module = rownames(tab), genes = as.vector(rowSums(tab)),
                    WGCNA_module = colnames(tab)[apply(tab, 1, which.max)],
                    shared = apply(tab, 1, max), row.names = NULL)
agree <- agree[order(-agree$genes), ]
res <- list(
  date = format(Sys.Date()), machine = gpu_info()$name, threads = nthreads,
  genes = ncol(x), samples = nrow(x),
  fit = sft$fitIndices, powerEstimate = sft$powerEstimate,
  pipeline = data.frame(
    call = c("gpucor::gpu_blockwise_modules(x, maxBlockSize = 12625)",
             "WGCNA::blockwiseModules(x, maxBlockSize = 12625)"),
    seconds = c(t_gbw, t_bw)),
  identical_colors = identical(gbw$colors, bw$colors),
  identical_unmerged = identical(gbw$unmergedColors, bw$unmergedColors),
  MEs_max_diff = max(abs(as.matrix(gbw$MEs) - as.matrix(bw$MEs))),
  agreement = agree, ari = ari(gbw$colors, bw$colors),
  modules = length(setdiff(unique(gbw$colors), "grey")), grey = sum(gbw$colors == "grey"),
  steps = data.frame(
    step = c("soft threshold (15 powers)", "TOM, as 'dist'", "average-linkage tree",
             "dynamic tree cut (hybrid)", "module eigengenes"),
    gpucor = c("gpu_soft_threshold", "gpu_tom(dist = TRUE)", "gpu_hclust", "gpu_cutree_dynamic",
               "gpu_module_eigengenes"),
    seconds = c(t_sft, t_tom, t_tree, t_cut, t_me),
    reference = c("", "", "", "dynamicTreeCut::cutreeDynamic", "WGCNA::moduleEigengenes"),
    reference_seconds = c(NA, NA, NA, t_cut_ref, t_me_ref)),
  cut_identical = identical(mods, mods_ref),
  eigengenes_max_diff = max(abs(as.matrix(me) - as.matrix(me_ref))),
  tom_max_diff = tom_diff)
print(res$pipeline); print(res$steps)
str(res[c("identical_colors", "identical_unmerged", "MEs_max_diff", "ari", "modules", "grey",
          "cut_identical", "eigengenes_max_diff", "tom_max_diff")])
out <- Sys.getenv("OUT", "inst/extdata")
dir.create(out, showWarnings = FALSE, recursive = TRUE)
saveRDS(res, file.path(out, "wgcna-all.rds"))
