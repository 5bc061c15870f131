// nsel demo: a small GRPO-shaped local job (two policy workers, one generation worker) launched
// through `nsel exec`, exactly as users launch theirs, with reports in a Ray-style session.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "nsel/analyze/step_ranges.hpp"
#include "nsel/core/error.hpp"
#include "nsel/core/values.hpp"
#include "nsel/workflow/check_run.hpp"
#include "nsel/workflow/demo.hpp"

namespace nsel::cli {
namespace {

namespace fs = std::filesystem;

struct DemoOptions {
  std::string steps_text = "5";
  std::string work_ms_text = "150";
  std::string slow_percent_text = "50";
  std::string root;
  bool json = false;
  std::string ranks_text;  // empty: the default layout (two policy ranks)
};

std::string column_label(const ProcessSummary& process) {
  const ReportIdentity& id = process.identity;
  std::string label = id.rank ? "rank " + std::to_string(*id.rank) : id.worker;
  if (id.pid != 0) label += " (pid " + std::to_string(id.pid) + ")";
  return label;
}

std::string ms(long long ns) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", static_cast<double>(ns) / 1e6);
  return text;
}

std::string verdict_line(const RunCheck& check) {
  std::string counts;
  std::map<std::string, int> by_verdict;
  for (const CheckedReport& r : check.reports) ++by_verdict[std::string(to_string(r.verdict))];
  if (check.never_started > 0) by_verdict["never_started"] += static_cast<int>(check.never_started);
  for (const auto& [verdict, n] : by_verdict) {
    counts += (counts.empty() ? "" : ", ") + std::to_string(n) + " " + verdict;
  }
  const int code = check.exit_code();
  return std::string(code == 0   ? "OK"
                     : code == 3 ? "NOT YET"
                                 : "FAILED") +
         ": " + std::to_string(check.processes) + " process(es)" +
         (check.expected ? ", " + std::to_string(*check.expected) + " expected" : "") + ": " +
         (counts.empty() ? "no report" : counts);
}

// The step table, what each rank did inside a step, the straggler, the verdict and the page.
void print_findings(const DemoRun& run) {
  if (run.summary && !run.summary->processes.empty()) {
    const ReportSet& set = *run.summary;
    std::printf(
        "\nSteps, ms: the step (its compute: the step less its all-reduce wait); * "
        "compute above the step's median by more than %.0f %%:\n",
        set.comparison.straggler_percent);
    std::printf("  %-6s", "STEP");
    for (const ProcessSummary& p : set.processes) std::printf("  %-22s", column_label(p).c_str());
    std::printf("\n");
    for (std::size_t i = 0; i < set.comparison.steps.size(); ++i) {
      const StepAcrossWorkers& step = set.comparison.steps[i];
      std::printf("  %-6lld", step.step);
      for (std::size_t p = 0; p < set.processes.size(); ++p) {
        const auto& d = step.duration_ns[p];
        std::string value = d ? ms(*d) : "-";
        if (i < run.compute.size() && run.compute[i].compute_ns[p]) {
          value +=
              " (" + ms(*run.compute[i].compute_ns[p]) + ")" + (run.compute[i].slow[p] ? " *" : "");
        }
        std::printf("  %-22s", value.c_str());
      }
      std::printf("\n");
    }
    std::printf("\nInside a step (mean ms of its top-level ranges):\n");
    for (const ProcessSummary& p : set.processes) {
      std::vector<std::pair<std::string, long long>> totals;  // in first-seen order
      for (const StepSummary& step : p.steps) {
        for (const RangeShare& share : step.shares) {
          auto it = std::find_if(totals.begin(), totals.end(),
                                 [&](const auto& t) { return t.first == share.range; });
          if (it == totals.end()) {
            totals.emplace_back(share.range, share.ns);
          } else {
            it->second += share.ns;
          }
        }
      }
      std::string parts;
      for (const auto& [range, ns] : totals) {
        parts += (parts.empty() ? "" : ", ") + range + " " +
                 ms(ns / static_cast<long long>(std::max<std::size_t>(p.steps.size(), 1)));
      }
      std::printf("  %-20s  %s\n", column_label(p).c_str(), parts.empty() ? "-" : parts.c_str());
    }
    if (run.straggler) {
      const ProcessSummary& p = set.processes[run.straggler->process];
      std::printf(
          "\nStraggler: %s %s: its compute is above the step's median in %zu of %zu steps, by "
          "%.1f %% on average; the other ranks wait for it in all-reduce\n",
          p.identity.worker.c_str(), column_label(p).c_str(), run.straggler->slow_steps,
          run.straggler->steps, run.straggler->mean_percent_above_median);
    } else {
      std::printf("\nStraggler: none (every compute within %.0f %% of its step's median)\n",
                  set.comparison.straggler_percent);
    }
  } else if (!run.summary_problem.empty()) {
    std::printf("\nSummary: %s\n", run.summary_problem.c_str());
  }
  std::printf("\nVerdict (nsel check %s): %s\n", run.session.c_str(),
              verdict_line(run.verdict).c_str());
  for (const CheckedReport& r : run.verdict.reports) {
    if (r.verdict == Verdict::ok) continue;
    std::printf("  %s  %s: %s\n", std::string(to_string(r.verdict)).c_str(),
                r.found.path.filename().c_str(), r.reason.c_str());
  }
  if (!run.html.empty()) std::printf("\nHTML page: %s\n", run.html.c_str());
}

}  // namespace

Action add_demo(CLI::App& app) {
  auto options = std::make_shared<DemoOptions>();
  CLI::App* demo = app.add_subcommand(
      "demo",
      "Run a small GRPO-shaped job on this machine: 'dtensor_policy_worker' x2 (or x N with\n"
      "--ranks N) and 'vllm_generation_worker' x1, each the example worker launched through\n"
      "'nsel exec' with RANK and LOCAL_RANK set.\n"
      "Honours NRL_NSYS_WORKER_PATTERNS and NRL_NSYS_PROFILE_STEP_RANGE; with neither set it\n"
      "uses '*policy*' and '2:4'. Reports land in <root>/session_<time>_<pid>/logs/nsight/\n"
      "(Ray's layout, with a session_latest link), then are listed with the steps they hold.\n"
      "The policy ranks train: forward, backward, an all-reduce-like wait for the slowest rank,\n"
      "optimizer, the last rank --slow-percent slower. The demo ends with the step table, the\n"
      "straggler found, the verdict of 'nsel check' on the session (exit 1 unless every worker\n"
      "ran and every profiled one left its window's steps) and the HTML page's path.");
  demo->add_option("--steps", options->steps_text,
                   "training steps to run, 1 to 1000000 (default 5)")
      ->type_name("N");
  demo->add_option("--work-ms", options->work_ms_text,
                   "CPU work per step in milliseconds, 0 to 600000 (default 150)")
      ->type_name("MS");
  demo->add_option("--root", options->root,
                   "folder for the Ray-style sessions (default: <temp>/nsel-demo)")
      ->type_name("DIR");
  demo->add_option("--slow-percent", options->slow_percent_text,
                   "how much slower the last policy rank computes, 0 to 1000 (default 50)")
      ->type_name("P");
  demo->add_flag("--json", options->json, "print the produced reports as one JSON object");
  demo->add_option("--ranks", options->ranks_text,
                   "run N policy ranks (RANK=0..N-1) to show rank selection; without\n"
                   "NSEL_PROFILE_RANKS (or a local-rank or node filter) only rank 0 is profiled")
      ->type_name("N");

  return [options](const std::vector<std::string>& trailing) -> int {
    if (!trailing.empty()) throw Error("nsel demo takes no PROGRAM; see 'nsel demo --help'");
    DemoRequest request;
    request.steps = parse_whole_number(options->steps_text, "--steps", 1, 1000000);
    request.work_ms = parse_whole_number(options->work_ms_text, "--work-ms", 0, 600000);
    request.slow_percent =
        parse_whole_number(options->slow_percent_text, "--slow-percent", 0, 1000);
    request.root = options->root;
    request.ranks =
        options->ranks_text.empty()
            ? 0
            : static_cast<int>(parse_whole_number(options->ranks_text, "--ranks", 1, 64));
    const DemoRun run = run_demo(
        request, [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); });

    if (options->json) {
      nlohmann::json out = {
          {"session", run.session.string()},      {"nsight_dir", run.nsight_dir.string()},
          {"failed_workers", run.failed_workers}, {"workers", nlohmann::json::array()},
          {"reports", nlohmann::json::array()},   {"leftovers", nlohmann::json::array()}};
      for (const DemoWorker& worker : run.workers) {
        out["workers"].push_back({{"worker", worker.name},
                                  {"rank", worker.rank},
                                  {"profiled", worker.profiled},
                                  {"reason", worker.reason}});
      }
      for (const DemoReport& report : run.reports) {
        nlohmann::json steps = nlohmann::json::array();
        for (const StepRange& s : report.steps) steps.push_back(s.step);
        out["reports"].push_back(
            {{"path", report.path.string()},
             {"bytes", report.bytes},
             {"steps", steps},
             {"problem",
              report.problem.empty() ? nlohmann::json(nullptr) : nlohmann::json(report.problem)}});
      }
      for (const fs::path& leftover : run.leftovers) out["leftovers"].push_back(leftover.string());
      out["slow_rank"] =
          run.slow_rank >= 0 ? nlohmann::json(run.slow_rank) : nlohmann::json(nullptr);
      out["straggler"] = nullptr;
      if (run.straggler && run.summary) {
        const ReportIdentity& id = run.summary->processes[run.straggler->process].identity;
        out["straggler"] = {
            {"worker", id.worker},
            {"rank", id.rank ? nlohmann::json(*id.rank) : nlohmann::json(nullptr)},
            {"pid", id.pid},
            {"slow_steps", run.straggler->slow_steps},
            {"steps", run.straggler->steps},
            {"mean_percent_above_median", run.straggler->mean_percent_above_median}};
      }
      nlohmann::json counts = nlohmann::json::object();
      for (const CheckedReport& r : run.verdict.reports) {
        counts[std::string(to_string(r.verdict))] =
            counts.value(std::string(to_string(r.verdict)), 0) + 1;
      }
      out["verdict"] = {{"exit_code", run.verdict.exit_code()},
                        {"processes", run.verdict.processes},
                        {"expected", run.verdict.expected ? nlohmann::json(*run.verdict.expected)
                                                          : nlohmann::json(nullptr)},
                        {"never_started", run.verdict.never_started},
                        {"counts", counts}};
      out["html"] = run.html.empty() ? nlohmann::json(nullptr) : nlohmann::json(run.html.string());
      std::printf("%s\n",
                  out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    } else {
      if (run.shows_ranks) {
        std::printf("\nWorkers:\n");
        for (const DemoWorker& worker : run.workers) {
          std::printf("  %-24s rank %-3d %s\n", worker.name.c_str(), worker.rank,
                      worker.profiled ? "profiled" : "bare (no nsys)");
        }
      }
      std::printf("\nReports in %s:\n", run.nsight_dir.c_str());
      if (run.reports.empty()) std::printf("  (none: no worker matched the patterns)\n");
      for (const DemoReport& report : run.reports) {
        std::printf("  %-48s %10s  steps %s%s%s\n", report.path.filename().c_str(),
                    size_text(report.bytes).c_str(), describe_steps(report.steps).c_str(),
                    report.problem.empty() ? "" : "  ! ", report.problem.c_str());
      }
      for (const fs::path& leftover : run.leftovers) {
        std::printf("  %-48s (unfinished .qdstrm: the importer did not run)\n",
                    leftover.filename().c_str());
      }
      print_findings(run);
    }
    return run.exit_code();
  };
}

}  // namespace nsel::cli
