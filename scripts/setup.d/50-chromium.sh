# Debian's Chromium, run headless by the test that checks the HTML page of `nsel report`
# (sourced by scripts/setup.sh, which installs `packages` at once).
packages+=(chromium)
