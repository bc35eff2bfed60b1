# Gene co-expression modules in the ALL leukemia data (Bioconductor's ALL,
# Debian package r-bioc-all): Spearman correlation between the most variable
# genes, 1 - rho as distance, average-linkage clustering, modules by cutree.
#   Rscript inst/scripts/coexpression.R [number of genes, default 5000]
suppressPackageStartupMessages({
  library(gpucor)
  library(ALL)
})
n_genes <- as.integer(commandArgs(TRUE)[1])
if (is.na(n_genes)) n_genes <- 5000L
data(ALL)
expr <- Biobase::exprs(ALL)                       # 12625 probes x 128 patients
expr <- expr[order(apply(expr, 1, var), decreasing = TRUE)[seq_len(n_genes)], ]
ok <- gpu_available()
cat(sprintf("ALL: %d probe sets x %d patients; %d most variable kept\n",
            nrow(Biobase::exprs(ALL)), ncol(expr), n_genes))
cat(sprintf("backend: %s\n", if (ok) "gpu" else
            paste0("cpu (", attr(ok, "reason"), "), ",
                   getOption("gpucor.threads", .Call(gpucor:::C_gpucor_max_threads)),
                   " threads")))

t_dist <- system.time(d <- gpu_dist(expr, method = "spearman"))[["elapsed"]]
t_stats <- system.time(r <- cor(t(expr), method = "spearman"))[["elapsed"]]
err <- max(abs(c(as.dist(1 - r)) - c(d)))
stopifnot(err < 1e-10)
t_clust <- system.time(hc <- hclust(d, method = "average"))[["elapsed"]]
modules <- cutree(hc, h = 0.6)                   # genes with mean 1 - rho < 0.6
sizes <- sort(table(modules), decreasing = TRUE)
big <- as.integer(names(sizes)[sizes >= 20])

cat(sprintf("Spearman distance of %d genes (%s pairs): %.2f s\n",
            n_genes, format(length(d), big.mark = ","), t_dist))
cat(sprintf("  1 - stats::cor(t(x), method = \"spearman\"): %.2f s; largest difference %.1e\n",
            t_stats, err))
cat(sprintf("average-linkage hclust: %.2f s\n", t_clust))
cat(sprintf("%d modules of >= 20 genes (cut at height 0.6); the 10 largest:\n",
            length(big)))
for (m in head(big, 10)) {
  g <- names(modules)[modules == m]
  within <- as.matrix(gpu_dist(expr[g, ], method = "spearman"))
  cat(sprintf("  module %3d: %4d genes, mean within-module rho %.2f, e.g. %s\n",
              m, length(g), 1 - mean(within[upper.tri(within)]),
              paste(head(g, 3), collapse = ", ")))
}
# Does the largest module separate B- from T-cell leukemia?
eig <- prcomp(t(expr[names(modules)[modules == big[1]], ]), scale. = TRUE)$x[, 1]
cat(sprintf("largest module's first PC, mean in B-ALL %.2f vs T-ALL %.2f\n",
            mean(eig[substr(ALL$BT, 1, 1) == "B"]), mean(eig[substr(ALL$BT, 1, 1) == "T"])))

# The same genes as a network, without the matrix: the pairs significant at
# FDR 1% (exact Benjamini-Hochberg over all pairs), checked on one pair
# against cor.test() and p.adjust()'s cut.
t_edges <- system.time(e <- gpu_cor_edges(t(expr), method = "spearman", fdr = 0.01))[["elapsed"]]
k <- which.max(e$p.value)
ct <- suppressWarnings(cor.test(expr[e$row[k], ], expr[e$col[k], ], method = "spearman",
                                exact = FALSE))$p.value
stopifnot(abs(ct / e$p.value[k] - 1) < 1e-8)
cat(sprintf("Spearman network at FDR 1%%: %s of %s pairs in %.2f s; largest kept p %.2e (cor.test %.2e)\n",
            format(nrow(e), big.mark = ","), format(length(d), big.mark = ","), t_edges,
            e$p.value[k], ct))
deg <- sort(table(c(e$from, e$to)), decreasing = TRUE)
cat(sprintf("  most connected probe sets: %s\n",
            paste(sprintf("%s (%d)", names(deg)[1:3], as.integer(deg[1:3])), collapse = ", ")))
