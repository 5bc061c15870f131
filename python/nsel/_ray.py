"""Driver-side helpers: the runtime_env entries for Ray's own `nsight` field and for nsel's
plugin. The selection, the options and their quoting come from the C++ library."""

import os
import sys

from . import _nsel

# The runtime_env field of nsel's plugin (nsel.ray_plugin.NselPlugin).
PLUGIN_FIELD = "nsel"


def plan(worker, probe_node=True, rank=None, local_rank=None, node=None):
    """What `nsel plan --json` says about `worker` under this process's environment; `rank`,
    `local_rank` and `node` win over RANK, LOCAL_RANK, ... and the host name."""
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
    Raises nsel.Error on invalid NRL_NSYS_*/NSEL_* settings or arguments."""
    worker_plan, options = _nsel.nsight_options(worker, rank, local_rank, node)
    if not _announce(worker_plan):
        return {}
    return {"nsight": dict(options)}


def plugin_runtime_env(worker, rank=None, local_rank=None, node=None):
    """`{"nsel": {"worker": ..., "env": {...}}}` for nsel's runtime-env plugin, or `{}` when
    `worker` is not selected. The driver's NRL_NSYS_* and NSEL_* values travel with it, and so do
    `rank`, `local_rank` and `node` when given (as `nsel exec --rank/--local-rank/--node` on the
    worker's node, where they win over RANK, LOCAL_RANK, ... and the host name). The driver
    leaves out an actor whose given rank is not selected; what it was not given (the node, as a
    rule) is decided on the actor's node, as is the capture mode.
    Raises nsel.Error on invalid settings or arguments."""
    worker_plan = _nsel.plugin_plan(worker, rank, local_rank, node)
    if not _announce(worker_plan):
        return {}
    env = {name: os.environ[name] for name in _nsel.forwarded_variables() if name in os.environ}
    config = {"worker": worker, "env": env}
    for key, value in (("rank", rank), ("local_rank", local_rank), ("node", node)):
        if value is not None:
            config[key] = value
    return {PLUGIN_FIELD: config}
