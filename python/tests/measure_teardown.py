"""Measures how reports fare when Ray tears workers down right after the last step, for nsel's
plugin and for Ray's own `nsight` field (launcher patched), on real local clusters:

    .venv/bin/python python/tests/measure_teardown.py [--repetitions 5]

Teardowns: kill (ray.kill(actor)), exit (the actor exits itself), shutdown (the driver calls
ray.shutdown() on a cluster started with `ray start`), local-shutdown (the driver started the
cluster itself with ray.init(), so ray.shutdown() stops the whole cluster). Each repetition runs
two profiled policy actors with window 2:4 over 5 steps. Prints one line per way and teardown:
complete (exactly steps 2 and 3), incomplete (a report without them), lost (no report).
"""

import argparse
import os
import shutil
import signal
import tempfile
import time
from pathlib import Path

from ray_support import (PLUGIN_SETTING, RayCluster, actor, expected_report, nsys_pids,
                         report_steps, wait_for_report)


def outcome(result):
    counts = {"complete": 0, "incomplete": 0, "lost": 0}
    for policy in actor(result, "dtensor_policy_worker"):
        report = expected_report(result["session_dir"], "dtensor_policy_worker", policy["pid"])
        if not wait_for_report(report, nsys_pids(policy)):
            counts["lost"] += 1
        elif report_steps(report) == [2, 3]:
            counts["complete"] += 1
        else:
            counts["incomplete"] += 1
    return counts


def processes_naming(folder):
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and str(folder).encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            pass
    return found


def stop_local(folder):
    """Ends what a driver's own cluster left running (by process id)."""
    deadline = time.monotonic() + 20
    while processes_naming(folder) and time.monotonic() < deadline:
        time.sleep(1)
    for pid in processes_naming(folder):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repetitions", type=int, default=5)
    parser.add_argument("--ways", default="plugin,nsight")
    parser.add_argument("--teardowns", default="kill,exit,shutdown,local-shutdown")
    args = parser.parse_args()
    cluster = RayCluster(env_overrides={"RAY_RUNTIME_ENV_PLUGINS": PLUGIN_SETTING},
                         ray_launcher="patched")
    try:
        for way in args.ways.split(","):
            for teardown in args.teardowns.split(","):
                totals = {"complete": 0, "incomplete": 0, "lost": 0}
                started = time.monotonic()
                for repetition in range(args.repetitions):
                    if teardown == "local-shutdown":
                        local = Path(tempfile.mkdtemp(prefix="nsel-ray-local-"))
                        env = cluster.driver_environment()
                        result, done = cluster.run_driver(
                            way, f"{way}-{teardown}-{repetition}", teardown="shutdown",
                            actors="dtensor_policy_worker:2", env=env,
                            address=f"local:{local}")
                    else:
                        result, done = cluster.run_driver(
                            way, f"{way}-{teardown}-{repetition}", teardown=teardown,
                            actors="dtensor_policy_worker:2")
                    if result is None:
                        print(f"  {way} {teardown} #{repetition}: driver failed\n"
                              f"{done.stderr[-2000:]}", flush=True)
                        continue
                    for key, value in outcome(result).items():
                        totals[key] += value
                    if teardown == "local-shutdown":
                        stop_local(local)
                        shutil.rmtree(local, ignore_errors=True)
                print(f"{way:<7} {teardown:<15} complete {totals['complete']:>2}  "
                      f"incomplete {totals['incomplete']:>2}  lost {totals['lost']:>2}  "
                      f"({args.repetitions} repetitions x 2 actors, "
                      f"{time.monotonic() - started:.0f} s)", flush=True)
    finally:
        cluster.stop()


if __name__ == "__main__":
    main()
