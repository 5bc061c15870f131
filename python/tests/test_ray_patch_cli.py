"""`nsel ray patch` on copies of the installed Ray's nsight.py (the current release) and of an
older variant, and the at-import fix of `import nsel`; no cluster needed."""

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from ray_support import (PLUGIN_SETTING, SELECT, VENV_PYTHON, base_environment, nsel_cli,
                         ray_site_packages)

ORIGINAL = 'context.py_executable = " ".join(self.nsight_cmd) + " python"'
FIXED = 'context.py_executable = " ".join(self.nsight_cmd) + f" {context.py_executable}"'


def ray_version():
    text = (ray_site_packages() / "ray" / "_version.py").read_text()
    return [line.split('"')[1] for line in text.splitlines() if line.startswith("version")][0]


@pytest.fixture
def site():
    """A site-packages folder with a copy of the installed Ray's nsight.py, unpatched, that
    another user can read (pytest's own temporary folders are private to root)."""
    root = Path(tempfile.mkdtemp(prefix="nsel-ray-patch-"))
    root.chmod(0o755)
    source = ray_site_packages() / "ray"
    target = root / "site" / "ray"
    (target / "_private" / "runtime_env").mkdir(parents=True)
    shutil.copy(source / "_version.py", target / "_version.py")
    (target / "__init__.py").write_text("")
    text = (source / "_private" / "runtime_env" / "nsight.py").read_text()
    (target / "_private" / "runtime_env" / "nsight.py").write_text(text.replace(FIXED, ORIGINAL))
    yield target.parent
    shutil.rmtree(root)


def nsight_py(site):
    return site / "ray" / "_private" / "runtime_env" / "nsight.py"


def as_user(user, argv):
    """argv run as `user` (another user than the owner of Ray's copy). That user must reach the
    venv: a checkout under a private home (/root is 700) cannot be run by anybody else, so the
    test is skipped with the reason there rather than failing on the environment."""
    folder = Path(os.path.abspath(argv[0])).parent  # the venv itself, not where its links go
    private = [p for p in [folder, *folder.parents] if not p.stat().st_mode & 0o001]
    if private:
        pytest.skip(f"user {user} cannot reach {argv[0]}: {private[-1]} is not searchable by "
                    "other users (check out nsel where everybody may search, e.g. not under /root)")
    return ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", *argv]


def patch(*args, user=None):
    argv = [nsel_cli(), "ray", "patch", *args]
    if user:
        argv = as_user(user, argv)
    return subprocess.run(argv, capture_output=True, text=True)


def test_patch_check_revert_on_the_current_release(site):
    original = nsight_py(site).read_text()
    assert ORIGINAL in original
    where = f"{nsight_py(site)} (Ray {ray_version()}, line "
    done = patch("--check", "--site-packages", str(site))
    assert done.returncode == 1
    assert done.stderr.startswith("nsel: error: not patched: " + where)

    done = patch("--site-packages", str(site))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("patched: " + where)
    assert done.stdout.endswith("workers under nsys keep their own interpreter\n")
    assert nsight_py(site).read_text() == original.replace(ORIGINAL, FIXED)

    done = patch("--site-packages", str(site))
    assert (done.returncode, done.stdout.split(":")[0]) == (0, "already patched")
    assert patch("--check", "--site-packages", str(site)).returncode == 0

    done = patch("--revert", "--site-packages", str(site), "--json")
    assert done.returncode == 0
    assert json.loads(done.stdout)["status"] == "reverted"
    assert nsight_py(site).read_text() == original


def test_patch_finds_ray_through_the_interpreter(site):
    env = dict(base_environment(), PYTHONPATH=str(site))
    done = subprocess.run([nsel_cli(), "ray", "patch", "--python", VENV_PYTHON, "--json"],
                          capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["file"] == str(nsight_py(site))
    assert FIXED in nsight_py(site).read_text()


def test_older_ray_builds_use_nsys_cmd(site):
    older = '    context.py_executable = " ".join(self.nsys_cmd) + " python"\n'
    nsight_py(site).write_text("class NsightPlugin:\n" + older)
    assert patch("--site-packages", str(site)).returncode == 0
    assert nsight_py(site).read_text() == (
        "class NsightPlugin:\n"
        '    context.py_executable = " ".join(self.nsys_cmd) + f" {context.py_executable}"\n')


def test_changed_ray_is_reported_and_left_alone(site):
    nsight_py(site).write_text("context.py_executable = make_command()\n")
    done = patch("--site-packages", str(site))
    assert done.returncode == 1
    assert done.stderr == (
        f"nsel: error: expected line not found: {nsight_py(site)} (Ray {ray_version()}): no line "
        "'context.py_executable = \" \".join(self.nsight_cmd) + \" python\"' in either form; Ray "
        "version may have changed; nothing was written\n")
    assert nsight_py(site).read_text() == "context.py_executable = make_command()\n"


def test_not_writable_is_reported_and_nothing_is_written(site):
    before = nsight_py(site).read_text()
    done = patch("--site-packages", str(site), user="65534")
    assert done.returncode == 1
    assert done.stderr.startswith(f"nsel: error: not writable: {nsight_py(site)} (Ray ")
    assert done.stderr.endswith(
        ": Permission denied; nothing was written; run as the owner of Ray's installation\n")
    assert nsight_py(site).read_text() == before
    assert sorted(p.name for p in nsight_py(site).parent.iterdir()) == ["nsight.py"]


def test_bad_site_packages_is_a_usage_error(tmp_path):
    done = patch("--site-packages", str(tmp_path))
    assert done.returncode == 2
    assert done.stderr == (
        f"nsel: error: --site-packages='{tmp_path}': it has no ray/_private/runtime_env/nsight.py; "
        "expected the site-packages folder that holds Ray (the folder with 'ray/' in it)\n")


def import_nsel(site, env_overrides, user=None):
    env = dict(base_environment(), PYTHONPATH=str(site), **env_overrides)
    code = "import nsel; print(nsel.ray_launcher_fix and nsel.ray_launcher_fix['status'])"
    argv = [VENV_PYTHON, "-c", code]
    if user:
        argv = as_user(user, argv)
    return subprocess.run(argv, capture_output=True, text=True, env=env, cwd="/")


def test_import_fixes_the_launcher_when_profiling_is_on(site):
    assert import_nsel(site, {}).stdout == "None\n"
    assert ORIGINAL in nsight_py(site).read_text()  # profiling off: nothing touched

    done = import_nsel(site, {"NRL_NSYS_WORKER_PATTERNS": "*policy*",
                              "NRL_NSYS_PROFILE_STEP_RANGE": "2:4"})
    assert done.returncode == 0, done.stderr
    assert done.stdout == "patched\n"
    assert FIXED in nsight_py(site).read_text()
    assert import_nsel(site, dict(SELECT, NRL_NSYS_WORKER_PATTERNS="*")).stdout == \
        "already patched\n"


@pytest.mark.parametrize("where", ["NSEL_RAY_PATCH=0", "plugin", "worker"])
def test_import_leaves_ray_alone_where_no_fix_is_wanted(site, where):
    """The opt-out, a driver whose cluster loads nsel's plugin (which keeps the interpreter
    itself), and a process Ray started (a worker imports nsel too): none writes Ray's files."""
    extra = {"NSEL_RAY_PATCH=0": {"NSEL_RAY_PATCH": "0"},
             "plugin": {"RAY_RUNTIME_ENV_PLUGINS": PLUGIN_SETTING},
             "worker": {"RAY_RAYLET_PID": str(os.getpid())}}[where]
    before = nsight_py(site).stat().st_mtime_ns
    done = import_nsel(site, dict(SELECT, **extra))
    assert done.returncode == 0, done.stderr
    assert done.stdout == "None\n"
    assert done.stderr == ""
    assert ORIGINAL in nsight_py(site).read_text()
    assert nsight_py(site).stat().st_mtime_ns == before


def test_a_bad_opt_out_value_is_the_one_line_error_at_import(site):
    done = import_nsel(site, dict(SELECT, NSEL_RAY_PATCH="maybe"))
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1].startswith("nsel._nsel.Error: NSEL_RAY_PATCH='maybe': ")
    assert ORIGINAL in nsight_py(site).read_text()


@pytest.mark.parametrize("problem", ["not writable", "line not found", "not a file"])
def test_import_never_fails(site, problem):
    user = None
    if problem == "not writable":
        user = "65534"
    elif problem == "line not found":
        nsight_py(site).write_text("something else\n")
    else:
        nsight_py(site).unlink()
        nsight_py(site).mkdir()
    done = import_nsel(site, SELECT, user=user)
    assert done.returncode == 0, done.stderr
    if problem == "not a file":
        assert done.stdout == "None\n"
    else:
        assert done.stderr.startswith("nsel: warning: Ray's nsight launcher is not fixed: ")
        assert len(done.stderr.splitlines()) == 1


@pytest.mark.parametrize("variable,value,line", [
    ("NRL_NSYS_PROFILE_STEP_RANGE", "0:10",
     "NRL_NSYS_PROFILE_STEP_RANGE='0:10': start must be >= 1"),
    ("NRL_NSYS_EXTRA_OPTIONS", "{bad", "NRL_NSYS_EXTRA_OPTIONS='{bad': "),
    ("NSEL_PROFILE_RANKS", "one", "NSEL_PROFILE_RANKS='one': "),
])
def test_import_raises_the_clis_line_before_ray_is_touched(variable, value, line):
    """A malformed setting is nsel.Error at `import nsel`, with the line the CLI prints (exit 2),
    before Ray is imported (here it cannot be), so before any cluster or actor starts."""
    env = dict(base_environment(), **SELECT)
    env[variable] = value
    code = ("import sys, time\nsys.modules['ray'] = None  # Ray cannot be imported at all\n"
            "start = time.monotonic()\ntry:\n    import nsel\nexcept Exception as e:\n"
            "    print(type(e).__module__, type(e).__name__, time.monotonic() - start)\n"
            "    print(e)")
    done = subprocess.run([VENV_PYTHON, "-c", code], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    kind, message = done.stdout.splitlines()
    module, name, seconds = kind.split()
    assert (module, name) == ("nsel._nsel", "Error")
    assert float(seconds) < 5
    assert message.startswith(line), message
    cli = subprocess.run([nsel_cli(), "plan", "dtensor_policy_worker"], capture_output=True,
                         text=True, env=env)
    assert cli.returncode == 2
    assert cli.stderr == f"nsel: error: {message}\n"
    # Ray's workers get their settings with their runtime env: their import checks nothing.
    env["RAY_RAYLET_PID"] = str(os.getpid())
    worker = subprocess.run([VENV_PYTHON, "-c", "import nsel"], capture_output=True, text=True,
                            env=env)
    assert worker.returncode == 0, worker.stderr
