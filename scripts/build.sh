#!/usr/bin/env bash
# Configures and builds nsel into ./build (or $NSEL_BUILD_DIR). Incremental and idempotent.
# With TARGETS, builds only those (scripts/demo.sh: the nsel program and the example worker).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${NSEL_BUILD_DIR:-build}
if [ ! -f "$build_dir/build.ninja" ]; then
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build "$build_dir" --parallel "$(nproc)" ${1:+--target "$@"}
