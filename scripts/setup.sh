#!/usr/bin/env bash
# Installs what nsel needs on a Debian 12 machine, idempotently. Safe to run again; does nothing
# that is already done.
#
#   scripts/setup.sh demo   what the demo needs: build tools and libraries, and Nsight Systems
#                           from Debian's non-free component (with the importer link Debian's
#                           package lacks); scripts/demo.sh runs this
#   scripts/setup.sh [test] all of the above, and what the tests need besides (the parts in
#                           scripts/setup.d: Nsight Systems 2023.4, rsync, the fuzzing compilers,
#                           Chromium, Python with Ray, SLURM); scripts/test.sh runs this
#
# All missing Debian packages are installed by one `apt-get install`, after at most one
# `apt-get update`, and neither runs when nothing is missing.
set -euo pipefail

mode=${1:-test}
case "$mode" in
  demo | test) ;;
  *)
    printf "setup: error: MODE='%s': unknown; expected 'demo' (what the demo needs) or 'test' (everything)\n" "$mode" >&2
    exit 2
    ;;
esac

log() { printf 'setup: %s\n' "$*" >&2; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# Waits for another apt run instead of failing on its lock. The package lists are refreshed at
# most once per setup run.
apt_updated=0
apt_install() {
  if [ "$apt_updated" = 0 ]; then
    enable_non_free
    as_root apt-get -o DPkg::Lock::Timeout=900 update -q
    apt_updated=1
  fi
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
  local file
  for file in /etc/apt/sources.list.d/*.sources; do
    [ -f "$file" ] || continue
    grep -q 'debian' "$file" || continue
    if grep -qE '^Components:' "$file" && ! grep -qE '^Components:.*non-free( |$)' "$file"; then
      as_root sed -i -E '/^Components:/{/non-free( |$)/!s/$/ contrib non-free/}' "$file"
    fi
  done
  if [ -f /etc/apt/sources.list ] && grep -qE '^deb .*debian.* main' /etc/apt/sources.list &&
     ! grep -qE '^deb .*debian.* main.*non-free( |$)' /etc/apt/sources.list; then
    as_root sed -i -E '/^deb .*debian/{/non-free( |$)/!s/ main/ main contrib non-free/}' /etc/apt/sources.list
  fi
}

# What the demo needs: the build (the test libraries too, as configuring the project finds them)
# and Nsight Systems 2022.4.
packages=(
  build-essential cmake ninja-build pkg-config
  libcli11-dev nlohmann-json3-dev libsqlite3-dev sqlite3
  libgtest-dev libgmock-dev libbenchmark-dev
  python3
  nsight-systems nsight-systems-target
)
# Packages whose maintainer scripts would start system services (set by a part; see 60-slurm.sh).
no_service_packages=()
# Steps the parts need done once their packages are installed, in order.
after_install=()

# Each feature the tests need (a second Nsight Systems, a browser, SLURM, Python and Ray, ...)
# has its own part in scripts/setup.d, sourced in name order with the helpers above. A part that
# declares (adds its Debian packages to `packages`, its later steps to `after_install`) is
# sourced before the one install; a part that does its work as it is sourced
# (20-nsys-2023.sh), after it.
declaring_parts=()
working_parts=()
if [ "$mode" = test ]; then
  # clang-format for the format test; nodejs for page_scripts_parse (node --check on the HTML
  # pages' scripts); libssh-4 for Nsight Systems 2023.4's importer, so that 20-nsys-2023.sh finds
  # it installed.
  packages+=(clang-format nodejs libssh-4)
  for part in "$(dirname "$0")"/setup.d/*.sh; do
    [ -f "$part" ] || continue
    if grep -q '^packages+=' "$part"; then declaring_parts+=("$part"); else working_parts+=("$part"); fi
  done
fi
for part in "${declaring_parts[@]}"; do
  # shellcheck source=/dev/null
  source "$part"
done

mapfile -t missing < <(missing_packages "${packages[@]}")
if [ ${#missing[@]} -gt 0 ]; then
  log "installing: ${missing[*]}"
  # Keep the packages' scripts from starting system daemons: on a machine without a
  # policy-rc.d, deny service starts only while installing.
  policy_made=0
  mapfile -t quiet < <(missing_packages "${no_service_packages[@]}")
  if [ ${#quiet[@]} -gt 0 ] && [ ! -e /usr/sbin/policy-rc.d ]; then
    as_root sh -c 'printf "#!/bin/sh\nexit 101\n" > /usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d'
    policy_made=1
  fi
  install_status=0
  apt_install "${missing[@]}" || install_status=$?
  if [ "$policy_made" = 1 ]; then as_root rm -f /usr/sbin/policy-rc.d; fi
  [ "$install_status" = 0 ] || exit "$install_status"
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

for part in "${working_parts[@]}"; do
  # shellcheck source=/dev/null
  source "$part"
done
for step in "${after_install[@]}"; do "$step"; done
log "ready for the ${mode}: $(nsys --version 2>/dev/null | head -n1)"
