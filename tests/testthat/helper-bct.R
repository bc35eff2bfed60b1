# A plain-R reference of the Brain Connectivity Toolbox's definitions
# (MATLAB BCT, release 2019-03-03, read from its source; bctpy where it
# agrees), written literally -- matrix algebra and BCT's own Dijkstra --
# so that test-bct.R can hold gpu_brain_metrics() to it.  Each function
# names the BCT function it follows.  Weighted undirected networks: W
# symmetric, nonnegative, diagonal 0 (bct_prepare() makes it so).

# weight_conversion(W, 'lengths'): L = 1 / W on the nonzero entries.
bct_lengths <- function(W) {
  L <- W
  L[W != 0] <- 1 / W[W != 0]
  L
}

# weight_conversion(W, 'normalize'): W / max(abs(W)).
bct_normalize <- function(W) {
  m <- max(abs(W))
  if (m > 0) W / m else W
}

# MATLAB's round(): halves away from zero (R's round() takes them to even).
bct_round <- function(x) sign(x) * floor(abs(x) + 0.5)

# threshold_proportional(W, p): the diagonal cleared; a symmetric W
# (max |W - W'| < 1e-10) keeps round(p * n (n - 1) / 2) of the entries of
# its upper triangle, the largest (by signed value) first; the links are
# sorted by MATLAB's sortrows(-value), a stable sort, so that among equal
# values the one found first by find() (column-major order: earlier
# column, then earlier row) is kept first.  A nonsymmetric W would keep
# round(p n (n - 1)) of all its entries (not used here: undirected only).
bct_threshold_proportional <- function(W, p) {
  n <- nrow(W)
  diag(W) <- 0
  stopifnot(max(abs(W - t(W))) < 1e-10)
  W[lower.tri(W)] <- 0
  ind <- which(W != 0)                         # column-major, as find()
  ord <- ind[order(-W[ind], seq_along(ind))]   # stable: ties by position
  en <- bct_round((n * n - n) * p / 2)
  if (en < length(ord)) W[ord[(en + 1):length(ord)]] <- 0
  W + t(W)
}

# threshold_absolute(W, thr): entries below thr to 0, the diagonal cleared.
bct_threshold_absolute <- function(W, thr) {
  W[W < thr] <- 0
  diag(W) <- 0
  W
}

# The sign policy (BCT's *_sign functions split W this way: W .* (W > 0)
# and -W .* (W < 0)); "absolute" is abs(W).
bct_sign <- function(W, sign) {
  switch(sign, positive = W * (W > 0), negative = -W * (W < 0), absolute = abs(W))
}

# The whole preparation as gpu_brain_metrics() documents it: the diagonal
# cleared, the sign policy, the threshold, then the normalisation.
bct_prepare <- function(W, sign = "positive", threshold = NULL,
                        threshold_type = "proportional", normalize = FALSE) {
  diag(W) <- 0
  W <- bct_sign(W, sign)
  if (!is.null(threshold))
    W <- if (threshold_type == "proportional") bct_threshold_proportional(W, threshold)
         else bct_threshold_absolute(W, threshold)
  if (normalize) W <- bct_normalize(W)
  W
}

# strengths_und(CIJ): the row sums.
bct_strengths_und <- function(W) rowSums(W)

# degrees_und(CIJ): the nonzero entries of each row.
bct_degrees_und <- function(W) rowSums(W != 0)

# clustering_coef_wu(W) (Onnela et al. 2005): diag((W^(1/3))^3) / (k (k - 1)),
# 0 where there is no triangle.  BCT expects W in [0, 1]; the formula is
# taken as it is on whatever W is given (see gpu_brain_metrics(normalize =)).
bct_clustering_coef_wu <- function(W) {
  K <- rowSums(W != 0)
  ws <- W^(1 / 3)
  cyc3 <- diag(ws %*% ws %*% ws)
  K[cyc3 == 0] <- Inf
  cyc3 / (K * (K - 1))
}

# transitivity_wu(W): sum(diag((W^(1/3))^3)) / sum(k (k - 1)).
bct_transitivity_wu <- function(W) {
  K <- rowSums(W != 0)
  ws <- W^(1 / 3)
  sum(diag(ws %*% ws %*% ws)) / sum(K * (K - 1))
}

# The Dijkstra of distance_wei.m / efficiency_wei.m's distance_inv_wei,
# literally: the nodes at the current minimum are made permanent together,
# their in-edges removed, and their out-edges relaxed; a 0 in L is no edge.
bct_distance_wei <- function(L) {
  n <- nrow(L)
  D <- matrix(Inf, n, n)
  diag(D) <- 0
  for (u in seq_len(n)) {
    S <- rep(TRUE, n)
    L1 <- L
    V <- u
    repeat {
      S[V] <- FALSE
      L1[, V] <- 0
      for (v in V) {
        T <- which(L1[v, ] != 0)
        D[u, T] <- pmin(D[u, T], D[u, v] + L1[v, T])
      }
      if (!any(S)) break
      minD <- min(D[u, S])
      if (is.infinite(minD)) break
      V <- which(D[u, ] == minD)
    }
  }
  D
}

# distance_inv_wei: 1 / D, 0 on the diagonal.
bct_distance_inv_wei <- function(L) {
  D <- 1 / bct_distance_wei(L)
  diag(D) <- 0
  D
}

# efficiency_wei(W) (global): sum(1 / D) / (n^2 - n), lengths 1 / W (L
# given here, so that other weight-to-length conversions can be tested).
bct_efficiency_global <- function(W, L = bct_lengths(W)) {
  n <- nrow(W)
  sum(bct_distance_inv_wei(L)) / (n^2 - n)
}

# efficiency_wei(W, local): BCT's local efficiency, as efficiency_wei.m
# (2017 on) computes it for local = 1 (the original version, Rubinov and
# Sporns 2010; bctpy's efficiency_wei(local = True) is this one) and
# local = 2 (the modified version of Wang et al. 2016, BCT's recommended
# one: the shortest paths among the neighbours are found on the cube roots
# of the lengths, and their inverses are not cube-rooted again).
bct_efficiency_local <- function(W, version = 2, L = bct_lengths(W)) {
  n <- nrow(W)
  A <- (W > 0) * 1
  cbrt_W <- W^(1 / 3)
  E <- numeric(n)
  for (u in seq_len(n)) {
    V <- which(A[u, ] != 0 | A[, u] != 0)
    sw <- cbrt_W[u, V] + cbrt_W[V, u]
    if (version == 1) {
      di <- bct_distance_inv_wei(L[V, V, drop = FALSE])
      se <- di^(1 / 3) + t(di)^(1 / 3)
    } else {
      di <- bct_distance_inv_wei(L[V, V, drop = FALSE]^(1 / 3))
      se <- di + t(di)
    }
    numer <- sum(outer(sw, sw) * se) / 2
    if (numer != 0) {
      sa <- A[u, V] + A[V, u]
      E[u] <- numer / (sum(sa)^2 - sum(sa^2))
    }
  }
  E
}

# charpath(D, diagonal_dist = 0, infinite_dist): the diagonal left out;
# infinite_dist = TRUE (BCT's default since 2016) keeps the Inf distances
# (lambda and the eccentricity of a node that misses one are then Inf),
# FALSE drops them.  MATLAB's nanmax/min/max skip NaN: an empty row gives
# NaN, and radius/diameter skip NaN eccentricities.
bct_charpath <- function(D, infinite_dist = TRUE) {
  n <- nrow(D)
  diag(D) <- NaN
  if (!infinite_dist) D[is.infinite(D)] <- NaN
  Dv <- D[!is.nan(D)]
  ecc <- apply(D, 1, function(r) if (all(is.nan(r))) NaN else max(r, na.rm = TRUE))
  e <- ecc[!is.nan(ecc)]
  list(lambda = mean(Dv), efficiency = mean(1 / Dv), ecc = ecc,
       radius = if (length(e)) min(e) else NaN, diameter = if (length(e)) max(e) else NaN)
}

# betweenness_wei(L) (Brandes 2001, as betweenness_wei.m: BCT's Dijkstra,
# path counts NP, predecessors P, dependencies in order of non-increasing
# distance).  Ordered pairs: twice igraph's undirected betweenness.
# Normalised as the help of betweenness_wei says: BC / ((n - 1) (n - 2)).
bct_betweenness_wei <- function(L) {
  n <- nrow(L)
  BC <- numeric(n)
  for (u in seq_len(n)) {
    D <- rep(Inf, n); D[u] <- 0
    NP <- numeric(n); NP[u] <- 1
    S <- rep(TRUE, n)
    P <- matrix(FALSE, n, n)
    Q <- integer(n); q <- n
    L1 <- L
    V <- u
    repeat {
      S[V] <- FALSE
      L1[, V] <- 0
      for (v in V) {
        Q[q] <- v; q <- q - 1
        for (w in which(L1[v, ] != 0)) {
          Duw <- D[v] + L1[v, w]
          if (Duw < D[w]) {
            D[w] <- Duw; NP[w] <- NP[v]; P[w, ] <- FALSE; P[w, v] <- TRUE
          } else if (Duw == D[w]) {
            NP[w] <- NP[w] + NP[v]; P[w, v] <- TRUE
          }
        }
      }
      if (!any(S)) break
      minD <- min(D[S])
      if (is.infinite(minD)) {
        if (q > 0) Q[seq_len(q)] <- which(is.infinite(D))
        break
      }
      V <- which(D == minD)
    }
    DP <- numeric(n)
    for (w in Q[seq_len(n - 1)]) {
      BC[w] <- BC[w] + DP[w]
      for (v in which(P[w, ])) DP[v] <- DP[v] + (1 + DP[w]) * NP[v] / NP[w]
    }
  }
  BC
}

# participation_coef(W, Ci) (Guimera and Amaral 2005): 1 - sum over modules
# of (the strength into the module / the strength)^2; 0 with no strength.
bct_participation_coef <- function(W, Ci) {
  n <- nrow(W)
  Ko <- rowSums(W)
  Gc <- (W != 0) %*% diag(Ci, n)
  Kc2 <- numeric(n)
  for (i in seq_len(max(Ci))) Kc2 <- Kc2 + rowSums(W * (Gc == i))^2
  P <- 1 - Kc2 / Ko^2
  P[Ko == 0] <- 0
  P
}

# module_degree_zscore(W, Ci): (k_i - mean) / sd of the strength within the
# module, over the module's nodes (sd with n - 1); NaN to 0.  A module of
# one node, or whose nodes all have the same within-module strength, gives
# 0 (MATLAB's std of one value is 0, so 0/0; with equal values MATLAB's
# mean may leave rounding noise that BCT then divides by: we give 0).
bct_module_degree_zscore <- function(W, Ci) {
  n <- nrow(W)
  Z <- numeric(n)
  for (i in seq_len(max(Ci))) {
    m <- Ci == i
    if (!any(m)) next
    Koi <- rowSums(W[m, m, drop = FALSE])
    Z[m] <- if (length(Koi) < 2 || all(Koi == Koi[1])) 0 else (Koi - mean(Koi)) / stats::sd(Koi)
  }
  Z[is.nan(Z)] <- 0
  Z
}

# The modularity Q of a given partition, as community_louvain.m (gamma = 1,
# the 'modularity' objective) and modularity_und.m compute it:
# Q = sum(B(Ci == Ci')) / s with B = W - (k k') / s, s = sum(W).
bct_modularity_q <- function(W, Ci, gamma = 1) {
  K <- rowSums(W)
  s <- sum(K)
  B <- W - gamma * outer(K, K) / s
  sum(B[outer(Ci, Ci, "==")]) / s
}

# Every metric of one prepared network W (lengths L), as gpu_brain_metrics()
# names them.
bct_all <- function(W, L = bct_lengths(W), Ci = NULL, infinite_dist = TRUE) {
  D <- bct_distance_wei(L)
  cp <- bct_charpath(D, infinite_dist)
  n <- nrow(W)
  bc <- bct_betweenness_wei(L)
  nodal <- list(strength = bct_strengths_und(W), degree = bct_degrees_und(W),
                clustering = bct_clustering_coef_wu(W),
                local_efficiency = bct_efficiency_local(W, 2, L),
                local_efficiency_original = bct_efficiency_local(W, 1, L),
                betweenness = bc, betweenness_norm = bc / ((n - 1) * (n - 2)),
                eccentricity = cp$ecc)
  glob <- list(transitivity = bct_transitivity_wu(W), global_efficiency = bct_efficiency_global(W, L),
               char_path_length = cp$lambda, radius = cp$radius, diameter = cp$diameter)
  if (!is.null(Ci)) {
    nodal$participation <- bct_participation_coef(W, Ci)
    nodal$module_degree_z <- bct_module_degree_zscore(W, Ci)
    glob$modularity <- bct_modularity_q(W, Ci)
  }
  list(nodal = nodal, global = glob)
}
