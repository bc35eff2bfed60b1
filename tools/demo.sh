#!/bin/sh
# tools/demo.sh -- everything from a fresh Debian/Ubuntu machine (as root):
# install R and the ALL data from Debian's packages, install gpucor from
# this checkout, and run the co-expression demo on the real ALL data.
set -eu
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends r-base-dev r-bioc-all
lib=${GPUCOR_LIB:-$(mktemp -d)}
R CMD INSTALL --no-test-load --library="$lib" .
R_LIBS="$lib${R_LIBS:+:$R_LIBS}" Rscript inst/scripts/coexpression.R "$@"
