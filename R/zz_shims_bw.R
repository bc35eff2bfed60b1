# shim: replaced on merge.  gpu_blockwise_modules() calls these three
# functions, which are being written on other branches with the
# arguments of the reference functions; until then they delegate to the
# references themselves.  Not exported.
gpu_cutree_dynamic <- function(...) dynamicTreeCut::cutreeDynamic(...)
gpu_module_eigengenes <- function(...) WGCNA::moduleEigengenes(...)
gpu_merge_close_modules <- function(...) WGCNA::mergeCloseModules(...)
