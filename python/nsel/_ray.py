"""Driver-side helpers: the runtime_env entries for Ray's own `nsight` field and for nsel's
plugin. The selection, the options and their quoting come from the C++ library."""

import os
import sys

from . import _nsel

# The runtime_env field of nsel's plugin (nsel.ray_plugin.NselPlugin).
PLUGIN_FIELD = "nsel"


def plan(worker, probe_node=True):
    """What `nsel plan --json` says about `worker` under this process's environment."""
    return _nsel.plan_dict(worker, "", probe_node)


def _log(line):
    print(line, file=sys.stderr, flush=True)


def nsight_runtime_env(worker):
    """`{"nsight": {option: value}}` for Ray's own nsight plugin, or `{}` when `worker` is not
    selected. Values are shell-quoted (Ray passes them through `bash -c` unquoted), and the
    worker's step controller learns the window and capture mode through nsys's --env-var, so
    `nsel.step(n)` in the worker needs nothing else. The capture mode is the driver node's.
    Raises nsel.Error on invalid NRL_NSYS_* settings."""
    worker_plan, options = _nsel.nsight_options(worker)
    if not worker_plan["profile"]:
        return {}
    _log(worker_plan["log_line"])
    return {"nsight": dict(options)}


def plugin_runtime_env(worker):
    """`{"nsel": {"worker": ..., "env": {...}}}` for nsel's runtime-env plugin, or `{}` when
    `worker` is not selected. The driver's NRL_NSYS_* and NSEL_CAPTURE values travel with it, so
    the worker's node decides with them; the capture mode is chosen on that node.
    Raises nsel.Error on invalid settings."""
    worker_plan = _nsel.plan_dict(worker, "", False)
    if not worker_plan["profile"]:
        return {}
    _log(worker_plan["log_line"])
    env = {name: os.environ[name] for name in _nsel.forwarded_variables() if name in os.environ}
    return {PLUGIN_FIELD: {"worker": worker, "env": env}}
