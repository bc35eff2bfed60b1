#!/bin/bash
# tools/device.sh -- everything the GPU machine runs, in one call:
#   install R from the carried bundle, build gpucor with CUDA, run the test
#   suite (GPU tests included), compute-sanitizer over the GPU tests, and
#   the GPU benchmark.  Usage there (from the repository root):
#     bash tools/device.sh [tests] [sanitize] [racecheck] [bench] [bench-<part>]
#                          [identical] [compare] [big] [interrupt] [smoke]
#                          [devices] [profile] [edges|paths|hclust|wgcna|shrink|knnmi|prune]
#                          [dist-blocks] [hdf5] [hdf5-peer] [bp|bp-<part>]
#                          [<file>-tests] [sanitize-<file>] [dist-file]
#                          [sanitize-dist-file] [property] [classes32]
#                          [reproducers-base] [cov] [sanitize-32] [sanitize-sinks]
#                          [sanitize-mi] [modules] [sweep] [sweep-profile] [consensus] [neighbors] [neighbors-scale] [degree] [bct] [hdf5-read] [knn-ncu] [memcheck-neighbors] [modules-big]
#                          [interrupt-copy] [progress-tmux]
#   (bench-<part> runs "Rscript bench/gpu.R <part>", e.g. bench-na, bench-all;
#   compare times the GPU cases of bench/compare_case.R with the build of
#   .bench-base/ -- a carried copy of the code before the change, made with
#   "git archive <commit> | tar -x -C .bench-base" -- and with this tree;
#   identical compares the two builds' results bit for bit: bench/identical.R)
# Logs go to $OUT (the device tool brings them back).
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
what=${*:-tests sanitize bench}
t0=$(date +%s)
# the R bundle: .rbundle (../shared/GPU.md, tools/rbundle/README.md), or
# RBUNDLE=.rbundle-h (tools/rbundle/r-bundle-hdf5: HDF5Array, BiocParallel
# and HDF5 for gpucor's build, set up by its hdf5-env.sh)
RBUNDLE=${RBUNDLE:-.rbundle}
bash "$RBUNDLE/r-unbundle" "$RBUNDLE/r-bundle.tar.xz" >/dev/null || exit 1
if [ -f "$RBUNDLE/hdf5-env.sh" ]; then . "$RBUNDLE/hdf5-env.sh"; fi
mkdir -p /tmp/lib /tmp/libbase
# one target (the H100's) keeps the build short; CI builds all of them
build() {   # build SRC LIB LOG
  (cd "$1" && CUDA_ARCH=${CUDA_ARCH:-90} MAKEFLAGS=-j8 R CMD INSTALL --library="$2" . >"$3" 2>&1)
}
# PREBUILT=<file.tar.xz>: installed builds made on the CPU machine (nvcc
# is there: tools/prebuild.sh), lib/ and libbase/ unpacked into /tmp
# instead of building here (a build here takes 2 to 8 minutes)
if [ -n "${PREBUILT:-}" ] && [ ! -f /tmp/lib/gpucor/DESCRIPTION ]; then
  tar -C /tmp -xJf "$PREBUILT" || exit 1
fi
if [ ! -f /tmp/lib/gpucor/DESCRIPTION ] || [ -n "${REBUILD:-}" ]; then
  build . /tmp/lib "$OUT/install.log" &
  if [ -d .bench-base ] && [ ! -f /tmp/libbase/gpucor/DESCRIPTION ]; then
    build .bench-base /tmp/libbase "$OUT/install-base.log" &
  fi
  wait
  [ -f /tmp/lib/gpucor/DESCRIPTION ] || { tail -30 "$OUT/install.log"; exit 1; }
  grep "^gpucor:" "$OUT/install.log"
fi
echo "built in $(( $(date +%s) - t0 )) s"
export R_LIBS=/tmp/lib
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
for w in $what; do case $w in
tests)
  Rscript -e 'options(warn = 1); print(gpucor::gpu_info()[c("name","available")]);
    r <- testthat::test_dir("tests/testthat", package = "gpucor", load_package = "installed",
      reporter = testthat::ProgressReporter$new(show_praise = FALSE), stop_on_failure = FALSE)
    d <- as.data.frame(r); cat(sprintf("tests: %d passed, %d failed, %d skipped\n",
      sum(d$passed), sum(d$failed) + sum(d$error), sum(d$skipped)))' 2>&1 | tee "$OUT/tests.log" | tail -40 ;;
big)
  GPUCOR_BIG_TESTS=true Rscript -e 'testthat::test_file("tests/testthat/test-gpu.R", package = "gpucor", load_package = "installed")' 2>&1 | tee "$OUT/big.log" | tail -15 ;;
edges|paths|hclust|wgcna|shrink|knnmi|prune)
  # issue 10's, 11's, 12's, 13's and 34's tables (bench/<step>.R); CASES: a subset
  Rscript bench/$w.R ${CASES:-} 2>&1 | tee "$OUT/$w.log" ;;
profile-edges)
  Rscript bench/profile_edges.R ${PROFILE_PARTS:-} 2>&1 | tee "$OUT/profile-edges.log" ;;
*-tests)
  # one test file: edges-tests runs tests/testthat/test-edges.R
  t=${w%-tests}
  Rscript -e 'a <- commandArgs(TRUE); r <- as.data.frame(testthat::test_file(sprintf("tests/testthat/test-%s.R", a),
    package = "gpucor", load_package = "installed", reporter = "summary")); cat(sprintf("%s tests: %d passed, %d failed, %d skipped\n",
    a, sum(r$passed), sum(r$failed) + sum(r$error), sum(r$skipped)))' "$t" 2>&1 | tee "$OUT/$w.log" | tail -30 ;;
sanitize-edges|sanitize-paths|sanitize-hclust|sanitize-wgcna|sanitize-devices|sanitize-bpparam|\
sanitize-shrink|sanitize-mim|sanitize-knnmi|sanitize-prune|sanitize-neighbors|sanitize-degree)
  # memcheck with leak check, then racecheck, over one test file
  t=${w#sanitize-}
  cat > /tmp/san-$t.R <<R
library(testthat); library(gpucor)
source("tests/testthat/helper-gpucor.R")
test_file("tests/testthat/test-$t.R", package = "gpucor", load_package = "installed")
quit(save = "no")
R
  /usr/local/cuda/bin/compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 \
    --log-file "$OUT/sanitizer-$t.log" Rscript /tmp/san-$t.R > "$OUT/sanitize-$t-run.log" 2>&1
  echo "compute-sanitizer memcheck ($t) exit: $?"; tail -3 "$OUT/sanitizer-$t.log"
  grep -E "FAIL|PASS" "$OUT/sanitize-$t-run.log" | tail -2
  /usr/local/cuda/bin/compute-sanitizer --tool racecheck --error-exitcode 9 \
    --log-file "$OUT/racecheck-$t.log" Rscript /tmp/san-$t.R > "$OUT/racecheck-$t-run.log" 2>&1
  echo "compute-sanitizer racecheck ($t) exit: $?"; tail -3 "$OUT/racecheck-$t.log" ;;
memcheck-neighbors)
  # memcheck with leak check alone over test-neighbors.R
  cat > /tmp/mc-neighbors.R <<R
library(testthat); library(gpucor)
source("tests/testthat/helper-gpucor.R")
test_file("tests/testthat/test-neighbors.R", package = "gpucor", load_package = "installed")
quit(save = "no")
R
  /usr/local/cuda/bin/compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 \
    --log-file "$OUT/memcheck-neighbors.log" Rscript /tmp/mc-neighbors.R > "$OUT/memcheck-neighbors-run.log" 2>&1
  echo "compute-sanitizer memcheck (neighbors) exit: $?"; tail -3 "$OUT/memcheck-neighbors.log"
  grep -E "FAIL|PASS" "$OUT/memcheck-neighbors-run.log" | tail -1 ;;
sanitize)
  # The script ends with quit() and releases nothing itself: the exit
  # finalizer must free the cached context (stream, cuBLAS handle, pinned
  # buffers), or the leak check reports them.
  cat > /tmp/san.R <<'R'
library(testthat); library(gpucor)
source("tests/testthat/helper-gpucor.R"); source("tests/testthat/helper-dist.R")
for (f in c("tests/testthat/test-gpu.R", "tests/testthat/test-gpu-na.R",
            "tests/testthat/test-reproducers.R", "tests/testthat/test-edges.R",
            "tests/testthat/test-paths.R", "tests/testthat/test-hclust.R",
            "tests/testthat/test-wgcna.R"))
  test_file(f, package = "gpucor", load_package = "installed")
quit(save = "no")
R
  /usr/local/cuda/bin/compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 \
    --log-file "$OUT/sanitizer.log" Rscript /tmp/san.R > "$OUT/sanitize-run.log" 2>&1
  echo "compute-sanitizer memcheck exit: $?"; tail -3 "$OUT/sanitizer.log"; grep -E "FAIL|PASS" "$OUT/sanitize-run.log" | tail -3 ;;
sanitize-sinks)
  # every sink of the table on the GPU against the CPU (tools/sinks_smoke.R),
  # then under memcheck (leak check) and racecheck
  Rscript tools/sinks_smoke.R 2>&1 | tee "$OUT/sinks.log" | tail -15
  for tool in memcheck racecheck; do
    extra=""; [ $tool = memcheck ] && extra="--leak-check full"
    /usr/local/cuda/bin/compute-sanitizer --tool $tool $extra --error-exitcode 9 \
      --log-file "$OUT/$tool-sinks.log" Rscript tools/sinks_smoke.R > "$OUT/$tool-sinks-run.log" 2>&1
    echo "compute-sanitizer $tool (sinks) exit: $?"; tail -2 "$OUT/$tool-sinks.log"; tail -1 "$OUT/$tool-sinks-run.log"
  done ;;
sanitize-mi)
  # issue 34's GPU paths against the CPU (tools/mi_smoke.R), then under
  # memcheck (leak check) and racecheck
  Rscript tools/mi_smoke.R 2>&1 | tee "$OUT/mi.log" | tail -20
  for tool in memcheck racecheck; do
    extra=""; [ $tool = memcheck ] && extra="--leak-check full"
    /usr/local/cuda/bin/compute-sanitizer --tool $tool $extra --error-exitcode 9 \
      --log-file "$OUT/$tool-mi.log" Rscript tools/mi_smoke.R > "$OUT/$tool-mi-run.log" 2>&1
    echo "compute-sanitizer $tool (mi) exit: $?"; tail -2 "$OUT/$tool-mi.log"; tail -1 "$OUT/$tool-mi-run.log"
  done ;;
racecheck)
  # shared-memory races in every kernel family, on small inputs (racecheck
  # is slow): standardize, rank, GEMM fix-up and packing, pairwise Pearson
  # and Spearman, Kendall, the distance tiles in double and single
  cat > /tmp/race.R <<'R'
library(gpucor); set.seed(1)
x <- matrix(rnorm(70 * 40), 70); xn <- x; xn[sample(length(x), 100)] <- NA
for (m in c("pearson", "spearman", "kendall")) {
  invisible(gpu_cor(x, method = m, backend = "gpu"))
  invisible(gpu_cor(xn, method = m, use = "pairwise", backend = "gpu"))
}
for (m in c("euclidean", "maximum", "manhattan", "canberra", "binary", "minkowski",
            "correlation", "spearman", "kendall", "cosine"))
  for (pr in c("double", "single")) {
    invisible(gpu_dist(x, m, p = 3, backend = "gpu", precision = pr))
    invisible(suppressWarnings(gpu_dist(xn, m, p = 3, backend = "gpu", precision = pr)))
  }
cat("racecheck script done\n")
R
  /usr/local/cuda/bin/compute-sanitizer --tool racecheck --racecheck-report all --error-exitcode 9 \
    --log-file "$OUT/racecheck.log" Rscript /tmp/race.R > "$OUT/racecheck-run.log" 2>&1
  echo "compute-sanitizer racecheck exit: $?"; tail -3 "$OUT/racecheck.log"; tail -1 "$OUT/racecheck-run.log" ;;
dist-file)
  # gpu_dist(output =) of the correlation distances on the GPU
  Rscript tools/dist_file_smoke.R 2>&1 | tee "$OUT/dist-file.log" | tail -100 ;;
sanitize-dist-file)
  # the same, small, under memcheck (leak check) and racecheck
  for tool in memcheck racecheck; do
    extra=""; [ $tool = memcheck ] && extra="--leak-check full"
    SMALL=1 /usr/local/cuda/bin/compute-sanitizer --tool $tool $extra --error-exitcode 9 \
      --log-file "$OUT/$tool-dist-file.log" Rscript tools/dist_file_smoke.R > "$OUT/$tool-dist-file-run.log" 2>&1
    echo "compute-sanitizer $tool (dist-file) exit: $?"; tail -2 "$OUT/$tool-dist-file.log"; tail -1 "$OUT/$tool-dist-file-run.log"
  done ;;
racecheck-hclust)
  # the chain's kernels alone, on a small problem (racecheck instruments
  # every launch, and a run is thousands of them): from a 'dist' in double
  # and single, and from x
  cat > /tmp/race-hc.R <<'R'
library(gpucor); set.seed(1)
x <- matrix(rnorm(60 * 8), 60); d <- dist(x)
a <- gpu_hclust(d, method = "average", backend = "gpu")
stopifnot(identical(a$merge, gpu_hclust(d, method = "average", backend = "cpu")$merge))
invisible(gpu_hclust(d, method = "ward.D2", backend = "gpu", precision = "single"))
a <- gpu_hclust(x = x, method = "complete", distance = "correlation", backend = "gpu")
stopifnot(identical(a$merge, gpu_hclust(x = x, method = "complete", distance = "correlation", backend = "cpu")$merge))
cat("racecheck script done\n")
R
  /usr/local/cuda/bin/compute-sanitizer --tool racecheck --racecheck-report all --error-exitcode 9 \
    --log-file "$OUT/racecheck-hc.log" Rscript /tmp/race-hc.R > "$OUT/racecheck-hc-run.log" 2>&1
  echo "compute-sanitizer racecheck (hclust kernels) exit: $?"; tail -3 "$OUT/racecheck-hc.log"; tail -1 "$OUT/racecheck-hc-run.log" ;;
racecheck-wgcna)
  # the WGCNA family's kernels (powsum, dense epilogue, TOM degrees and
  # panels) on a small problem
  cat > /tmp/race-wg.R <<'R'
library(gpucor); set.seed(1)
x <- matrix(rnorm(40 * 70), 40)
for (pr in c("double", "single")) {
  a <- gpu_tom(x, backend = "gpu", precision = pr)
  b <- gpu_tom(x, backend = "gpu", precision = pr, dist = TRUE, TOMType = "unsigned 2")
  s <- gpu_soft_threshold(x, backend = "gpu", precision = pr)
  d <- gpu_adjacency(x, type = "signed", backend = "gpu", precision = pr)
}
stopifnot(max(abs(gpu_tom(x, backend = "gpu") - gpu_tom(x, backend = "cpu"))) < 1e-12)
cat("racecheck script done\n")
R
  /usr/local/cuda/bin/compute-sanitizer --tool racecheck --racecheck-report all --error-exitcode 9 \
    --log-file "$OUT/racecheck-wg.log" Rscript /tmp/race-wg.R > "$OUT/racecheck-wg-run.log" 2>&1
  echo "compute-sanitizer racecheck (WGCNA kernels) exit: $?"; tail -3 "$OUT/racecheck-wg.log"; tail -1 "$OUT/racecheck-wg-run.log" ;;
modules)
  # issue 38: the tree cut, blockwiseModules and the 24-setting sweep on ALL
  # (.all-exprs.rds), then 300 x 50000 genes in one block
  { Rscript bench/cutree.R; Rscript bench/blockwise.R Inf 16; Rscript bench/modules_sweep.R; } \
    2>&1 | tee "$OUT/modules.log" | grep -v '^$' | tail -60 ;;
sweep)
  # issue 38's 24-setting sweep on ALL alone
  Rscript bench/modules_sweep.R 2>&1 | tee "$OUT/sweep.log" | grep -v '^$' | tail -30 ;;
neighbors)
  # issue 39: GpucorParam against KmknnParam (needs BiocNeighbors and bluster
  # in the bundle: RBUNDLE=.rbundle-n)
  GPUCOR_BENCH_N=${GPUCOR_BENCH_N:-50000} Rscript bench/neighbors.R 2>&1 | tee "$OUT/neighbors.log" | tail -20 ;;
neighbors-scale)
  # issue 39's large cases on the GPU (bench/neighbors_scale.R), the
  # device's peak memory sampled every 100 ms beside it
  nvidia-smi --query-gpu=index,memory.used --format=csv,noheader,nounits -lms 100 \
    > "$OUT/neighbors-scale-mem.csv" 2>/dev/null & smi=$!
  Rscript bench/neighbors_scale.R ${GPUCOR_BENCH_NS:-} 2>&1 | tee "$OUT/neighbors-scale.log" | tail -40
  kill $smi 2>/dev/null
  echo "peak device memory (MiB): $(sort -t, -k2 -n "$OUT/neighbors-scale-mem.csv" | tail -1)" ;;
degree)
  # issue 36: voxel degree centrality (bench/degree.R), the device's peak
  # memory sampled beside it
  nvidia-smi --query-gpu=index,memory.used --format=csv,noheader,nounits -lms 100 \
    > "$OUT/degree-mem.csv" 2>/dev/null & smi=$!
  Rscript bench/degree.R ${GPUCOR_BENCH_DEG:-} 2>&1 | tee "$OUT/degree.log" | tail -20
  kill $smi 2>/dev/null
  echo "peak device memory (MiB): $(sort -t, -k2 -n "$OUT/degree-mem.csv" | tail -1)" ;;
hdf5-read)
  # issue 37: on-disk inputs at the disk's pace (bench/hdf5_read.R), the GPU
  # engine then the CPU engine of this machine; needs RBUNDLE=.rbundle-h
  mkdir -p /tmp/h5bench
  for b in gpu cpu; do
    GPUCOR_BENCH_DIR=/tmp/h5bench BACKEND=$b BLOCKED=0 Rscript bench/hdf5_read.R 2>&1 \
      | tee -a "$OUT/hdf5-read.log" | tail -12
  done ;;
bct)
  # issue 36: gpu_brain_metrics() on the machine's cores (bench/bct.R),
  # GPUCOR_BENCH_BCT="subjects regions ref_subjects" (default 1000 400 1)
  GPUCOR_BENCH_THREADS=$(nproc) Rscript bench/bct.R ${GPUCOR_BENCH_BCT:-1000 400 1} 2>&1 \
    | tee "$OUT/bct.log" | tail -16 ;;
knn-ncu)
  # the k-NN kernels' durations and throughput on 200000 x 50, k = 30
  # (the first panel's launches)
  ncu --clock-control none -k regex:'dist_tile|sel_topk' -c 6 --section SpeedOfLight \
    Rscript -e 'library(gpucor); set.seed(1); x <- matrix(rnorm(2e5 * 50), 2e5); invisible(gpu_knn(x, 30))' \
    2>&1 | tee "$OUT/knn-ncu.log" | grep -E 'dist_tile|sel_topk|Duration|Throughput|Busy|Block Size|Grid Size' | head -60 ;;
consensus)
  # gpu_blockwise_consensus_modules against blockwiseConsensusModules, ALL in two sets
  Rscript bench/consensus.R 2>&1 | tee "$OUT/consensus.log" | grep -v '^$' | tail -20 ;;
sweep-profile)
  Rscript bench/sweep_profile.R 2>&1 | tee "$OUT/sweep-profile.log" | tail -60 ;;
modules-big)
  Rscript bench/modules_big.R 2>&1 | tee "$OUT/modules-big.log" | tail -5 ;;
wgcna-all)
  # the vignette's ALL pipeline against blockwiseModules (bench/wgcna_all.R)
  Rscript bench/wgcna_all.R 2>&1 | tee "$OUT/wgcna-all.log" | tail -40 ;;
interrupt-wgcna)
  # Ctrl-C (SIGINT) during gpu_tom() on the GPU and bicor's pairwise pass
  Rscript bench/interrupt_wgcna.R gpu 2>&1 | tee "$OUT/interrupt-wgcna.log" | grep -v '^$' ;;
interrupt-copy)
  # Ctrl-C (SIGINT) while gpu_hclust(d), gpu_shortest_paths() and
  # gpu_tom(adjacency =) check and upload large inputs (issue 37)
  Rscript bench/interrupt_copy.R gpu 2>&1 | tee "$OUT/interrupt-copy.log" | grep -v '^$' ;;
progress-tmux)
  # the progress bar as a terminal shows it (needs tmux on the machine)
  R_LIBS=/tmp/lib sh bench/progress_tmux.sh gpu 20000 40000 2>&1 | tee "$OUT/progress-tmux.log" ;;
wgcna-smoke)
  # the GPU against the CPU engine for every WGCNA function, before the tests
  Rscript tools/wgcna_smoke.R 2>&1 | tee "$OUT/wgcna-smoke.log" | tail -40 ;;
identical)
  # bitwise identity with the build of .bench-base, both engines
  [ -f /tmp/libbase/gpucor/DESCRIPTION ] || { echo "no .bench-base build"; tail -20 "$OUT/install-base.log"; continue; }
  Rscript bench/identical.R /tmp/libbase /tmp/lib cpu,gpu 2>&1 | tee "$OUT/identical.log" | tail -20 ;;
compare)
  [ -f /tmp/libbase/gpucor/DESCRIPTION ] || { echo "no .bench-base build"; tail -20 "$OUT/install-base.log"; continue; }
  Rscript bench/compare.R /tmp/libbase /tmp/lib "${COMPARE:-^gpu}" "${ROUNDS:-2}" 2>&1 | tee "$OUT/compare.log" | tail -30 ;;
interrupt)
  # Ctrl-C during a GPU run: SIGINT reaches R's handler exactly as Ctrl-C
  # does; the run must stop at the next slab, free its device memory, raise
  # an interrupt condition, and leave the session usable for the next call.
  cat > /tmp/int.R <<'R'
library(gpucor)
x <- matrix(rnorm(60000 * 100), 60000)   # minkowski p = 3: pow() keeps the GPU busy for seconds
invisible(gpu_dist(x[1:2000, ], backend = "gpu"))     # context exists
free0 <- gpu_info()$memory_free
writeLines(as.character(Sys.getpid()), "/tmp/int.pid")
t0 <- Sys.time()
r <- tryCatch(gpu_dist(x, "minkowski", p = 3, backend = "gpu"), interrupt = function(e) "interrupted")
cat(sprintf("result: %s after %.2f s\n", if (is.character(r)) r else "completed",
            as.numeric(Sys.time() - t0, units = "secs")))
free1 <- gpu_info()$memory_free
cat(sprintf("device memory free before %.0f MiB, after %.0f MiB\n", free0 / 2^20, free1 / 2^20))
y <- matrix(rnorm(3000 * 20), 3000)
stopifnot(isTRUE(all.equal(c(gpu_dist(y, backend = "gpu")), c(dist(y)))))
cat("next GPU call after the interrupt: OK\n")
R
  rm -f /tmp/int.pid
  Rscript /tmp/int.R > "$OUT/interrupt.log" 2>&1 &
  rpid=$!
  while [ ! -s /tmp/int.pid ]; do sleep 0.2; done
  sleep 1.5; kill -INT "$(cat /tmp/int.pid)"
  wait $rpid; echo "Rscript exit: $?"; cat "$OUT/interrupt.log" ;;
devices-profile)
  Rscript bench/devices_profile.R ${DEVICES_N:-20000} ${DEVICES_P:-2000} 2>&1 | tee "$OUT/devices-profile.log" | tail -8 ;;
devices)
  # several workers on one call (DEVICES: "all", or ordinals such as 0,0)
  Rscript bench/devices.R ${DEVICES_N:-50000} ${DEVICES_P:-2000} ${DEVICES:-all} 2>&1 | tee "$OUT/devices.log" | tail -8 ;;
profile)
  Rscript bench/profile_dense.R 20000 50000 2>&1 | tee "$OUT/profile.log" | tail -8 ;;
dist-blocks)
  # gpu_dist()'s block reading on the GPU (tools/dist_blocks_smoke.R)
  Rscript tools/dist_blocks_smoke.R 2>&1 | tee "$OUT/dist-blocks.log" | tail -12 ;;
hdf5|hdf5-peer)
  # gpu_cor(output = gpu_hdf5()) against dd and the peer (bench/hdf5.R);
  # needs HDF5: carry .rbundle-h, RBUNDLE=.rbundle-h
  export GPUCOR_BENCH_DIR=${GPUCOR_BENCH_DIR:-/tmp/h5bench}; mkdir -p "$GPUCOR_BENCH_DIR"
  df -h "$GPUCOR_BENCH_DIR" | tail -1
  parts="write readback dd"; [ "$w" = hdf5-peer ] && parts="peer"
  for part in $parts; do
    Rscript bench/hdf5.R "$part" 2>&1 | tee -a "$OUT/hdf5.log" | grep -v "^gpu_cor:" | tail -12
  done ;;
hdf5-bp)
  # output with BPPARAM: per-worker part files against one writer, same
  # run, P = 30000 (7.2 GB; bench/hdf5.R write, write-bp, dd)
  export GPUCOR_BENCH_DIR=${GPUCOR_BENCH_DIR:-/tmp/h5bench}; mkdir -p "$GPUCOR_BENCH_DIR"
  for part in write write-bp dd; do
    P=${P:-30000} Rscript bench/hdf5.R "$part" 2>&1 | tee -a "$OUT/hdf5-bp.log" | grep -v "^gpu_cor:" | tail -12
  done
  rm -rf "$GPUCOR_BENCH_DIR" ;;
hdf5-prof)
  # where gpu_cor(output =)'s time goes (GPUCOR_FILE_PROFILE=1: the file
  # sink's writer and waits), default chunks and 64 MB ones, against dd
  export GPUCOR_BENCH_DIR=${GPUCOR_BENCH_DIR:-/tmp/h5bench}; mkdir -p "$GPUCOR_BENCH_DIR"
  for cc in 0 ${CHUNKS:-168}; do
    CHUNK_COLS=$cc GPUCOR_FILE_PROFILE=1 Rscript bench/hdf5.R write 2>&1 | tee -a "$OUT/hdf5-prof.log" | tail -12
    rm -f "$GPUCOR_BENCH_DIR"/cor.h5
  done
  Rscript bench/hdf5.R dd 2>&1 | tee -a "$OUT/hdf5-prof.log" | tail -3
  rm -rf "$GPUCOR_BENCH_DIR" ;;
hdf5-network)
  # the WGCNA functions' HDF5 output on the GPU (tools/hdf5_network_smoke.R)
  Rscript tools/hdf5_network_smoke.R 2>&1 | tee "$OUT/hdf5-network.log" | tail -8 ;;
sanitize-bp)
  # memcheck (leak check) and racecheck over tools/bp_smoke.R
  /usr/local/cuda/bin/compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 \
    --log-file "$OUT/sanitizer-bp.log" Rscript tools/bp_smoke.R > "$OUT/sanitize-bp-run.log" 2>&1
  echo "compute-sanitizer memcheck (bp) exit: $?"; tail -2 "$OUT/sanitizer-bp.log"; tail -1 "$OUT/sanitize-bp-run.log"
  /usr/local/cuda/bin/compute-sanitizer --tool racecheck --error-exitcode 9 \
    --log-file "$OUT/racecheck-bp.log" Rscript tools/bp_smoke.R > "$OUT/racecheck-bp-run.log" 2>&1
  echo "compute-sanitizer racecheck (bp) exit: $?"; tail -2 "$OUT/racecheck-bp.log"; tail -1 "$OUT/racecheck-bp-run.log" ;;
profile-bp)
  Rscript bench/bp_profile.R 2>&1 | tee "$OUT/bp-profile.log" | tail -8 ;;
bp|bp-*)
  # issue 14's BiocParallel table (bench/bp.R; bp-knn, bp-edges, bp-cpu: one
  # part); needs BiocParallel: .rbundle-h as for hdf5, or tools/rbundle's plain one
  part=${w#bp}; part=${part#-}
  Rscript bench/bp.R $part 2>&1 | tee "$OUT/bp.log" | tail -20 ;;
property)
  # the randomized property test on both engines (bench/property.R):
  # PROP_SCALE cases (1 = CI's), one block per seed in PROP_SEEDS
  Rscript bench/property.R ${PROP_SCALE:-1} ${PROP_SEEDS:-1} 2>&1 | tee "$OUT/property.log" | tail -60 ;;
classes32)
  # issue 32's four GPU failure classes against stats (bench/classes32.R),
  # with .bench-base's build too when there is one
  Rscript bench/classes32.R gpu ${CLASSES_N:-200} 2>&1 | tee "$OUT/classes32.log" | tail -12
  if [ -f /tmp/libbase/gpucor/DESCRIPTION ]; then
    echo "-- the build of .bench-base:"
    R_LIBS=/tmp/libbase Rscript bench/classes32.R gpu ${CLASSES_N:-200} 2>&1 | tee "$OUT/classes32-base.log" | tail -12
  fi ;;
reproducers-base)
  # test-reproducers.R (this tree's) against .bench-base's build: issue
  # 32's reproducers must fail there
  R_LIBS=/tmp/libbase Rscript -e 'r <- as.data.frame(testthat::test_file("tests/testthat/test-reproducers.R",
    package = "gpucor", load_package = "installed", reporter = "silent")); r$bad <- r$failed + r$error
    print(r[r$bad > 0 | r$skipped, c("test", "passed", "bad", "skipped")], right = FALSE)
    cat(sprintf("reproducers on the base build: %d passed, %d failed\n", sum(r$passed), sum(r$bad)))' 2>&1 | tee "$OUT/reproducers-base.log" | tail -20 ;;
cov)
  # gpu_cov against gpu_cor, same run (bench/cov.R)
  Rscript bench/cov.R gpu ${COV_N:-300} ${COV_P:-20000} 3 2>&1 | tee "$OUT/cov.log" | tail -12 ;;
sanitize-32)
  # memcheck (leak check) and racecheck over the kernels issue 32 changed:
  # pairwise Pearson (both precisions, matrix and distance) and the
  # single-precision distances' fix-up and scaled double path
  cat > /tmp/san32.R <<'R'
library(gpucor); set.seed(3)
x <- matrix(rnorm(70 * 45), 70); x[sample(length(x), 300)] <- NA; x[, 3] <- -1e8
for (pr in c("double", "single")) {
  invisible(suppressWarnings(gpu_cor(x, use = "pairwise", backend = "gpu", precision = pr)))
  invisible(suppressWarnings(gpu_cor(x, x[, 1:7], use = "pairwise", backend = "gpu", precision = pr)))
  invisible(suppressWarnings(gpu_dist(x, "correlation", backend = "gpu", precision = pr)))
  invisible(suppressWarnings(gpu_dist(x, "cosine", backend = "gpu", precision = pr)))
}
z <- matrix(sample(-3:3, 60 * 5, TRUE), 60); z[, 2] <- -1e8
for (p in c(3, 64)) invisible(gpu_dist(z, "minkowski", p = p, backend = "gpu", precision = "single"))
invisible(gpu_dist(z, "euclidean", backend = "gpu", precision = "single"))
w <- rbind(z * 2^900, z * 2^-900)       # beyond float's range: the scaled double path
invisible(gpu_dist(w, "minkowski", p = 64, backend = "gpu", precision = "single"))
invisible(gpu_dist(w, "euclidean", backend = "gpu", precision = "single"))
cat("sanitize-32 script done\n")
R
  for tool in memcheck racecheck; do
    extra=""; [ $tool = memcheck ] && extra="--leak-check full"
    /usr/local/cuda/bin/compute-sanitizer --tool $tool $extra --error-exitcode 9 \
      --log-file "$OUT/$tool-32.log" Rscript /tmp/san32.R > "$OUT/$tool-32-run.log" 2>&1
    echo "compute-sanitizer $tool (issue 32 kernels) exit: $?"; tail -2 "$OUT/$tool-32.log"; tail -1 "$OUT/$tool-32-run.log"
  done ;;
smoke)
  Rscript tools/na_smoke.R 2>&1 | tee "$OUT/smoke.log" | tail -70 ;;
bench|bench-*)
  part=${w#bench}; part=${part#-}; part=${part:-small}
  Rscript bench/gpu.R "$part" 2>&1 | tee "$OUT/bench-$part.log" | tail -45 ;;
esac; done
echo "device.sh done in $(( $(date +%s) - t0 )) s"
