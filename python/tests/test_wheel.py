"""The binary wheel that scripts/wheel.sh leaves in dist/, in a fresh virtual environment: pip
installs it in seconds (no compiler runs), and from that environment alone `nsel --version`,
`nsel demo` (its example worker travels in the wheel) and the Ray example with nsel's plugin
(examples/ray_grpo.py, on a local cluster of its own in a private temp dir) work. Ray comes from
Ray's own wheel, the version of the test environment's (scripts/python-env.sh's pin), which pip's
cache makes quick after the first time. Every process these runs leave is stopped by process id
and the temporary folder removed."""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path

import pytest

from ray_support import SELECT, base_environment, stop_marked

ROOT = Path(__file__).resolve().parents[2]
DIST = ROOT / "dist"
EXAMPLE = ROOT / "examples" / "ray_grpo.py"
MARKER = "NSEL_TEST_WHEEL_RUN"  # set in every child's environment: what to stop afterwards


def built_wheel():
    wheels = sorted(DIST.glob("nsel-*.whl"), key=lambda p: p.stat().st_mtime)
    return wheels[-1] if wheels else None


WHEEL = built_wheel()
if WHEEL is None:
    pytest.skip(f"no nsel wheel in {DIST}: build it with scripts/wheel.sh (scripts/python-env.sh "
                "does)", allow_module_level=True)
if shutil.which("nsys") is None:
    pytest.skip("nsys is not on PATH: nsel demo and the Ray example need Nsight Systems",
                allow_module_level=True)


class Fresh:
    """A temporary folder holding a new virtual environment, and the environment of the
    commands run there (no selection, the temp dirs and caches inside the folder)."""

    def __init__(self):
        # Short: Ray's socket paths under it must stay within the 107 bytes of a Unix socket.
        self.root = Path(tempfile.mkdtemp(prefix="nsel-wheel-"))
        self.venv = self.root / "venv"
        self.bin = self.venv / "bin"
        env = base_environment()
        env.pop("NSEL_NSYS", None)
        # pip keeps its own cache (Ray's wheel is fetched once per machine); everything else
        # that caches (nsel's exports, Ray) stays inside the folder.
        pip_cache = os.environ.get("PIP_CACHE_DIR") or str(
            Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pip")
        env.update({MARKER: str(self.root), "TMPDIR": str(self.root),
                    "XDG_CACHE_HOME": str(self.root / "cache"), "PIP_CACHE_DIR": pip_cache,
                    "PIP_DISABLE_PIP_VERSION_CHECK": "1", "RAY_USAGE_STATS_ENABLED": "0"})
        self.env = env

    def run(self, argv, timeout, env=None, **kwargs):
        return subprocess.run([str(a) for a in argv], env=env or self.env, capture_output=True,
                              text=True, timeout=timeout, cwd=self.root, **kwargs)

    def pip_install(self, *requirements):
        """pip install into the fresh environment; returns the seconds it took."""
        start = time.monotonic()
        done = self.run([self.bin / "python", "-m", "pip", "install", *requirements], timeout=600)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        return time.monotonic() - start


@pytest.fixture(scope="module")
def fresh():
    f = Fresh()
    try:
        base = getattr(sys, "_base_executable", sys.executable)  # not the test venv's
        done = f.run([base, "-m", "venv", f.venv], timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
        seconds = f.pip_install(WHEEL)
        print(f"\npip install {WHEEL.name} into a fresh venv: {seconds:.1f} s")
        f.wheel_seconds = seconds
        yield f
    finally:
        left = stop_marked(str(f.root))
        if left:
            print(f"stopped {left} process(es) the runs left")
        shutil.rmtree(f.root, ignore_errors=True)


@pytest.fixture(scope="module")
def fresh_with_ray(fresh):
    ray = f"ray[default]=={metadata.version('ray')}"
    seconds = fresh.pip_install(ray)
    print(f"\npip install {ray} into the fresh venv: {seconds:.1f} s")
    return fresh


def test_the_wheel_is_a_manylinux_wheel_that_installs_without_building(fresh):
    assert re.fullmatch(r"nsel-[^-]+-cp\d+-cp\d+-manylinux_\d+_\d+_x86_64(\..+)?\.whl",
                        WHEEL.name), WHEEL.name
    # pip unpacks a wheel; building one would take minutes on this machine.
    assert fresh.wheel_seconds < 120
    done = fresh.run([fresh.bin / "python", "-c",
                      "import nsel, nsel._nsel; print(nsel.__file__)"], timeout=60)
    assert done.returncode == 0, done.stderr
    package = Path(done.stdout.strip()).parent
    assert package.is_relative_to(fresh.venv)
    for program in ("nsel", "nsel-example-worker"):
        assert os.access(package / "bin" / program, os.X_OK), f"{program} is not in the wheel"


def test_nsel_version(fresh):
    version = WHEEL.name.split("-")[1]
    done = fresh.run([fresh.bin / "nsel", "--version"], timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"nsel {version}"


def test_nsel_demo_runs_from_the_wheel(fresh):
    done = fresh.run([fresh.bin / "nsel", "demo", "--root", fresh.root / "demo"], timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert re.search(r"^Verdict \(nsel check .*\): OK: ", done.stdout, re.MULTILINE), done.stdout


def test_a_bad_setting_is_the_one_line_error_of_the_wheels_nsel(fresh):
    env = dict(fresh.env, NRL_NSYS_WORKER_PATTERNS="*policy*", NRL_NSYS_PROFILE_STEP_RANGE="0:10")
    done = fresh.run([fresh.bin / "nsel", "plan", "dtensor_policy_worker"], timeout=60, env=env)
    assert done.returncode == 2
    assert done.stderr.startswith("nsel: error: NRL_NSYS_PROFILE_STEP_RANGE='0:10': ")
    assert len(done.stderr.splitlines()) == 1


def test_nsel_demo_ray_runs_from_the_wheel(fresh_with_ray):
    fresh = fresh_with_ray
    start = time.monotonic()
    done = fresh.run([fresh.bin / "nsel", "demo", "--ray", "--root", fresh.root / "ray-demo"],
                     timeout=400)
    print(f"\nnsel demo --ray: {time.monotonic() - start:.1f} s")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert re.search(r"^Ray \S+ actors:$", done.stdout, re.MULTILINE), done.stdout
    assert re.search(r"^Verdict \(nsel check .*\): OK: 2 process\(es\), 2 expected: 2 ok$",
                     done.stdout, re.MULTILINE), done.stdout
    assert re.search(r"^Straggler: dtensor_policy_worker rank 1 ", done.stdout, re.MULTILINE), \
        done.stdout
    found = re.search(r"^Reports in (.+):$", done.stdout, re.MULTILINE)
    nsight = Path(found.group(1))
    assert nsight.is_relative_to(fresh.root / "ray-demo")
    assert len(list(nsight.glob("dtensor_policy_worker_2:4_*.nsys-rep"))) == 2
    assert not list(nsight.glob("vllm_generation_worker*"))


def test_the_ray_example_profiles_both_policy_actors(fresh_with_ray):
    fresh = fresh_with_ray
    env = dict(fresh.env)
    env.update(SELECT)
    # ray.init() starts its local cluster under RAY_TMPDIR/ray, and joins no other cluster there.
    env["RAY_TMPDIR"] = str(fresh.root)
    start = time.monotonic()
    process = subprocess.Popen([str(fresh.bin / "python"), str(EXAMPLE), "--way", "plugin"],
                               env=env, cwd=fresh.root, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = process.communicate(timeout=400)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        pytest.fail(f"examples/ray_grpo.py did not end in 400 s:\n{out[-3000:]}\n{err[-3000:]}")
    print(f"\nexamples/ray_grpo.py --way plugin: {time.monotonic() - start:.1f} s")
    assert process.returncode == 0, out[-3000:] + err[-3000:]
    found = re.search(r"^Reports in (.+) \(policy actor pids \[(\d+), (\d+)\]\):$", out,
                      re.MULTILINE)
    assert found, out
    nsight = Path(found.group(1))
    assert nsight.is_relative_to(fresh.root / "ray"), nsight
    assert nsight.parent.name == "logs" and nsight.name == "nsight"
    expected = {f"dtensor_policy_worker_2:4_{pid}.nsys-rep" for pid in found.group(2, 3)}
    reports = {p.name: p.stat().st_size for p in nsight.glob("*.nsys-rep")}
    assert set(reports) == expected, (reports, out)
    assert all(size > 0 for size in reports.values()), reports
