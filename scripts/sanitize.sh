#!/usr/bin/env bash
# Builds everything with AddressSanitizer and UndefinedBehaviorSanitizer into build-asan/ and
# runs the whole unit suite there (CTest label "unit"). Any sanitizer report fails the run.
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
# Only what the unit label runs (target nsel_unit_tests), not the end-to-end suites.
cmake --build "$build_dir" --parallel "$(nproc)" --target nsel_unit_tests
cd "$build_dir"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --output-on-failure -L unit
