"""Ray's own `nsight` field with Ray's launcher as released: the bug docs/ray.md describes,
reproduced on a real local cluster. The worker's interpreter is thrown away for the `python` on
PATH (here the base interpreter, not the virtual environment's)."""

from pathlib import Path

import pytest

from ray_support import VENV_BIN, RayCluster, actor, under_nsys


@pytest.fixture(scope="module")
def cluster():
    c = RayCluster(ray_launcher="unpatched")
    yield c
    c.stop()


def test_unpatched_launcher_runs_the_python_on_path(cluster):
    result, done = cluster.run_driver("nsight", "bug", actors="dtensor_policy_worker:1")
    assert done.returncode == 0, done.stderr[-4000:]
    [policy] = actor(result, "dtensor_policy_worker")
    assert under_nsys(policy)
    assert Path(policy["executable"]).parent != VENV_BIN
    assert policy["executable"] == str(cluster.other_python / "python")
