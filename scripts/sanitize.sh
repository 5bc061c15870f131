#!/usr/bin/env bash
# Builds everything with AddressSanitizer and UndefinedBehaviorSanitizer into build-asan/ and
# runs the whole unit suite there (CTest label "unit"), one test per core. Any sanitizer report
# fails the run.
#
# Left out here: the nsel program and the example worker, whose compiles under ASan (CLI11) are
# about a third of this build, and install_consumer, the one unit test that needs them (it checks
# `cmake --install` and find_package(nsel), which the sanitizers have nothing to add to; the
# normal build's suite runs it). A unit test that runs the nsel program still gets it built: its
# target depends on nsel_cli.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${NSEL_ASAN_BUILD_DIR:-build-asan}
if [ ! -f "$build_dir/build.ninja" ]; then
  # Warnings stay errors in the normal build; here GCC 12's -Wmaybe-uninitialized misfires inside
  # libstdc++'s <regex> under ASan, so they are only shown.
  # -O1 -g1: line numbers in sanitizer reports at a fraction of -O2 -g's compile time.
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNSEL_SANITIZE=ON \
    -DNSEL_WERROR=OFF -DNSEL_BUILD_BENCH=OFF -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" >/dev/null
fi
# Only what the unit label runs (the inputs of target nsel_unit_tests), not the end-to-end suites,
# and not the two programs; the whole target where its inputs cannot be listed.
mapfile -t unit_targets < <(ninja -C "$build_dir" -t query nsel_unit_tests 2>/dev/null |
  awk '/^  input:/ {listing = 1; next} /^  outputs:/ {listing = 0} listing {print $NF}' |
  grep -vxE 'bin/nsel|bin/nsel-example-worker' || true)
cmake --build "$build_dir" --parallel "$(nproc)" --target "${unit_targets[@]:-nsel_unit_tests}"
cd "$build_dir"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --output-on-failure -j"$(nproc)" -L unit -E '^install_consumer$'
