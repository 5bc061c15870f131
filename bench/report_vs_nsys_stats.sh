#!/usr/bin/env bash
# `nsel report` against `nsys stats -r nvtxppsum`, measured in the same run on the same SQLite
# exports: one export with about 2 million NVTX ranges, and 16 such reports at once against 16
# calls of nsys stats (one after another, as a shell loop does, and as many at once as there
# are CPUs). Prints wall times (median of the repetitions), peak resident memory and the
# ratios; also nsel's peak memory on 0.5 M against 2 M ranges, to show it does not grow with
# the number of events.
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
cpus=$(nproc)
mkdir -p "$work"

# A report of the training-shaped program with `per_step` small ranges in each of 10 steps,
# exported once (kept between runs of this script).
make_export() {
  local name=$1 per_step=$2
  if [ ! -s "$work/$name.sqlite" ]; then
    echo "making $name: nsys profile ($((10 * per_step)) small ranges), then nsys export" >&2
    nsys profile -t nvtx -s none --cpuctxsw=none --force-overwrite true -o "$work/$name" \
      "$workload" --steps 10 --ranges "$per_step" --work-us 0 >"$work/$name.log" 2>&1
    nsys export --type sqlite --force-overwrite true -o "$work/$name.sqlite" \
      "$work/$name.nsys-rep" >>"$work/$name.log" 2>&1
  fi
}

# Runs a command `repeat` times; prints "<median wall s> <peak RSS KiB>" (the peak over the
# command and every process it waited for, from getrusage).
measure() {
  python3 - "$repeat" "$@" <<'EOF'
import resource, subprocess, sys, time
repeat, command = int(sys.argv[1]), sys.argv[2:]
walls = []
for _ in range(repeat):
    began = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    walls.append(time.perf_counter() - began)
walls.sort()
print(f"{walls[len(walls) // 2]:.3f} {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}")
EOF
}

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

echo "nsel report against nsys stats -r nvtxppsum; median of $repeat runs; $cpus CPUs"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
read -r nsys_wall nsys_rss < <(measure nsys stats -r nvtxppsum -f csv "$big")
read -r nsel_wall nsel_rss < <(measure "$nsel" report -q --json "$big")
read -r nsel1_wall nsel1_rss < <(measure "$nsel" report -q --json -j 1 "$big")
read -r small_wall small_rss < <(measure "$nsel" report -q --json "$small")
read -r loop_wall loop_rss < <(measure bash -c \
  'for f in "$@"; do nsys stats -r nvtxppsum -f csv "$f"; done' loop "$sixteen"/*.sqlite)
read -r xargs_wall xargs_rss < <(measure bash -c \
  'printf "%s\0" "$@" | xargs -0 -n1 -P "$0" nsys stats -r nvtxppsum -f csv' "$cpus" \
  "$sixteen"/*.sqlite)
read -r many_wall many_rss < <(measure "$nsel" report -q --json "$sixteen")
echo "load average after:  $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$(ranges "$big")" "$(ranges "$small")" "$nsys_wall" "$nsys_rss" "$nsel_wall" \
  "$nsel_rss" "$nsel1_wall" "$nsel1_rss" "$small_wall" "$small_rss" "$loop_wall" "$loop_rss" \
  "$xargs_wall" "$xargs_rss" "$many_wall" "$many_rss" "$cpus" <<'EOF'
import sys
a = sys.argv[1:]
big, small = int(a[0]), int(a[1])
t = [float(x) for x in a[2::2][:7]]
m = [int(x) / 1024 for x in a[3::2][:7]]
nsys, nsel, nsel1, nsel_small, loop, xargs, many = t
rss_nsys, rss_nsel, rss_nsel1, rss_small, rss_loop, rss_xargs, rss_many = m
cpus = a[16]
print(f"\none export, {big:,} NVTX push/pop ranges")
print(f"  nsys stats -r nvtxppsum      {nsys:7.3f} s   peak RSS {rss_nsys:7.1f} MiB")
print(f"  nsel report                  {nsel:7.3f} s   peak RSS {rss_nsel:7.1f} MiB")
print(f"  nsel report -j 1             {nsel1:7.3f} s   peak RSS {rss_nsel1:7.1f} MiB")
print(f"  ratio: nsel report is {nsys / nsel:.1f}x faster ({nsys / nsel1:.1f}x on one CPU),"
      f" {rss_nsys / rss_nsel:.1f}x less memory")
print(f"\n16 such reports")
print(f"  16 x nsys stats, one by one  {loop:7.3f} s   peak RSS {rss_loop:7.1f} MiB")
print(f"  16 x nsys stats, {cpus} at once   {xargs:7.3f} s")
print(f"  nsel report on the folder    {many:7.3f} s   peak RSS {rss_many:7.1f} MiB")
print(f"  ratio: {loop / many:.1f}x faster than the loop, {xargs / many:.1f}x faster than "
      f"{cpus} nsys stats at once")
print(f"\nnsel's memory against the number of events")
print(f"  {small:>9,} ranges: {rss_small:6.1f} MiB   {nsel_small:.3f} s")
print(f"  {big:>9,} ranges: {rss_nsel:6.1f} MiB   {nsel:.3f} s")
print(f"  ratio: {big / small:.1f}x the events, {rss_nsel / rss_small:.2f}x the memory")
EOF
