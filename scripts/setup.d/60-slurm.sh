# SLURM and munge for the two-node SLURM tests (sourced by scripts/setup.sh). The tests start
# their own private munged, slurmctld and slurmd daemons from a temporary folder, so the
# system's services are neither configured nor started here.
mapfile -t slurm_missing < <(missing_packages slurm-wlm munge)
if [ ${#slurm_missing[@]} -gt 0 ]; then
  log "installing: ${slurm_missing[*]} (for the SLURM tests)"
  # Keep the packages' scripts from starting system daemons: on a machine without a
  # policy-rc.d, deny service starts only while installing.
  slurm_policy_made=0
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    as_root sh -c 'printf "#!/bin/sh\nexit 101\n" > /usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d'
    slurm_policy_made=1
  fi
  slurm_status=0
  apt_install "${slurm_missing[@]}" || slurm_status=$?
  if [ "$slurm_policy_made" = 1 ]; then as_root rm -f /usr/sbin/policy-rc.d; fi
  [ "$slurm_status" = 0 ] || exit "$slurm_status"
fi
