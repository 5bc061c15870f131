"""nsel: profile chosen workers of a distributed GPU job with Nsight Systems, for a chosen window
of training steps (NeMo RL's NRL_NSYS_* contract). The logic is nsel's C++ library (nsel._nsel).

In a Ray driver, merge one of these into an actor's options (both are {} when the worker is not
selected):

    runtime_env = nsel.plugin_runtime_env("dtensor_policy_worker")  # nsel's plugin (recommended)
    runtime_env = nsel.nsight_runtime_env("dtensor_policy_worker")  # Ray's own `nsight` field

Give each actor its rank (`rank=`, `local_rank=`) so that NSEL_PROFILE_RANKS and
NSEL_PROFILE_LOCAL_RANKS profile only some actors of a worker group:

    runtime_env = nsel.plugin_runtime_env("dtensor_policy_worker", rank=i)

In a worker's training loop:

    for n in range(1, steps + 1):
        with nsel.step(n):   # opens/closes the capture window; NVTX range "step n"
            train_one_step()

Importing nsel with NRL_NSYS_WORKER_PATTERNS set fixes Ray's nsight launcher on disk (the same fix
as `nsel ray patch`) and never makes the import fail.
"""

from ._nsel import Error, Step, WindowRule, capturing, finish, init_worker, shell_join, step
from ._at_import import fix_ray_launcher as _fix_ray_launcher

ray_launcher_fix = _fix_ray_launcher()

from ._ray import nsight_runtime_env, plan, plugin_runtime_env  # noqa: E402

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
