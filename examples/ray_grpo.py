"""A small GRPO-shaped Ray job profiled with nsel: two policy actors `dtensor_policy_worker`, one
generation actor `vllm_generation_worker`, 5 steps. Each step the generation actor produces
rollouts and the policy actors train on them; every actor marks its steps with nsel.step(n).

    NRL_NSYS_WORKER_PATTERNS='*policy*' NRL_NSYS_PROFILE_STEP_RANGE=2:4 \
      .venv/bin/python examples/ray_grpo.py --way plugin      # nsel's runtime-env plugin
    NRL_NSYS_WORKER_PATTERNS='*policy*' NRL_NSYS_PROFILE_STEP_RANGE=2:4 \
      .venv/bin/python examples/ray_grpo.py --way nsight      # Ray's own nsight field

Each policy actor is given its rank (0, 1), so `NSEL_PROFILE_RANKS=1` added to the lines above
profiles only the rank-1 policy actor.

It starts a local Ray cluster (or joins RAY_ADDRESS / --address) and ends by listing the reports
in <session>/logs/nsight/: one `dtensor_policy_worker_2:4_<PID>.nsys-rep` per policy actor, none
for the generation actor. No GPU is needed: without one, nsel captures the window with an NVTX
range.
"""

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

import nsel  # with NRL_NSYS_WORKER_PATTERNS set, this also fixes Ray's nsight launcher
import ray

PLUGIN = json.dumps([{"class": "nsel.ray_plugin.NselPlugin"}])


def burn(milliseconds):
    """Stand-in for GPU work (this example runs anywhere): real CPU work for a while."""
    until = time.monotonic() + milliseconds / 1000
    total = 0.0
    while time.monotonic() < until:
        total += sum(math.sqrt(i) for i in range(2000))
    return total


@ray.remote
class GenerationWorker:
    def generate(self, step, prompts):
        with nsel.step(step):
            burn(80)
            return [f"step {step} rollout {i}" for i in range(prompts)]


@ray.remote
class PolicyWorker:
    def __init__(self, rank):
        self.rank = rank

    def pid(self):
        return os.getpid()

    def train(self, step, rollouts):
        with nsel.step(step):
            burn(120)
            return {"rank": self.rank, "step": step, "loss": 1.0 / (step + len(rollouts))}


def runtime_env(way, worker, rank=None):
    """The runtime_env that profiles `worker` (of rank `rank` in its group) when
    NRL_NSYS_WORKER_PATTERNS and NSEL_PROFILE_RANKS select it ({} when not): nsel's plugin, or
    Ray's own nsight field (with the launcher fixed by `import nsel`)."""
    if way == "plugin":
        return nsel.plugin_runtime_env(worker, rank=rank)
    return nsel.nsight_runtime_env(worker, rank=rank)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--way", choices=["plugin", "nsight"], default="plugin")
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--address", default=os.environ.get("RAY_ADDRESS"),
                        help="join this cluster instead of starting a local one")
    args = parser.parse_args()

    if args.way == "plugin" and not args.address:
        # The local cluster that ray.init() starts loads the plugin from this variable; a
        # cluster started with `ray start` needs it in the environment of `ray start`.
        os.environ.setdefault("RAY_RUNTIME_ENV_PLUGINS", PLUGIN)
    ray.init(address=args.address, include_dashboard=False, logging_level="ERROR")
    session = Path(ray._private.worker.global_worker.node.get_session_dir_path())

    generation = GenerationWorker.options(
        runtime_env=runtime_env(args.way, "vllm_generation_worker")).remote()
    policies = [
        PolicyWorker.options(
            runtime_env=runtime_env(args.way, "dtensor_policy_worker", rank=r)).remote(r)
        for r in range(2)
    ]
    pids = ray.get([p.pid.remote() for p in policies])
    for step in range(1, args.steps + 1):
        rollouts = ray.get(generation.generate.remote(step, 8))
        results = ray.get([p.train.remote(step, rollouts) for p in policies])
        print(f"step {step}: loss {sum(r['loss'] for r in results) / len(results):.4f}")
    ray.shutdown()

    nsight = session / "logs" / "nsight"
    expected = sum(bool(nsel.plan("dtensor_policy_worker", probe_node=False, rank=r)["profile"])
                   for r in range(len(pids)))
    deadline = time.monotonic() + 60  # nsys writes each report once its process has ended
    while time.monotonic() < deadline and len(list(nsight.glob("*.nsys-rep"))) < expected:
        time.sleep(0.5)
    time.sleep(2)
    print(f"Reports in {nsight} (policy actor pids {pids}):")
    for report in sorted(nsight.glob("*.nsys-rep")):
        print(f"  {report.name:<45} {report.stat().st_size / 1024:8.1f} KiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
