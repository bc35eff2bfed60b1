#!/bin/sh
# What a user sees of the progress bar in a terminal: an interactive R
# session in tmux (so interactive() is TRUE and the bar is on by default)
# runs a long gpu_tom() and a long gpu_hclust(d); the pane is captured every
# few seconds and its last lines printed with the time.
#   sh bench/progress_tmux.sh [cpu|gpu] [genes] [objects]
# (R_LIBS is passed on: R_LIBS=/tmp/lib sh bench/progress_tmux.sh)
set -e
be=${1:-cpu}
genes=${2:-6000}
objects=${3:-20000}
command -v tmux >/dev/null || { echo "needs tmux (apt-get install -y tmux)"; exit 1; }
s=gpucor_progress_$$
tmux new-session -d -s "$s" -x 100 -y 12 "env R_LIBS='${R_LIBS:-}' R --no-save --quiet"
trap 'tmux kill-session -t "$s" 2>/dev/null || true' EXIT
sleep 2
tmux send-keys -t "$s" "suppressPackageStartupMessages(library(gpucor)); set.seed(1); x <- matrix(rnorm(100 * $genes), 100); d <- gpu_dist(matrix(rnorm($objects * 2), $objects), backend = 'cpu'); cat(paste0('ST', 'ART\\n')); t0 <- proc.time()[[3]]; tom <- gpu_tom(x, backend = '$be'); cat(sprintf('gpu_tom took %.1f s\\n', proc.time()[[3]] - t0)); t0 <- proc.time()[[3]]; hc <- gpu_hclust(d, 'average', backend = '$be'); cat(sprintf('gpu_hclust took %.1f s\\n', proc.time()[[3]] - t0)); cat(paste0('DO', 'NE\\n'))" Enter
t=0
while :; do
  sleep 3
  t=$((t + 3))
  pane=$(tmux capture-pane -p -t "$s" | grep -v '^ *$' | grep -v 'suppressPackageStartupMessages' || true)
  case "$pane" in *START*) ;; *) continue ;; esac
  echo "--- ${t} s"
  printf '%s\n' "$pane" | sed -n '/START/,$p' | grep -v '^START$' | tail -3
  case "$pane" in *DONE*) break ;; esac
  [ "$t" -gt 900 ] && { echo "gave up after 900 s"; break; }
done
