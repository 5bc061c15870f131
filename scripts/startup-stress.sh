#!/usr/bin/env bash
# Start-up under concurrency: RANKS `nsel exec` of a selected worker started at the same moment,
# ROUNDS times, with the nsys first on PATH (or NSYS_BIN's folder first). Counts the programs that
# ran and the windows that left a complete report, and prints every rank that did not, with nsel's
# exit code, its manifest's state and reason, and the end of its output; and how many times nsel
# started nsys again after it failed before the program began.
#
#   bash scripts/startup-stress.sh [ROUNDS [RANKS]]     (default 10 rounds of 8 ranks)
#   NSYS_BIN=/opt/nsight-systems-2023.4/usr/bin bash scripts/startup-stress.sh 50 8
#
# NSEL (default build/bin/nsel) and WORKER (default build/bin/nsel-example-worker) name the
# programs, WORKER_NAME the worker (default dtensor_policy_worker; '.hidden_worker' tries a
# dot-named one, whose reports are hidden files); STEPS and WORK_MS the example worker's steps
# and their length (default 5 of 50 ms: the window 2:4 ends one step before the program does;
# STEPS=4 ends the program as its window ends); KEEP=1 keeps the scratch folder. Each round's
# reports are then judged by `nsel check` (exported: a report must hold the window's steps).
# Exit 1 when any program did not run or any window left no complete report.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
rounds=${1:-10}
ranks=${2:-8}
nsel=$(realpath "${NSEL:-build/bin/nsel}")
worker=$(realpath "${WORKER:-build/bin/nsel-example-worker}")
name=${WORKER_NAME:-dtensor_policy_worker}
[ -n "${NSYS_BIN:-}" ] && export PATH="$NSYS_BIN:$PATH"
steps=${STEPS:-5}
work_ms=${WORK_MS:-50}
case "$rounds$ranks$steps$work_ms" in *[!0-9]*)
  echo "startup-stress: ROUNDS='$rounds' RANKS='$ranks' STEPS='$steps' WORK_MS='$work_ms':" \
    "expected whole numbers" >&2
  exit 2
  ;;
esac
scratch=$(mktemp -d /tmp/nsel-stress.XXXXXX)
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$scratch"' EXIT
echo "startup-stress: $rounds rounds of $ranks ranks of '$name', $(nsys --version 2>&1 | head -1)"
ran=0 complete=0 judged_ok=0 failures=0 restarts=0
for ((round = 1; round <= rounds; round++)); do
  dir=$scratch/round$round
  mkdir -p "$dir/reports"
  pids=()
  for ((rank = 0; rank < ranks; rank++)); do
    NRL_NSYS_WORKER_PATTERNS=$name NRL_NSYS_PROFILE_STEP_RANGE=2:4 RANK=$rank \
      "$nsel" exec --worker "$name" --output-dir "$dir/reports" -- \
      "$worker" --steps "$steps" --work-ms "$work_ms" --describe "$dir/describe.$rank" \
      >"$dir/out.$rank" 2>&1 &
    pids+=($!)
  done
  for ((rank = 0; rank < ranks; rank++)); do
    wait "${pids[$rank]}"
    echo $? >"$dir/rc.$rank"
  done
  for ((rank = 0; rank < ranks; rank++)); do
    program_ran=0 report_ok=0
    [ -s "$dir/describe.$rank" ] && program_ran=1
    pid=$(sed -n 's/^pid=//p' "$dir/describe.$rank" 2>/dev/null)
    manifest=$dir/reports/${name}_2:4_$pid.nsel.json
    if [ -n "$pid" ] && [ -s "${manifest%.nsel.json}.nsys-rep" ] &&
      grep -q '"state": *"complete"' "$manifest" 2>/dev/null; then
      report_ok=1
    fi
    restarts=$((restarts + $(grep -c "starting it again" "$dir/out.$rank")))
    ran=$((ran + program_ran))
    complete=$((complete + report_ok))
    if [ $program_ran = 0 ] || [ $report_ok = 0 ]; then
      failures=$((failures + 1))
      echo "round $round rank $rank: nsel exit $(cat "$dir/rc.$rank"), program ran: $program_ran," \
        "report complete: $report_ok"
      for m in "$dir"/reports/*.nsel.json "$dir"/reports/.*.nsel.json; do
        [ -e "$m" ] || continue
        grep -q "\"RANK\": *\"$rank\"" "$m" && grep -E '"(state|reason)"' "$m" | sed 's/^/    /'
      done
      tail -n 6 "$dir/out.$rank" | sed 's/^/    | /'
    fi
  done
  # The judge a user would run: every report exported and its window's steps looked for.
  "$nsel" check --json "$dir/reports" >"$dir/check.json" 2>"$dir/check.err"
  verdicts=$(python3 -c 'import json,sys
c = json.load(open(sys.argv[1]))
print(c["counts"]["ok"])
for r in c["reports"]:
    if r["verdict"] != "ok":
        print("  check:", r["verdict"], r.get("path", ""), r.get("reason", ""))' "$dir/check.json" 2>&1)
  ok=$(head -1 <<<"$verdicts")
  case $ok in '' | *[!0-9]*)
    echo "round $round: nsel check gave no verdicts: $(head -3 "$dir/check.err")"
    ok=0
    ;;
  esac
  judged_ok=$((judged_ok + ok))
  if [ "$ok" != "$ranks" ]; then
    echo "round $round: nsel check: $ok of $ranks ok"
    tail -n +2 <<<"$verdicts"
  fi
done
total=$((rounds * ranks))
echo "startup-stress: programs run $ran of $total, complete reports $complete of $total," \
  "nsys started again $restarts times (its start-up failures before a program began)"
echo "startup-stress: nsel check calls $judged_ok of $total windows ok (the report holds its steps)"
[ $failures = 0 ] && [ "$judged_ok" = "$total" ]
