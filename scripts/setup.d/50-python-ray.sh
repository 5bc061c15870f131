# Python, Ray and the nsel package for the Ray parts and their tests (sourced by setup.sh).
# Debian's python3 needs its venv and header packages; a python3 of its own (pyenv) has both.
mapfile -t python_missing < <(missing_packages python3-venv python3-dev util-linux)
if [ ${#python_missing[@]} -gt 0 ]; then
  log "installing: ${python_missing[*]}"
  apt_install "${python_missing[@]}"
fi
bash "$(dirname "${BASH_SOURCE[0]}")/../python-env.sh"
