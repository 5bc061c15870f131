# Sourced by scripts/setup.sh: Debian's clang with libFuzzer and the sanitizer runtimes, for
# scripts/fuzz.sh (-fsanitize=fuzzer needs libclang_rt.fuzzer from libclang-rt-14-dev).
mapfile -t fuzz_missing < <(missing_packages clang-14 libclang-rt-14-dev)
if [ ${#fuzz_missing[@]} -gt 0 ]; then
  log "installing for fuzzing: ${fuzz_missing[*]}"
  apt_install "${fuzz_missing[@]}"
fi
