#!/usr/bin/env bash
# `nsel diff` of two runs of 16 ranks each against what it builds on, measured in the same run:
# two `nsel report` runs (one per run) on the same files. The runs are real GPU captures (the
# NERSC SC22 DDP exports of ../shared/gpu-reports, 59 steps each): the baseline is 16 copies of
# the baseline capture, the candidate 16 copies of the run with 100 MB buckets, under rank names
# in folders of their own in a temporary folder. Both commands read the same SQLite exports, so
# the ratio is the cost of the comparison itself. Prints medians of NSEL_BENCH_REPEAT runs
# (default 5), peak memory, and the ratio.
#
#   bash bench/diff_runs.sh     # build/ must hold nsel; reads ../shared/gpu-reports
set -euo pipefail
cd "$(dirname "$0")/.."
build=${NSEL_BUILD_DIR:-build}
nsel=$(realpath "$build/bin/nsel")
exports=$(realpath -m ../shared/gpu-reports/nersc-sc22-ddp/exports)
work=${NSEL_BENCH_DIR:-${TMPDIR:-/tmp}/nsel-bench-diff}
repeat=${NSEL_BENCH_REPEAT:-5}
ranks=${NSEL_BENCH_RANKS:-16}
for f in "$nsel" "$exports/4gpu_baseline.nsys2022.4.sqlite.xz" \
  "$exports/4gpu_bucketcap100mb.nsys2022.4.sqlite.xz"; do
  [ -e "$f" ] || { echo "bench: $f is missing (scripts/build.sh; ../shared/gpu-reports)" >&2; exit 2; }
done
rm -rf "$work"
mkdir -p "$work/baseline" "$work/candidate"
trap 'rm -rf "$work"' EXIT
xz -dkc "$exports/4gpu_baseline.nsys2022.4.sqlite.xz" >"$work/base.sqlite"
xz -dkc "$exports/4gpu_bucketcap100mb.nsys2022.4.sqlite.xz" >"$work/bucket.sqlite"
for i in $(seq 0 $((ranks - 1))); do
  cp "$work/base.sqlite" "$work/baseline/rank$i.sqlite"
  cp "$work/bucket.sqlite" "$work/candidate/rank$i.sqlite"
done

# "<median wall s> <median CPU s> <peak RSS KiB>" of a command run N times.
measure() { python3 bench/measure.py "$1" : "${@:2}"; }

# The two report runs as one command, so that they are measured alike.
cat >"$work/two_reports.sh" <<SCRIPT
"$nsel" report -q --top 1000000 "$work/baseline" >/dev/null
"$nsel" report -q --top 1000000 "$work/candidate" >/dev/null
SCRIPT

echo "bench: $ranks ranks per run, $(nproc) CPUs, median of $repeat runs"
# Check first that it compares what it should: every rank paired, 59 steps.
"$nsel" diff -q --json "$work/baseline" "$work/candidate" >"$work/diff.json"
python3 - "$work/diff.json" "$ranks" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert len(d["pairs"]) == int(sys.argv[2]), len(d["pairs"])
assert len(d["steps"]) == 59, len(d["steps"])
step = d["metrics"][0]["change"]
print(f"bench: step time {step['verdict']} {step['change_percent']:+.2f} %, p = {step['p_value']:.3g}")
PY
read -r report_wall report_cpu report_rss < <(measure "$repeat" bash "$work/two_reports.sh")
read -r diff_wall diff_cpu diff_rss < <(measure "$repeat" "$nsel" diff -q "$work/baseline" "$work/candidate")
python3 - "$report_wall" "$report_cpu" "$report_rss" "$diff_wall" "$diff_cpu" "$diff_rss" <<'PY'
import sys
rw, rc, rr, dw, dc, dr = map(float, sys.argv[1:])
print(f"{'case':<44}{'wall s':>8}{'CPU s':>8}{'peak MiB':>10}")
print(f"{'2 x nsel report (baseline, candidate)':<44}{rw:>8.3f}{rc:>8.3f}{rr / 1024:>10.1f}")
print(f"{'nsel diff baseline candidate':<44}{dw:>8.3f}{dc:>8.3f}{dr / 1024:>10.1f}")
print(f"diff / two reports: wall {dw / rw:.2f}x, CPU {dc / rc:.2f}x")
PY
