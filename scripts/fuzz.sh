#!/usr/bin/env bash
# Builds the fuzz targets of fuzz/ with Debian's clang (libFuzzer, ASan, UBSan) into build-fuzz/
# and runs each for FUZZ_SECONDS (default 60), starting from its seeds in fuzz/corpus/<name>/.
# Prints the executions per target; a finding (crash, sanitizer report, broken property, slow
# input) is saved under build-fuzz/findings/<name>/ and makes the script fail. Add a finding to
# fuzz/corpus/<name>/ once fixed: the normal test suite replays it from then on.
#
# A fuzzer uses one core: FUZZ_JOBS targets (default: one per core) run at the same time, each
# still for FUZZ_SECONDS, so the run takes FUZZ_SECONDS per FUZZ_JOBS targets instead of per target.
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
jobs=${FUZZ_JOBS:-$(nproc)}
case $jobs in
  '' | *[!0-9]* | 0*)
    echo "scripts/fuzz.sh: FUZZ_JOBS='$jobs': expected a whole number >= 1" >&2
    exit 2
    ;;
esac

# Each fuzzer runs as a job of this script; its exit status is collected by process id.
declare -A target_of=() status_of=()
start_fuzzer() {
  local target=$1
  local corpus="$build_dir/corpus/$target" findings="$build_dir/findings/$target"
  mkdir -p "$corpus" "$findings"
  "$build_dir/fuzz/fuzz_$target" "$corpus" "fuzz/corpus/$target" -max_total_time="$seconds" \
    -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$findings/" \
    >"$build_dir/fuzz_$target.log" 2>&1 &
  target_of[$!]=$target
}
reap_one() {
  local pid status=0
  wait -n -p pid || status=$?
  status_of[${target_of[$pid]}]=$status
  unset "target_of[$pid]"
}
# Fuzzers still running when the script is stopped are stopped with it.
trap 'for pid in "${!target_of[@]}"; do kill "$pid" 2>/dev/null || true; done' EXIT
for target in "${targets[@]}"; do
  while [ "${#target_of[@]}" -ge "$jobs" ]; do reap_one; done
  start_fuzzer "$target"
done
while [ "${#target_of[@]}" -gt 0 ]; do reap_one; done
trap - EXIT

failed=0
for target in "${targets[@]}"; do
  log="$build_dir/fuzz_$target.log"
  findings="$build_dir/findings/$target"
  status=${status_of[$target]}
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n1)
  found=$(find "$findings" -type f | wc -l)
  printf 'fuzz %-16s %12s execs in %ss  findings %s\n' "$target" "${execs:-?}" "$seconds" "$found"
  if [ "$status" != 0 ] || [ "$found" -gt 0 ]; then
    failed=1
    grep -m5 -E 'ERROR|property broken|runtime error|timeout' "$log" || true
  fi
done
exit "$failed"
