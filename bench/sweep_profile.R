# Where the 24-setting sweep's time goes (bench/modules_sweep.R's gpucor
# loop): Rprof over the loop at gpucor's default threads and at 4, and each
# step's total.    Rscript bench/sweep_profile.R      (.all-exprs.rds)
suppressPackageStartupMessages(library(gpucor))
x <- t(readRDS(".all-exprs.rds"))
tq <- function(expr) system.time(expr, gcFirst = FALSE)[["elapsed"]]
d <- gpu_tom(x, power = 6, dist = TRUE)
tree <- gpu_hclust(d, method = "average")
loop <- function() {
  st <- c(cut = 0, eigengenes = 0, merge = 0)
  for (ds in 0:3) for (mm in c(10, 20, 30)) {
    st[["cut"]] <- st[["cut"]] + tq(mods <- gpu_cutree_dynamic(
      tree, distM = d, deepSplit = ds, minClusterSize = mm, pamRespectsDendro = FALSE,
      verbose = 0))
    st[["eigengenes"]] <- st[["eigengenes"]] + tq(me <- gpu_module_eigengenes(x, mods)$eigengenes)
    for (mh in c(0.15, 0.25))
      st[["merge"]] <- st[["merge"]] + tq(gpu_merge_close_modules(x, mods, MEs = me,
                                                                  cutHeight = mh, verbose = 0))
  }
  st
}
for (th in c(0, 4, 1)) {
  if (th > 0) options(gpucor.threads = th)
  assign("tabs", NULL, envir = gpucor:::.me_cache)   # an empty cache for each run
  Rprof(f <- tempfile(), interval = 0.005)
  total <- tq(st <- loop())
  Rprof(NULL)
  cat(sprintf("threads %s: total %.2f s; cut %.2f, eigengenes %.2f, merge %.2f\n",
              if (th > 0) th else "default", total, st[["cut"]], st[["eigengenes"]],
              st[["merge"]]))
  print(head(summaryRprof(f)$by.self, 12))
}
