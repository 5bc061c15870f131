"""nsel.range from Python, end to end without Ray: a training loop marked with nsel.step(n) and
nsel.range (as context manager and decorator) runs under `nsel exec` with each Nsight Systems
generation installed here (2022.4 at /usr/bin, 2023.4 where scripts/setup.sh unpacks it), and
the report holds the ranges inside each captured step, as `nsel report` shows them. No `nvtx`
package is involved (its 0.2.17 records no ranges under either generation)."""

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

import nsel
from ray_support import SELECT, VENV_PYTHON, base_environment, nsel_cli

GENERATIONS = {
    "2022.4": Path("/usr/bin"),
    "2023.4": Path(os.environ.get("NSEL_NSYS_2023_ROOT", "/opt/nsight-systems-2023.4")) / "usr"
    / "bin",
}

LOOP = """
import nsel

@nsel.range("backward")
def backward():
    sum(i * i for i in range(20000))

for n in range(1, 5):
    with nsel.step(n):
        with nsel.range("forward"):
            sum(i for i in range(20000))
        backward()
"""


def test_range_is_a_context_manager_and_a_decorator_without_a_profiler():
    calls = []

    @nsel.range("work")
    def work(x):
        calls.append(x)
        return x * 2

    assert work(3) == 6 and calls == [3]
    assert work.__name__ == "work"
    with nsel.range("block") as r:
        assert repr(r) == "nsel.range('block')"
    with pytest.raises(TypeError, match="expected the range's name as a str"):
        nsel.range(3)
    assert "range" not in nsel.__all__  # `from nsel import *` keeps Python's range


@pytest.mark.parametrize("generation", sorted(GENERATIONS))
def test_ranges_are_recorded_inside_the_steps(generation):
    folder = GENERATIONS[generation]
    if not (folder / "nsys").exists():
        pytest.skip(f"Nsight Systems {generation} is not installed at {folder} "
                    "(scripts/setup.sh test installs it)")
    root = Path(tempfile.mkdtemp(prefix="nsel-range-"))
    try:
        env = dict(base_environment(), **SELECT)
        env["PATH"] = f"{folder}:{env['PATH']}"
        env["NSEL_CAPTURE"] = "nvtx"
        # No Ray here: the loop's `import nsel` with a selection must leave the venv's Ray as it is.
        env["NSEL_RAY_PATCH"] = "0"
        script = root / "loop.py"
        script.write_text(LOOP)
        done = subprocess.run([nsel_cli(), "exec", "--worker", "dtensor_policy_worker",
                               "--output-dir", str(root / "reports"), "--", VENV_PYTHON,
                               str(script)], env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
        summary = subprocess.run([nsel_cli(), "report", "--json", str(root / "reports")], env=env,
                                 capture_output=True, text=True, timeout=300)
        assert summary.returncode == 0, summary.stderr[-3000:]
        [process] = json.loads(summary.stdout)["processes"]
        assert [s["step"] for s in process["steps"]] == [2, 3]
        for step in process["steps"]:
            ranges = [share["range"] for share in step["top_level_ranges"]]
            assert ranges == ["forward", "backward"], step
        assert process["steps_without_ranges"] is None
    finally:
        shutil.rmtree(root, ignore_errors=True)
