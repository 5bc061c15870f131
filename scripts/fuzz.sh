#!/usr/bin/env bash
# Builds the fuzz targets of fuzz/ with Debian's clang (libFuzzer, ASan, UBSan) into build-fuzz/
# and runs each for FUZZ_SECONDS (default 60), starting from its seeds in fuzz/corpus/<name>/.
# Prints the executions per target; a finding (crash, sanitizer report, broken property, slow
# input) is saved under build-fuzz/findings/<name>/ and makes the script fail. Add a finding to
# fuzz/corpus/<name>/ once fixed: the normal test suite replays it from then on.
#
# usage: scripts/fuzz.sh [TARGET...]   (default: every target of fuzz/CMakeLists.txt)
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${NSEL_FUZZ_BUILD_DIR:-build-fuzz}
seconds=${FUZZ_SECONDS:-60}
cxx=$(command -v clang++-14 || command -v clang++)
cc=$(command -v clang-14 || command -v clang)
if [ ! -f "$build_dir/build.ninja" ]; then
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER="$cc" \
    -DCMAKE_CXX_COMPILER="$cxx" -DNSEL_FUZZ=ON -DNSEL_BUILD_TESTS=OFF -DNSEL_BUILD_BENCH=OFF \
    >/dev/null
fi
if [ $# -gt 0 ]; then
  targets=("$@")
else
  mapfile -t targets < <(sed -n 's/^nsel_fuzz_target(\([a-z_0-9]*\))$/\1/p' fuzz/CMakeLists.txt)
fi
cmake --build "$build_dir" --parallel "$(nproc)" --target "${targets[@]/#/fuzz_}"
failed=0
for target in "${targets[@]}"; do
  corpus="$build_dir/corpus/$target"
  findings="$build_dir/findings/$target"
  mkdir -p "$corpus" "$findings"
  log="$build_dir/fuzz_$target.log"
  status=0
  "$build_dir/fuzz/fuzz_$target" "$corpus" "fuzz/corpus/$target" -max_total_time="$seconds" \
    -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$findings/" \
    >"$log" 2>&1 || status=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n1)
  found=$(find "$findings" -type f | wc -l)
  printf 'fuzz %-16s %12s execs in %ss  findings %s\n' "$target" "${execs:-?}" "$seconds" "$found"
  if [ "$status" -ne 0 ] || [ "$found" -gt 0 ]; then
    failed=1
    grep -m5 -E 'ERROR|property broken|runtime error|timeout' "$log" || true
  fi
done
exit "$failed"
