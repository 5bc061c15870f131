# rsync: the peer that bench/sync.sh measures `nsel sync` against (sourced by scripts/setup.sh).
mapfile -t rsync_missing < <(missing_packages rsync)
if [ ${#rsync_missing[@]} -gt 0 ]; then
  log "installing: ${rsync_missing[*]} (for bench/sync.sh)"
  apt_install "${rsync_missing[@]}"
fi
