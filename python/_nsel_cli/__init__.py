"""The `nsel` command of the virtual environment: replaces itself with the C++ binary inside the
nsel package. A package of its own, so that starting the command never imports `nsel` (whose
import checks the settings and raises nsel.Error): a bad setting is then the binary's one-line
error with exit code 2, as from any other nsel."""

import importlib.util
import os
import sys


def main():
    spec = importlib.util.find_spec("nsel")  # locates the package without running it
    if spec is None or not spec.submodule_search_locations:
        print("nsel: error: the nsel package is not installed for " + sys.executable,
              file=sys.stderr)
        return 1
    binary = os.path.join(list(spec.submodule_search_locations)[0], "bin", "nsel")
    # `nsel demo --ray` runs its Ray job with this interpreter (the one that holds the package
    # and, with the [ray] extra, Ray), unless NSEL_PYTHON names another.
    os.environ.setdefault("NSEL_PYTHON", sys.executable)
    os.execv(binary, [binary, *sys.argv[1:]])


if __name__ == "__main__":
    sys.exit(main())
