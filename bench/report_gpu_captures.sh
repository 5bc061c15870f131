#!/usr/bin/env bash
# `nsel report` on 16 real GPU captures (the NERSC SC22 DDP reports of ../shared/gpu-reports,
# 59 steps each, copied under 16 rank names into a temporary folder), against Nsight Systems' own tools measured in the
# same run, with each nsys generation installed here:
#   - from fresh .nsys-rep files (exports included): 16 x `nsys stats` (NVTX and kernel
#     summaries) one after another, `nsys recipe nvtx_sum` (2023.4, nsys's own multi-report
#     summary) and `nsel report` on the folder, once with 2022.4 and once with 2023.4 first on
#     PATH;
#   - from existing exports: the same without the export step;
#   - one export alone: every table against only the tables nsel reads (2023.4's --tables).
# Before timing anything it checks that the numbers agree: nsel's NVTX and kernel tables of one
# rank against both generations' `nsys stats` CSV, row for row. Prints medians of
# NSEL_BENCH_REPEAT runs (default 1: the fresh cases take minutes) and the ratios.
#
#   bash bench/report_gpu_captures.sh     # build/ must hold nsel; reads ../shared/gpu-reports
#
# `nsys recipe` needs Python packages Debian's 2023.4 package does not carry (numpy, pandas,
# pyarrow, dask, ...): the script keeps them in a virtual environment of its own under
# $NSEL_BENCH_DIR/recipe-venv (made once with pip; NSEL_BENCH_NO_RECIPE=1 skips the recipe).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${NSEL_BUILD_DIR:-build}
nsel=$(realpath "$build/bin/nsel")
captures=$(realpath -m ../shared/gpu-reports/nersc-sc22-ddp)
work=${NSEL_BENCH_DIR:-${TMPDIR:-/tmp}/nsel-bench-gpu}
repeat=${NSEL_BENCH_REPEAT:-1}
nsys22=${NSEL_NSYS_2022:-/usr/bin/nsys}
nsys23=${NSEL_NSYS_2023:-/opt/nsight-systems-2023.4/usr/bin/nsys}
for f in "$captures/4gpu_baseline.nsys-rep" "$nsys22" "$nsys23"; do
  [ -e "$f" ] || { echo "bench: $f is missing (run scripts/setup.sh; ../shared/gpu-reports)" >&2; exit 2; }
done
mkdir -p "$work"

# 16 ranks: copies of the three real reports in turn, under the contract's file names, in a
# folder of their own so every export lands there and never beside the originals (links would
# not do: nsel reads two names of one file as one report).
reports=$work/reports
make_reports() {
  rm -rf "$reports"
  mkdir -p "$reports"
  local sources=("$captures/4gpu_baseline.nsys-rep" "$captures/4gpu_bucketcap100mb.nsys-rep"
    "$captures/4gpu_nobroadcast.nsys-rep")
  for i in $(seq 0 15); do
    cp "${sources[$((i % 3))]}" "$reports/dtensor_policy_worker_${i}_0:59_$((2000 + i)).nsys-rep"
  done
}
exports_only() { find "$reports" -name '*.sqlite' ! -name '*-tables.sqlite' | sort; }
drop_exports() { find "$reports" \( -name '*.sqlite' -o -name '*_pqtdir' \) -prune -exec rm -rf {} +; }

recipe_python=""
if [ "${NSEL_BENCH_NO_RECIPE:-0}" != 1 ]; then
  venv=$work/recipe-venv
  if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import pandas, dask, pyarrow' 2>/dev/null; then
    echo "bench: making $venv for nsys recipe (numpy pandas psutil pyarrow dask distributed)" >&2
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check numpy pandas psutil pyarrow dask distributed
  fi
  recipe_python=$venv/bin
fi

# Runs a command N times after a preparation command; prints "<median wall s> <median CPU s>
# <peak RSS KiB>" (CPU: user + system of the command and all it waited for).
measure() { python3 bench/measure.py "$@"; }

make_reports
# ---- the numbers agree -------------------------------------------------------------------------
first=$(find "$reports" -name '*_0_0:59_*.nsys-rep' | head -n1)
"$nsel" report -q --json --top 100000 "$first" >"$work/nsel.json"
"$nsys22" stats -r nvtxppsum,gpukernsum -f csv -o "$work/stats22" "$(exports_only | head -n1)" \
  >/dev/null 2>&1 || true
"$nsys23" stats -r nvtx_pushpop_sum,cuda_gpu_kern_gb_sum -f csv -o "$work/stats23" \
  "$(exports_only | head -n1)" >/dev/null 2>&1 || true
python3 - "$work" <<'EOF'
import csv, glob, json, sys
work = sys.argv[1]
process = json.load(open(f"{work}/nsel.json"))["processes"][0]

def table(pattern):
    files = glob.glob(f"{work}/{pattern}")
    if not files:
        sys.exit(f"bench: no nsys stats output {pattern}")
    return list(csv.DictReader(open(files[0])))

def same(label, rows, ours, key):
    theirs = {tuple(r[k].strip() for k in key): r for r in rows}
    assert len(theirs) == len(rows), f"{label}: keys not unique"
    mine = {}
    for r in ours:
        mine[tuple(" ".join(str(r[k]).split()) if k != "name" else r[k].strip()
                   for k in ("name", "grid", "block")[: len(key)])] = r
    assert len(theirs) == len(mine), f"{label}: {len(theirs)} rows from nsys, {len(mine)} from nsel"
    for k, r in theirs.items():
        m = mine[k]
        assert int(r["Total Time (ns)"]) == m["total_ns"], (label, k)
        assert int(r["Instances"]) == m["instances"], (label, k)
        assert int(r["Min (ns)"]) == m["min_ns"] and int(r["Max (ns)"]) == m["max_ns"], (label, k)
    print(f"  {label}: {len(theirs)} rows equal")

print("numbers checked (rank 0):")
same("NVTX vs 2022.4 nvtxppsum", table("stats22*nvtxppsum*.csv"), process["nvtx"], ("Range",))
same("NVTX vs 2023.4 nvtx_pushpop_sum", table("stats23*nvtx_pushpop_sum*.csv"), process["nvtx"],
     ("Range",))
# nsys pads grid and block ("  24    1    1"); nsel gives them with single blanks.
def kernel_rows(pattern):
    rows = table(pattern)
    for r in rows:
        for k in ("GridXYZ", "BlockXYZ"):
            r[k] = " ".join(r[k].split())
    return rows
same("kernels vs 2022.4 gpukernsum", kernel_rows("stats22*gpukernsum*.csv"), process["kernels"],
     ("Name", "GridXYZ", "BlockXYZ"))
same("kernels vs 2023.4 cuda_gpu_kern_gb_sum", kernel_rows("stats23*cuda_gpu_kern_gb_sum*.csv"),
     process["kernels"], ("Name", "GridXYZ", "BlockXYZ"))
EOF

# ---- timings -----------------------------------------------------------------------------------
echo "16 real GPU captures (NERSC SC22 DDP, A100, 59 steps each); median of $repeat; $(nproc) CPUs"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
results=()
labels=()
run() {
  labels+=("$1")
  shift
  results+=($(measure "$repeat" "$@"))
}
loop_stats() {  # nsys reports...
  local nsys=$1 reps=$2
  shift 2
  printf 'for f in %s/*.%s; do PATH=%s:$PATH %s stats -r %s -f csv "$f" >/dev/null; done' \
    "$reports" "$1" "$(dirname "$nsys")" "$nsys" "$reps"
}
drop="find '$reports' \\( -name '*.sqlite' -o -name '*_pqtdir' \\) -prune -exec rm -rf {} +"
keep=true
run "fresh: 16 x nsys stats 2022.4" "$drop" bash -c "$(loop_stats "$nsys22" nvtxppsum,gpukernsum nsys-rep)"
run "fresh: 16 x nsys stats 2023.4" "$drop" bash -c \
  "$(loop_stats "$nsys23" nvtx_pushpop_sum,cuda_gpu_kern_sum nsys-rep)"
if [ -n "$recipe_python" ]; then
  run "fresh: nsys recipe nvtx_sum 2023.4" "$drop; rm -rf '$work/recipe-out'" env \
    "PATH=$recipe_python:$PATH" "$nsys23" recipe nvtx_sum --input "$reports" --output "$work/recipe-out"
fi
run "fresh: nsel report, 2022.4" "$drop" env "PATH=$(dirname "$nsys22"):$PATH" "$nsel" report -q \
  --json "$reports"
run "fresh: nsel report, 2023.4" "$drop" env "PATH=$(dirname "$nsys23"):$PATH" "$nsel" report -q \
  --json "$reports"
# Exports now exist (made by 2023.4): the summaries alone.
run "exported: 16 x nsys stats 2022.4" "$keep" bash -c "$(loop_stats "$nsys22" nvtxppsum,gpukernsum sqlite)"
run "exported: 16 x nsys stats 2023.4" "$keep" bash -c \
  "$(loop_stats "$nsys23" nvtx_pushpop_sum,cuda_gpu_kern_sum sqlite)"
run "exported: nsel report" "$keep" "$nsel" report -q --json "$reports"
one=$(find "$reports" -name '*.nsys-rep' | sort | head -n1)
run "export, every table (2023.4)" "$keep" "$nsys23" export --type sqlite --force-overwrite true \
  -o "$work/one-all.sqlite" "$one"
run "export, nsel's tables (2023.4)" "$keep" "$nsys23" export --type sqlite --force-overwrite true \
  --tables=StringIds,NVTX_EVENTS,CUPTI_ACTIVITY_KIND_KERNEL,CUPTI_ACTIVITY_KIND_MEMCPY,CUPTI_ACTIVITY_KIND_MEMSET,OSRT_API,TARGET_INFO_SYSTEM_ENV,META_DATA_EXPORT,PROCESSES,ThreadNames \
  -o "$work/one-tables.sqlite" "$one"
echo "load average after:  $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "${#labels[@]}" "${labels[@]}" "${results[@]}" <<'EOF'
import sys
n = int(sys.argv[1])
labels, values = sys.argv[2:2 + n], sys.argv[2 + n:]
rows = {labels[i]: (float(values[3 * i]), float(values[3 * i + 1]), int(values[3 * i + 2]) / 1024)
        for i in range(n)}
for label, (wall, cpu, rss) in rows.items():
    print(f"  {label:38s} {wall:8.2f} s wall {cpu:8.2f} s CPU")

def ratio(a, b, what):
    if a in rows and b in rows:
        print(f"  ratio: nsel is {rows[a][0] / rows[b][0]:.1f}x faster than {what} "
              f"({rows[a][1] / rows[b][1]:.1f}x less CPU)")

print()
ratio("fresh: 16 x nsys stats 2022.4", "fresh: nsel report, 2022.4", "16 x nsys stats 2022.4, fresh")
ratio("fresh: 16 x nsys stats 2023.4", "fresh: nsel report, 2023.4", "16 x nsys stats 2023.4, fresh")
ratio("fresh: nsys recipe nvtx_sum 2023.4", "fresh: nsel report, 2023.4", "nsys recipe nvtx_sum, fresh")
ratio("exported: 16 x nsys stats 2022.4", "exported: nsel report", "16 x nsys stats 2022.4 on exports")
ratio("exported: 16 x nsys stats 2023.4", "exported: nsel report", "16 x nsys stats 2023.4 on exports")
a, b = "export, every table (2023.4)", "export, nsel's tables (2023.4)"
print(f"  --tables: one export takes {rows[b][0]:.2f} s instead of {rows[a][0]:.2f} s "
      f"({rows[a][0] / rows[b][0]:.1f}x)")
EOF
