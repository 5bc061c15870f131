"""What every Python test shares: the tests leave the virtual environment they run in as they
found it. `import nsel` with NRL_NSYS_WORKER_PATTERNS set fixes the launcher of the Ray it finds
(python/nsel/_at_import.py), so children that import nsel with a selection run with Ray hidden
or on a private view of it (ray_support.private_ray); the fixture below holds them to that."""

import hashlib
import importlib.util
import os
from pathlib import Path

import pytest


def installed_nsight_py():
    """The virtual environment's own ray/_private/runtime_env/nsight.py, or None without Ray."""
    spec = importlib.util.find_spec("ray")  # locates Ray without importing it
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0]) / "_private" / "runtime_env" / "nsight.py"


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest() if path and path.is_file() else None


# Taken when pytest loads this file, before any test module imports nsel; and no selection of
# the caller's reaches that import (each test sets the variables it needs).
NSIGHT_PY = installed_nsight_py()
NSIGHT_PY_AT_START = digest(NSIGHT_PY)
os.environ.pop("NRL_NSYS_WORKER_PATTERNS", None)


@pytest.fixture(scope="session", autouse=True)
def venv_left_as_found():
    yield
    assert digest(NSIGHT_PY) == NSIGHT_PY_AT_START, f"the tests changed {NSIGHT_PY}"
