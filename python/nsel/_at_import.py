"""The at-import fix of Ray's nsight launcher: the same edit as `nsel ray patch`, done by the C++
library when `import nsel` runs with NRL_NSYS_WORKER_PATTERNS set, before the driver starts Ray.
It must never make the import fail: every problem becomes one warning line."""

import importlib.util
import os
import sys


def _warn(message):
    try:
        print(f"nsel: warning: {message}", file=sys.stderr, flush=True)
    except Exception:  # a closed stderr must not fail the import either
        pass


def fix_ray_launcher():
    """Returns the patch result (a dict with status and message), or None when nothing was
    looked at (profiling off, Ray not installed) or the fix could not be attempted."""
    try:
        if not os.environ.get("NRL_NSYS_WORKER_PATTERNS", "").strip():
            return None
        spec = importlib.util.find_spec("ray")  # locates Ray without importing it
        locations = list(spec.submodule_search_locations or []) if spec else []
        if not locations:
            return None
        from . import _nsel

        site_packages = os.path.dirname(os.path.abspath(locations[0]))
        nsight_py = _nsel.ray_nsight_file(site_packages)
        if not os.path.isfile(nsight_py):
            return None
        result = _nsel.patch_ray_nsight_file(nsight_py, "apply")
        if result["status"] == "patched":
            print(f"nsel: {result['message']}", file=sys.stderr, flush=True)
        elif result["status"] != "already patched":
            _warn(f"Ray's nsight launcher is not fixed: {result['message']}")
        return result
    except BaseException as error:  # noqa: BLE001 - the import must survive anything here
        if isinstance(error, (KeyboardInterrupt, SystemExit)):
            raise
        _warn(f"Ray's nsight launcher is not fixed: {error}")
        return None
