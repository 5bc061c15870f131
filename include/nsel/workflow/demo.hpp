// `nsel demo`: a small GRPO-shaped local job (policy workers and one generation worker, each the
// example worker launched through `nsel exec`, exactly as users launch theirs) with its reports
// in a Ray-style session, listed with the steps they hold.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "nsel/analyze/step_ranges.hpp"

namespace nsel {

struct DemoRequest {
  long long steps = 5;
  long long work_ms = 150;
  std::filesystem::path root;  // for the sessions; empty: <temp>/nsel-demo
  int ranks = 0;               // policy ranks; 0: the default layout (two, no rank filter)
};

struct DemoWorker {
  std::string name;
  int rank = 0;
  bool profiled = false;  // as `nsel exec` decides it
  std::string reason{};
};

struct DemoReport {
  std::filesystem::path path;
  std::uintmax_t bytes = 0;
  std::vector<StepRange> steps;
  std::string problem;  // empty, or why its steps could not be read
};

struct DemoRun {
  std::filesystem::path session;
  std::filesystem::path nsight_dir;
  std::vector<DemoWorker> workers;
  int failed_workers = 0;
  std::vector<DemoReport> reports;               // sorted by path
  std::vector<std::filesystem::path> leftovers;  // unfinished .qdstrm captures
  bool shows_ranks = false;  // --ranks or a rank or node filter: which ranks ran under nsys
};

// Sets NRL_NSYS_WORKER_PATTERNS and NRL_NSYS_PROFILE_STEP_RANGE ('*policy*', '2:4') when neither
// is set, and with `ranks` NSEL_PROFILE_RANKS=0 when no rank or node filter is set, for this
// process and its workers; validates the settings before anything exists (nsel::Error), then
// creates the session, runs the workers together and lists what they left. `tell` gets the
// lines for stderr (the workers' own output goes to stderr too).
DemoRun run_demo(const DemoRequest& request, const std::function<void(const std::string&)>& tell);

}  // namespace nsel
