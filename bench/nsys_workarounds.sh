#!/usr/bin/env bash
# Whether nsel's Nsight Systems workarounds are needed with a given nsys: each case is run RUNS
# times with plain `nsys profile` (the command `nsel plan` prints for an NVTX capture node) and
# counted. A run "hangs" when nsys has not exited HANG_S seconds after it started (the program
# takes well under 2 s); it is then ended by process id (its group, then its agents).
#   nvtx-ctxsw   NVTX capture range, CPU context-switch tracing at nsys's default
#   nvtx-none    the same with --cpuctxsw=none (what nsel adds)
#   whole-ctxsw  no capture range, -t nvtx,osrt, context switches at the default
#   whole-none   the same with --cpuctxsw=none
#   no-register  NVTX capture range without NSYS_NVTX_PROFILER_REGISTER_ONLY=0: does a report come?
#   together     4 sessions started at the same moment: how many never start their program
# After every run: nsys agents (--start-agent) of that session still alive are counted and ended.
#
# usage: bench/nsys_workarounds.sh NSYS [RUNS [HANG_S]]   (defaults 10 and 40; build/ first)
set -uo pipefail
cd "$(dirname "$0")/.."
nsys=${1:?usage: bench/nsys_workarounds.sh NSYS [RUNS [HANG_S]]}
runs=${2:-10}
hang_s=${3:-40}
build=${NSEL_BUILD_DIR:-build}
nsel=$PWD/$build/bin/nsel
worker=$PWD/$build/bin/nsel-example-worker
work=$(mktemp -d "${TMPDIR:-/tmp}/nsel-workaround-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
echo "nsys: $("$nsys" --version)  runs per case: $runs  hang after: ${hang_s} s"

# nsys agents (by id) of the session nsys front end $1 started: "--session-name=profile-<program>-$1".
agents_of() {
  local p
  for p in /proc/[0-9]*; do
    { tr '\0' '\n' <"$p/cmdline"; } 2>/dev/null | grep -qE -- "^--session-name=profile-.*-$1\$" &&
      echo "${p#/proc/}"
  done
}

# One session: $1 the run's folder, then nsys's profile options. Prints "<exit> <hung 0|1>
# <agents left> <report 0|1> <program began 0|1>".
one() {
  local dir=$1
  shift
  mkdir -p "$dir"
  setsid "$nsys" profile "$@" -o "$dir/r" "$worker" --steps 6 --work-ms 30 \
    --progress "$dir/progress" >"$dir/log" 2>&1 &
  local pid=$! hung=0 waited=0 code
  while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt $((hang_s * 10)) ]; do
    sleep 0.1
    waited=$((waited + 1))
    # The session is over once the front end has exited; a zombie counts as exited.
    [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" = Z ] && break
  done
  if [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" != Z ] && kill -0 "$pid" 2>/dev/null; then
    hung=1
    local agents
    agents=$(agents_of "$pid")
    kill -KILL -- "-$pid" 2>/dev/null
    for a in $agents; do kill -KILL "$a" 2>/dev/null; done
  fi
  wait "$pid" 2>/dev/null
  code=$?
  sleep 0.5
  local left=0
  for a in $(agents_of "$pid"); do
    left=$((left + 1))
    kill -KILL "$a" 2>/dev/null
  done
  local report=0 began=0
  ls "$dir"/r*.nsys-rep >/dev/null 2>&1 && report=1
  [ -s "$dir/progress" ] && began=1
  echo "$code $hung $left $report $began"
}

nvtx_options=(-t nvtx -s none --capture-range=nvtx --capture-range-end=stop
  --nvtx-capture=nsel_capture --stop-on-exit=true)
register=(--env-var=NSYS_NVTX_PROFILER_REGISTER_ONLY=0)
export NRL_NSYS_PROFILE_STEP_RANGE=2:4 NSEL_STEP_CAPTURE=nvtx

case_line() {
  local name=$1
  shift
  local i hung=0 left=0 reports=0 began=0 failed=0
  for i in $(seq "$runs"); do
    read -r code h l r b < <(one "$work/$name-$i" "$@")
    hung=$((hung + h))
    left=$((left + l))
    reports=$((reports + r))
    began=$((began + b))
    [ "$code" != 0 ] && [ "$h" = 0 ] && failed=$((failed + 1))
  done
  printf '%-12s runs %3d  hung %3d  failed %3d  reports %3d  program began %3d  agents left %3d\n' \
    "$name" "$runs" "$hung" "$failed" "$reports" "$began" "$left"
}

case_line nvtx-ctxsw "${nvtx_options[@]}" "${register[@]}"
case_line nvtx-none "${nvtx_options[@]}" "${register[@]}" --cpuctxsw=none
case_line whole-ctxsw -t nvtx,osrt -s none
case_line whole-none -t nvtx,osrt -s none --cpuctxsw=none
case_line no-register "${nvtx_options[@]}" --cpuctxsw=none

# Four at once, RUNS rounds.
never=0
for round in $(seq "$runs"); do
  for k in 1 2 3 4; do
    one "$work/together-$round-$k" -t nvtx,osrt -s none --cpuctxsw=none >"$work/together-$round-$k.out" &
  done
  wait
  for k in 1 2 3 4; do
    read -r code h l r b <"$work/together-$round-$k.out"
    [ "$b" = 0 ] && never=$((never + 1))
  done
done
printf '%-12s sessions %3d  program never began %3d\n' together $((runs * 4)) "$never"
