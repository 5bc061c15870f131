#!/usr/bin/env bash
# Sets up a fresh machine (idempotent), builds, and runs the demo job: nsel demo [ARGS...].
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
exec "${NSEL_BUILD_DIR:-build}/bin/nsel" demo "$@"
