"""The Ray binding's rank arguments, without Ray: which actors the driver-side helpers select
under NSEL_PROFILE_RANKS / NSEL_PROFILE_LOCAL_RANKS / NSEL_PROFILE_NODES, what the plugin's
entry carries to `nsel exec` on the actor's node, the plugin's checks of it, and
nsel.init_worker(worker, rank=...) in a process of its own."""

import json
import shlex
import shutil
import subprocess
import sys

import pytest

import nsel
from nsel import _nsel
from nsel._cli import BINARY

WORKER = "dtensor_policy_worker"
SETTINGS = ("NRL_NSYS_WORKER_PATTERNS", "NRL_NSYS_PROFILE_STEP_RANGE", "NRL_NSYS_EXTRA_OPTIONS",
            "NSEL_CAPTURE", "NSEL_PROFILE_RANKS", "NSEL_PROFILE_LOCAL_RANKS",
            "NSEL_PROFILE_NODES", "RANK", "LOCAL_RANK", "SLURM_PROCID", "SLURM_LOCALID")


@pytest.fixture
def env(monkeypatch):
    for name in SETTINGS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NRL_NSYS_WORKER_PATTERNS", "*policy*")
    monkeypatch.setenv("NRL_NSYS_PROFILE_STEP_RANGE", "2:4")
    monkeypatch.setenv("NSEL_CAPTURE", "nvtx")  # no GPU probe in these tests
    # As for a driver whose ray.init() will start a local cluster that loads nsel's plugin
    # (without it plugin_runtime_env refuses a selected worker; see test_ray_fail_fast.py).
    monkeypatch.setenv("RAY_RUNTIME_ENV_PLUGINS", '[{"class": "nsel.ray_plugin.NselPlugin"}]')
    return monkeypatch


def test_only_the_given_ranks_are_selected_by_both_ways(env):
    env.setenv("NSEL_PROFILE_RANKS", "1,3-4")
    for way in (nsel.nsight_runtime_env, nsel.plugin_runtime_env):
        chosen = [rank for rank in range(6) if way(WORKER, rank=rank)]
        assert chosen == [1, 3, 4], way.__name__
    assert nsel.nsight_runtime_env("vllm_generation_worker", rank=1) == {}


def test_the_given_rank_wins_over_the_drivers_variables(env):
    env.setenv("NSEL_PROFILE_RANKS", "1")
    env.setenv("RANK", "1")  # the driver's own rank is not the actor's
    assert nsel.nsight_runtime_env(WORKER, rank=0) == {}
    assert nsel.plugin_runtime_env(WORKER, rank=0) == {}
    plan = nsel.plan(WORKER, probe_node=False, rank=0)
    assert not plan["profile"]
    assert plan["reason"] == "rank 0 (from the rank argument) is not in NSEL_PROFILE_RANKS='1'"
    # Without an argument, a plan for this process reads its RANK.
    assert nsel.plan(WORKER, probe_node=False)["reason"].endswith(
        "; rank 1 (from RANK) is in NSEL_PROFILE_RANKS='1'")


def test_nsight_without_a_rank_is_left_out_with_a_warning(env, capfd):
    env.setenv("NSEL_PROFILE_RANKS", "0")
    env.setenv("RANK", "0")  # the driver's: not looked at for an actor
    assert nsel.nsight_runtime_env(WORKER) == {}
    assert capfd.readouterr().err == (
        "nsel: warning: worker 'dtensor_policy_worker' matched pattern '*policy*' but is not "
        "profiled: NSEL_PROFILE_RANKS='0' is set but the rank is unknown: none of RANK, "
        "SLURM_PROCID, OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK, MV2_COMM_WORLD_RANK is set and "
        "none was given\n")


def test_the_plugin_leaves_what_it_was_not_given_to_the_actors_node(env):
    env.setenv("NSEL_PROFILE_RANKS", "1")
    env.setenv("NSEL_PROFILE_LOCAL_RANKS", "0")
    env.setenv("NSEL_PROFILE_NODES", "no-such-node*")
    entry = nsel.plugin_runtime_env(WORKER, rank=1)
    assert entry == {"nsel": {"worker": WORKER, "rank": 1, "env": {
        "NRL_NSYS_WORKER_PATTERNS": "*policy*", "NRL_NSYS_PROFILE_STEP_RANGE": "2:4",
        "NSEL_CAPTURE": "nvtx", "NSEL_PROFILE_RANKS": "1", "NSEL_PROFILE_LOCAL_RANKS": "0",
        "NSEL_PROFILE_NODES": "no-such-node*"}}}
    # Ray's nsight field is decided here: the node must be given.
    assert nsel.nsight_runtime_env(WORKER, rank=1, local_rank=0) == {}
    assert nsel.nsight_runtime_env(WORKER, rank=1, local_rank=0, node="no-such-node-3")
    assert nsel.plugin_runtime_env(WORKER, rank=1, local_rank=0, node="other") == {}


def test_bad_arguments_name_themselves(env):
    for way in (nsel.nsight_runtime_env, nsel.plugin_runtime_env, nsel.init_worker):
        for arguments, message in (
                ({"rank": -1}, "rank='-1': not a whole number >= 0; expected a whole number >= 0, "
                               "for example '3'"),
                ({"local_rank": -2}, "local_rank='-2': not a whole number >= 0; expected a whole "
                                     "number >= 0, for example '3'"),
                ({"node": ""}, "node='': empty node name; expected the actor's node name as "
                               "NSEL_PROFILE_NODES patterns see it, for example 'node07'")):
            with pytest.raises(nsel.Error) as raised:
                way(WORKER, **arguments)
            assert str(raised.value) == message, way.__name__


def test_the_plugin_passes_the_identity_to_nsel_exec(env):
    ray_plugin = pytest.importorskip("nsel.ray_plugin")  # imports Ray; starts nothing
    env.setenv("NSEL_PROFILE_RANKS", "1")
    entry = nsel.plugin_runtime_env(WORKER, rank=1, local_rank=0, node="node 7")
    ray_plugin.NselPlugin.validate(entry)
    config = entry["nsel"]
    line = _nsel.plugin_executable("nsel", WORKER, "/out", "python", [], config["rank"],
                                   config["local_rank"], config["node"])
    assert shlex.split(line) == ["nsel", "exec", f"--worker={WORKER}", "--output-dir=/out",
                                 "--rank=1", "--local-rank=0", "--node=node 7", "--", "python"]
    for key, value in (("rank", -1), ("rank", "1"), ("local_rank", True), ("node", ""),
                       ("rank", 2**63), ("worker", "w\x00x"), ("worker", ""), ("node", "n\x00")):
        with pytest.raises(ValueError, match=rf"^runtime_env\['nsel'\]: {key}="):
            ray_plugin.NselPlugin.validate({"nsel": dict(config, **{key: value})})


def run_init_worker(arguments, **variables):
    """nsel.init_worker(...) in a process of its own (it turns step control on for good)."""
    # Ray hidden (find_spec gives None): the at-import fix has nothing to change.
    code = ("import sys; sys.modules['ray'] = None; import nsel; r = nsel.init_worker("
            + arguments + "); "
            "print(r, nsel.capturing()); sys.stdout.flush()")
    env = {"PATH": "/usr/bin:/bin", "NRL_NSYS_WORKER_PATTERNS": "*policy*",
           "NRL_NSYS_PROFILE_STEP_RANGE": "2:4", "NSEL_CAPTURE": "nvtx", **variables}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()[0], done.stderr


def test_init_worker_takes_the_rank_over_the_variables():
    assert run_init_worker(f"'{WORKER}', rank=1", NSEL_PROFILE_RANKS="1", RANK="0")[0] == "1"
    result, stderr = run_init_worker(f"'{WORKER}', rank=0", NSEL_PROFILE_RANKS="1", RANK="1")
    assert (result, stderr) == ("0", "")
    assert run_init_worker(f"'{WORKER}'", NSEL_PROFILE_RANKS="1", RANK="1")[0] == "1"
    assert run_init_worker(f"'{WORKER}', local_rank=2", NSEL_PROFILE_LOCAL_RANKS="2")[0] == "1"


def _nsel_plan_json(worker):
    """`nsel plan --json WORKER` of the package's own binary, with this process's environment."""
    done = subprocess.run([BINARY, "plan", "--json", worker], capture_output=True, text=True,
                          timeout=60)
    return done


@pytest.mark.skipif(shutil.which("nsys") is None, reason="needs nsys on PATH: the plan names it")
def test_nsel_plan_in_python_is_nsel_plan_on_the_command_line(env):
    """One decision for both: the nsys found and the options its version needs, the command, the
    reason and the lines told before the plan (before, nsel.plan() named a bare "nsys" with
    every generation's workarounds, and never asked nsys about the options)."""
    env.setenv("NRL_NSYS_EXTRA_OPTIONS", '{"t": "cuda,nvtx"}')
    done = _nsel_plan_json(WORKER)
    assert done.returncode == 0, done.stderr
    shown = json.loads(done.stdout)
    plan = nsel.plan(WORKER)
    assert plan["command"] == shown["command"]
    assert plan["command"][0] == shutil.which("nsys")
    assert dict(plan["options"]) == shown["options"]
    assert (plan["profile"], plan["capture"], plan["reason"]) == (
        shown["profile"], shown["capture"], shown["reason"])
    assert plan["notices"] + [plan["log_line"]] == done.stderr.splitlines()


@pytest.mark.skipif(shutil.which("nsys") is None, reason="needs nsys on PATH to ask")
def test_an_option_nsys_does_not_know_is_refused_by_both_plans(env):
    env.setenv("NRL_NSYS_EXTRA_OPTIONS", '{"bogus-option": "1"}')
    done = _nsel_plan_json(WORKER)
    assert done.returncode == 2
    with pytest.raises(nsel.Error) as refused:
        nsel.plan(WORKER)
    assert f"nsel: error: {refused.value}" == done.stderr.strip()


def test_nul_bool_and_out_of_range_values_are_refused_by_one_rule(env):
    """The driver's helpers, init_worker and the step API refuse what the plugin refuses, with
    nsel.Error naming the argument (before: a NUL went into the command line, rank=True was rank 1
    for the driver but refused by the plugin inside Ray, and 2**63 gave the binding's TypeError)."""
    expected_rank = "expected a whole number >= 0, for example '3'"
    for way in (nsel.nsight_runtime_env, nsel.plugin_runtime_env, nsel.plan, nsel.init_worker):
        for arguments, message in (
                ({"rank": True}, f"rank='True': a bool, not a whole number; {expected_rank}"),
                ({"local_rank": 1.0}, f"local_rank='1.0': a float, not a whole number; "
                                      f"{expected_rank}"),
                ({"rank": 2**63}, f"rank='{2**63}': too large; {expected_rank}"),
                ({"node": "n\x00"}, "node='n\\x00': holds a NUL byte; expected the actor's "
                                    "node name as NSEL_PROFILE_NODES patterns see it, for "
                                    "example 'node07'")):
            with pytest.raises(nsel.Error) as raised:
                way(WORKER, **arguments)
            assert str(raised.value) == message, way.__name__
        with pytest.raises(nsel.Error) as raised:
            way("w\x00x")
        assert str(raised.value).startswith("worker='w\\x00x': holds a NUL byte"), way.__name__
    for number in (2**63, -2**63 - 1):
        with pytest.raises(nsel.Error, match=r"^number='-?\d+': out of range; expected a whole "):
            nsel.step(number)
        with pytest.raises(nsel.Error, match=r"^number="):
            nsel.WindowRule("1:3").step(number)
    with pytest.raises(nsel.Error, match=r"^number='True': a bool, not a whole number"):
        nsel.step(True)
    assert nsel.WindowRule("1:3").step(1) is True
