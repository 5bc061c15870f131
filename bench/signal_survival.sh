#!/usr/bin/env bash
# How many reports survive the way schedulers end jobs, for plain `nsys profile` (the baseline)
# and for `nsel exec`, measured in the same run with the same nsys command:
#   - SIGTERM to the job's process group at a random moment of the capture window;
#   - the same, then SIGKILL to the group 0.2 s later.
# A report counts as complete when `nsys export` reads it and it holds the window's steps in
# order, every one that ended 0.2 s before the signal. "program stopped": the signal reached the
# program (it did not run its 14 steps to the end regardless). Everything a run leaves behind
# (program, nsys agent) is counted, then ended by its process id.
#
# usage: bench/signal_survival.sh [TERM_RUNS [KILL_RUNS]]   (defaults 20 and 5; build/ first)
set -uo pipefail
cd "$(dirname "$0")/.."
build=${NSEL_BUILD_DIR:-build}
nsel=$PWD/$build/bin/nsel
worker=$PWD/$build/bin/nsel-example-worker
term_runs=${1:-20}
kill_runs=${2:-5}
window_start=2
window_stop=12
work=$(mktemp -d "${TMPDIR:-/tmp}/nsel-signal-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The exact nsys command and environment nsel uses on this node (NVTX capture, no GPU needed).
plan_json=$(NRL_NSYS_WORKER_PATTERNS='*policy*' NRL_NSYS_PROFILE_STEP_RANGE=$window_start:$window_stop \
  "$nsel" plan --json --capture nvtx --output-dir OUTDIR dtensor_policy_worker 2>/dev/null)

# Prints the plain nsys command for one run, one argument per line.
plain_command() {
  python3 -c 'import json,sys; p=json.loads(sys.argv[1]); print("\n".join(
      [a.replace("OUTDIR", sys.argv[2]) for a in p["command"]] +
      ["env"] + [k + "=" + v for k, v in p["environment"].items()]))' "$plan_json" "$1"
}

# Steps the report holds, one per line, in order.
report_steps() {
  nsys export --type sqlite --force-overwrite true -o "$2" "$1" >/dev/null 2>&1 || return 1
  sqlite3 "$2" "SELECT COALESCE(e.text, s.value) AS t FROM NVTX_EVENTS e LEFT JOIN StringIds s
                ON e.textId = s.id WHERE t LIKE 'step %' ORDER BY e.start" | sed 's/^step //'
}

# Processes (by id) with an argument that holds $1 (the run's own folder: nsel, its keeper, nsys
# and the program all name it).
pids_with_argument() {
  local p
  for p in /proc/[0-9]*; do
    [ "${p#/proc/}" = "$$" ] && continue
    { tr '\0' '\n' <"$p/cmdline"; } 2>/dev/null | grep -qF -- "$1" && echo "${p#/proc/}"
  done
}

# nsys agents (by id) of the session nsys front end $1 started: "--session-name=profile-<program>-$1".
agents_of() {
  local p
  for p in /proc/[0-9]*; do
    { tr '\0' '\n' <"$p/cmdline"; } 2>/dev/null | grep -qE -- "^--session-name=profile-.*-$1\$" &&
      echo "${p#/proc/}"
  done
}

# Runs one job: $1 = nsys|nsel, $2 = delay in ms after capture began, $3 = 1 to SIGKILL after.
# Prints "complete|lost agents_left programs_left".
one_run() {
  local kind=$1 delay_ms=$2 then_kill=$3 dir
  dir=$(mktemp -d "$work/run.XXXXXX")
  mkdir -p "$dir/reports"
  local program=("$worker" --steps 14 --work-ms 100 --progress "$dir/progress" --describe "$dir/describe")
  if [ "$kind" = nsys ]; then
    mapfile -t command < <(plain_command "$dir/reports")
    setsid "${command[@]}" "${program[@]}" >"$dir/log" 2>&1 &
  else
    NRL_NSYS_WORKER_PATTERNS='*policy*' NRL_NSYS_PROFILE_STEP_RANGE=$window_start:$window_stop \
      NSEL_CAPTURE=nvtx setsid "$nsel" exec --worker dtensor_policy_worker \
      --output-dir "$dir/reports" -- "${program[@]}" >"$dir/log" 2>&1 &
  fi
  local job=$! waited=0
  until [ "$({ wc -l <"$dir/progress"; } 2>/dev/null || echo 0)" -ge $window_start ]; do
    sleep 0.005
    waited=$((waited + 1))
    [ $waited -gt 20000 ] && break
  done
  local program_pid launcher_pid nsys_pid
  program_pid=$(sed -n 's/^pid=//p' "$dir/describe" 2>/dev/null)
  launcher_pid=$(sed -n 's/^ppid=//p' "$dir/describe" 2>/dev/null)
  nsys_pid=$(awk '{print $4}' "/proc/$launcher_pid/stat" 2>/dev/null)
  sleep "$(printf '0.%03d' "$delay_ms")"
  local signalled_ns
  signalled_ns=$(date +%s%N)
  kill -TERM -- "-$job" 2>/dev/null
  if [ "$then_kill" = 1 ]; then
    sleep 0.2
    kill -KILL -- "-$job" 2>/dev/null
  fi
  wait "$job" 2>/dev/null
  # Whatever survived gets 60 s to finish on its own (the keeper writes the report after nsel's
  # SIGKILL); the program and nsys are then ended.
  for _ in $(seq 600); do
    if ! kill -0 "$program_pid" 2>/dev/null && [ -z "$(pids_with_argument "$dir/reports")" ]; then
      break
    fi
    sleep 0.1
  done
  local programs_left=0 agents_left=0 p
  if kill -0 "$program_pid" 2>/dev/null; then
    programs_left=1
    kill -KILL "$program_pid" 2>/dev/null
  fi
  for p in $(pids_with_argument "$dir/reports"); do kill -KILL "$p" 2>/dev/null; done
  sleep 0.5  # an agent still finishing its session gets a moment
  for p in $([ -n "$nsys_pid" ] && agents_of "$nsys_pid"); do
    agents_left=$((agents_left + 1))
    kill -KILL "$p" 2>/dev/null
    rm -f "/dev/shm/quadd-agent-instance-$p"
  done
  # The report must hold the window's steps in order from its first, every one that ended 0.2 s
  # before the signal (a killed program loses the NVTX events its injection had not handed over
  # yet) and none that had not begun. Progress lines are "<step> <wall clock ns>".
  local last must_hold got verdict=lost report
  last=$(tail -n1 "$dir/progress" 2>/dev/null | cut -d' ' -f1)
  last=${last:-0}
  # Did the stop reach the program, or did it run its 14 steps to the end regardless?
  local stopped=0
  [ "$last" -lt 14 ] && stopped=1
  [ "$last" -ge $window_stop ] && last=$((window_stop - 1))
  must_hold=$(awk -v s="$signalled_ns" -v a=$window_start -v b=$window_stop -v h=$((window_start - 1)) \
    'NR > 1 && prev >= a && prev < b && $2 + 200000000 <= s { h = prev } { prev = $1 } END { print h }' \
    "$dir/progress" 2>/dev/null)
  report=$(find "$dir/reports" -name '*.nsys-rep' | head -n1)
  if [ -n "$report" ] && got=$(report_steps "$report" "$dir/r.sqlite"); then
    local expected=$window_start held=$((window_start - 1)) step ok=1
    for step in $got; do
      [ "$step" = "$expected" ] && [ "$step" -le "$last" ] || ok=0
      held=$step
      expected=$((expected + 1))
    done
    [ "$ok" = 1 ] && [ "$held" -ge "${must_hold:-$window_start}" ] && verdict=complete
  fi
  if [ "$verdict" = lost ] && [ "$kind" = nsel ]; then
    # nsel should never lose one: keep the evidence on stderr.
    { echo "lost nsel run (signal ${delay_ms} ms after capture began, steps begun up to $last):"
      tr '\r' '\n' <"$dir/log" | grep -v '%' | sed 's/^/  /'; } >&2
  fi
  echo "$verdict $agents_left $programs_left $stopped"
}

run_series() {
  local kind=$1 runs=$2 then_kill=$3 complete=0 agents=0 programs=0 stopped=0 i verdict a p t
  for i in $(seq "$runs"); do
    read -r verdict a p t < <(one_run "$kind" $((RANDOM % 950)) "$then_kill")
    stopped=$((stopped + t))
    [ "$verdict" = complete ] && complete=$((complete + 1))
    agents=$((agents + a))
    programs=$((programs + p))
    printf '.' >&2
  done
  printf '%-5s %-22s complete reports %2d of %2d  program stopped %2d  agents left %2d  programs left %2d\n' \
    "$kind" "$4" "$complete" "$runs" "$stopped" "$agents" "$programs"
}

echo "signal survival: $term_runs SIGTERM runs and $kill_runs SIGTERM+SIGKILL runs each" >&2
run_series nsys "$term_runs" 0 "SIGTERM to group"
run_series nsel "$term_runs" 0 "SIGTERM to group"
run_series nsys "$kill_runs" 1 "SIGTERM, SIGKILL 0.2 s"
run_series nsel "$kill_runs" 1 "SIGTERM, SIGKILL 0.2 s"
