#!/usr/bin/env bash
# Sets up a fresh machine (idempotent), builds, and runs the whole test suite with CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test
bash scripts/build.sh
cd "${NSEL_BUILD_DIR:-build}"
ctest --output-on-failure --timeout 600 "$@"
