"""What `import nsel` does before anything else: it checks the settings (a malformed NRL_NSYS_* or
NSEL_* value raises nsel.Error with the CLI's line, before the driver starts Ray), then, in a
driver that may use Ray's own `nsight` field, fixes Ray's nsight launcher on disk (the same edit
as `nsel ray patch`). The rules are the C++ library's (decide_at_import_fix): never in a process
Ray started (workers, agents), never where RAY_RUNTIME_ENV_PLUGINS loads nsel's plugin (which
keeps the interpreter itself), never with NSEL_RAY_PATCH=0. The fix never makes the import fail:
every problem with it becomes one warning line."""

import importlib.util
import sys

from . import _nsel


def _warn(message):
    try:
        print(f"nsel: warning: {message}", file=sys.stderr, flush=True)
    except Exception:  # a closed stderr must not fail the import either
        pass


def check_settings():
    """Raises nsel.Error on malformed settings (see _nsel.check_settings)."""
    _nsel.check_settings()


def fix_ray_launcher():
    """Returns the patch result (a dict with status and message), or None when nothing was
    looked at (the fix is not wanted here, Ray is not installed) or it could not be attempted."""
    try:
        if not _nsel.at_import_fix()["apply"]:
            return None
        spec = importlib.util.find_spec("ray")  # locates Ray without importing it
        locations = list(spec.submodule_search_locations or []) if spec else []
        if not locations:
            return None
        import os

        site_packages = os.path.dirname(os.path.abspath(locations[0]))
        nsight_py = _nsel.ray_nsight_file(site_packages)
        if not os.path.isfile(nsight_py):
            return None
        result = _nsel.patch_ray_nsight_file(nsight_py, "apply")
        if result["status"] == "patched":
            print(f"nsel: {result['message']} (NSEL_RAY_PATCH=0 to leave Ray's files alone)",
                  file=sys.stderr, flush=True)
        elif result["status"] != "already patched":
            _warn(f"Ray's nsight launcher is not fixed: {result['message']}")
        return result
    except BaseException as error:  # noqa: BLE001 - the import must survive anything here
        if isinstance(error, (KeyboardInterrupt, SystemExit)):
            raise
        _warn(f"Ray's nsight launcher is not fixed: {error}")
        return None
