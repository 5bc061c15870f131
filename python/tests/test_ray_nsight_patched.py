"""Ray's own `nsight` field after `nsel ray patch`, on a real local cluster: workers keep the
virtual environment's interpreter, reports land in <session>/logs/nsight/ with the contract's
names and exactly the window's steps, the unmatched worker runs bare, and hostile names and
values are used literally, and NSEL_PROFILE_RANKS with the ranks the driver gives profiles only
the chosen actor of a worker group."""

import json
from pathlib import Path

import pytest

from ray_support import (SELECT, VENV_BIN, RayCluster, actor, expected_report, nsys_pids,
                         report_steps, under_nsys, wait_for_report)

# No '"' or '&': Nsight Systems cannot finish a report whose name holds one, so nsel refuses such
# names (test_names_nsys_cannot_finish_are_refused_before_anything_starts).
HOSTILE = "evil $(touch $NSEL_PWNED1) `touch $NSEL_PWNED2`; touch $NSEL_PWNED3 'q' \\ | < >"


@pytest.fixture(scope="module")
def cluster():
    c = RayCluster(ray_launcher="patched")
    yield c
    c.stop()


def check_selected_and_unmatched(result):
    policies = actor(result, "dtensor_policy_worker")
    assert len(policies) == 2
    nsight_dir = Path(result["session_dir"]) / "logs" / "nsight"
    for policy in policies:
        assert Path(policy["executable"]).parent == VENV_BIN, policy["executable"]
        assert under_nsys(policy)
        report = expected_report(result["session_dir"], "dtensor_policy_worker", policy["pid"])
        assert wait_for_report(report, nsys_pids(policy)), sorted(nsight_dir.iterdir())
        assert report_steps(report) == [2, 3]
    [generation] = actor(result, "vllm_generation_worker")
    assert not under_nsys(generation)
    assert not list(nsight_dir.glob(f"*_{generation['pid']}.nsys-rep"))
    assert result["capturing"][-1] == [False] * 5
    return nsight_dir


def test_patched_launcher_keeps_the_interpreter_and_writes_the_reports(cluster):
    result, done = cluster.run_driver("nsight", "patched")
    assert done.returncode == 0, done.stderr[-4000:]
    assert done.stderr.count(
        "Nsight profiling enabled for worker 'dtensor_policy_worker' (matched pattern '*policy*')"
    ) >= 2
    check_selected_and_unmatched(result)


def check_hostile(cluster, way):
    """A worker name and an nsys option value full of shell syntax: the reports carry them
    literally and nothing they spell out ever runs."""
    name = HOSTILE
    env = cluster.driver_environment({"NRL_NSYS_WORKER_PATTERNS": "evil*",
                                      "NRL_NSYS_PROFILE_STEP_RANGE": "2:4"})
    result, done = cluster.run_driver(way, f"{way}-hostile-name", actors=f"{name}:1", env=env)
    assert done.returncode == 0, done.stderr[-4000:]
    [worker] = actor(result, name)
    assert under_nsys(worker)
    report = expected_report(result["session_dir"], name, worker["pid"])
    assert wait_for_report(report, nsys_pids(worker)), sorted(report.parent.iterdir())
    assert report_steps(report) == [2, 3]

    output = "out $(touch $NSEL_PWNED4) ; `touch $NSEL_PWNED5` 'q'_%p"
    env = cluster.driver_environment(dict(SELECT, NRL_NSYS_EXTRA_OPTIONS=json.dumps({"o": output})))
    result, done = cluster.run_driver(way, f"{way}-hostile-value",
                                      actors="dtensor_policy_worker:1", env=env)
    assert done.returncode == 0, done.stderr[-4000:]
    [worker] = actor(result, "dtensor_policy_worker")
    report = report.parent / (output.replace("%p", str(worker["pid"])) + ".nsys-rep")
    assert wait_for_report(report, nsys_pids(worker)), sorted(report.parent.iterdir())
    assert report_steps(report) == [2, 3]
    assert [p for p in cluster.pwned if p.exists()] == []


def test_hostile_names_and_values_are_used_literally(cluster):
    check_hostile(cluster, "nsight")


def check_only_the_chosen_rank(cluster, way):
    """Two actors of one worker group, given ranks 0 and 1 by the driver, under
    NSEL_PROFILE_RANKS=1: rank 1 alone gets a report with the window's steps; rank 0 runs bare
    (no nsys, no nsel exec above it). Returns rank 1's description."""
    env = cluster.driver_environment(dict(SELECT, NSEL_PROFILE_RANKS="1"))
    result, done = cluster.run_driver(way, f"{way}-ranks", actors="dtensor_policy_worker:2",
                                      env=env, ranks=True)
    assert done.returncode == 0, done.stderr[-4000:]
    chosen, other = actor(result, "dtensor_policy_worker")[::-1]  # started as rank 0, then 1
    assert under_nsys(chosen)
    report = expected_report(result["session_dir"], "dtensor_policy_worker", chosen["pid"])
    assert wait_for_report(report, nsys_pids(chosen)), sorted(report.parent.iterdir())
    assert report_steps(report) == [2, 3]
    assert not under_nsys(other)
    assert not any(p["argv"][1:2] == ["exec"] for p in other["ancestry"] if p["argv"])
    assert not list(report.parent.glob(f"*_{other['pid']}.nsys-rep"))
    assert result["capturing"][0] == [False] * 5
    return chosen


def test_only_the_chosen_rank_of_a_worker_group_is_profiled(cluster):
    check_only_the_chosen_rank(cluster, "nsight")


@pytest.mark.parametrize("helper", ["nsight_runtime_env", "plugin_runtime_env"])
def test_names_nsys_cannot_finish_are_refused_before_anything_starts(helper, monkeypatch):
    import nsel

    monkeypatch.setenv("NRL_NSYS_WORKER_PATTERNS", "evil*")
    monkeypatch.setenv("NRL_NSYS_PROFILE_STEP_RANGE", "2:4")
    with pytest.raises(nsel.Error) as refused:
        getattr(nsel, helper)('evil "dq"')
    assert str(refused.value) == (
        "worker name='evil \"dq\"': the report name would hold '\"' or '&', which Nsight "
        "Systems cannot finish a report under; expected a name without '\"' and '&'")
    with pytest.raises(nsel.Error):
        getattr(nsel, helper)("evil & co")
