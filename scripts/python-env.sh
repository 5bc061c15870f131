#!/usr/bin/env bash
# Keeps the Python environment of the Ray parts: a virtual environment (default ./.venv, made
# with the python3 on PATH) holding Ray and this repository's `nsel` package (`pip install .`).
# Idempotent and quick when nothing changed: a stamp records the hash of the package's sources
# and of the pins below, and the install runs only when it differs.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${NSEL_VENV:-.venv}
pins=("ray[default]==2.60.0" "pytest==9.2.0" "scikit-build-core==1.1.2" "nanobind==3.1.0")

sources_hash=$(
  {
    printf '%s\n' "${pins[@]}"
    find CMakeLists.txt pyproject.toml cmake include src python -type f \
      ! -path '*/__pycache__/*' ! -path 'python/tests/*' -print0 | sort -z | xargs -0 sha256sum
  } | sha256sum | cut -d' ' -f1
)
stamp=$venv/.nsel-sources
if [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$sources_hash" ]; then
  exit 0
fi

say() { printf 'python-env: %s\n' "$*" >&2; }
if [ ! -x "$venv/bin/python" ]; then
  say "creating $venv with $(python3 --version 2>&1)"
  python3 -m venv "$venv"
fi
say "installing ${pins[*]} (already present ones are kept)"
"$venv/bin/python" -m pip install -q --disable-pip-version-check "${pins[@]}"
# The build tools are in the environment already, so pip need not fetch them again. The package
# is installed stripped (pyproject.toml), so its build's -g is dropped: GCC's code is the same
# with or without it, and the compiles take about a third less time.
say "building and installing the nsel package (pip install .)"
"$venv/bin/python" -m pip install -q --disable-pip-version-check --no-build-isolation \
  --config-settings "cmake.define.CMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -DNDEBUG" \
  --config-settings "cmake.define.CMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -DNDEBUG" .
echo "$sources_hash" >"$stamp"
say "ready: $("$venv/bin/python" -c 'import nsel, ray; print("nsel", nsel.__file__, "ray", ray.__version__)')"
