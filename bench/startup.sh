#!/usr/bin/env bash
# What `nsel exec` adds to the start of one profiled rank, against plain `nsys profile` with the
# same command and environment (the peer), measured in the same run, alternately: the wall time
# from starting each until the program began its first step (the example worker's --progress
# line), and until all was over (report written). nsel's part: its checks (the nsys check, the
# option check, the GPU probe when the capture needs one), its start turn, its keeper and its
# step nsel-as-started, which gives the program back the umask and signals nsys changes.
#
# usage: bench/startup.sh [RUNS]   (default 10 each; build/ first; NSYS_BIN=folder to choose nsys)
set -uo pipefail
cd "$(dirname "$0")/.."
build=${NSEL_BUILD_DIR:-build}
nsel=$PWD/$build/bin/nsel
worker=$PWD/$build/bin/nsel-example-worker
runs=${1:-10}
[ -n "${NSYS_BIN:-}" ] && export PATH="$NSYS_BIN:$PATH"
case $runs in '' | *[!0-9]*)
  echo "bench/startup.sh: RUNS='$runs': expected a whole number" >&2
  exit 2
  ;;
esac
work=$(mktemp -d "${TMPDIR:-/tmp}/nsel-startup-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
export NRL_NSYS_WORKER_PATTERNS='*policy*' NRL_NSYS_PROFILE_STEP_RANGE=2:3 NSEL_CAPTURE=nvtx

# The exact nsys command and environment nsel plans on this node, for the plain runs.
plan_json=$("$nsel" plan --json --output-dir OUTDIR dtensor_policy_worker 2>/dev/null)
plain_command() {
  python3 -c 'import json,sys; p=json.loads(sys.argv[1]); print("\n".join(
      ["env"] + [k + "=" + v for k, v in p["environment"].items()] +
      [a.replace("OUTDIR", sys.argv[2]) for a in p["command"]]))' "$plan_json" "$1"
}

now() { date +%s%N; }
first_step_at() { head -1 "$1" 2>/dev/null | cut -d' ' -f2; }

# One run of either side; prints "<ms to the first step> <ms to the end>".
one_run() {
  local side=$1 dir=$2
  mkdir -p "$dir"
  local program=("$worker" --steps 4 --work-ms 20 --progress "$dir/progress")
  local start end
  start=$(now)
  if [ "$side" = nsel ]; then
    "$nsel" exec --worker dtensor_policy_worker --output-dir "$dir" -- "${program[@]}" \
      >"$dir/out" 2>&1
  else
    mapfile -t command < <(plain_command "$dir")
    "${command[@]}" "${program[@]}" >"$dir/out" 2>&1
  fi
  end=$(now)
  local first
  first=$(first_step_at "$dir/progress")
  [ -n "$first" ] || { echo "bench/startup.sh: $side run in $dir never started" >&2; return 1; }
  echo "$(((first - start) / 1000000)) $(((end - start) / 1000000))"
}

median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

echo "bench/startup.sh: $runs runs each, alternately, $(nsys --version 2>&1 | head -1)"
: >"$work/nsel" && : >"$work/plain"
for ((i = 1; i <= runs; i++)); do
  one_run plain "$work/p$i" >>"$work/plain" || exit 1
  one_run nsel "$work/n$i" >>"$work/nsel" || exit 1
done
for what in 1 2; do
  label=$([ $what = 1 ] && echo "to the first step" || echo "to the end        ")
  p=$(cut -d' ' -f$what "$work/plain" | median)
  n=$(cut -d' ' -f$what "$work/nsel" | median)
  echo "median ms $label: nsys profile $p, nsel exec $n, ratio nsel/nsys $(python3 -c "print(f'{$n / $p:.2f}')")"
done
