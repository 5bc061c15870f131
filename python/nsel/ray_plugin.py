"""nsel's Ray runtime-env plugin: an alternative to Ray's own `nsight` field.

Load it in the environment of every `ray start` (or of the driver that starts a local cluster):

    RAY_RUNTIME_ENV_PLUGINS='[{"class": "nsel.ray_plugin.NselPlugin"}]'

and give selected actors `runtime_env=nsel.plugin_runtime_env(name, rank=...)`, i.e.
`{"nsel": {"worker": name, "env": {...}, "rank": N}}` (rank, local_rank and node are optional).
On the worker's own node the plugin starts the worker as `nsel exec --worker=<name>
--output-dir=<session>/logs/nsight [--rank=N ...] -- <the worker's interpreter>`:
the interpreter Ray chose is kept, every value nsel adds is shell-quoted, `nsel exec` chooses the
capture mode on that node, and its supervision finishes the report when Ray tears the worker down.

Before that it asks, on the node, what `nsel exec` will decide (nsys there, option names it
knows): a worker that would fail fails its runtime env at once, with nsel's one line, instead of
dying at start and being retried by Ray for minutes. `{"nsel": {"probe": True}}` (a driver's
check that the plugin is loaded) only sets NSEL_PLUGIN_PROBE=1 for its task.
"""

import os
import sys

from ray._private.runtime_env.plugin import RuntimeEnvPlugin

from . import _nsel
from ._cli import BINARY
from ._ray import PLUGIN_FIELD, PROBE_VARIABLE

_FORWARDED = frozenset(_nsel.forwarded_variables())


def _session_dir():
    """The session folder of the runtime-env agent this plugin runs in (`--session-dir` of its
    command line); Ray gives third-party plugins no other way to know it."""
    argv = sys.argv
    for i, argument in enumerate(argv):
        if argument == "--session-dir" and i + 1 < len(argv):
            return argv[i + 1]
        if argument.startswith("--session-dir="):
            return argument.split("=", 1)[1]
    return os.path.realpath("/tmp/ray/session_latest")


class NselPlugin(RuntimeEnvPlugin):
    name = PLUGIN_FIELD
    # Built-in plugins have priority 10 and a higher number runs later: nsel wraps the
    # interpreter the others (pip, uv, conda, ...) settled on.
    priority = 90

    @staticmethod
    def validate(runtime_env_dict):
        config = runtime_env_dict.get(PLUGIN_FIELD)
        if isinstance(config, dict) and config.get("probe") is True and len(config) == 1:
            return
        if not isinstance(config, dict) or not isinstance(config.get("worker"), str):
            raise ValueError(
                f"runtime_env[{PLUGIN_FIELD!r}]={config!r}: expected "
                "{'worker': NAME, 'env': {VARIABLE: value}}, as nsel.plugin_runtime_env(NAME) gives"
            )
        env = config.get("env", {})
        if not isinstance(env, dict) or any(
            name not in _FORWARDED or not isinstance(value, str) for name, value in env.items()
        ):
            raise ValueError(
                f"runtime_env[{PLUGIN_FIELD!r}]['env']={env!r}: expected string values for "
                f"{', '.join(sorted(_FORWARDED))} only"
            )
        node = config.get("node")
        if node is not None and not isinstance(node, str):
            raise ValueError(
                f"runtime_env[{PLUGIN_FIELD!r}]['node']={node!r}: expected the actor's node name"
            )
        # The driver's rule for the worker, rank, local rank and node (nsel.Error is a ValueError).
        try:
            _nsel.check_actor(config["worker"], config.get("rank"), config.get("local_rank"), node)
        except _nsel.Error as error:
            raise _nsel.Error(f"runtime_env[{PLUGIN_FIELD!r}]: {error}") from None
        if runtime_env_dict.get("_nsight") or runtime_env_dict.get("nsight"):
            raise ValueError(
                f"runtime_env has both 'nsight' and {PLUGIN_FIELD!r}: the worker would run under "
                "two nsys; use one of them"
            )

    def modify_context(self, uris, runtime_env, context, logger):
        config = runtime_env.get(PLUGIN_FIELD)
        if not config:
            return
        self.validate(runtime_env)
        if config.get("probe") is True:
            context.env_vars[PROBE_VARIABLE] = "1"
            return
        forwarded = config.get("env") or {}
        # The environment the worker will have: this node's, the actor's env_vars, then the
        # driver's selection, which the command line below sets last.
        variables = dict(os.environ)
        variables.update({k: v for k, v in (runtime_env.env_vars() or {}).items()
                          if isinstance(v, str)})
        variables.update(forwarded)
        try:
            _nsel.plugin_preflight(config["worker"], variables, config.get("rank"),
                                   config.get("local_rank"), config.get("node"), sys.executable)
        except _nsel.Error as error:
            # Ray retries a runtime env 3 times, 1 s apart, then fails the actor with this text.
            raise RuntimeError(f"nsel: {error}") from None
        # On the command line (`env NAME=value`), not in context.env_vars: Ray expands $NAME in
        # those, which would rewrite an option value such as an output name.
        environment = [f"{name}={value}" for name, value in sorted((config.get("env") or {}).items())]
        output_dir = os.path.join(_session_dir(), "logs", "nsight")
        os.makedirs(output_dir, exist_ok=True)
        context.py_executable = _nsel.plugin_executable(
            BINARY,
            config["worker"],
            output_dir,
            context.py_executable,
            environment,
            config.get("rank"),
            config.get("local_rank"),
            config.get("node"),
        )
        logger.info("nsel: worker %r starts as: %s", config["worker"], context.py_executable)
