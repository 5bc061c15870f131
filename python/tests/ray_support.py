"""Shared helpers of the Ray tests: one real local Ray cluster per test file (`ray start --head`
with its own --temp-dir, stopped by process id), drivers run as their own processes (one Ray job
each), and reports checked with real nsys exports."""

import json
import os
import random
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
VENV_PYTHON = os.path.normpath(os.path.abspath(sys.executable))  # the venv's (links kept)
VENV_BIN = Path(VENV_PYTHON).parent
DRIVER = HERE / "ray_driver.py"
PLUGIN_SETTING = json.dumps([{"class": "nsel.ray_plugin.NselPlugin"}])
SELECT = {"NRL_NSYS_WORKER_PATTERNS": "*policy*", "NRL_NSYS_PROFILE_STEP_RANGE": "2:4"}


def nsel_cli():
    return str(VENV_BIN / "nsel")


def ray_site_packages():
    import importlib.util

    spec = importlib.util.find_spec("ray")
    return Path(list(spec.submodule_search_locations)[0]).parent


def base_environment():
    """This process's environment without the selection variables (each test sets its own)."""
    env = dict(os.environ)
    for name in ("NRL_NSYS_WORKER_PATTERNS", "NRL_NSYS_PROFILE_STEP_RANGE",
                 "NRL_NSYS_EXTRA_OPTIONS", "NSEL_CAPTURE", "NSEL_PROFILE_RANKS",
                 "NSEL_PROFILE_LOCAL_RANKS", "NSEL_PROFILE_NODES", "RAY_RUNTIME_ENV_PLUGINS",
                 "RAY_ADDRESS"):
        env.pop(name, None)
    # Ray turns token authentication on for `ray start` when a token file exists in the home
    # folder but not for a driver that connects: the tests' clusters are local and use none.
    env["RAY_AUTH_MODE"] = "disabled"
    return env


def other_python_dir(root):
    """A folder whose `python` is the base interpreter, not the virtual environment's: what a
    worker gets from PATH when Ray's launcher throws its interpreter away. It can import Ray
    through PYTHONPATH, so the worker starts and can say which interpreter it is."""
    folder = Path(root) / "other-python"
    folder.mkdir(parents=True, exist_ok=True)
    link = folder / "python"
    if not link.exists():
        link.symlink_to(os.path.realpath(getattr(sys, "_base_executable", sys.executable)))
    return folder


def private_ray(root, patched):
    """A private view of the installed Ray under `root` (imported first through PYTHONPATH):
    every file a link to the installed one, but nsight.py a copy in the state asked for (patched
    True or False; None keeps the installed one's), so a test never changes the virtual
    environment that other tests use."""
    source = ray_site_packages() / "ray"
    target = Path(root) / "private-site" / "ray"
    nsight = Path("_private") / "runtime_env" / "nsight.py"
    for folder, _, files in os.walk(source):
        relative = Path(folder).relative_to(source)
        (target / relative).mkdir(parents=True, exist_ok=True)
        for name in files:
            if relative == nsight.parent / "__pycache__" and name.startswith("nsight."):
                continue  # compiled from the copy instead
            if relative / name != nsight:
                (target / relative / name).symlink_to(Path(folder) / name)
    text = (source / nsight).read_text()
    (target / nsight).write_text(text)
    if patched is not None:
        action = [] if patched else ["--revert"]
        done = subprocess.run([nsel_cli(), "ray", "patch", "--site-packages", str(target.parent),
                               *action], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    return target.parent


def _ephemeral_ports():
    """The kernel's range for bind(0) and outgoing connections (Linux's default if unreadable)."""
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return 32768, 60999


_PORTS_HANDED_OUT = set()
_PORT_CHOICE = random.SystemRandom()


def free_port():
    """A port no other part of this process was given, free on every address now, and outside
    both the kernel's ephemeral range and Ray's worker ports (10002-19999). A port from bind(0)
    lies in the ephemeral range, where any process's bind(0) or outgoing connection may take it
    before Ray binds it; a listener on the node's own address does not show on 127.0.0.1."""
    ephemeral_low, ephemeral_high = _ephemeral_ports()
    candidates = [port for port in range(20000, 65536)
                  if not ephemeral_low <= port <= ephemeral_high and port not in _PORTS_HANDED_OUT]
    for _ in range(200):
        port = _PORT_CHOICE.choice(candidates)
        try:
            with socket.socket() as probe:
                probe.bind(("", port))
        except OSError:
            continue
        _PORTS_HANDED_OUT.add(port)
        return port
    raise RuntimeError("no free port outside the ephemeral range after 200 tries")


def _log_tails(temp_dir, lines=15):
    """The last lines of the logs that say why a node did not start (GCS, raylet, agents)."""
    logs = Path(temp_dir) / "session_latest" / "logs"
    parts = []
    for name in ("gcs_server.out", "gcs_server.err", "raylet.out", "raylet.err",
                 "dashboard_agent.log", "runtime_env_agent.log"):
        try:
            tail = (logs / name).read_text(errors="replace").splitlines()[-lines:]
        except OSError:
            continue
        parts.append(f"--- {name}:\n" + "\n".join(tail))
    return "\n".join(parts)


class RayCluster:
    """`ray start --head --block` in its own session and temp dir; stop() ends it and every
    process still naming its temp dir, by process id."""

    def __init__(self, env_overrides=None, other_python_on_path=True, ray_launcher=None):
        """The cluster runs on a private view of Ray whose nsight launcher is as ray_launcher
        says: "patched", "unpatched", or None for as installed. Its drivers import nsel with a
        selection, and the at-import fix then changes the view's copy, never the installed Ray."""
        self.temp_dir = Path(tempfile.mkdtemp(prefix="nsel-ray-"))
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        env = base_environment()
        self.other_python = other_python_dir(self.temp_dir)
        launcher = None if ray_launcher is None else ray_launcher == "patched"
        self.private_site = private_ray(self.temp_dir, launcher)
        env["PYTHONPATH"] = ":".join([str(self.private_site), str(ray_site_packages())])
        if other_python_on_path:
            env["PATH"] = f"{self.other_python}:{env.get('PATH', '')}"
        # Targets for the hostile-value tests: `touch $NSEL_PWNED1` needs no '/' in a worker name
        # (a report name cannot hold one) yet names a file that only running it would create.
        self.pwned = [self.temp_dir / f"pwned{i}" for i in range(1, 6)]
        for i, path in enumerate(self.pwned, start=1):
            env[f"NSEL_PWNED{i}"] = str(path)
        env.update(env_overrides or {})
        self.env = env
        self.log = open(self.temp_dir / "ray-start.log", "w")
        # Ports of its own, so that no other cluster on this machine is reached by mistake.
        self.ports = {"port": self.port, **{option: free_port() for option in (
            "node-manager-port", "object-manager-port", "ray-client-server-port",
            "dashboard-port", "dashboard-agent-listen-port", "dashboard-agent-grpc-port",
            "runtime-env-agent-port", "metrics-export-port")}}
        self.process = subprocess.Popen(
            [str(VENV_BIN / "ray"), "start", "--head", "--block", f"--temp-dir={self.temp_dir}",
             # On loopback only: the node's RPCs never depend on the machine's own interface.
             "--node-ip-address=127.0.0.1", "--num-cpus=8", "--include-dashboard=false",
             "--disable-usage-stats",
             *(f"--{option}={port}" for option, port in self.ports.items())],
            env=env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if "block forever" in (self.temp_dir / "ray-start.log").read_text():
                return
            if self.process.poll() is not None:
                break
            time.sleep(0.5)
        text = (self.temp_dir / "ray-start.log").read_text()
        logs = _log_tails(self.temp_dir)
        self.stop()
        raise RuntimeError(f"ray start failed (ports {self.ports}):\n{text[-3000:]}\n{logs}")

    def driver_environment(self, selection=SELECT):
        env = dict(self.env)
        env.update(selection)
        return env

    def run_driver(self, way, out_name, teardown="none", actors=None, env=None, timeout=300,
                   address=None, ranks=False):
        """Runs ray_driver.py as its own job (on this cluster, or on `address`); returns (what it
        wrote, its completed process)."""
        out = self.temp_dir / f"{out_name}.json"
        argv = [VENV_PYTHON, str(DRIVER), "--address", address or self.address, "--way", way,
                "--out", str(out), "--teardown", teardown]
        if actors:
            argv += ["--actors", actors]
        if ranks:
            argv.append("--ranks")
        done = subprocess.run(argv, env=env if env is not None else self.driver_environment(),
                              capture_output=True, text=True, timeout=timeout)
        result = json.loads(out.read_text()) if out.exists() else None
        return result, done

    def processes(self):
        """Process ids whose command line or environment names this cluster's temp dir: its own
        processes, and nsys agents its workers' sessions left behind (Ray's nsight field does
        not end them; they inherit the cluster's NSEL_PWNED* variables)."""
        return processes_marked(str(self.temp_dir))

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)  # --block stops what it started
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        stop_marked(str(self.temp_dir))
        self.log.close()
        # Tests leave /tmp as they found it; NSEL_TEST_KEEP_RAY=1 keeps the cluster's folder
        # (its logs and sessions) to look at after a failure.
        if os.environ.get("NSEL_TEST_KEEP_RAY") != "1":
            shutil.rmtree(self.temp_dir, ignore_errors=True)


def processes_marked(marker):
    """Process ids (not this one) whose command line or environment names `marker`."""
    found = []
    needle = marker.encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if (needle in (entry / "cmdline").read_bytes()
                    or needle in (entry / "environ").read_bytes()):
                found.append(int(entry.name))
        except OSError:
            pass
    return found


def stop_marked(marker):
    """Gives the processes that name `marker` 20 s to end by themselves, then stops what is left
    by process id (nsys agents with SIGTERM first, so that they remove their shared memory);
    returns how many were left."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and any(
            not is_nsys_agent(pid) for pid in processes_marked(marker)):
        time.sleep(0.5)
    left = processes_marked(marker)
    for pid in left:
        try:
            os.kill(pid, signal.SIGTERM if is_nsys_agent(pid) else signal.SIGKILL)
        except OSError:
            pass
    time.sleep(1 if left else 0)
    for pid in left:
        if not alive(pid):
            continue  # ended on SIGTERM (its id may be someone else's by now)
        agent = is_nsys_agent(pid)
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            continue
        if agent:  # a killed agent cannot remove its shared-memory instance itself
            Path(f"/dev/shm/quadd-agent-instance-{pid}").unlink(missing_ok=True)
    return len(left)


def is_nsys_agent(pid):
    try:
        return b"--start-agent" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def actor(result, name):
    return [a for a in result["actors"] if a["name"] == name]


def under_nsys(described):
    """True when an ancestor of the actor's process is `nsys profile`."""
    return any(Path(p["argv"][0]).name == "nsys" and "profile" in p["argv"][1:2]
               for p in described["ancestry"] if p["argv"])


def nsys_pids(described):
    return [p["pid"] for p in described["ancestry"]
            if p["argv"] and Path(p["argv"][0]).name == "nsys"]


def alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except OSError:
        return False


def wait_for_report(path, nsys_pid_list, timeout=90):
    """Waits until the nsys that writes `path` has exited (bounded), then says whether the report
    exists."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(alive(p) for p in nsys_pid_list):
        time.sleep(0.3)
    # Under nsel exec, nsys writes a hidden name and the report gets its own once nsys has ended,
    # when the manifest records the end; Ray's own nsight field leaves no manifest.
    manifest = Path(str(path).removesuffix(".nsys-rep") + ".nsel.json")
    while time.monotonic() < deadline and manifest.exists() and not Path(path).exists():
        try:
            if json.loads(manifest.read_text()).get("end_time"):
                break
        except (OSError, ValueError):
            pass
        time.sleep(0.1)
    return Path(path).exists()


def report_steps(report):
    """The numbers of the NVTX ranges named 'step <n>' in a report, via `nsys export`. None when
    the report cannot be exported (incomplete or empty)."""
    with tempfile.TemporaryDirectory(prefix="nsel-export-") as folder:
        sqlite_path = Path(folder) / "report.sqlite"
        done = subprocess.run(
            ["nsys", "export", "--type", "sqlite", "--force-overwrite", "true", "-o",
             str(sqlite_path), str(report)], capture_output=True, text=True, timeout=180)
        if done.returncode != 0 or not sqlite_path.exists():
            return None
        db = sqlite3.connect(sqlite_path)
        try:
            tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            if "NVTX_EVENTS" not in tables:
                return []
            if "StringIds" in tables:
                rows = db.execute(
                    "SELECT COALESCE(e.text, s.value) FROM NVTX_EVENTS e LEFT JOIN StringIds s "
                    "ON e.textId = s.id WHERE e.end IS NOT NULL")
            else:
                rows = db.execute("SELECT text FROM NVTX_EVENTS WHERE end IS NOT NULL")
            names = [r[0] for r in rows if r[0] and r[0].startswith("step ")]
        finally:
            db.close()
        return sorted(int(n.split()[1]) for n in names)


def expected_report(session_dir, worker, pid, window="2:4"):
    return Path(session_dir) / "logs" / "nsight" / f"{worker}_{window}_{pid}.nsys-rep"
