#!/usr/bin/env bash
# `nsel report` against `nsys stats -r nvtxppsum`, measured in the same run on the same SQLite
# exports: one export with about 2 million NVTX ranges, and 16 such reports at once against 16
# calls of nsys stats (one after another, as a shell loop does, and as many at once as there
# are CPUs). Prints wall and CPU times (medians of the repetitions), peak resident memory and
# the ratios; also nsel's peak memory on 0.5 M against 2 M ranges, to show it does not grow
# with the number of events.
#
#   bash bench/report_vs_nsys_stats.sh            # build/ must hold nsel and nsel-nvtx-workload
#   NSEL_BENCH_REPEAT=5 NSEL_BENCH_DIR=/var/tmp/b bash bench/report_vs_nsys_stats.sh
set -euo pipefail
cd "$(dirname "$0")/.."
build=${NSEL_BUILD_DIR:-build}
nsel=$(realpath "$build/bin/nsel")
workload=$(realpath "$build/bin/nsel-nvtx-workload")
work=${NSEL_BENCH_DIR:-${TMPDIR:-/tmp}/nsel-bench-report}
repeat=${NSEL_BENCH_REPEAT:-3}
repeat_many=${NSEL_BENCH_REPEAT_MANY:-1}  # for the 16-report cases, which take long
cpus=$(nproc)
mkdir -p "$work"

# A report of the training-shaped program with `per_step` small ranges in each of 10 steps,
# exported once (kept between runs of this script).
make_export() {
  local name=$1 per_step=$2
  if [ ! -s "$work/$name.sqlite" ]; then
    echo "making $name: nsys profile ($((10 * per_step)) small ranges), then nsys export" >&2
    nsys profile -t nvtx -s none --cpuctxsw=none --force-overwrite true -o "$work/$name" \
      "$workload" --steps 10 --ranges "$per_step" --work-us 0 >"$work/$name.log" 2>&1 &
    local nsys_pid=$!
    wait "$nsys_pid"
    # The agent of this session (named after nsys's PID) can outlive it and spin a core.
    local agent
    for agent in $(pgrep -f -- "--session-name=profile-nsel-nvtx-workload-$nsys_pid( |$)"); do
      kill "$agent" 2>/dev/null || true
    done
    nsys export --type sqlite --force-overwrite true -o "$work/$name.sqlite" \
      "$work/$name.nsys-rep" >>"$work/$name.log" 2>&1
  fi
}

# Runs a command N times; prints "<median wall s> <median CPU s> <peak RSS KiB>": CPU is user +
# system time of the command and every process it waited for, the peak RSS their largest
# (getrusage). On a shared machine the CPU time is the steadier of the two.
measure() { python3 bench/measure.py "$1" : "${@:2}"; }

ranges() { sqlite3 "$1" "SELECT count(*) FROM NVTX_EVENTS WHERE eventType IN (59, 70)"; }

make_export ranges_0.5M 50000
make_export ranges_2M 200000
small=$work/ranges_0.5M.sqlite
big=$work/ranges_2M.sqlite

# 16 reports: links to the 2 M export under the contract's report names.
sixteen=$work/sixteen
rm -rf "$sixteen"
mkdir -p "$sixteen"
for i in $(seq 1 16); do ln "$big" "$sixteen/dtensor_policy_worker_1:11_$((1000 + i)).sqlite"; done

echo "nsel report against nsys stats -r nvtxppsum; median of $repeat runs ($repeat_many for" \
  "16 reports); $cpus CPUs"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
results=()
run() {
  local values
  values=$(measure "$@")
  results+=($values)
}
run "$repeat" nsys stats -r nvtxppsum -f csv "$big"
run "$repeat" "$nsel" report -q --json "$big"
run "$repeat" "$nsel" report -q --json -j 1 "$big"
run "$repeat" "$nsel" report -q --json "$small"
run "$repeat_many" bash -c 'for f in "$@"; do nsys stats -r nvtxppsum -f csv "$f"; done' loop \
  "$sixteen"/*.sqlite
run "$repeat_many" bash -c \
  'printf "%s\0" "$@" | xargs -0 -n1 -P "$0" nsys stats -r nvtxppsum -f csv' "$cpus" \
  "$sixteen"/*.sqlite
run "$repeat_many" "$nsel" report -q --json "$sixteen"
echo "load average after:  $(cut -d' ' -f1-3 /proc/loadavg)"

python3 -c '
import sys
big, small, cpus = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
values = sys.argv[4:]
rows = [(float(values[i]), float(values[i + 1]), int(values[i + 2]) / 1024)
        for i in range(0, len(values), 3)]
nsys, nsel, nsel1, nsel_small, loop, xargs, many = rows

def line(label, row):
    print(f"  {label:30s} {row[0]:7.3f} s wall {row[1]:7.3f} s CPU   peak RSS {row[2]:6.1f} MiB")

print(f"\none export, {big:,} NVTX push/pop ranges")
line("nsys stats -r nvtxppsum", nsys)
line("nsel report", nsel)
line("nsel report -j 1", nsel1)
print(f"  ratio: nsel report is {nsys[0] / nsel[0]:.1f}x faster in wall time "
      f"({nsys[0] / nsel1[0]:.1f}x with -j 1), uses {nsys[1] / nsel1[1]:.1f}x less CPU time "
      f"and {nsys[2] / nsel[2]:.1f}x less memory")
print("\n16 such reports")
line("16 x nsys stats, one by one", loop)
line(f"16 x nsys stats, {cpus} at once", xargs)
line("nsel report on the folder", many)
print(f"  ratio: {loop[0] / many[0]:.1f}x faster than the loop, {xargs[0] / many[0]:.1f}x faster "
      f"than {cpus} nsys stats at once, {loop[1] / many[1]:.1f}x less CPU time")
print("\nnsel memory against the number of events")
print(f"  {small:>9,} ranges: peak RSS {nsel_small[2]:6.1f} MiB   {nsel_small[0]:.3f} s")
print(f"  {big:>9,} ranges: peak RSS {nsel[2]:6.1f} MiB   {nsel[0]:.3f} s")
print(f"  ratio: {big / small:.1f}x the events, {nsel[2] / nsel_small[2]:.2f}x the memory")
' "$(ranges "$big")" "$(ranges "$small")" "$cpus" "${results[@]}"
