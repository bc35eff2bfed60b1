# gpu_cutree_dynamic() against dynamicTreeCut::cutreeDynamic on the ALL
# data (128 samples; all 12625 probe sets, or the first GENES of them):
# the TOM dissimilarity from gpu_tom(dist = TRUE), the average-linkage tree
# from gpu_hclust(), then both cuts with the same arguments, timed in one
# run, with identical() of the labels; peak host memory of this process.
#   Rscript bench/cutree.R              (GENES=5000 THREADS=2 for the CPU figure)
suppressPackageStartupMessages({ library(gpucor); library(dynamicTreeCut) })
genes <- as.integer(Sys.getenv("GENES", "12625"))
e <- if (file.exists(".all-exprs.rds")) readRDS(".all-exprs.rds") else {
  data("ALL", package = "ALL", envir = environment()); Biobase::exprs(ALL)
}
x <- t(e)[, seq_len(genes)]
if (nzchar(Sys.getenv("THREADS"))) options(gpucor.threads = as.integer(Sys.getenv("THREADS")))
tm <- function(expr) system.time(expr)[["elapsed"]]
d <- gpu_tom(x, power = 6, dist = TRUE)
tree <- gpu_hclust(d, method = "average")
dm <- as.matrix(d)
settings <- list(
  "defaults (deepSplit 1)" = list(),
  "blockwiseModules' (deepSplit 2, cutHeight 0.995, minClusterSize 20)" =
    list(deepSplit = 2, cutHeight = 0.995, minClusterSize = 20),
  "deepSplit 3, pamRespectsDendro FALSE" = list(deepSplit = 3, pamRespectsDendro = FALSE),
  "useMedoids" = list(useMedoids = TRUE))
rows <- lapply(names(settings), function(s) {
  a <- settings[[s]]
  t_ref <- tm(ref <- do.call(cutreeDynamic, c(list(tree, distM = dm, verbose = 0), a)))
  t_mat <- tm(got <- do.call(gpu_cutree_dynamic, c(list(tree, distM = dm, verbose = 0), a)))
  t_dist <- tm(got2 <- do.call(gpu_cutree_dynamic, c(list(tree, distM = d, verbose = 0), a)))
  data.frame(setting = s, cutreeDynamic_s = t_ref, gpucor_matrix_s = t_mat,
             gpucor_dist_s = t_dist, speedup = round(t_ref / t_mat, 1),
             identical = identical(ref, got) && identical(ref, got2),
             modules = max(got), grey = sum(got == 0))
})
peak <- if (file.exists("/proc/self/status"))
  grep("VmHWM", readLines("/proc/self/status"), value = TRUE) else NA
cat(sprintf("# %s, %d genes x %d samples, %s, threads %s, %s\n", format(Sys.Date()), ncol(x),
            nrow(x), if (isTRUE(as.vector(gpu_available()))) gpu_info()$name[1] else "CPU",
            getOption("gpucor.threads", "default"), peak))
print(do.call(rbind, rows), row.names = FALSE)
