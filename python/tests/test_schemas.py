"""The JSON Schemas of docs/schemas/ hold every JSON output of every command: real commands on
real files (the demo's real nsys reports, copies of the real GPU captures of
../shared/gpu-reports where that folder is, Ray's real nsight.py on a private copy), each
output validated with jsonschema's Draft202012Validator. A key removed, renamed or of another
type fails validation; every schema file is used, and every command with --json has one."""

import json
import lzma
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from ray_support import (PLUGIN_SETTING, VENV_PYTHON, base_environment, is_nsys_agent,
                         nsel_cli, processes_marked, ray_site_packages, stop_marked)

REPO = Path(__file__).resolve().parents[2]
SCHEMAS = REPO / "docs" / "schemas"
GPU_REPORTS = REPO.parent / "shared" / "gpu-reports"
NSEL = nsel_cli()

# Every schema id, and the command whose --json prints it.
COMMANDS = {
    "nsel.plan/1": ["plan"],
    "nsel.demo/1": ["demo"],
    "nsel.report/1": ["report"],
    "nsel.diff/1": ["diff"],
    "nsel.ls/1": ["ls"],
    "nsel.check/1": ["check"],
    "nsel.sync/1": ["sync"],
    "nsel.ray-patch/1": ["ray", "patch"],
    "nsel.doctor/1": ["doctor"],
}

# Per schema: a key inside the output (a path of keys and list indexes) that the negative
# tests remove, rename and give a value of the wrong type.
INNER_KEY = {
    "nsel.plan/1": ["rank", "source"],
    "nsel.demo/1": ["verdict", "never_started"],
    "nsel.report/1": ["processes", 0, "steps", 0, "gpu_busy_ns"],
    "nsel.diff/1": ["pairs", 0, "step", "p_value"],
    "nsel.ls/1": ["reports", 0, "local_rank"],
    "nsel.check/1": ["reports", 0, "window_steps"],
    "nsel.sync/1": ["bytes_copied"],
    "nsel.ray-patch/1": ["line"],
    "nsel.doctor/1": ["checks", 0, "fix"],
}

# The only keys an output may leave out: nsel plan's "gpu" is there when the GPU was probed.
OPTIONAL_KEYS = {("nsel.plan-1.schema.json", "#"): {"gpu"}}

ORIGINAL = 'context.py_executable = " ".join(self.nsight_cmd) + " python"'
FIXED = 'context.py_executable = " ".join(self.nsight_cmd) + f" {context.py_executable}"'


def schema_file(schema_id):
    """nsel.ray-patch/1 -> docs/schemas/nsel.ray-patch-1.schema.json"""
    return SCHEMAS / (schema_id.replace("/", "-") + ".schema.json")


def validator(schema_id):
    schema = json.loads(schema_file(schema_id).read_text())
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def documents(stdout, lines):
    """The JSON documents of a command's standard output: one, or one per line (JSON Lines)."""
    if lines:
        return [json.loads(line) for line in stdout.splitlines() if line.strip()]
    return [json.loads(stdout)]


class Outputs:
    """Runs nsel commands and keeps each JSON document they print, by its command's schema id."""

    def __init__(self, root):
        self.root = root
        self.by_schema = {schema_id: [] for schema_id in COMMANDS}
        env = base_environment()
        # No child may patch the venv's Ray: doctor's Python imports nsel, and some runs below
        # set a selection (conftest.py checks that Ray's nsight.py is left as found).
        env["NSEL_RAY_PATCH"] = "0"
        env["TMPDIR"] = str(root / "tmp")
        env["XDG_CACHE_HOME"] = str(root / "cache")
        (root / "tmp").mkdir()
        self.env = env

    def run(self, schema_id, args, expect=(0,), env=None, lines=False, what=None):
        done = subprocess.run([NSEL, *args], capture_output=True, text=True, timeout=300,
                              env=dict(self.env, **(env or {})), cwd=self.root)
        assert done.returncode in expect, (
            f"nsel {' '.join(args)}: exit {done.returncode}\n{done.stdout[-2000:]}"
            f"\n{done.stderr[-3000:]}")
        docs = documents(done.stdout, lines)
        assert docs, f"nsel {' '.join(args)} printed no JSON"
        for doc in docs:
            self.by_schema[schema_id].append((what or " ".join(args), doc))
        return docs


def demo(out, root):
    """nsel demo's real reports (two profiled policy ranks); Nsight Systems 2022.4 sometimes
    never starts a program of sessions started at the same moment, so a failed run is tried
    once more (its output is validated all the same)."""
    for attempt in range(2):
        doc = out.run("nsel.demo/1", ["demo", "--json", "--root", str(root)], expect=(0, 1),
                      what=f"demo --json (attempt {attempt + 1})")[0]
        if doc["verdict"]["exit_code"] == 0 and doc["failed_workers"] == 0:
            return doc
    pytest.fail(f"nsel demo failed twice: {json.dumps(doc['verdict'])}")


def odd_folder(root, session):
    """A folder of real files in every state: an empty report, a left .qdstrm, a report still
    being written, an unreadable manifest, a process killed before its window (its manifest
    says so), a worker_process_<PID> report, a link to a report, a Ray layout with a dangling
    session_latest."""
    nsight = Path(session) / "logs" / "nsight"
    reports = sorted(nsight.glob("*.nsys-rep"))
    manifest = json.loads((nsight / (reports[0].name[:-len(".nsys-rep")] + ".nsel.json"))
                          .read_text())
    plain = root / "odd" / "plain"
    ray_nsight = root / "odd" / "ray" / "session_2026-01-01_00-00-00_000000_1" / "logs" / "nsight"
    plain.mkdir(parents=True)
    ray_nsight.mkdir(parents=True)
    old = time.time() - 7200
    (plain / "empty_worker_2:4_111.nsys-rep").write_bytes(b"")
    (plain / "left_worker_2:4_222.qdstrm").write_bytes(reports[0].read_bytes()[:10000])
    (plain / "bad_worker_2:4_333.nsel.json").write_text("not json\n")
    shutil.copy(reports[0], plain / "worker_process_444.nsys-rep")
    shutil.copy(reports[-1], plain / "fresh_worker_2:4_555.nsys-rep")  # just written
    for name in ("empty_worker_2:4_111.nsys-rep", "left_worker_2:4_222.qdstrm",
                 "worker_process_444.nsys-rep"):
        os.utime(plain / name, (old, old))
    killed = dict(manifest, pid=666, rank=None, local_rank=None, rank_variables={},
                  report=str(plain / "dtensor_policy_worker_2:4_666.nsys-rep"), state="missing",
                  exit_status=137, reason="nsys wrote no report")
    (plain / "dtensor_policy_worker_2:4_666.nsel.json").write_text(json.dumps(killed))
    (plain / "linked_2:4_777.nsys-rep").symlink_to(reports[0])
    for report in reports[-1:]:
        shutil.copy(report, ray_nsight / report.name)
        stem = report.name[:-len(".nsys-rep")]
        shutil.copy(nsight / f"{stem}.nsel.json", ray_nsight / f"{stem}.nsel.json")
    (root / "odd" / "ray" / "session_latest").symlink_to(
        root / "odd" / "ray" / "session_2026-02-02_00-00-00_000000_2")
    return root / "odd"


def private_site(root):
    """A site-packages folder with a copy of the installed Ray's nsight.py, unpatched (the
    venv's own Ray is never touched), that another user can read."""
    source = ray_site_packages() / "ray"
    target = root / "site" / "ray"
    (target / "_private" / "runtime_env").mkdir(parents=True)
    shutil.copy(source / "_version.py", target / "_version.py")
    (target / "__init__.py").write_text("")
    text = (source / "_private" / "runtime_env" / "nsight.py").read_text()
    (target / "_private" / "runtime_env" / "nsight.py").write_text(text.replace(FIXED, ORIGINAL))
    for folder in (root, root / "site", target, target / "_private",
                   target / "_private" / "runtime_env"):
        folder.chmod(0o755)
    return target.parent


def reachable_by_others(path):
    folder = Path(os.path.abspath(path)).parent
    return all(p.stat().st_mode & 0o001 for p in [folder, *folder.parents])


def collect(root):
    out = Outputs(root)
    selection = {"NRL_NSYS_WORKER_PATTERNS": "*policy*", "NRL_NSYS_PROFILE_STEP_RANGE": "2:4"}

    # demo: a real job, then one whose patterns match no worker (no report, no summary).
    demo_root = root / "tmp" / "nsel-demo"  # <temp>/nsel-demo: check's default root
    ran = demo(out, demo_root)
    session = ran["session"]
    nsight = Path(ran["nsight_dir"])
    out.run("nsel.demo/1", ["demo", "--json", "--steps", "3", "--work-ms", "20", "--root",
                            str(root / "demo-none")], expect=(1,),
            env={"NRL_NSYS_WORKER_PATTERNS": "nomatch", "NRL_NSYS_PROFILE_STEP_RANGE": "2:4"})
    # --ray: the same job as Ray actors on a local cluster under the test's folder (ray and pid
    # set); NSEL_RAY_PATCH=0 keeps its driver's `import nsel` from fixing the venv's Ray.
    out.run("nsel.demo/1", ["demo", "--json", "--ray", "--root", str(root / "ray-demo")])
    reports = sorted(str(p) for p in nsight.glob("*.nsys-rep"))
    assert len(reports) == 2, reports
    odd = odd_folder(root, session)
    broken = root / "broken.sqlite"
    broken.write_bytes(b"not an export\n" * 100)

    # report
    out.run("nsel.report/1", ["report", "--json", "-q", session])
    out.run("nsel.report/1", ["report", "--json", "-q", str(odd / "plain")], expect=(1,))
    out.run("nsel.report/1", ["report", "--json", "-q", reports[0], str(broken)], expect=(1,))

    # diff: a run against itself, against one of its ranks, one rank against the other, and
    # with a report that cannot be read.
    out.run("nsel.diff/1", ["diff", "--json", "-q", session, session])
    out.run("nsel.diff/1", ["diff", "--json", "-q", session, reports[0]])
    out.run("nsel.diff/1", ["diff", "--json", "-q", reports[0], reports[1]])
    out.run("nsel.diff/1", ["diff", "--json", "-q", "--baseline", session, "--candidate",
                            session, "--candidate", str(broken)], expect=(1,))

    # Real GPU captures (copies): GPU time per step, NCCL kernels, real verdicts.
    if GPU_REPORTS.is_dir():
        gpu = root / "gpu"
        gpu.mkdir()
        exports = GPU_REPORTS / "nersc-sc22-ddp" / "exports"
        for name in ("4gpu_baseline", "4gpu_bucketcap100mb"):
            with lzma.open(exports / f"{name}.nsys2022.4.sqlite.xz") as packed:
                (gpu / f"{name}.sqlite").write_bytes(packed.read())
        shutil.copy(GPU_REPORTS / "nsys-ai" / "mfu_2gpu_before.sqlite", gpu)
        base, bucket = str(gpu / "4gpu_baseline.sqlite"), str(gpu / "4gpu_bucketcap100mb.sqlite")
        out.run("nsel.report/1", ["report", "--json", "-q", base,
                                  str(gpu / "mfu_2gpu_before.sqlite")])
        out.run("nsel.report/1", ["report", "--json", "-q", "--short-kernel-names", "--top", "3",
                                  bucket])
        out.run("nsel.diff/1", ["diff", "--json", "-q", base, bucket])
        out.run("nsel.diff/1", ["diff", "--json", "-q", session, base])  # nothing paired

    # ls and check
    out.run("nsel.ls/1", ["ls", "--json", str(demo_root)])
    out.run("nsel.ls/1", ["ls", "--json", str(odd)])
    (root / "nothing").mkdir()
    out.run("nsel.ls/1", ["ls", "--json", str(root / "nothing")])
    out.run("nsel.check/1", ["check", "--json", session])
    out.run("nsel.check/1", ["check", "--json", "--expect", "12", str(odd)], expect=(1,))
    out.run("nsel.check/1", ["check", "--json", "--files-only", str(odd)], expect=(1,))
    # Without ROOT: the newest session under /tmp/ray and <temp>/nsel-demo (names and sizes
    # only, so that a session of someone else's under /tmp/ray is never exported).
    out.run("nsel.check/1", ["check", "--json", "--files-only"], expect=(0, 1, 3))

    # plan, with and without a selection
    program = ["--", "/bin/true", "x"]
    out.run("nsel.plan/1", ["plan", "--json", "dtensor_policy_worker", "vllm_generation_worker",
                            *program], lines=True,
            env=dict(selection, NRL_NSYS_PROFILE_STEP_RANGE="2:4,6:8"))
    out.run("nsel.plan/1", ["plan", "--json", "--ranks", "0-1", "dtensor_policy_worker"],
            lines=True, env=dict(selection, NSEL_PROFILE_RANKS="0", NSEL_CAPTURE="nvtx"))
    out.run("nsel.plan/1", ["plan", "--json", "--rank", "3", "--local-rank", "1", "--node", "n1",
                            "--capture", "none", "dtensor_policy_worker"], lines=True,
            env=dict(selection, NRL_NSYS_EXTRA_OPTIONS='{"t": "nvtx"}'))
    out.run("nsel.plan/1", ["plan", "--json", "--capture", "cuda", "dtensor_policy_worker"],
            lines=True, env=dict(selection, RANK="2", LOCAL_RANK="0"))
    out.run("nsel.plan/1", ["plan", "--json", "dtensor_policy_worker"], lines=True)

    # doctor, without and with a selection and nsel's plugin setting
    out.run("nsel.doctor/1", ["doctor", "--json", "--output-dir", str(root), "--python",
                              VENV_PYTHON], expect=(0, 1))
    out.run("nsel.doctor/1", ["doctor", "--json", "--output-dir", str(root / "absent"),
                              "--python", VENV_PYTHON], expect=(0, 1),
            env=dict(selection, RAY_RUNTIME_ENV_PLUGINS=PLUGIN_SETTING))

    # ray patch on a private copy of the installed Ray's nsight.py: every outcome.
    site = private_site(root / "ray-patch")
    at = ["--site-packages", str(site), "--json"]
    out.run("nsel.ray-patch/1", ["ray", "patch", "--check", *at], expect=(1,), lines=True)
    out.run("nsel.ray-patch/1", ["ray", "patch", *at], lines=True)
    out.run("nsel.ray-patch/1", ["ray", "patch", *at], lines=True)
    out.run("nsel.ray-patch/1", ["ray", "patch", "--check", *at], lines=True)
    out.run("nsel.ray-patch/1", ["ray", "patch", "--revert", *at], lines=True)
    out.run("nsel.ray-patch/1", ["ray", "patch", "--revert", *at], lines=True)
    if reachable_by_others(NSEL) and shutil.which("setpriv"):
        done = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                               NSEL, "ray", "patch", *at], capture_output=True, text=True,
                              env=out.env, cwd="/")
        assert done.returncode == 1, done.stderr
        for doc in documents(done.stdout, True):
            out.by_schema["nsel.ray-patch/1"].append(("ray patch --json as user 65534", doc))
    nsight_py = site / "ray" / "_private" / "runtime_env" / "nsight.py"
    nsight_py.write_text("context.py_executable = make_command()\n")
    out.run("nsel.ray-patch/1", ["ray", "patch", *at], expect=(1,), lines=True)

    # sync: one pass, then a loop until ENDED (stopped by its process id if it overstays).
    out.run("nsel.sync/1", ["sync", "--src", str(demo_root), "--dest", str(root / "logs-head"),
                            "--head", "--json", "--quiet"], lines=True)
    dest = root / "logs-node"
    loop = subprocess.Popen([NSEL, "sync", "--src", str(demo_root), "--dest", str(dest),
                             "--node", "n1", "--every", "1", "--json", "--quiet"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=out.env, cwd=root)
    watchdog = threading.Timer(120, loop.kill)  # by its process id, should it never print
    watchdog.start()
    try:
        first = loop.stdout.readline()
        (dest / "ENDED").write_text("")
        rest, errors = loop.communicate(timeout=60)
    finally:
        watchdog.cancel()
        if loop.poll() is None:
            loop.kill()
            loop.wait()
    assert loop.returncode == 0, errors
    for doc in documents(first + rest, True):
        out.by_schema["nsel.sync/1"].append(("sync --json --every 1 until ENDED", doc))
    return out


@pytest.fixture(scope="module")
def outputs():
    root = Path(tempfile.mkdtemp(prefix="nsel-schemas-"))
    root.chmod(0o755)
    try:
        yield collect(root).by_schema
    finally:
        # Whatever still names the test's folder is stopped by process id; an nsys agent may
        # outlive its session for a moment, any other process is a fault.
        marked = processes_marked(str(root))
        strays = [pid for pid in marked if not is_nsys_agent(pid)]
        if marked:
            stop_marked(str(root))
        shutil.rmtree(root, ignore_errors=True)
        assert not strays, f"processes of the test were still running: {strays}"


def schema_ids_of_files():
    return sorted(json.loads(p.read_text())["properties"]["schema"]["const"]
                  for p in SCHEMAS.glob("*.schema.json"))


def test_each_schema_file_is_a_draft_2020_12_schema_named_for_its_id():
    files = sorted(SCHEMAS.glob("*.schema.json"))
    assert files
    for path in files:
        schema = json.loads(path.read_text())
        Draft202012Validator.check_schema(schema)
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema", path
        schema_id = schema["properties"]["schema"]["const"]
        assert schema["$id"] == f"urn:nsel:schema:{schema_id}", path
        assert path == schema_file(schema_id), path
        assert schema["required"][0] == "schema" and schema["additionalProperties"] is False
        assert schema.get("title") and schema.get("description"), path


def subschemas(node, where="#"):
    if isinstance(node, dict):
        yield where, node
        for key, value in node.items():
            yield from subschemas(value, f"{where}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from subschemas(value, f"{where}/{i}")


def test_every_property_is_described_and_every_fixed_object_closed():
    for path in sorted(SCHEMAS.glob("*.schema.json")):
        schema = json.loads(path.read_text())
        defs = schema.get("$defs", {})

        def target(node):
            ref = node.get("$ref", "")
            return defs.get(ref.removeprefix("#/$defs/"), {}) if ref.startswith("#/$defs/") else {}

        for where, node in subschemas(schema):
            for name, prop in node.get("properties", {}).items() if where.rsplit("/", 1)[-1] \
                    != "properties" else []:
                assert prop.get("description") or target(prop).get("description"), \
                    f"{path.name} {where}/properties/{name} has no description"
            types = node.get("type", [])
            if "object" in (types if isinstance(types, list) else [types]) and (
                    "properties" in node or "$ref" in node):
                assert node.get("additionalProperties") is False or \
                    node.get("unevaluatedProperties") is False, f"{path.name} {where} is open"
                known = set(node.get("properties", {})) | set(target(node).get("properties", {}))
                optional = OPTIONAL_KEYS.get((path.name, where), set())
                assert set(node.get("required", [])) == known - optional, \
                    f"{path.name} {where}: required is not every property but {optional}"


def test_every_command_with_json_has_a_schema():
    """Each subcommand whose --help offers --json (nsel recover has none) prints a schema's
    documents; a new --json without a schema fails here."""
    env = dict(base_environment(), NSEL_RAY_PATCH="0")

    def help_of(args):
        return subprocess.run([NSEL, *args, "--help"], capture_output=True, text=True,
                              env=env).stdout

    def subcommands(text):
        part = text.split("Subcommands:", 1)[1] if "Subcommands:" in text else ""
        return [m.group(1) for m in re.finditer(r"^  ([a-z][a-z-]*)\s", part, re.M)]

    with_json = set()
    for command in subcommands(help_of([])):
        inner = subcommands(help_of([command]))
        for args in ([command, sub] for sub in inner) if inner else [[command]]:
            if re.search(r"^\s+--json\b", help_of(args), re.M):
                with_json.add("nsel." + "-".join(args) + "/1")
    assert with_json == set(COMMANDS)
    assert schema_ids_of_files() == sorted(COMMANDS)


def test_the_readme_lists_every_schema():
    readme = (SCHEMAS / "README.md").read_text()
    for schema_id in COMMANDS:
        assert schema_file(schema_id).name in readme, schema_id
        assert f"`{schema_id}`" in readme, schema_id


@pytest.mark.parametrize("schema_id", sorted(COMMANDS))
def test_real_outputs_validate(outputs, schema_id):
    check = validator(schema_id)
    docs = outputs[schema_id]
    assert docs, f"no output of {schema_id} was made"
    for what, doc in docs:
        assert next(iter(doc)) == "schema", f"nsel {what}: \"schema\" is not the first key"
        errors = sorted(check.iter_errors(doc), key=lambda e: list(e.absolute_path))
        assert not errors, f"nsel {what}:\n" + "\n".join(
            f"  {e.json_path}: {e.message[:300]}" for e in errors[:20])


def parent_of(doc, path):
    node = doc
    for step in path[:-1]:
        try:
            node = node[step]
        except (IndexError, KeyError, TypeError):
            return None
    return node if isinstance(node, dict) and path[-1] in node else None


@pytest.mark.parametrize("schema_id", sorted(COMMANDS))
def test_a_removed_renamed_or_retyped_key_fails(outputs, schema_id):
    check = validator(schema_id)
    path = INNER_KEY[schema_id]
    found = [doc for _, doc in outputs[schema_id] if parent_of(doc, path) is not None]
    assert found, f"no output of {schema_id} has {path}"
    original = found[0]
    assert check.is_valid(original)

    def changed(edit, at=path):
        doc = json.loads(json.dumps(original))
        edit(parent_of(doc, at), at[-1])
        return doc

    def rename(node, key):
        node[key + "_renamed"] = node.pop(key)

    def retype(node, key):
        node[key] = {"not": "this"}

    def other_id(node, key):
        node[key] = schema_id.replace("/1", "/2")

    def extra(node, key):
        node["unknown_key"] = 1

    for what, doc in [
            ("inner key removed", changed(lambda node, key: node.pop(key))),
            ("inner key renamed", changed(rename)),
            ("inner key of another type", changed(retype)),
            ("top-level key removed", changed(lambda node, key: node.pop(key), [path[0]])),
            ("top-level key renamed", changed(rename, [path[0]])),
            ("schema key removed", changed(lambda node, key: node.pop(key), ["schema"])),
            ("another schema id", changed(other_id, ["schema"])),
            ("an unknown key", changed(extra, ["schema"]))]:
        assert not check.is_valid(doc), f"{schema_id}: {what} still validates"
