"""Driver-side helpers: the runtime_env entries for Ray's own `nsight` field and for nsel's
plugin. The selection, the options and their quoting, and the check that Ray loads nsel's plugin
come from the C++ library."""

import os
import sys
import threading

from . import _nsel

# The runtime_env field of nsel's plugin (nsel.ray_plugin.NselPlugin).
PLUGIN_FIELD = "nsel"
# Set by the plugin for a probe task only: the task can then tell that the plugin ran.
PROBE_VARIABLE = "NSEL_PLUGIN_PROBE"
PROBE_TIMEOUT_S = 120


def plan(worker, probe_node=True, rank=None, local_rank=None, node=None):
    """What `nsel plan --json` says about `worker` under this process's environment, decided by
    the same code (the nsys found on PATH, the options its version needs, nsys asked about them:
    an option it does not know raises nsel.Error with nsel plan's line); "notices" holds the
    lines nsel plan tells on stderr before its log line. `rank`, `local_rank` and `node` win over
    RANK, LOCAL_RANK, ... and the host name; `probe_node=False` plans an automatic capture as an
    NVTX range without asking the GPU."""
    return _nsel.plan_dict(worker, "", probe_node, rank, local_rank, node)


def _log(line):
    print(line, file=sys.stderr, flush=True)


def _announce(worker_plan):
    """Logs the contract's line for a selected worker, or why a matched one is left out when nsel
    could not tell (an unknown rank or node); True when selected."""
    if worker_plan["notice"]:
        _log(worker_plan["notice"])
    if worker_plan["profile"]:
        _log(worker_plan["log_line"])
    return worker_plan["profile"]


def nsight_runtime_env(worker, rank=None, local_rank=None, node=None):
    """`{"nsight": {option: value}}` for Ray's own nsight plugin, or `{}` when `worker` is not
    selected. Values are shell-quoted (Ray passes them through `bash -c` unquoted), and the
    worker's step controller learns the window and capture mode through nsys's --env-var, so
    `nsel.step(n)` in the worker needs nothing else. The capture mode is the driver node's.

    The selection is made here, in the driver: NSEL_PROFILE_RANKS, NSEL_PROFILE_LOCAL_RANKS and
    NSEL_PROFILE_NODES apply to the actor's `rank`, `local_rank` and `node` as given (the
    driver's own RANK and host name are not the actor's). When one of them is set and its value
    is not given, the actor is not profiled and a warning says why; plugin_runtime_env() can
    leave the node to the actor's own host instead.
    Raises nsel.Error on invalid NRL_NSYS_*/NSEL_* settings or arguments, and on an option name
    that this node's nsys refuses."""
    worker_plan, options = _nsel.nsight_options(worker, rank, local_rank, node)
    if not _announce(worker_plan):
        return {}
    return {"nsight": dict(options)}


_plugin_checked = set()  # the Ray sessions whose nodes were found to load nsel's plugin
_plugin_check_lock = threading.Lock()


def _session_of_driver(ray):
    """This driver's Ray session folder on this node, or None (Ray Client, no local node)."""
    try:
        node = ray._private.worker.global_worker.node
        return node.get_session_dir_path() if node is not None else None
    except Exception:  # noqa: BLE001 - an internal of Ray; without it the cluster is asked
        return None


def _probe(ray):
    """Asks the cluster: a tiny task with an `nsel` probe field, which nsel's plugin answers by
    setting PROBE_VARIABLE. True when the plugin ran."""

    @ray.remote(num_cpus=0, max_retries=0)
    def nsel_plugin_probe():
        return os.environ.get(PROBE_VARIABLE) == "1"

    task = nsel_plugin_probe.options(runtime_env={PLUGIN_FIELD: {"probe": True}})
    return bool(ray.get(task.remote(), timeout=PROBE_TIMEOUT_S))


def _require_plugin(worker):
    """Raises nsel.Error naming RAY_RUNTIME_ENV_PLUGINS unless Ray will run nsel's plugin for the
    actor: after ray.init(), from this node's runtime-env agent of the session (else a probe task,
    once per session); before it, from this process's RAY_RUNTIME_ENV_PLUGINS, which the local
    cluster that ray.init() starts inherits."""
    ray = sys.modules.get("ray")
    if ray is None or not ray.is_initialized():
        _nsel.check_plugin_before_ray_init(worker)
        return
    session = _session_of_driver(ray) or "(no local Ray node)"
    with _plugin_check_lock:
        if session in _plugin_checked:
            return
        if session.startswith("(") or _nsel.check_plugin_loaded(worker, session) == "unknown":
            if not _probe(ray):
                raise _nsel.Error(_nsel.plugin_not_loaded_message(
                    worker, "a task given an 'nsel' field ran without it, on "
                    "the node Ray chose"))
        _plugin_checked.add(session)


def plugin_runtime_env(worker, rank=None, local_rank=None, node=None):
    """`{"nsel": {"worker": ..., "env": {...}}}` for nsel's runtime-env plugin, or `{}` when
    `worker` is not selected. The driver's NRL_NSYS_* and NSEL_* values travel with it, and so do
    `rank`, `local_rank` and `node` when given (as `nsel exec --rank/--local-rank/--node` on the
    worker's node, where they win over RANK, LOCAL_RANK, ... and the host name, and end up in the
    report's manifest). The driver leaves out an actor whose given rank is not selected; what it
    was not given (the node, as a rule) is decided on the actor's node, as is the capture mode.

    For a selected worker it first makes sure that Ray will run nsel's plugin (see
    docs/ray.md): without RAY_RUNTIME_ENV_PLUGINS naming it, Ray would ignore the field and the
    actor would run unprofiled, so this raises nsel.Error with the value to set instead.
    Raises nsel.Error on invalid settings or arguments, and on an option name that this node's
    nsys refuses."""
    worker_plan = _nsel.plugin_plan(worker, rank, local_rank, node)
    if worker_plan["profile"]:
        _require_plugin(worker)
    if not _announce(worker_plan):
        return {}
    env = {name: os.environ[name] for name in _nsel.forwarded_variables() if name in os.environ}
    config = {"worker": worker, "env": env}
    for key, value in (("rank", rank), ("local_rank", local_rank), ("node", node)):
        if value is not None:
            config[key] = value
    return {PLUGIN_FIELD: config}
