# Debian's Chromium, run headless by the test that checks the HTML page of `nsel report`
# (sourced by scripts/setup.sh, which provides log, apt_install and missing_packages).
mapfile -t chromium_missing < <(missing_packages chromium)
if [ ${#chromium_missing[@]} -gt 0 ]; then
  log "installing: ${chromium_missing[*]} (headless browser for the HTML report test)"
  apt_install "${chromium_missing[@]}"
fi
