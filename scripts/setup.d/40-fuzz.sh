# Sourced by scripts/setup.sh: Debian's clang with libFuzzer and the sanitizer runtimes, for
# scripts/fuzz.sh (-fsanitize=fuzzer needs libclang_rt.fuzzer from libclang-rt-14-dev).
packages+=(clang-14 libclang-rt-14-dev)
