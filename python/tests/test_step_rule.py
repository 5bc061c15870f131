"""NeMo RL's window rule from Python, without Ray: capture opens at the first step inside the
window and closes at the first step outside (a job resumed at step 4 of window 3:7 captures 4, 5
and 6; skipped and repeated steps keep it open). nsel.WindowRule runs the library's controller on
its own; the process-wide controller behind nsel.step() is checked in processes of their own."""

import json
import os
import random
import subprocess
import sys

import pytest

import nsel
from ray_support import private_ray


class Policy:
    """Stands for NeMo RL's policy object: records what the profiler hook asks of it."""

    def __init__(self):
        self.log = []

    def start_gpu_profiling(self):
        self.log.append("start")

    def stop_gpu_profiling(self):
        self.log.append("stop")


def nemo_rl_profile_step(policy, start, stop, step, state):
    """NeMo RL's maybe_gpu_profile_step, restated: inside the window and not started -> start;
    outside it and started -> stop."""
    if start <= step < stop:
        if not state.get("started"):
            policy.start_gpu_profiling()
            state["started"] = True
    elif state.get("started"):
        policy.stop_gpu_profiling()
        state["started"] = False


def nsel_log(step_range, steps):
    rule = nsel.WindowRule(step_range)
    log = []
    for n in steps:
        was = rule.capturing
        now = rule.step(n)
        log += ["stop"] if was and not now else []
        log += ["start"] if now and not was else []
    return log, rule


def test_a_resumed_job_captures_from_the_first_step_inside():
    rule = nsel.WindowRule("3:7")
    captured = [n for n in range(4, 10) if rule.step(n)]
    assert captured == [4, 5, 6]
    assert rule.captures == 1


def test_skipped_repeated_and_jumping_steps():
    rule = nsel.WindowRule("3:7")
    assert [rule.step(n) for n in (3, 5, 5, 6, 7)] == [True, True, True, True, False]
    rule = nsel.WindowRule("3:7")
    assert [rule.step(n) for n in (3, 4, 20)] == [True, True, False]
    rule = nsel.WindowRule("3:7")
    assert [rule.step(n) for n in (1, 2, 9)] == [False, False, False]
    assert rule.captures == 0


def test_several_windows_each_captured_once_in_order():
    # Resumed at 7 with 2:4,6:9: an empty capture for 2:4 keeps nsys's numbering, then 6:9 opens.
    rule = nsel.WindowRule("2:4,6:9")
    assert [rule.step(n) for n in (7, 8, 9)] == [True, True, False]
    assert rule.captures == 2
    # From 3:5 straight into the adjacent 5:8; a step back into 3:5 (captured) only closes 5:8,
    # and 5:8, captured too, does not open again.
    rule = nsel.WindowRule("3:5,5:8")
    assert [rule.step(n) for n in (4, 5, 3, 6)] == [True, True, False, False]
    assert rule.captures == 2


def test_agrees_with_nemo_rl_on_random_step_sequences():
    rng = random.Random(20261201)
    sequences = 20000
    captured = 0
    for i in range(sequences):
        start = rng.randint(1, 8)
        stop = start + rng.randint(1, 6)
        step = rng.randint(1, 10)
        steps = []
        for _ in range(rng.randint(0, 14)):
            steps.append(step)
            step = max(1, step + rng.randint(-3, 4))
        policy, state = Policy(), {}
        for n in steps:
            nemo_rl_profile_step(policy, start, stop, n, state)
        log, _ = nsel_log(f"{start}:{stop}", steps)
        assert log == policy.log, (f"{start}:{stop}", steps)
        captured += "start" in log
    assert sequences // 4 < captured < sequences


def test_bad_step_range_is_a_clear_error():
    with pytest.raises(nsel.Error, match=r"step_range='0:3': start must be >= 1"):
        nsel.WindowRule("0:3")


# The process-wide controller: one per process, so each case runs in a child of its own.
CHILD = """
import json, sys
import nsel
assert nsel.init_worker("dtensor_policy_worker") == 1
seen = []
for n in json.loads(sys.argv[1]):
    with nsel.step(n):
        seen.append(nsel.capturing())
print(json.dumps(seen))
"""


@pytest.mark.parametrize(
    "steps, expected",
    [
        ([4, 5, 6, 7, 8, 9], [True, True, True, False, False, False]),  # resumed at 4
        ([3, 5, 5, 6, 7], [True, True, True, True, False]),  # skipped and repeated
        ([3, 4, 20, 5], [True, True, False, True]),  # a jump past, then back inside
    ],
)
def test_nsel_step_in_a_selected_process(steps, expected, tmp_path):
    env = {"NRL_NSYS_WORKER_PATTERNS": "*policy*", "NRL_NSYS_PROFILE_STEP_RANGE": "3:7",
           "NSEL_CAPTURE": "none", "PATH": "/usr/bin:/bin"}
    # The child imports nsel with a selection, whose at-import fix of Ray's launcher then changes
    # a private view's copy of nsight.py, never the installed Ray that other tests use.
    paths = [str(private_ray(tmp_path, None))]
    if "PYTHONPATH" in os.environ:
        paths.append(os.environ["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(paths)
    result = subprocess.run([sys.executable, "-c", CHILD, json.dumps(steps)], env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == expected
