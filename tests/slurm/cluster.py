"""A private two-node SLURM cluster (n1, n2) on this one machine, for the SLURM tests.

Everything lives in one folder: a munge key and a munged on its own socket, slurm.conf, state,
spool and log folders, and the daemons' process ids. Nothing in /etc is read or changed (the
daemons get `-f <conf>`, clients `SLURM_CONF`), and the daemons are stopped by the process ids
this module started, never by name.

    python3 cluster.py up DIR     # start (DIR must not hold a running cluster); prints seconds
    python3 cluster.py down DIR   # stop what `up` started; exit 1 if something stayed
    python3 cluster.py check      # exit 77 with a reason when SLURM cannot run here
"""

import hashlib
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import time

SKIP = 77  # CTest's SKIP_RETURN_CODE for these tests

DAEMONS = ("munged", "slurmctld", "slurmd")
CLIENTS = ("srun", "sbatch", "scancel", "squeue", "sinfo", "scontrol")
NODES = ("n1", "n2")
# SIGTERM to every process of a step, then SIGKILL this many seconds later: SLURM's default,
# which the scancel tests rely on (a profiled rank needs a few seconds to write its report).
KILL_WAIT_SECONDS = 30
# An environment variable that only the daemons get (clients never), naming the cluster's folder.
MARK = "NSEL_TEST_SLURM_CLUSTER"


def find_program(name):
    return shutil.which(name) or next(
        (os.path.join(d, name) for d in ("/usr/sbin", "/sbin") if os.access(os.path.join(d, name), os.X_OK)),
        None)


def missing_programs():
    return [name for name in DAEMONS + CLIENTS + ("munge",) if find_program(name) is None]


def skip_reason():
    """Why SLURM cannot run here, or None."""
    missing = missing_programs()
    if missing:
        return ("SLURM is not installed: " + ", ".join(missing) +
                " not found (bash scripts/setup.sh installs slurm-wlm and munge)")
    if os.geteuid() != 0:
        return "the private SLURM cluster runs its daemons as root (SlurmUser=root); run as root"
    return None


def free_ports(count):
    """`count` distinct TCP ports that nothing listens on now, outside the ephemeral range."""
    chosen = []
    rng = random.Random(os.getpid() ^ int(time.time()))
    while len(chosen) < count:
        port = rng.randrange(20000, 32000)
        if port in chosen:
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        chosen.append(port)
    return chosen


class Cluster:
    """The cluster in `root`. `up()` starts it, `down()` stops it; both are safe to repeat."""

    def __init__(self, root):
        self.root = os.path.abspath(root)
        self.conf = os.path.join(self.root, "slurm.conf")
        self.munge_socket = os.path.join(_munge_socket_dir(self.root), "munge.sock")
        self.pids_file = os.path.join(self.root, "pids.json")
        self._started = []

    # The environment a client (srun, sbatch, ...) needs to reach this cluster.
    def client_env(self, base=None):
        env = dict(os.environ if base is None else base)
        env["SLURM_CONF"] = self.conf
        return env

    def _pids(self):
        try:
            with open(self.pids_file) as f:
                return json.load(f)
        except (OSError, ValueError):
            return {}

    def _save_pids(self, pids):
        tmp = self.pids_file + ".tmp"
        with open(tmp, "w") as f:
            json.dump(pids, f)
        os.replace(tmp, self.pids_file)

    def _write_config(self, ports):
        host = socket.gethostname()
        controller_port, *node_ports = ports
        lines = [
            "ClusterName=nseltest",
            f"SlurmctldHost={host}(127.0.0.1)",
            f"SlurmctldPort={controller_port}",
            "SlurmUser=root",
            "SlurmdUser=root",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={self.munge_socket}",
            f"StateSaveLocation={self.root}/state",
            f"SlurmdSpoolDir={self.root}/spool/%n",
            f"SlurmctldPidFile={self.root}/slurmctld.pid",
            f"SlurmdPidFile={self.root}/slurmd.%n.pid",
            f"SlurmctldLogFile={self.root}/log/slurmctld.log",
            f"SlurmdLogFile={self.root}/log/slurmd.%n.log",
            "SlurmctldDebug=info",
            "SlurmdDebug=info",
            # The process tree, as on clusters without cgroups; every process of a step is
            # signalled by scancel.
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core",
            "SchedulerType=sched/builtin",
            "ReturnToService=2",
            f"KillWait={KILL_WAIT_SECONDS}",
            "MpiDefault=none",
            "SwitchType=switch/none",
            "JobCompType=jobcomp/none",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            f"PlugStackConfig={self.root}/plugstack.conf",
            "MailProg=/bin/true",
            "SlurmctldTimeout=30",
            "SlurmdTimeout=30",
            "InactiveLimit=0",
            "MinJobAge=300",
        ]
        for name, port in zip(NODES, node_ports):
            lines.append(f"NodeName={name} NodeHostname={host} NodeAddr=127.0.0.1 Port={port} "
                         "CPUs=2 State=UNKNOWN")
        lines.append(f"PartitionName=nsel Nodes={','.join(NODES)} Default=YES MaxTime=INFINITE "
                     "State=UP OverSubscribe=FORCE:4")
        with open(self.conf, "w") as f:
            f.write("\n".join(lines) + "\n")
        open(os.path.join(self.root, "plugstack.conf"), "w").close()

    def _start(self, argv, log_name, env=None):
        env = dict(env if env is not None else os.environ)
        # Marks the daemons and whatever they start (slurmstepd) as this cluster's.
        env[MARK] = self.root
        with open(os.path.join(self.root, "log", log_name), "ab") as log:
            # A session of its own: a Ctrl-C of the test never reaches the daemons; `down` does.
            daemon = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log,
                                      stderr=subprocess.STDOUT, env=env, start_new_session=True)
        self._started.append(daemon)  # kept, so that it is reaped here, not warned about
        return daemon.pid

    def up(self, timeout=60):
        """Starts munged, slurmctld and two slurmd; returns when both nodes take jobs."""
        reason = skip_reason()
        if reason:
            raise RuntimeError(reason)
        started = time.monotonic()
        for sub in ("munge", "state", "spool/n1", "spool/n2", "log"):
            os.makedirs(os.path.join(self.root, sub), exist_ok=True)
        # munged wants its key private and every folder above its socket searchable by all and
        # writable by nobody else.
        os.chmod(self.root, 0o755)
        os.chmod(os.path.join(self.root, "munge"), 0o755)
        os.makedirs(os.path.dirname(self.munge_socket), mode=0o755, exist_ok=True)
        key = os.path.join(self.root, "munge", "munge.key")
        with open(key, "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(key, 0o400)
        self._write_config(free_ports(1 + len(NODES)))
        pids = {}
        try:
            munge_dir = os.path.join(self.root, "munge")
            pids["munged"] = self._start(
                [find_program("munged"), "--foreground", f"--socket={self.munge_socket}",
                 f"--key-file={key}", f"--pid-file={munge_dir}/munged.pid",
                 f"--log-file={munge_dir}/munged.log", f"--seed-file={munge_dir}/munged.seed"],
                "munged.out")
            self._save_pids(pids)
            self._wait(lambda: os.path.exists(self.munge_socket), timeout, "munged's socket")
            env = self.client_env()
            pids["slurmctld"] = self._start(
                [find_program("slurmctld"), "-D", "-i", "-f", self.conf], "slurmctld.out", env)
            self._save_pids(pids)
            for name in NODES:
                pids["slurmd." + name] = self._start(
                    [find_program("slurmd"), "-D", "-N", name, "-f", self.conf],
                    f"slurmd.{name}.out", env)
                self._save_pids(pids)
            self._wait(self._nodes_idle, timeout, "both nodes idle in sinfo")
        except BaseException:
            self.down()
            raise
        return time.monotonic() - started

    def _nodes_idle(self):
        for pid_name, pid in self._pids().items():
            if not _alive(pid):
                raise RuntimeError(f"{pid_name} (pid {pid}) exited while starting:\n" + self.logs())
        out = subprocess.run([find_program("sinfo"), "-h", "-N", "-o", "%N %t"],
                             env=self.client_env(), capture_output=True, text=True, timeout=20)
        states = dict(line.split() for line in out.stdout.splitlines() if line.strip())
        return all(states.get(n) == "idle" for n in NODES)

    def _wait(self, condition, timeout, what):
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                raise RuntimeError(f"the SLURM test cluster did not come up: no {what} within "
                                   f"{timeout} s\n" + self.logs())
            time.sleep(0.1)

    def logs(self, tail=30):
        text = []
        log_dir = os.path.join(self.root, "log")
        for name in sorted(os.listdir(log_dir)) if os.path.isdir(log_dir) else []:
            with open(os.path.join(log_dir, name), errors="replace") as f:
                lines = f.readlines()[-tail:]
            text.append(f"--- {name}\n" + "".join(lines))
        return "".join(text)

    def _end_jobs(self, pids):
        """Cancels what an interrupted test left running, then kills what is left of the jobs:
        processes whose environment points at this cluster (srun passes SLURM_CONF on)."""
        if pids.get("slurmctld") and _alive(pids["slurmctld"]):
            subprocess.run([find_program("scancel"), "--partition=nsel", "--full"],
                           env=self.client_env(), capture_output=True, timeout=20)
            deadline = time.monotonic() + 5
            while self._job_processes() and time.monotonic() < deadline:
                time.sleep(0.1)
        for pid in self._job_processes():
            _signal(pid, signal.SIGKILL)

    def _job_processes(self):
        daemons = set(_marked_processes(self.root))
        return [p for p in _job_processes(self.conf) if p not in daemons]

    def down(self, timeout=30):
        """Stops the daemons `up` started (slurmd first, munged last); returns the seconds taken
        and the process ids that would not end."""
        started = time.monotonic()
        pids = self._pids()
        self._end_jobs(pids)
        order = [k for k in pids if k.startswith("slurmd.")] + ["slurmctld", "munged"]
        left = []
        for name in order:
            pid = pids.get(name)
            if pid is None or not _alive(pid):
                continue
            # slurmd leaves its steps' slurmstepd running: end those of this cluster too.
            if name.startswith("slurmd."):
                for step in _children(pid):
                    _signal(step, signal.SIGKILL)
            _signal(pid, signal.SIGTERM)
            deadline = time.monotonic() + timeout / 3
            while _alive(pid) and time.monotonic() < deadline:
                time.sleep(0.05)
            if _alive(pid):
                _signal(pid, signal.SIGKILL)
                time.sleep(0.2)
            _reap(pid)
            if _alive(pid):
                left.append(pid)
        # slurmstepd processes of this cluster that outlived their slurmd.
        for pid in _marked_processes(self.root):
            _signal(pid, signal.SIGKILL)
        time.sleep(0.1 if pids else 0)
        left += [p for p in _marked_processes(self.root) if _alive(p)]
        for daemon in self._started:
            daemon.poll()
        self._started = []
        if not self.munge_socket.startswith(self.root + os.sep):
            shutil.rmtree(os.path.dirname(self.munge_socket), ignore_errors=True)
        return time.monotonic() - started, left


def _munge_socket_dir(root):
    """munged refuses a socket with a folder above it that not everybody may search: a build
    folder under a private home (/root is 700) gets its socket under /run instead, named after
    the cluster's folder so that `down` finds it again."""
    folder = os.path.join(root, "munge")
    parents = [os.path.dirname(root)]
    while parents[-1] != os.path.dirname(parents[-1]):
        parents.append(os.path.dirname(parents[-1]))
    if all(not os.path.exists(p) or os.stat(p).st_mode & 0o001 for p in parents):
        return folder
    return os.path.join("/run", "nsel-munge-" + hashlib.sha1(root.encode()).hexdigest()[:12])


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        return state != "Z"
    except (OSError, IndexError):
        return False


def _reap(pid):
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def _signal(pid, number):
    try:
        os.kill(pid, number)
    except ProcessLookupError:
        pass


def _children(parent):
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            if int(fields[1]) == parent:
                found.append(int(name))
        except (OSError, IndexError, ValueError):
            pass
    return found


def _marked_processes(root):
    """Processes started by this cluster's daemons: their environment carries MARK=root."""
    return _processes_with(f"{MARK}={root}")


def _job_processes(conf):
    """Processes of this cluster's jobs (and its clients), but this one."""
    return _processes_with(f"SLURM_CONF={conf}")


def _processes_with(variable):
    """Live processes other than this one whose environment holds `variable` (NAME=value)."""
    found = []
    needle = variable.encode()
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                if needle in f.read().split(b"\0"):
                    found.append(int(name))
        except OSError:
            pass
    return [p for p in found if _alive(p)]


def main(argv):
    if len(argv) == 2 and argv[1] == "check":
        reason = skip_reason()
        print(reason or "SLURM can run here")
        return SKIP if reason else 0
    if len(argv) != 3 or argv[1] not in ("up", "down"):
        print(__doc__, file=sys.stderr)
        return 2
    cluster = Cluster(argv[2])
    if argv[1] == "up":
        reason = skip_reason()
        if reason:
            print("SKIP: " + reason)
            return SKIP
        os.makedirs(cluster.root, exist_ok=True)
        cluster.down()  # what an earlier, interrupted run may have left
        seconds = cluster.up()
        print(f"SLURM test cluster up in {seconds:.1f} s: {cluster.conf}")
        return 0
    seconds, left = cluster.down()
    if left:
        print(f"processes still running after teardown: {left}", file=sys.stderr)
        return 1
    print(f"SLURM test cluster down in {seconds:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
