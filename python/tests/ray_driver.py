"""A GRPO-shaped Ray driver for the tests: named actors that run steps with nsel.step(n), then one
of Ray's teardowns. Run as its own process (one Ray job) against a running cluster; writes what it
saw as JSON.

    python ray_driver.py --address ADDR|local:TEMP_DIR --way plugin|nsight|plain --out FILE
        [--actors dtensor_policy_worker:2,vllm_generation_worker:1] [--steps 5]
        [--teardown none|kill|exit|shutdown] [--work-ms 100] [--ranks] [--env-vars JSON]

--ranks gives each actor its rank within its worker group (0, 1, ... in start order), as a driver
of a worker group does, so that NSEL_PROFILE_RANKS picks among them. --env-vars adds the
runtime env's env_vars (what the actor's worker process gets, as its node's environment would).
When an actor cannot start, the driver writes {"error": ..., "seconds": ...} (the seconds from
its creation to the error) and exits 3.
"""

import argparse
import json
import math
import os
import sys
import time

import nsel
import ray


def ancestry(pid):
    """Command lines from `pid` up to (not including) the first process not ours to inspect."""
    chain = []
    while pid > 1 and len(chain) < 12:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
            with open(f"/proc/{pid}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except OSError:
            break
        chain.append({"pid": pid, "argv": argv})
        pid = ppid
    return chain


@ray.remote
class Worker:
    def __init__(self, name):
        self.name = name

    def describe(self):
        return {
            "name": self.name,
            "pid": os.getpid(),
            "executable": sys.executable,
            "ancestry": ancestry(os.getpid()),
        }

    def run_steps(self, steps, work_ms, exit_after):
        opened = []
        for n in range(1, steps + 1):
            with nsel.step(n):
                opened.append(nsel.capturing())
                until = time.monotonic() + work_ms / 1000
                sink = 0.0
                while time.monotonic() < until:
                    sink += sum(math.sqrt(i) for i in range(2000))
        if exit_after:
            ray.actor.exit_actor()
        return opened


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--address", required=True)
    parser.add_argument("--way", choices=["plugin", "nsight", "plain"], required=True)
    parser.add_argument("--actors", default="dtensor_policy_worker:2,vllm_generation_worker:1")
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--work-ms", type=int, default=100)
    parser.add_argument("--teardown", choices=["none", "kill", "exit", "shutdown"], default="none")
    parser.add_argument("--ranks", action="store_true")
    parser.add_argument("--env-vars", default="{}")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()

    if args.address.startswith("local:"):
        # A cluster of this driver's own (ray.init() starts it; ray.shutdown() ends it).
        ray.init(_temp_dir=args.address[len("local:"):], num_cpus=8, include_dashboard=False,
                 logging_level="ERROR")
    else:
        ray.init(address=args.address, logging_level="ERROR")
    session_dir = ray._private.worker.global_worker.node.get_session_dir_path()
    actors = []
    for spec in args.actors.split(","):
        name, _, count = spec.rpartition(":")
        for rank in range(int(count)):
            identity = {"rank": rank} if args.ranks else {}
            if args.way == "plugin":
                runtime_env = nsel.plugin_runtime_env(name, **identity)
            elif args.way == "nsight":
                runtime_env = nsel.nsight_runtime_env(name, **identity)
            else:
                runtime_env = {}
            env_vars = json.loads(args.env_vars)
            if env_vars:
                runtime_env = dict(runtime_env, env_vars=env_vars)
            started = time.monotonic()
            actors.append(Worker.options(runtime_env=runtime_env).remote(name))
            # One at a time: nsys sessions that start at the same moment fail more often
            # ("Local Endpoint is not available") on a loaded 2-core machine.
            try:
                ray.get(actors[-1].describe.remote(), timeout=600)
            except Exception as e:  # noqa: BLE001 - what the test looks at
                with open(args.out, "w") as f:
                    json.dump({"session_dir": session_dir, "error": f"{type(e).__name__}: {e}",
                               "error_type": type(e).__name__,
                               "seconds": time.monotonic() - started}, f)
                sys.exit(3)
    described = ray.get([a.describe.remote() for a in actors], timeout=180)
    result = {"session_dir": session_dir, "actors": described}
    with open(args.out, "w") as f:
        json.dump(result, f)  # written early: a teardown below may end this process

    runs = [a.run_steps.remote(args.steps, args.work_ms, args.teardown == "exit") for a in actors]
    if args.teardown == "exit":
        for run in runs:
            try:
                ray.get(run, timeout=180)
            except ray.exceptions.ActorDiedError:
                pass  # the actor left after its last step, as asked
    else:
        result["capturing"] = ray.get(runs, timeout=180)
    if args.teardown == "kill":
        for a in actors:
            ray.kill(a)
    with open(args.out, "w") as f:
        json.dump(result, f)
    if args.teardown == "shutdown":
        ray.shutdown()
        return
    if args.teardown == "none":
        # Let the actors end with the job, after the reports had time to be written.
        time.sleep(5)
    ray.shutdown()


if __name__ == "__main__":
    main()
