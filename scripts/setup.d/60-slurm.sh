# SLURM and munge for the two-node SLURM tests (sourced by scripts/setup.sh). The tests start
# their own private munged, slurmctld and slurmd daemons from a temporary folder, so the
# system's services are neither configured nor started here: setup.sh denies service starts
# while it installs these.
packages+=(slurm-wlm munge)
no_service_packages+=(slurm-wlm munge)
