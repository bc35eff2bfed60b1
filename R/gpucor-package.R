#' gpucor: exact correlation and distance matrices on GPUs and CPUs
#'
#' [gpu_cor()] and [gpu_dist()] compute what [stats::cor()] and
#' [stats::dist()] compute, with the same values and semantics, on an NVIDIA
#' GPU when one is usable and otherwise with a tiled, multi-threaded C
#' engine; the other functions do the same for the steps that follow
#' (networks, clustering, WGCNA's modules, mutual information,
#' neighbours).  Each takes the arguments of the function it stands for, in
#' its order, so a call written for that function runs with `gpu_` in
#' front of it.  See [gpucor_options] for the backend and thread options
#' and [gpu_available()] for the device.
#'
#' @section Functions by task:
#' * Correlations and covariances: [gpu_cor()], [gpu_cov()], [gpu_bicor()]
#'   (biweight midcorrelation), [gpu_cor_shrink()], [gpu_pcor_shrink()]
#'   (shrinkage estimates).
#' * Distances and neighbours: [gpu_dist()], [gpu_knn()] (k nearest),
#'   [gpu_range()] (all within a distance), [GpucorParam()] (a
#'   BiocNeighbors parameter for bluster, scran, scater).
#' * Networks without the matrix: [gpu_cor_edges()] (threshold, top-k,
#'   density, exact FDR), [gpu_shortest_paths()], [gpu_network_metrics()].
#' * Brain networks: [gpu_brain_metrics()] (the Brain Connectivity
#'   Toolbox's nodal and global measures, many subjects in one call),
#'   [gpu_degree_centrality()] (voxel degree centrality from time series).
#' * Mutual-information networks: [gpu_knnmi()], [gpu_build_mim()],
#'   [gpu_aracne_a()], [gpu_aracne_m()], [gpu_clr()], [gpu_mrnet()].
#' * WGCNA: [gpu_adjacency()], [gpu_soft_threshold()], [gpu_tom()],
#'   [gpu_blockwise_modules()], [gpu_blockwise_consensus_modules()],
#'   [gpu_module_eigengenes()], [gpu_merge_close_modules()].
#' * Clustering: [gpu_hclust()], [gpu_cutree_dynamic()].
#' * Results larger than memory: [gpu_hdf5()] (the `output` of the
#'   functions that return an n x n matrix).
#' * The device and settings: [gpu_available()], [gpu_info()],
#'   [gpucor_options].
#'
#' @section From the function you use today:
#' | You call today | gpucor | Identical | What differs |
#' |---|---|---|---|
#' | `stats::cor()`, `stats::cov()` | [gpu_cor()], [gpu_cov()] | arguments; values to about 1e-15; dimnames, `NA` rules of every `use`, warnings, errors | `BPPARAM`, `output`; `precision = "single"` on the GPU |
#' | `stats::dist()` | [gpu_dist()] | arguments; the six metrics and their `NA` rules | adds correlation, Spearman, Kendall and cosine (1 - cos) distances; an error where stats coerces nonsense |
#' | `stats::hclust()`, `fastcluster::hclust()` | [gpu_hclust()] | `hclust(d, method, members)`; `merge`, `order` where no distances tie; heights to about 1e-15 | no limit of 65536 objects; `x =` clusters data with the distances kept on the GPU; tied merges may come in another valid order |
#' | `WGCNA::bicor()` | [gpu_bicor()] | arguments (`cosine`, `nThreads`, `verbose`, `indent` too); values to about 1e-15 | cosine bicor on complete data only |
#' | `WGCNA::adjacency()` | [gpu_adjacency()] | arguments; values to about 1e-15 | `corFnc` only `"cor"`/`"bicor"`; `weights` on complete data (ignored for bicor, as WGCNA does) |
#' | `WGCNA::pickSoftThreshold()` | [gpu_soft_threshold()] | arguments; `fitIndices`, `powerEstimate` | prints nothing; `blockSize`, `gcInterval` ignored: the matrix is never held |
#' | `WGCNA::TOMsimilarityFromExpr()`, `TOMsimilarity()` | [gpu_tom()] | arguments; TOM to about 1e-15 | `dist = TRUE` gives 1 - TOM as a `dist`; `replaceMissingAdjacencies` does replace |
#' | `WGCNA::blockwiseModules()`, `blockwiseConsensusModules()` | [gpu_blockwise_modules()], [gpu_blockwise_consensus_modules()] | arguments; colors and eigengenes where no two values are within rounding of a threshold | one block (the whole TOM); `weights`, `cosineCorrelation` not supported |
#' | `WGCNA::moduleEigengenes()`, `mergeCloseModules()` | [gpu_module_eigengenes()], [gpu_merge_close_modules()] | arguments; values to rounding | errors are checked first and worded differently |
#' | `dynamicTreeCut::cutreeDynamic()` | [gpu_cutree_dynamic()] | arguments; labels `identical()` | takes a `dist` without a dense copy |
#' | `corpcor::cor.shrink()`, `pcor.shrink()` | [gpu_cor_shrink()], [gpu_pcor_shrink()] | arguments; lambda and values to about 1e-12 | two-pass moments (exact for data with large offsets) |
#' | `parmigene::knnmi.all()`, `aracne.a()`, `aracne.m()`, `clr()`, `mrnet()` | [gpu_knnmi()], [gpu_aracne_a()], ... | arguments (`mat` is `x`); values | `noise` jitter reproducible (default 0) |
#' | `minet::build.mim()` | [gpu_build_mim()] | arguments; correlation estimators | no discretizing estimators (`disc = "none"`) |
#' | `BiocNeighbors::findKNN()`, `findNeighbors()` | [gpu_knn()], [gpu_range()], or [GpucorParam()] | `X`, `k` (`threshold`) first; exact neighbours | gpucor's `"cosine"` is 1 - cos, BiocNeighbors' sqrt(2 (1 - cos)) ([GpucorParam()] follows BiocNeighbors) |
#' | BCT's `strengths_und()`, `clustering_coef_wu()`, `efficiency_wei()`, `betweenness_wei()`, ... | [gpu_brain_metrics()] | BCT's definitions (its MATLAB source), thresholding and rounding; values to about 1e-12 | undirected networks only; many subjects in one call; small-world random graphs from gpucor's own generator |
#' | AFNI's `3dDegreeCentrality` | [gpu_degree_centrality()] | binary and weighted degree above a correlation threshold | exact threshold and density (ties kept together); Spearman and Kendall too; never n x n |
#' | `igraph::distances()` | [gpu_shortest_paths()] | takes the graph and `weights`; lengths to about 1e-12 | all pairs only; an edge of weight 0 is an error (no edge in a matrix) |
#' | `cor()` then a filter, `scran::correlatePairs()` | [gpu_cor_edges()] | `cor.test()` p-values, `p.adjust()`'s BH | the matrix is never stored; columns `from`, `to` first, for `igraph::graph_from_data_frame()` |
#'
#' @section Orientation:
#' [gpu_cor()] correlates the *columns* of `x` (variables in columns, as
#' [stats::cor()]); [gpu_dist()] measures distances between the *rows* of
#' `x` (items in rows, as [stats::dist()]).  Expression matrices usually
#' hold genes in rows and samples in columns: correlations between genes
#' are `gpu_cor(t(expr))`, distances between genes `gpu_dist(expr, method =
#' "correlation")` (or `"spearman"`, ...).
#'
#' Containers are read by these rules, for every function that takes one:
#' * Correlations and networks of variables ([gpu_cor()], [gpu_cov()],
#'   [gpu_bicor()], [gpu_cor_edges()], [gpu_adjacency()],
#'   [gpu_soft_threshold()], [gpu_tom()], [gpu_blockwise_modules()], ...):
#'   a `SummarizedExperiment` (a `SingleCellExperiment` too) or
#'   `ExpressionSet` holds features in rows, and the features are the
#'   variables: `gpu_cor(se)` is `gpu_cor(t(assay(se)))`, correlations
#'   between genes.
#' * Distances and neighbours ([gpu_dist()], [gpu_knn()], [gpu_range()],
#'   [gpu_hclust()] with `x`): the items are the rows.  A
#'   `SummarizedExperiment` or `ExpressionSet` gives its features (rows) as
#'   they are: `gpu_dist(se)` is `gpu_dist(assay(se))`, distances between
#'   genes.  A `SingleCellExperiment` gives its *cells* (columns), as
#'   scater's `runUMAP()`, bluster and scran take them: with `use.dimred`
#'   (a name or number of `reducedDims(x)`) that matrix as it is (cells x
#'   dimensions), otherwise `t(assay(x, assay))`.  `use.dimred` with any
#'   other input is an error.
#' * Matrices, data frames, sparse `Matrix`, `DelayedArray`/`HDF5Array`
#'   and `bigmemory::big.matrix` are taken as they are (variables in
#'   columns for correlations, items in rows for distances).
#'
#' @section Memory:
#' A correlation matrix of `p` variables takes `8 * p^2` bytes (20000
#' genes: 3.2 GB; 50000: 20 GB), a `dist` of `n` items `4 * n * (n - 1)`
#' bytes (100000 items: 40 GB), and the engine also keeps a standardized
#' copy of the input.  Before allocating, gpucor compares this with the
#' memory available and stops with what to do instead (option
#' `gpucor.memory_guard`).  [stats::hclust()] on a `dist` needs another
#' copy of it and refuses more than 65536 objects.  Past the memory,
#' compute blocks of columns (`gpu_cor(x, x[, block])`) or rows, and keep
#' what you need of each block.
#'
#' @section Threads and forks:
#' The CPU engine uses option `gpucor.threads`, else `OMP_THREAD_LIMIT` /
#' `OMP_NUM_THREADS`, else every core (at most 2 under `R CMD check`).
#' Inside forked workers (`parallel::mclapply()`,
#' `BiocParallel::MulticoreParam()`) every call runs on one thread, because
#' OpenMP's threads do not survive `fork()`; the GPU cannot be used from a
#' forked child of a process that used it.  See [gpucor_options].
#'
#' On one machine, give the CPU engine the cores rather than BiocParallel
#' workers: its own threads share one copy of the input and write the
#' result in place, while workers each get the input and send their parts
#' back.  On the 2-core development machine (`bench/incumbents.R`,
#' 2026-11-28) `gpu_cor()` of 500 x 2000 took 0.65 s without `BPPARAM`,
#' 1.90 s with `SnowParam(2)` and 7.38 s with `MulticoreParam(2)` (its
#' forked workers run one thread each); `gpu_dist()` of 2000 x 500 0.48-0.88
#' s against 1.72 s and 3.66 s; `gpu_cor_edges(top_k = 10)` of 300 x 3000
#' 0.82 s against 1.60 s with `SnowParam(2)`.  `BPPARAM` is for several
#' GPUs, or several machines.
#'
#' @section Backends and precision:
#' `backend = "auto"` uses the GPU for problems large enough to repay its
#' fixed costs, the CPU otherwise; `"gpu"` and `"cpu"` force one.  Both
#' engines give the same values in double precision.  `precision =
#' "single"` (GPU only) is faster on cards with slow double precision:
#' correlations within about 1e-5 of double, distances with float's relative
#' error (about 1e-6), so near-duplicate rows with large offsets need
#' `"double"`.  `verbose = TRUE` says which engine ran.
#'
#' @section Differences from Dist() in amap:
#' `amap::Dist()` has methods of the same names that compute other
#' quantities: amap's `"pearson"` is gpucor's `"cosine"` (\eqn{1 -} the
#' uncentred correlation), amap's `"correlation"` is gpucor's
#' `"correlation"` (\eqn{1 - r}), while amap's `"spearman"` (a sum of
#' squared rank differences) and `"kendall"` (a count of discordant pairs)
#' are not \eqn{1 - \rho} and \eqn{1 - \tau_b} as here.  gpucor's six
#' [stats::dist()] metrics follow stats, including its rules for missing
#' values.
#'
#' @useDynLib gpucor, .registration = TRUE, .fixes = "C_"
#' @keywords internal
"_PACKAGE"
