# Python, Ray and the nsel package for the Ray parts and their tests (sourced by setup.sh).
# Debian's python3 needs its venv and header packages; a python3 of its own (pyenv) has both.
packages+=(python3-venv python3-dev util-linux)
python_ray_part=$(dirname "${BASH_SOURCE[0]}")/../python-env.sh
setup_python_ray() { bash "$python_ray_part"; }
after_install+=(setup_python_ray)
