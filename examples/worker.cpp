// The example worker: N training steps of real CPU work, each inside an NVTX range named exactly
// "step <n>", with the nsel step call at the start of each step. This is what a user's training
// loop adds: one line, `nsel::step(n)`. With --train, each step looks like data-parallel
// training: forward, backward, an all-reduce-like wait in which every rank waits for the slowest
// (a real barrier between the processes, through files in a shared folder), then optimizer.
#include <nvtx3/nvToolsExt.h>
#include <sys/resource.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "nsel/step/step.hpp"

namespace {

constexpr long long kMostValue = 1'000'000'000;  // any count or time these programs take

// Real work whose cost scales with the time asked for, so steps have visible, distinct lengths.
double burn_cpu(std::chrono::milliseconds budget) {
  const auto until = std::chrono::steady_clock::now() + budget;
  double sink = 0;
  while (std::chrono::steady_clock::now() < until) {
    for (int i = 1; i < 20000; ++i) sink += std::sqrt(static_cast<double>(i)) * std::sin(i);
  }
  return sink;
}

// Facts a test needs to tell "ran under nsys" from "ran bare": who the parent is and which
// libraries nsys injected.
void describe(const std::string& path) {
  std::ofstream out(path);
  char self[4096] = {0};
  const ssize_t m = readlink("/proc/self/exe", self, sizeof self - 1);
  out << "exe=" << (m > 0 ? std::string(self, static_cast<size_t>(m)) : "") << "\n";
  char parent[4096] = {0};
  const std::string link = "/proc/" + std::to_string(getppid()) + "/exe";
  const ssize_t n = readlink(link.c_str(), parent, sizeof parent - 1);
  const char* preload = std::getenv("LD_PRELOAD");
  out << "pid=" << getpid() << "\nppid=" << getppid()
      << "\nparent_exe=" << (n > 0 ? std::string(parent, static_cast<size_t>(n)) : "") << "\n"
      << "ld_preload=" << (preload ? preload : "") << "\n";
  // What the process inherited (umask, ignored and blocked signals, limits), as the kernel
  // shows it, so that a test compares it with and without nsys.
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    for (const std::string field : {"Umask", "SigIgn", "SigBlk"}) {
      if (!line.starts_with(field + ":")) continue;
      const std::size_t value = line.find_first_not_of(" \t", field.size() + 1);
      out << "inherited_" << field << "=" << line.substr(std::min(value, line.size())) << "\n";
    }
  }
  for (int resource = 0; resource < RLIM_NLIMITS; ++resource) {
    rlimit limit{};
    if (getrlimit(static_cast<__rlimit_resource>(resource), &limit) == 0) {
      out << "inherited_limit_" << resource << "=" << limit.rlim_cur << "/" << limit.rlim_max
          << "\n";
    }
  }
}

// Every rank waits here until all `world` ranks have finished step `step`'s backward pass, as
// they wait in an all-reduce of gradients for the slowest one. Bounded, so that a rank that died
// (or never started) stops no one for long: after one wait in vain, no rank is waited for again.
bool all_reduce_wait(const std::filesystem::path& folder, long long step, long long rank,
                     long long world) {
  const std::string prefix = "step-" + std::to_string(step) + ".rank-";
  std::ofstream(folder / (prefix + std::to_string(rank))).put('\n');
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < until) {
    long long arrived = 0;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(folder, ec)) {
      if (entry.path().filename().string().starts_with(prefix)) ++arrived;
    }
    if (arrived >= world) return true;
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  std::fprintf(stderr,
               "rank %lld: gave up waiting for %lld ranks at step %lld; not waiting again\n", rank,
               world, step);
  return false;
}

// One range around `work`, named as a profiler user reads it.
template <typename Work>
void range(const char* name, Work work) {
  nvtxRangePushA(name);
  work();
  nvtxRangePop();
}

}  // namespace

int main(int argc, char** argv) {
  long long steps = 5;
  long long first_step = 1;
  long long work_ms = 150;
  long long exit_code = 0;
  std::string name = "worker";
  std::string describe_path;
  std::string progress_path;
  std::string train_folder;
  long long world = 1;
  long long rank = 0;
  if (const char* given = std::getenv("RANK")) rank = std::atoll(given);
  long long slow_percent = 0;
  CLI::App app{"The example worker: training steps of CPU work, each in an NVTX range 'step <n>'",
               "nsel-example-worker"};
  app.add_option("--steps", steps, "the last step (steps to run from step 1)")
      ->check(CLI::Range(0LL, kMostValue));
  app.add_option("--first-step", first_step,
                 "the step to begin at, as a job resumed from a checkpoint does (default 1)")
      ->check(CLI::Range(1LL, kMostValue));
  app.add_option("--work-ms", work_ms, "CPU work per step, in ms")
      ->check(CLI::Range(0LL, kMostValue));
  app.add_option("--exit-code", exit_code, "exit code at the end")
      ->check(CLI::Range(0LL, kMostValue));
  app.add_option("--name", name, "the worker's name");
  app.add_option("--describe", describe_path, "write the process's facts to this file");
  app.add_option("--progress", progress_path, "write a line per step begun to this file");
  app.add_option("--train", train_folder,
                 "training-like steps: forward, backward, all-reduce wait with the other ranks "
                 "(through this shared folder), optimizer");
  app.add_option("--world", world, "ranks that meet in the all-reduce wait (with --train)")
      ->check(CLI::Range(1LL, 4096LL));
  app.add_option("--rank", rank, "this process's rank (default: RANK, else 0)")
      ->check(CLI::Range(0LL, 4095LL));
  app.add_option("--slow-percent", slow_percent,
                 "this rank computes this much slower (a straggler)")
      ->check(CLI::Range(0LL, 1000LL));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints help, or the error
    return code == 0 ? 0 : 2;      // bad arguments exit 2, as nsel's own do
  }
  if (!describe_path.empty()) describe(describe_path);
  // One line per step begun, written at once ("<step> <wall clock ns>"), so that a test knows
  // what ran, and when, before it interrupts.
  std::FILE* progress = progress_path.empty() ? nullptr : std::fopen(progress_path.c_str(), "w");

  double sink = 0;
  bool peers_alive = true;  // with --train: the other ranks came to every all-reduce so far
  for (long long step = first_step; step <= steps; ++step) {
    nsel::step(step);  // opens or closes the capture window; one branch when not profiled
    if (progress != nullptr) {
      const auto now = std::chrono::system_clock::now().time_since_epoch();
      std::fprintf(progress, "%lld %lld\n", step,
                   static_cast<long long>(
                       std::chrono::duration_cast<std::chrono::nanoseconds>(now).count()));
      std::fflush(progress);
    }
    const std::string step_range = "step " + std::to_string(step);
    nvtxRangePushA(step_range.c_str());
    if (train_folder.empty()) {
      sink += burn_cpu(std::chrono::milliseconds(work_ms));
    } else {
      // Forward, backward and optimizer share the step's compute 4:5:1; a slow rank needs more.
      const auto compute = [&](long long parts) {
        return std::chrono::milliseconds(work_ms * parts * (100 + slow_percent) / 1000);
      };
      range("forward", [&] { sink += burn_cpu(compute(4)); });
      range("backward", [&] { sink += burn_cpu(compute(5)); });
      range("all-reduce", [&] {
        if (peers_alive) peers_alive = all_reduce_wait(train_folder, step, rank, world);
      });
      range("optimizer", [&] { sink += burn_cpu(compute(1)); });
    }
    nvtxRangePop();
  }
  std::printf("%s pid %d: %lld steps done (%.0f)\n", name.c_str(), getpid(), steps,
              std::fmod(sink, 10.0));
  return static_cast<int>(exit_code);
}
