#!/usr/bin/env bash
# Installs what nsel needs on a Debian 12 machine, idempotently: build tools and
# libraries, and Nsight Systems from Debian's non-free component (with the importer
# link Debian's package lacks). Safe to run again; does nothing that is already done.
set -euo pipefail

log() { printf 'setup: %s\n' "$*" >&2; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# Waits for another apt run instead of failing on its lock.
apt_install() {
  as_root apt-get -o DPkg::Lock::Timeout=900 update -q
  as_root env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 install -y -q \
    --no-install-recommends "$@"
}

# Debian packages not yet installed, from the list given.
missing_packages() {
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || echo "$p"
  done
}

enable_non_free() {
  # Nsight Systems lives in Debian's non-free; add contrib/non-free to the system's
  # own Debian sources rather than naming any mirror.
  local changed=0 file
  for file in /etc/apt/sources.list.d/*.sources; do
    [ -f "$file" ] || continue
    grep -q 'debian' "$file" || continue
    if grep -qE '^Components:' "$file" && ! grep -qE '^Components:.*non-free( |$)' "$file"; then
      as_root sed -i -E '/^Components:/{/non-free( |$)/!s/$/ contrib non-free/}' "$file"
      changed=1
    fi
  done
  if [ -f /etc/apt/sources.list ] && grep -qE '^deb .*debian.* main' /etc/apt/sources.list &&
     ! grep -qE '^deb .*debian.* main.*non-free( |$)' /etc/apt/sources.list; then
    as_root sed -i -E '/^deb .*debian/{/non-free( |$)/!s/ main/ main contrib non-free/}' /etc/apt/sources.list
    changed=1
  fi
  echo "$changed"
}

packages=(
  build-essential cmake ninja-build pkg-config clang-format
  libcli11-dev nlohmann-json3-dev libsqlite3-dev sqlite3
  libgtest-dev libgmock-dev libbenchmark-dev
  python3
  nsight-systems nsight-systems-target
)

mapfile -t missing < <(missing_packages "${packages[@]}")

if [ "$(enable_non_free)" = 1 ] || [ ${#missing[@]} -gt 0 ]; then
  if [ ${#missing[@]} -gt 0 ]; then
    log "installing: ${missing[*]}"
    apt_install "${missing[@]}"
  fi
fi

# Debian's nsys looks for its importer under the multiarch folder; without this link
# every `nsys profile` leaves a .qdstrm instead of a report.
importer_link=/usr/lib/x86_64-linux-gnu/nsight-systems/host-linux-x64
importer_dir=/usr/lib/nsight-systems/host-linux-x64
if [ -d "$importer_dir" ] && [ ! -e "$importer_link" ]; then
  log "linking the Nsight Systems importer: $importer_link"
  as_root mkdir -p "$(dirname "$importer_link")"
  as_root ln -sfn "$importer_dir" "$importer_link"
fi

# NVTX3 is header-only and ships with the CUDA toolkit that this kind of machine has.
nvtx_found=0
for dir in /usr/local/cuda/include /usr/include; do
  [ -e "$dir/nvtx3/nvToolsExt.h" ] && nvtx_found=1
done
if [ "$nvtx_found" = 0 ]; then
  log "NVTX3 headers not found (expected under /usr/local/cuda/include/nvtx3): install the CUDA toolkit"
  exit 1
fi

command -v nsys >/dev/null || { log "nsys is not on PATH after install"; exit 1; }

# Each feature that needs more (Python and Ray, a browser, SLURM, ...) has its own
# idempotent part in scripts/setup.d, run in name order with the helpers above.
for part in "$(dirname "$0")"/setup.d/*.sh; do
  [ -f "$part" ] || continue
  # shellcheck source=/dev/null
  source "$part"
done
log "ready: $(nsys --version 2>/dev/null | head -n1)"
