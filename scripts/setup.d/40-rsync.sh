# rsync: the peer that bench/sync.sh measures `nsel sync` against (sourced by scripts/setup.sh).
packages+=(rsync)
