#!/usr/bin/env bash
# Sets up a fresh machine (idempotent), builds, and runs the whole test suite with CTest; then
# every real-nsys test (labels integration, slurm, ray) again with each other Nsight Systems
# generation first on PATH.
#
# NSEL_TEST_NSYS_GENERATIONS: the generations the real-nsys tests run with, separated by spaces
# (default "2022.4 2023.4": Debian 12's /usr/bin/nsys and the 2023.4 that scripts/setup.sh
# unpacks into ${NSEL_NSYS_2023_ROOT:-/opt/nsight-systems-2023.4}). The first pass runs everything
# with PATH as it is; a generation whose nsys is not the one on PATH gets a second pass of the
# real-nsys labels with its bin folder first on PATH. "2022.4" alone: one pass, as before.
#
# Each pass after the first runs the Ray plugin's teardown test with
# NSEL_TEST_TEARDOWN_REPETITIONS=1 (each teardown once more with the other generation; the first
# pass repeats each 5 times), unless the caller sets NSEL_TEST_TEARDOWN_REPETITIONS for every pass.
# In the first pass the unit tests (label unit: no real nsys, no cluster) run one per core; every
# other test runs alone, as the real-nsys ones are sensitive to timing on a machine of 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test
bash scripts/build.sh
cd "${NSEL_BUILD_DIR:-build}"

generations=${NSEL_TEST_NSYS_GENERATIONS:-2022.4 2023.4}
nsys_bin_of() {
  case $1 in
    2022.4) echo /usr/bin ;;
    2023.4) echo "${NSEL_NSYS_2023_ROOT:-/opt/nsight-systems-2023.4}/usr/bin" ;;
    *)
      echo "scripts/test.sh: NSEL_TEST_NSYS_GENERATIONS='$generations': unknown generation" \
        "'$1'; expected 2022.4 and/or 2023.4, separated by spaces" >&2
      exit 2
      ;;
  esac
}
version_of() { "$1" --version 2>/dev/null | sed -n 's/.*version \([0-9]*\.[0-9]*\).*/\1/p'; }
for g in $generations; do
  bin=$(nsys_bin_of "$g")
  if [ "$(version_of "$bin/nsys")" != "$g" ]; then
    echo "scripts/test.sh: Nsight Systems $g is not at $bin/nsys (scripts/setup.sh installs it)" >&2
    exit 1
  fi
done

on_path=$(version_of "$(command -v nsys || echo nsys)" || true)
echo "== tests, all labels, with Nsight Systems $on_path ($(command -v nsys))"
# A failing part does not stop the later ones: the run says everything that fails.
status=0
ctest --output-on-failure --timeout 600 -j"$(nproc)" -L '^unit$' "$@" || status=1
ctest --output-on-failure --timeout 600 -LE '^unit$' "$@" || status=1
for g in $generations; do
  [ "$g" = "$on_path" ] && continue
  bin=$(nsys_bin_of "$g")
  echo "== real-nsys tests (integration, slurm, ray) again with Nsight Systems $g ($bin/nsys)"
  PATH="$bin:$PATH" NSEL_TEST_TEARDOWN_REPETITIONS=${NSEL_TEST_TEARDOWN_REPETITIONS:-1} \
    ctest --output-on-failure --timeout 600 -L 'integration|slurm|ray' "$@" || status=1
done
exit "$status"
