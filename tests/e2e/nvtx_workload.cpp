// A training-loop-shaped program for `nsel report` tests and benchmarks: steps named "step <n>"
// holding top-level phases ("forward", "backward", "optimizer") with many small nested ranges,
// a range in a named NVTX domain, a loader thread with its own ranges, ranges outside any step
// and OS runtime calls (sleeps, file writes). Run it under `nsys profile -t nvtx,osrt`.
#include <nvtx3/nvToolsExt.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <thread>

namespace {

constexpr long long kMostValue = 1'000'000'000;  // any count or time these programs take

double spin(std::chrono::microseconds budget) {
  const auto until = std::chrono::steady_clock::now() + budget;
  double sink = 0;
  do {
    for (int i = 1; i < 200; ++i) sink += std::sqrt(static_cast<double>(i));
  } while (std::chrono::steady_clock::now() < until);
  return sink;
}

}  // namespace

int main(int argc, char** argv) {
  long long steps = 4;
  long long ranges = 20;
  long long work_us = 2000;
  long long slow_step = 0;
  CLI::App app{"A training-loop-shaped NVTX workload for nsel report's tests and benchmarks",
               "nvtx-workload"};
  app.add_option("--steps", steps, "steps to run")->check(CLI::Range(0LL, kMostValue));
  app.add_option("--ranges", ranges, "small ranges per step (total ranges ~ steps * (ranges + 6))")
      ->check(CLI::Range(0LL, kMostValue));
  app.add_option("--work-us", work_us, "work per phase, in us")->check(CLI::Range(0LL, kMostValue));
  app.add_option("--slow-step", slow_step, "this step's forward phase takes ten times longer")
      ->check(CLI::Range(0LL, kMostValue));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints help, or the error
    return code == 0 ? 0 : 2;      // bad arguments exit 2, as nsel's own do
  }

  nvtxDomainHandle_t domain = nvtxDomainCreateA("nsel_io");
  double sink = 0;
  nvtxRangePushA("setup");
  sink += spin(std::chrono::microseconds(work_us));
  nvtxRangePop();

  bool loading = true;
  std::thread loader([&] {
    while (__atomic_load_n(&loading, __ATOMIC_ACQUIRE)) {
      nvtxRangePushA("load batch");
      usleep(static_cast<useconds_t>(std::max(work_us, 1000LL)));  // never a busy loop
      nvtxRangePop();
    }
  });

  for (long long step = 1; step <= steps; ++step) {
    const std::string name = "step " + std::to_string(step);
    nvtxRangePushA(name.c_str());
    const long long forward_us = step == slow_step ? 10 * work_us : work_us;
    nvtxRangePushA("forward");
    sink += spin(std::chrono::microseconds(forward_us));
    for (long long r = 0; r < ranges / 2; ++r) {
      nvtxRangePushA("layer");
      nvtxRangePop();
    }
    nvtxRangePop();
    nvtxRangePushA("backward");
    sink += spin(std::chrono::microseconds(2 * work_us));
    for (long long r = ranges / 2; r < ranges; ++r) {
      nvtxRangePushA("grad");
      nvtxRangePop();
    }
    nvtxRangePop();
    nvtxRangePushA("optimizer");
    usleep(static_cast<useconds_t>(work_us / 2));
    nvtxEventAttributes_t attributes = {};
    attributes.version = NVTX_VERSION;
    attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attributes.messageType = NVTX_MESSAGE_TYPE_ASCII;
    attributes.message.ascii = "checkpoint";
    nvtxDomainRangePushEx(domain, &attributes);
    if (FILE* f = std::fopen("/dev/null", "w")) {
      std::fprintf(f, "%lld\n", step);
      std::fclose(f);
    }
    nvtxDomainRangePop(domain);
    nvtxRangePop();
    nvtxRangePop();
  }
  __atomic_store_n(&loading, false, __ATOMIC_RELEASE);
  loader.join();
  std::printf("nvtx-workload: %lld steps done (%.0f)\n", steps, std::fmod(sink, 10.0));
  return 0;
}
