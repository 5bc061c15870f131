#!/usr/bin/env bash
# Measures `nsel sync` against `rsync -a` on the same trees in the same run, and `nsel ls` on a
# large Ray tree, and prints each figure with its ratio:
#   1. a pass with nothing to copy over 100,000 files (goal: nsel at least 5x faster): one-shot
#      (`nsel sync` run once, as rsync is), and inside the resident `nsel sync --every` loop,
#      which watches the source folders between passes and looks only at what changed (its
#      full passes, the first, the last and one every --full-every, are shown and averaged in),
#   2. the first copy of about 2 GB in files of mixed sizes (goal: within 1.2x of rsync),
#   3. `nsel ls --json` over 200 sessions holding 10,000 reports (goal: well under 1 s),
#      against `find -printf` listing the same files (a floor: it stats each file, no more).
# Trees live in a temporary folder (BENCH_DIR, default under /tmp), removed at the end.
# Sizes: BENCH_FILES (100000), BENCH_MB (2048), BENCH_SESSIONS (200), BENCH_REPORTS (10000);
# BENCH_EVERY (30): the RAY_LOG_SYNC_FREQUENCY the resident loop's average pass assumes.
set -euo pipefail
nsel=$(realpath "${1:-build/bin/nsel}")
command -v rsync >/dev/null || { echo "rsync is missing: run scripts/setup.sh" >&2; exit 1; }
work=$(mktemp -d "${BENCH_DIR:-/tmp}/nsel-bench-sync.XXXXXX")
trap 'rm -rf "$work"' EXIT

NSEL="$nsel" WORK="$work" python3 - <<'PY'
import json, os, random, shutil, statistics, subprocess, time

nsel, work = os.environ["NSEL"], os.environ["WORK"]
files = int(os.environ.get("BENCH_FILES", "100000"))
megabytes = int(os.environ.get("BENCH_MB", "2048"))
sessions = int(os.environ.get("BENCH_SESSIONS", "200"))
reports = int(os.environ.get("BENCH_REPORTS", "10000"))
every = float(os.environ.get("BENCH_EVERY", "30"))
rng = random.Random(7)
print("load average before: %.2f %.2f %.2f (other work on the machine skews every figure)"
      % os.getloadavg())

def timed(argv):
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start

def flush():
    os.sync()  # earlier writes must not slow the next measurement down

def session_name(i):
    return f"session_2026-01-01_00-00-{i % 60:02d}_{i:06d}_{1000 + i}"

def sync_argv(src, dest):
    return [nsel, "sync", "--quiet", "--head", "--src", src, "--dest", dest]

def rsync_argv(src, dest):
    return ["rsync", "-a", src + "/", dest + "/"]

# 1. No-change pass: Ray-like logs of 4 sessions, 100 folders each.
src = os.path.join(work, "many")
per_folder = max(1, files // 400)
count = 0
for s in range(4):
    for d in range(100):
        folder = os.path.join(src, session_name(s), "logs", f"worker-{d:03d}")
        os.makedirs(folder)
        for f in range(per_folder):
            with open(os.path.join(folder, f"log-{f:04d}.out"), "wb") as out:
                out.write(b"x" * rng.randint(0, 2048))
            count += 1
flush()
nsel_dest, rsync_dest = os.path.join(work, "many-nsel"), os.path.join(work, "many-rsync")
subprocess.run(sync_argv(src, nsel_dest), check=True)
subprocess.run(rsync_argv(src, rsync_dest), check=True)
flush()
nsel_runs, rsync_runs, floor_runs = [], [], []
for _ in range(5):  # interleaved, so all see the same machine
    nsel_runs.append(timed(sync_argv(src, nsel_dest)))
    rsync_runs.append(timed(rsync_argv(src, rsync_dest)))
    # The floor of any tool that compares sizes and times: one stat per source file.
    floor_runs.append(timed(["find", src, "-type", "f", "-printf", "%s %T@\n"]))
n, r = statistics.median(nsel_runs), statistics.median(rsync_runs)
f = statistics.median(floor_runs)
print(f"no-change pass, {count} files, one-shot:  nsel sync {n:.3f} s   rsync -a {r:.3f} s   "
      f"rsync/nsel = {r / n:.2f}x (median of 5)   "
      f"[floor: find -printf stats each source file once: {f:.3f} s, rsync/floor = {r / f:.2f}x]")

# The resident loop on the same tree: passes every 0.3 s, 20 with nothing changing, then 10
# with one log growing by a line before each, then ENDED.
loop = subprocess.Popen(sync_argv(src, nsel_dest) + ["--every", "0.3", "--json"],
                        stdout=subprocess.PIPE, text=True)
passes = []
growing = os.path.join(src, session_name(0), "logs", "worker-000", "log-0000.out")
for line in loop.stdout:
    passes.append(json.loads(line))
    if 21 <= len(passes) < 31:
        with open(growing, "a") as out:
            out.write("one more line\n")
    elif len(passes) == 31:
        open(os.path.join(nsel_dest, "ENDED"), "w").close()
loop.wait()
assert loop.returncode == 0 and passes[-1]["ended"], passes[-1]
quiet = passes[:21]
busy = [p for p in passes[21:] if p["copied"] == 1 and not p["full"]]
assert all(p["copied"] == 0 for p in quiet), "a no-change loop copied something"
assert len(busy) >= 5, passes[21:]
watched = [p["seconds"] for p in quiet if not p["full"]]
full = [p["seconds"] for p in passes if p["full"]]
grown = statistics.median(p["seconds"] for p in busy)
assert len(watched) >= 10, passes
w, fp = statistics.median(watched), statistics.median(full)
# With one full pass every --full-every (600 s) and a pass every BENCH_EVERY seconds.
per_full = max(1, int(600 / every))
average = (w * (per_full - 1) + fp) / per_full
print(f"no-change pass, {count} files, resident loop (--every, watching):  "
      f"nsel sync {w * 1000:.2f} ms   rsync -a {r:.3f} s   rsync/nsel = {r / w:.0f}x "
      f"(goal >= 5x; median of {len(watched)} passes that looked at what changed)")
print(f"   its full passes (first, and last after ENDED): "
      f"{', '.join(f'{x:.3f}' for x in full)} s, rsync/full = {r / fp:.2f}x;  "
      f"averaged with one full pass per 600 s (--full-every) at --every {every:g}: "
      f"{average * 1000:.1f} ms a pass, rsync/nsel = {r / average:.1f}x")
print(f"   a watched pass copying the one log that grew: {grown * 1000:.2f} ms "
      f"(median of {len(busy)}), rsync/nsel = {r / grown:.0f}x")
shutil.rmtree(src); shutil.rmtree(nsel_dest); shutil.rmtree(rsync_dest)

# 2. First copy of ~2 GB: big reports, medium files and many small logs.
src = os.path.join(work, "big")
target, written = megabytes << 20, 0
sizes = []
while written < target:
    kind = rng.random()
    size = (rng.randint(20, 200) << 20) if kind < 0.08 else \
           (rng.randint(1, 8) << 20) if kind < 0.3 else rng.randint(1 << 10, 256 << 10)
    size = min(size, target - written) or 1
    sizes.append(size)
    written += size
block = os.urandom(1 << 20)
for i, size in enumerate(sizes):
    folder = os.path.join(src, session_name(i % 2), "logs", "nsight" if size >= 1 << 20 else "w")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, f"file-{i:05d}.nsys-rep"), "wb") as out:
        left = size
        while left:
            chunk = block[: min(left, len(block))]
            out.write(chunk)
            left -= len(chunk)
flush()
nsel_runs, rsync_runs = [], []
for run in range(2):
    for name, argv_of, runs in (("nsel", sync_argv, nsel_runs), ("rsync", rsync_argv, rsync_runs)):
        dest = os.path.join(work, f"big-{name}")
        runs.append(timed(argv_of(src, dest)))
        flush()
        shutil.rmtree(dest)
n, r = min(nsel_runs), min(rsync_runs)
print(f"first copy, {written / 2**30:.2f} GiB in {len(sizes)} files:  nsel sync {n:.2f} s   "
      f"rsync -a {r:.2f} s   nsel/rsync = {n / r:.2f}x (goal <= 1.2x; best of 2)")
shutil.rmtree(src)

# 3. nsel ls over 200 sessions and 10,000 reports, half of them with a manifest.
root = os.path.join(work, "ray")
workers = ["dtensor_policy_worker", "vllm_generation_worker", "megatron_policy_worker"]
old = time.time() - 3600
for i in range(reports):
    folder = os.path.join(root, session_name(i % sessions), "logs", "nsight")
    os.makedirs(folder, exist_ok=True)
    worker, pid = workers[i % 3], 10000 + i
    stem = f"{worker}_2:4_{pid}"
    path = os.path.join(folder, stem + ".nsys-rep")
    with open(path, "wb") as out:
        out.write(block[: 8192 + i % 4096])
    os.utime(path, (old, old))
    if i % 2 == 0:
        with open(os.path.join(folder, stem + ".nsel.json"), "w") as out:
            out.write('{\n  "nsel_manifest": 1,\n  "worker": "%s",\n  "pattern": "*",\n'
                      '  "step_window": {"text": "2:4", "start": 2, "stop": 4},\n'
                      '  "pid": %d,\n  "nsel_pid": %d,\n  "host": "node-%d",\n'
                      '  "node_ip": "10.0.0.%d",\n  "rank_variables": {"RANK": "%d"},\n'
                      '  "command": ["nsys", "profile", "-o", "%s_2:4_%%p", "python"],\n'
                      '  "start_time": "2026-01-01T00:00:00.000Z",\n'
                      '  "end_time": "2026-01-01T00:10:00.000Z",\n  "exit_status": 0,\n'
                      '  "report": "%s",\n  "state": "complete",\n  "reason": ""\n}\n'
                      % (worker, pid, pid - 1, i % 8, i % 8, i, worker, path))
os.symlink(session_name(0), os.path.join(root, "session_latest"))
flush()
subprocess.run([nsel, "ls", "--json", root], check=True, stdout=subprocess.DEVNULL)
ls_runs = [timed([nsel, "ls", "--json", root]) for _ in range(5)]
find_runs = [timed(["find", root, "-name", "*.nsys-rep", "-printf", "%p %s %T@\n"])
             for _ in range(5)]
l, f = statistics.median(ls_runs), statistics.median(find_runs)
listed = subprocess.run([nsel, "ls", "--json", root], check=True, capture_output=True, text=True)
import json
found = json.loads(listed.stdout)
print(f"nsel ls --json, {len(found['reports'])} reports in {found['sessions']} sessions: "
      f"{l:.3f} s (goal well under 1 s)   find -printf {f:.3f} s   nsel/find = {l / f:.2f}x "
      f"(median of 5)")
PY
