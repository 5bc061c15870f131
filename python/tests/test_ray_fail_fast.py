"""A Ray user is never left unprofiled by a setting Ray or nsys refuses, and never waits minutes
to learn it. On one real local cluster that loads nsel's plugin: an nsys option or value nsys
refuses, and a node without nsys, fail the actor's runtime env with nsel's one line (Ray's
RuntimeEnvSetupError) instead of Ray's worker-start retries (measured at 383 s before, ending in
ActorUnschedulableError); `nsel doctor` sees the plugin setting and the cluster's agent; the
ranks the driver gives are in the manifests. Without a cluster: a driver whose Ray will not load
the plugin gets nsel.Error at once, before and after ray.init()."""

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from ray_support import (PLUGIN_SETTING, SELECT, VENV_PYTHON, RayCluster, actor,
                         base_environment, expected_report, nsel_cli, nsys_pids, private_ray,
                         ray_site_packages, wait_for_report)

NOT_LOADED = ("worker 'dtensor_policy_worker' would run UNPROFILED: Ray does not load nsel's "
              "plugin (RAY_RUNTIME_ENV_PLUGINS is unset ")


@pytest.fixture(scope="module")
def cluster():
    c = RayCluster(env_overrides={"RAY_RUNTIME_ENV_PLUGINS": PLUGIN_SETTING})
    yield c
    c.stop()


def path_without_nsys(root):
    """A PATH folder with the venv's python and nothing else (no nsys): a node without nsys."""
    folder = Path(root) / "no-nsys-bin"
    folder.mkdir(exist_ok=True)
    for name in ("python", "python3"):
        if not (folder / name).exists():
            (folder / name).symlink_to(VENV_PYTHON)
    return str(folder)


def failed_start(cluster, name, env=None, env_vars=None):
    """Runs the driver for one policy actor that must not start; returns what it wrote."""
    extra = ["--env-vars", json.dumps(env_vars)] if env_vars else []
    start = time.monotonic()
    out = cluster.temp_dir / f"{name}.json"
    done = subprocess.run(
        [VENV_PYTHON, str(Path(__file__).parent / "ray_driver.py"), "--address", cluster.address,
         "--way", "plugin", "--out", str(out), "--actors", "dtensor_policy_worker:1", *extra],
        env=env or cluster.driver_environment(), capture_output=True, text=True, timeout=900)
    wall = time.monotonic() - start
    assert done.returncode == 3, done.stderr[-4000:]
    result = json.loads(out.read_text())
    print(f"\n{name}: {result['error_type']} {result['seconds']:.1f} s after the actor's "
          f"creation ({wall:.1f} s for the whole driver)")
    return result


def test_an_option_nsys_does_not_know_fails_the_actor_at_once(cluster):
    env = cluster.driver_environment()
    env["NRL_NSYS_EXTRA_OPTIONS"] = '{"bogus-option": "1"}'
    # The driver's own nsys refuses it first, as `nsel plan` does.
    here = subprocess.run([VENV_PYTHON, "-c", "import nsel; "
                           "nsel.plugin_runtime_env('dtensor_policy_worker')"],
                          env=env, capture_output=True, text=True)
    assert here.returncode == 1
    assert ("nsel._nsel.Error: NRL_NSYS_EXTRA_OPTIONS='{\"bogus-option\": \"1\"}': Nsight "
            "Systems ") in here.stderr
    # A driver on a node without nsys cannot ask: the actor's node then refuses it.
    env["PATH"] = path_without_nsys(cluster.temp_dir)
    result = failed_start(cluster, "unknown-option", env=env)
    assert result["error_type"] == "RuntimeEnvSetupError", result["error"]
    assert "refuses it: unrecognised option '--bogus-option=1'" in result["error"]
    assert result["seconds"] < 120, "failed by Ray's retries, not by nsel"


def test_a_value_only_profiling_checks_fails_the_actor_at_once(cluster):
    env = cluster.driver_environment()
    env["NRL_NSYS_EXTRA_OPTIONS"] = '{"t": "cuda,bogus"}'
    result = failed_start(cluster, "bad-value", env=env)
    assert result["error_type"] == "RuntimeEnvSetupError", result["error"]
    assert "refuses it: Illegal --trace argument 'bogus'" in result["error"]
    assert result["seconds"] < 120, "failed by Ray's retries, not by nsel"


def test_a_node_without_nsys_fails_the_actor_at_once(cluster):
    # The actor's env_vars give its worker a PATH without nsys, as on a node without it.
    result = failed_start(cluster, "no-nsys",
                          env_vars={"PATH": path_without_nsys(cluster.temp_dir)})
    assert result["error_type"] == "RuntimeEnvSetupError", result["error"]
    assert ("worker 'dtensor_policy_worker' is selected but nsys (Nsight Systems) is not on PATH"
            in result["error"])
    assert result["seconds"] < 120, "failed by Ray's retries, not by nsel"


def test_the_ranks_the_driver_gives_are_in_the_manifests(cluster):
    result, done = cluster.run_driver("plugin", "ranks", actors="dtensor_policy_worker:2",
                                      ranks=True)
    assert done.returncode == 0, done.stderr[-4000:]
    ranks = {}
    for policy in actor(result, "dtensor_policy_worker"):
        report = expected_report(result["session_dir"], "dtensor_policy_worker", policy["pid"])
        assert wait_for_report(report, nsys_pids(policy)), report
        manifest = json.loads(Path(str(report).removesuffix(".nsys-rep") + ".nsel.json")
                              .read_text())
        ranks[manifest["rank"]] = policy["pid"]
        assert manifest["local_rank"] is None
    assert sorted(ranks) == [0, 1]
    listed = subprocess.run([nsel_cli(), "ls", "--json", result["session_dir"]],
                            capture_output=True, text=True, env=base_environment())
    assert listed.returncode == 0, listed.stderr
    assert {r["rank"]: r["pid"] for r in json.loads(listed.stdout)["reports"]} == ranks


def test_doctor_sees_the_plugin_setting_and_the_clusters_agent(cluster):
    env = dict(cluster.env, PATH=f"{Path(VENV_PYTHON).parent}:{os.environ['PATH']}")
    done = subprocess.run([nsel_cli(), "doctor", "--json"], capture_output=True, text=True,
                          env=env)
    checks = {c["name"]: c for c in json.loads(done.stdout)["checks"]}
    plugin = checks["ray_plugin"]
    assert plugin["status"] in ("ok", "warning"), plugin
    assert "imports it from " in plugin["detail"], plugin
    sessions = [p.name for p in Path(cluster.temp_dir).glob("session_2*")]
    assert any(f"({s}) loads nsel's plugin" in plugin["detail"] for s in sessions), plugin
    unset = dict(env, RAY_RUNTIME_ENV_PLUGINS="")
    done = subprocess.run([nsel_cli(), "doctor", "--json"], capture_output=True, text=True,
                          env=unset)
    plugin = {c["name"]: c for c in json.loads(done.stdout)["checks"]}["ray_plugin"]
    assert plugin["status"] == "warning"
    assert plugin["detail"].startswith("RAY_RUNTIME_ENV_PLUGINS is not set: ")


DRIVER_WITHOUT_PLUGIN = """
import sys, time
import nsel, ray
start = time.monotonic()
try:
    nsel.plugin_runtime_env("dtensor_policy_worker")
except nsel.Error as e:
    print("before", round(time.monotonic() - start, 3), e)
ray.init(_temp_dir=sys.argv[1], num_cpus=1, include_dashboard=False, logging_level="ERROR")
start = time.monotonic()
try:
    nsel.plugin_runtime_env("dtensor_policy_worker")
except nsel.Error as e:
    print("after", round(time.monotonic() - start, 3), e)
# An unselected worker needs no plugin: no error, and no "enabled" line.
print("unselected", nsel.plugin_runtime_env("vllm_generation_worker"))
ray.shutdown()
"""


def test_without_the_plugin_loaded_the_driver_fails_at_once():
    root = Path(tempfile.mkdtemp(prefix="nsel-noplug-"))
    env = dict(base_environment(), **SELECT)
    # Without the plugin, this driver's `import nsel` fixes the launcher of the Ray it finds, as a
    # user's would: here a private view of it, so the venv other tests use stays as it was.
    env["PYTHONPATH"] = f"{private_ray(root, None)}:{ray_site_packages()}"
    try:
        done = subprocess.run([VENV_PYTHON, "-c", DRIVER_WITHOUT_PLUGIN, str(root)], env=env,
                              capture_output=True, text=True, timeout=300)
    finally:
        subprocess.run(["rm", "-rf", str(root)])
    assert done.returncode == 0, done.stderr[-4000:]
    lines = done.stdout.splitlines()
    assert [line.split()[0] for line in lines] == ["before", "after", "unselected"], done.stdout
    for line in lines[:2]:
        _, seconds, message = line.split(" ", 2)
        print(f"\n{line[:80]}...")
        assert message.startswith(NOT_LOADED), message
        assert "'[{\"class\": \"nsel.ray_plugin.NselPlugin\"}]'" in message
        assert float(seconds) < 10
    assert lines[2] == "unselected {}"
    assert "Nsight profiling enabled" not in done.stdout + done.stderr
