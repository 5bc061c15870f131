#!/usr/bin/env bash
# Sets up a fresh machine with what the demo needs (idempotent: scripts/setup.sh demo), builds
# the nsel program and the example worker only, and runs the demo job: nsel demo [ARGS...].
# scripts/test.sh sets up and builds the rest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh demo
bash scripts/build.sh nsel_cli nsel_example_worker
exec "${NSEL_BUILD_DIR:-build}/bin/nsel" demo "$@"
