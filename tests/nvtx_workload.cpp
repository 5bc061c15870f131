// A training-loop-shaped program for `nsel report` tests and benchmarks: steps named "step <n>"
// holding top-level phases ("forward", "backward", "optimizer") with many small nested ranges,
// a range in a named NVTX domain, a loader thread with its own ranges, ranges outside any step
// and OS runtime calls (sleeps, file writes). Run it under `nsys profile -t nvtx,osrt`.
#include <nvtx3/nvToolsExt.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <thread>

namespace {

[[noreturn]] void usage(const char* problem) {
  std::fprintf(stderr,
               "nvtx-workload: %s\n"
               "usage: nvtx-workload [--steps N] [--ranges N] [--work-us US] [--slow-step N]\n"
               "  --ranges: small ranges per step (total ranges ~ steps * (ranges + 6))\n",
               problem);
  std::exit(2);
}

long long number_after(int& i, int argc, char** argv) {
  if (i + 1 >= argc) usage("missing value");
  char* end = nullptr;
  const long long value = std::strtoll(argv[++i], &end, 10);
  if (*end != '\0' || value < 0) usage("expected a whole number");
  return value;
}

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
  long long slow_step = 0;  // this step's forward phase takes ten times longer
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--steps") {
      steps = number_after(i, argc, argv);
    } else if (arg == "--ranges") {
      ranges = number_after(i, argc, argv);
    } else if (arg == "--work-us") {
      work_us = number_after(i, argc, argv);
    } else if (arg == "--slow-step") {
      slow_step = number_after(i, argc, argv);
    } else {
      usage("unknown argument");
    }
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
