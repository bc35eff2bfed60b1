#!/bin/bash
# bench/device.sh -- everything the GPU machine runs, in one call:
#   install R from the carried bundle, build gpucor with CUDA, run the test
#   suite (GPU tests included), compute-sanitizer over the GPU tests, and
#   the GPU benchmark.  Usage there (from the repository root):
#     bash bench/device.sh [tests] [sanitize] [bench] [bench-<part>] [big]
#   (bench-<part> runs "Rscript bench/gpu.R <part>", e.g. bench-na, bench-all)
# Logs go to $OUT (the device tool brings them back).
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
what=${*:-tests sanitize bench}
bash .rbundle/r-unbundle .rbundle/r-bundle.tar.xz >/dev/null || exit 1
mkdir -p /tmp/lib
# one target (the H100's) keeps the build short; CI builds all of them
CUDA_ARCH=${CUDA_ARCH:-90} MAKEFLAGS=-j16 R CMD INSTALL --library=/tmp/lib . >"$OUT/install.log" 2>&1 || { tail -30 "$OUT/install.log"; exit 1; }
grep "^gpucor:" "$OUT/install.log"
export R_LIBS=/tmp/lib
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
for w in $what; do case $w in
tests)
  Rscript -e 'options(warn = 1); print(gpucor::gpu_info()[c("name","available")]);
    r <- testthat::test_dir("tests/testthat", package = "gpucor", load_package = "installed",
      reporter = testthat::ProgressReporter$new(show_praise = FALSE), stop_on_failure = FALSE)
    d <- as.data.frame(r); cat(sprintf("tests: %d passed, %d failed, %d skipped\n",
      sum(d$passed), sum(d$failed), sum(d$skipped)))' 2>&1 | tee "$OUT/tests.log" | tail -40 ;;
big)
  GPUCOR_BIG_TESTS=true Rscript -e 'testthat::test_file("tests/testthat/test-gpu.R", package = "gpucor", load_package = "installed")' 2>&1 | tee "$OUT/big.log" | tail -15 ;;
sanitize)
  cat > /tmp/san.R <<'R'
library(testthat); library(gpucor)
source("tests/testthat/helper-gpucor.R")
for (f in c("tests/testthat/test-gpu.R", "tests/testthat/test-gpu-na.R"))
  test_file(f, package = "gpucor", load_package = "installed")
invisible(.Call(gpucor:::C_gpucor_gpu_release))   # the cached context, so leaks show
R
  /usr/local/cuda/bin/compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 \
    --log-file "$OUT/sanitizer.log" Rscript /tmp/san.R > "$OUT/sanitize-run.log" 2>&1
  echo "compute-sanitizer exit: $?"; tail -3 "$OUT/sanitizer.log"; grep -E "FAIL|PASS" "$OUT/sanitize-run.log" | tail -2 ;;
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
smoke)
  Rscript bench/na_smoke.R 2>&1 | tee "$OUT/smoke.log" | tail -70 ;;
bench|bench-*)
  part=${w#bench}; part=${part#-}; part=${part:-small}
  Rscript bench/gpu.R "$part" 2>&1 | tee "$OUT/bench-$part.log" | tail -45 ;;
esac; done
