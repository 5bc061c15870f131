// What nsel_step() costs a process that is not profiled, against an empty loop measured in the
// same run: the goal is one predictable branch, i.e. a difference of well under a nanosecond.
#include <benchmark/benchmark.h>

#include "nsel/step/step.hpp"

namespace {

void BM_EmptyLoop(benchmark::State& state) {
  long long step = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(++step);
  }
}
BENCHMARK(BM_EmptyLoop);

void BM_StepInactive(benchmark::State& state) {
  long long step = 0;
  for (auto _ : state) {
    nsel::step(++step);
    benchmark::DoNotOptimize(step);
  }
}
BENCHMARK(BM_StepInactive);

// The out-of-line ABI entry that bindings call (ctypes, nanobind): a call plus the same branch.
void BM_StepBeginOutOfLine(benchmark::State& state) {
  long long step = 0;
  for (auto _ : state) {
    nsel_step_begin(++step);
    benchmark::DoNotOptimize(step);
  }
}
BENCHMARK(BM_StepBeginOutOfLine);

}  // namespace

BENCHMARK_MAIN();
