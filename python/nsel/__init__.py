"""nsel: profile chosen workers of a distributed GPU job with Nsight Systems, for a chosen window
of training steps (NeMo RL's NRL_NSYS_* contract). The logic is nsel's C++ library (nsel._nsel).

In a Ray driver, merge one of these into an actor's options (both are {} when the worker is not
selected):

    runtime_env = nsel.plugin_runtime_env("dtensor_policy_worker")  # nsel's plugin (recommended)
    runtime_env = nsel.nsight_runtime_env("dtensor_policy_worker")  # Ray's own `nsight` field

Give each actor its rank (`rank=`, `local_rank=`): it is recorded in the report's manifest, and
NSEL_PROFILE_RANKS and NSEL_PROFILE_LOCAL_RANKS can profile only some actors of a worker group:

    runtime_env = nsel.plugin_runtime_env("dtensor_policy_worker", rank=i)

In a worker's training loop:

    for n in range(1, steps + 1):
        with nsel.step(n):              # opens/closes the capture window; NVTX range "step n"
            with nsel.range("forward"):  # an NVTX range inside the step (also a decorator)
                loss = model(batch)

`import nsel` checks the settings first: a malformed NRL_NSYS_* or NSEL_* value raises
nsel.Error with the CLI's one line, before the driver starts Ray (not in processes Ray started,
whose settings come with their runtime env). Then, in a driver with NRL_NSYS_WORKER_PATTERNS set,
it fixes Ray's nsight launcher on disk (the same fix as `nsel ray patch`), unless
NSEL_RAY_PATCH=0 or RAY_RUNTIME_ENV_PLUGINS loads nsel's plugin; that fix never makes the import
fail.
"""

from ._nsel import Error, Step, WindowRule, capturing, finish, init_worker, shell_join, step
from ._range import range  # noqa: A004 - nsel.range, as NVTX names it; not in __all__ (below)
from . import _at_import

_at_import.check_settings()
ray_launcher_fix = _at_import.fix_ray_launcher()

from ._ray import nsight_runtime_env, plan, plugin_runtime_env  # noqa: E402

# `range` is left out so that `from nsel import *` never hides Python's own range.
__all__ = [
    "Error",
    "Step",
    "WindowRule",
    "capturing",
    "finish",
    "init_worker",
    "nsight_runtime_env",
    "plan",
    "plugin_runtime_env",
    "ray_launcher_fix",
    "shell_join",
    "step",
]
