#!/bin/bash
# tools/prebuild.sh -- CUDA builds of this tree (and of a base commit) made
# here, for tools/device.sh's PREBUILT: the GPU machine then runs them
# without building.  Needs nvcc and the CI's R packages here.
#   bash tools/prebuild.sh BASE_COMMIT OUT.tar.xz
# makes lib/ (the working tree, tracked and untracked files) and libbase/
# (BASE_COMMIT) for the H100 (CUDA_ARCH=90) and packs both into OUT.tar.xz;
# BASE_LIB=<dir> takes an installed build of the base from there instead.
set -eu
base=$1; out=$(realpath -m "$2")
w=$(mktemp -d)
git ls-files -co --exclude-standard | tar -cf - -T - | (mkdir "$w/src" && tar -xf - -C "$w/src")
mkdir "$w/base" && git archive "$base" | tar -x -C "$w/base"
mkdir -p "$w/lib" "$w/libbase"
builds="src:lib base:libbase"
if [ -n "${BASE_LIB:-}" ]; then cp -r "$BASE_LIB/gpucor" "$w/libbase/"; builds=src:lib; fi
for b in $builds; do
  (cd "$w/${b%%:*}" && CUDA_ARCH=${CUDA_ARCH:-90} MAKEFLAGS=${MAKEFLAGS:--j2} \
     R CMD INSTALL --no-test-load --library="$w/${b##*:}" . > "$w/${b##*:}.log" 2>&1) ||
    { tail -20 "$w/${b##*:}.log"; exit 1; }
done
tar -C "$w" -cJf "$out" lib libbase
rm -rf "$w"
ls -la "$out"
