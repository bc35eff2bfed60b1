# Issue 38's sweep: 24 settings (deepSplit 0-3 x minModuleSize 10, 20, 30 x
# mergeCutHeight 0.15, 0.25) on the ALL data (128 x 12625), the TOM and the
# tree made once, as WGCNA's tutorial loops: cut, eigengenes, merge.
# gpucor: gpu_tom(dist = TRUE), gpu_hclust(), then gpu_cutree_dynamic()
# and gpu_merge_close_modules() per setting (the eigengenes of a cut made
# once for its two merge heights).  WGCNA: the same loop with
# dynamicTreeCut::cutreeDynamic(distM = as.matrix(d)),
# WGCNA::moduleEigengenes() and WGCNA::mergeCloseModules(MEs =) on the same
# tree (mergeCloseModules' result depends on whether MEs are given: the
# same call on both sides), for deepSplit 0-3 at
# minModuleSize 20 only (8 of the 24 settings; its 24-setting time is
# estimated as 3 times that); the merged colours of those 8 compared.
#   Rscript bench/modules_sweep.R      (.all-exprs.rds or the ALL package)
suppressPackageStartupMessages({ library(gpucor); library(WGCNA); library(dynamicTreeCut) })
e <- if (file.exists(".all-exprs.rds")) readRDS(".all-exprs.rds") else {
  data("ALL", package = "ALL", envir = environment()); Biobase::exprs(ALL)
}
x <- t(e)
if (nzchar(Sys.getenv("GENES"))) x <- x[, seq_len(as.integer(Sys.getenv("GENES")))]
nthreads <- as.integer(Sys.getenv("THREADS", parallel::detectCores()))
allowWGCNAThreads(nthreads)
tm <- function(expr) system.time(expr)[["elapsed"]]
# the steps inside the loop without a gc() before each (system.time's
# default): that gc would be most of what is timed
tq <- function(expr) system.time(expr, gcFirst = FALSE)[["elapsed"]]
invisible(gpu_tom(x[, 1:50]))   # the GPU context, once
grid <- expand.grid(mergeCutHeight = c(0.15, 0.25), minModuleSize = c(10, 20, 30),
                    deepSplit = 0:3)
t_net <- tm({
  d <- gpu_tom(x, power = 6, dist = TRUE)
  tree <- gpu_hclust(d, method = "average")
})
ours <- list()
steps <- c(cut = 0, eigengenes = 0, merge = 0)
t_loop <- tm(for (ds in 0:3) for (mm in c(10, 20, 30)) {
  steps[["cut"]] <- steps[["cut"]] + tq(
    mods <- gpu_cutree_dynamic(tree, distM = d, deepSplit = ds, minClusterSize = mm,
                               pamRespectsDendro = FALSE, verbose = 0))
  steps[["eigengenes"]] <- steps[["eigengenes"]] + tq(
    me <- gpu_module_eigengenes(x, mods)$eigengenes)
  for (mh in c(0.15, 0.25))
    steps[["merge"]] <- steps[["merge"]] + tq(
      ours[[paste(ds, mm, mh)]] <- gpu_merge_close_modules(x, mods, MEs = me, cutHeight = mh,
                                                           verbose = 0)$colors)
})
dm <- as.matrix(d)
same <- logical(0)
t_wgcna <- tm(for (ds in 0:3) {
  mods <- cutreeDynamic(tree, distM = dm, deepSplit = ds, minClusterSize = 20,
                        pamRespectsDendro = FALSE, verbose = 0)
  me <- moduleEigengenes(x, mods)$eigengenes
  for (mh in c(0.15, 0.25)) {
    w <- mergeCloseModules(x, mods, MEs = me, cutHeight = mh, verbose = 0)$colors
    same[paste(ds, 20, mh)] <- identical(as.numeric(w), as.numeric(ours[[paste(ds, 20, mh)]]))
  }
})
cat(sprintf("# %s, ALL %d x %d, %s, WGCNA threads %d\n", format(Sys.Date()), nrow(x), ncol(x),
            if (isTRUE(as.vector(gpu_available()))) gpu_info()$name[1] else "CPU", nthreads))
print(data.frame(
  step = c("TOM + tree, once (gpucor)", "gpucor: 24 settings (cut, eigengenes, merge)",
           "gpucor: TOM + tree + 24 settings", "WGCNA: 8 settings (deepSplit 0-3, minModuleSize 20)",
           "WGCNA: 24 settings, estimated (3 x 8)"),
  seconds = c(t_net, t_loop, t_net + t_loop, t_wgcna, 3 * t_wgcna)), row.names = FALSE)
cat("merged colours identical to WGCNA's in", sum(same), "of", length(same), "settings\n")
cat(sprintf("gpucor's 24 settings by step: cut %.2f s, eigengenes %.2f s, merge %.2f s\n",
            steps[["cut"]], steps[["eigengenes"]], steps[["merge"]]))
cat("peak host memory (VmHWM):", sub("^VmHWM:\\s*", "", grep("^VmHWM", readLines("/proc/self/status"), value = TRUE)), "\n")
cat("modules per setting (gpucor):", sapply(ours, function(v) length(unique(v))), "\n")
