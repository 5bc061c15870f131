#!/usr/bin/env bash
# Runs the step-overhead benchmark and prints each case against the empty loop of the same run.
set -euo pipefail
bench=${1:-build/bench/nsel_bench_step}
"$bench" --benchmark_min_time=0.5 --benchmark_format=json | python3 -c '
import json, sys
runs = {b["name"]: b["real_time"] for b in json.load(sys.stdin)["benchmarks"]}
base = runs["BM_EmptyLoop"]
for name, ns in runs.items():
    print(f"{name:24s} {ns:7.3f} ns/step  {ns / base:6.2f}x the empty loop  (+{ns - base:.3f} ns)")
'
