"""The Ray half of `nsel demo --ray`: NeMo RL's GRPO shape on a local Ray cluster of its own.
Two (or --ranks) `dtensor_policy_worker` actors, each given its rank, train: forward, backward,
an all-reduce (a barrier actor: every rank waits for the slowest) and optimizer, each an
nsel.range inside nsel.step(n); the last rank computes --slow-percent slower. One
`vllm_generation_worker` actor generates the rollouts. Every actor gets its runtime env from
nsel.plugin_runtime_env, so the NRL_NSYS_* variables choose which run under nsys.

The C++ `nsel demo --ray` runs this module with the venv's interpreter, then lists, summarises
and checks the reports; this module writes what it learnt (session, workers, pids) to --result
as JSON, and its own lines to stderr (stdout stays the demo's listing)."""

import argparse
import asyncio
import json
import math
import os
import sys
import time
from pathlib import Path

POLICY = "dtensor_policy_worker"
GENERATION = "vllm_generation_worker"


def _say(line):
    print(f"nsel demo: {line}", file=sys.stderr, flush=True)


def _burn(milliseconds):
    """Stand-in for GPU work (the demo runs anywhere): real CPU work for a while."""
    until = time.monotonic() + milliseconds / 1000
    total = 0.0
    while time.monotonic() < until:
        total += sum(math.sqrt(i) for i in range(500))
    return total


def _actors(ray, nsel):
    """The demo's actor classes, defined once Ray is imported (ray.remote needs it)."""

    @ray.remote(num_cpus=0)
    class AllReduce:
        """Stands for the collective: a rank's arrive(step) returns once every rank arrived."""

        def __init__(self, world):
            self.world = world
            self.arrived = {}
            self.done = {}

        async def arrive(self, step):
            done = self.done.setdefault(step, asyncio.Event())
            self.arrived[step] = self.arrived.get(step, 0) + 1
            if self.arrived[step] >= self.world:
                done.set()
            await done.wait()

    @ray.remote(num_cpus=0)
    class GenerationWorker:
        def pid(self):
            return os.getpid()

        def generate(self, step, prompts, work_ms):
            with nsel.step(step):
                with nsel.range("generate"):
                    _burn(work_ms * 0.5)
                return [f"step {step} rollout {i}" for i in range(prompts)]

    @ray.remote(num_cpus=0)
    class PolicyWorker:
        def __init__(self, rank, all_reduce, slowdown):
            self.rank = rank
            self.all_reduce = all_reduce
            self.slowdown = slowdown

        def pid(self):
            return os.getpid()

        def train(self, step, rollouts, work_ms):
            work = work_ms * self.slowdown
            with nsel.step(step):
                with nsel.range("forward"):
                    _burn(work * 0.4)
                with nsel.range("backward"):
                    _burn(work * 0.5)
                with nsel.range("all-reduce"):
                    ray.get(self.all_reduce.arrive.remote(step))
                with nsel.range("optimizer"):
                    _burn(work * 0.1)
            return {"rank": self.rank, "loss": 1.0 / (step + len(rollouts))}

    return AllReduce, GenerationWorker, PolicyWorker


def _wait_for_reports(nsight, expected, seconds):
    """nsys writes a report once its process has ended: waits until `expected` are there."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and len(list(nsight.glob("*.nsys-rep"))) < expected:
        time.sleep(0.5)


def run(args):
    from . import _nsel

    # The local cluster that ray.init() starts loads nsel's plugin from this variable (`nsel demo
    # --ray` sets it already; this is for the module run by hand).
    os.environ.setdefault("RAY_RUNTIME_ENV_PLUGINS", _nsel.nsel_plugin_setting())
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    import ray

    import nsel

    root = Path(args.root).absolute()
    root.mkdir(parents=True, exist_ok=True)
    _say(f"starting a local Ray cluster (Ray {ray.__version__}) under {root}")
    ray.init(address="local", _temp_dir=str(root), include_dashboard=False, log_to_driver=False,
             logging_level="ERROR", num_cpus=2)
    result = {"ray": ray.__version__, "workers": [], "failed_workers": 0}
    try:
        session = Path(ray._private.worker.global_worker.node.get_session_dir_path())
        result["session"] = str(session)
        result["nsight_dir"] = str(session / "logs" / "nsight")
        _say(f"session {session}")
        all_reduce_class, generation_class, policy_class = _actors(ray, nsel)
        all_reduce = all_reduce_class.remote(args.ranks)
        workers = []
        for rank in range(args.ranks):
            slowdown = 1 + (args.slow_percent / 100 if args.ranks > 1 and rank == args.ranks - 1
                            else 0)
            env = nsel.plugin_runtime_env(POLICY, rank=rank, local_rank=rank)
            actor = policy_class.options(runtime_env=env).remote(rank, all_reduce, slowdown)
            workers.append((POLICY, rank, actor))
        env = nsel.plugin_runtime_env(GENERATION, rank=0, local_rank=0)
        generation = generation_class.options(runtime_env=env).remote()
        workers.append((GENERATION, 0, generation))
        pids = ray.get([actor.pid.remote() for _, _, actor in workers])
        for (name, rank, _), pid in zip(workers, pids):
            plan = nsel.plan(name, probe_node=False, rank=rank, local_rank=rank)
            result["workers"].append({"worker": name, "rank": rank, "pid": pid,
                                      "profiled": bool(plan["profile"]),
                                      "reason": plan["reason"]})
            _say(f"{name} rank {rank} (pid {pid}): "
                 f"{'profiled' if plan['profile'] else 'runs bare'} ({plan['reason']})")
        policies = [actor for name, _, actor in workers if name == POLICY]
        for step in range(1, args.steps + 1):
            rollouts = ray.get(generation.generate.remote(step, 8, args.work_ms))
            losses = ray.get([p.train.remote(step, rollouts, args.work_ms) for p in policies])
            _say(f"step {step}: loss {sum(r['loss'] for r in losses) / len(losses):.4f}")
    finally:
        ray.shutdown()
    expected = sum(w["profiled"] for w in result["workers"])
    _wait_for_reports(Path(result["nsight_dir"]), expected, 60)
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m nsel._demo_ray", description=__doc__)
    parser.add_argument("--root", required=True)
    parser.add_argument("--result", required=True)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--work-ms", type=int, default=150)
    parser.add_argument("--slow-percent", type=int, default=50)
    parser.add_argument("--ranks", type=int, default=2)
    args = parser.parse_args(argv)
    try:
        result = run(args)
        code = 0
    except Exception as e:  # the C++ side says what failed; the detail is here
        _say(f"the Ray job failed: {type(e).__name__}: {e}")
        result = {"error": f"{type(e).__name__}: {e}"}
        code = 1
    temporary = Path(args.result + ".part")
    temporary.write_text(json.dumps(result))
    temporary.replace(args.result)
    return code


if __name__ == "__main__":
    sys.exit(main())
