# Nsight Systems 2023.4 beside Debian 12's 2022.4 (sourced by scripts/setup.sh): the tests run
# every real-nsys test with each generation, and nsel picks the right one per report. Debian 13
# ships it; its two packages run on Debian 12 unpacked into a folder of their own, with the three
# links the packages' maintainer scripts would have made. Nothing is installed into the system.
nsys_2023_root=${NSEL_NSYS_2023_ROOT:-/opt/nsight-systems-2023.4}
nsys_2023_ready() {
  "$nsys_2023_root/usr/bin/nsys" --version 2>/dev/null | grep -q ' 2023\.4\.'
}
if ! nsys_2023_ready; then
  log "unpacking Nsight Systems 2023.4 (Debian 13's package) into $nsys_2023_root"
  nsys_2023_work=$(mktemp -d)
  # A private apt state whose only source is the system's own Debian source with the suite
  # changed to trixie: the system's package lists and status are left alone.
  nsys_2023_uri=$(awk '/^URIs:/ {u = $2} /^Suites:/ && / bookworm( |$)/ {print u; exit}' \
    /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
  if [ -z "$nsys_2023_uri" ] && [ -f /etc/apt/sources.list ]; then
    nsys_2023_uri=$(awk '$1 == "deb" && $3 == "bookworm" {print $2; exit}' /etc/apt/sources.list)
  fi
  [ -n "$nsys_2023_uri" ] || { log "no Debian bookworm source found to derive trixie's from"; exit 1; }
  mkdir -p "$nsys_2023_work/state/lists/partial" "$nsys_2023_work/cache/archives/partial" \
    "$nsys_2023_work/parts" "$nsys_2023_work/debs"
  printf 'Types: deb\nURIs: %s\nSuites: trixie\nComponents: non-free\nSigned-By: %s\n' \
    "$nsys_2023_uri" /usr/share/keyrings/debian-archive-keyring.gpg \
    >"$nsys_2023_work/parts/trixie.sources"
  nsys_2023_apt=(-o "Dir::State=$nsys_2023_work/state" -o Dir::State::status=/dev/null
    -o "Dir::Cache=$nsys_2023_work/cache" -o Dir::Etc::SourceList=/dev/null
    -o "Dir::Etc::SourceParts=$nsys_2023_work/parts" -o APT::Sandbox::User=root)
  apt-get "${nsys_2023_apt[@]}" update -q >/dev/null
  (cd "$nsys_2023_work/debs" &&
    apt-get "${nsys_2023_apt[@]}" download -q nsight-systems nsight-systems-target >/dev/null)
  nsys_2023_stage="$nsys_2023_work/root"
  for deb in "$nsys_2023_work"/debs/*.deb; do dpkg -x "$deb" "$nsys_2023_stage"; done
  # Without this link reports stay .qdstrm; without libssh the importer does not load; without
  # the two Python modules `nsys stats` fails ("No module named 'nsysstats'").
  mkdir -p "$nsys_2023_stage/usr/lib/x86_64-linux-gnu/nsight-systems"
  ln -sfn "$nsys_2023_root/usr/lib/nsight-systems/host-linux-x64" \
    "$nsys_2023_stage/usr/lib/x86_64-linux-gnu/nsight-systems/host-linux-x64"
  nsys_2023_libssh=$(ls /usr/lib/x86_64-linux-gnu/libssh.so.4 2>/dev/null || true)
  if [ -z "$nsys_2023_libssh" ]; then
    apt_install libssh-4
    nsys_2023_libssh=/usr/lib/x86_64-linux-gnu/libssh.so.4
  fi
  ln -sfn "$nsys_2023_libssh" "$nsys_2023_stage/usr/lib/x86_64-linux-gnu/libssh.so.4"
  for module in nsysstats.py gpustats.py; do
    cp "$nsys_2023_stage/usr/lib/python3/dist-packages/$module" \
      "$nsys_2023_stage/usr/lib/nsight-systems/host-linux-x64/python/lib/"
  done
  # Moved into place whole, so a run that stops half-way leaves no half-unpacked nsys behind.
  as_root mkdir -p "$(dirname "$nsys_2023_root")"
  as_root rm -rf "$nsys_2023_root"
  as_root mv "$nsys_2023_stage" "$nsys_2023_root"
  rm -rf "$nsys_2023_work"
  nsys_2023_ready || { log "Nsight Systems 2023.4 in $nsys_2023_root does not start"; exit 1; }
fi
# `nsys recipe` adds this folder to Python's path and stops when it is missing; Debian's package
# leaves it out. The recipes' own Python packages are not in it (bench/report_gpu_captures.sh
# keeps them in a virtual environment), so an empty folder is all that is missing.
nsys_2023_recipe=$nsys_2023_root/usr/lib/x86_64-linux-gnu/nsight-systems/target-linux-x64/python/packages/nsys_recipe
if [ -d "$nsys_2023_recipe" ] && [ ! -d "$nsys_2023_recipe/third_party" ]; then
  as_root mkdir -p "$nsys_2023_recipe/third_party"
fi
