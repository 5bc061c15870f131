#include <algorithm>

#include "analyze/sqlite_db.hpp"
#include "nsel/analyze/step_ranges.hpp"
#include "nsel/analyze/summary.hpp"

namespace nsel {

std::vector<StepRange> read_step_ranges(const std::filesystem::path& sqlite_export, bool stopped) {
  const analyze::Database db(sqlite_export);
  std::vector<StepRange> steps;
  if (!db.has_table("NVTX_EVENTS")) return steps;
  // The capture's last NVTX time: where a range never closed ends, and where nsys closes at
  // teardown those a stopped program left open.
  long long last_ns = 0;
  {
    analyze::Statement last =
        db.prepare("SELECT MAX(COALESCE(end, start)), MAX(start) FROM NVTX_EVENTS");
    if (last.step()) {
      last_ns =
          std::max(last.is_null(0) ? 0 : last.integer(0), last.is_null(1) ? 0 : last.integer(1));
    }
  }
  // Newer exports keep the text in StringIds (textId); older ones inline it (text).
  const std::string query =
      db.has_table("StringIds")
          ? "SELECT COALESCE(e.text, s.value), e.start, e.end FROM NVTX_EVENTS e "
            "LEFT JOIN StringIds s ON e.textId = s.id "
            "WHERE COALESCE(e.text, s.value) LIKE 'step %'"
          : "SELECT text, start, end FROM NVTX_EVENTS WHERE text LIKE 'step %'";
  analyze::Statement statement = db.prepare(query);
  const StepNamePattern pattern;
  while (statement.step()) {
    const std::optional<long long> step = pattern.match(statement.text(0));
    if (!step) continue;  // "step 2 fwd"
    const long long start = statement.integer(1);
    const bool open = statement.is_null(2);
    const long long end = open ? std::max(start, last_ns) : statement.integer(2);
    steps.push_back({*step, start, end, open || (stopped && end >= last_ns)});
  }
  std::sort(steps.begin(), steps.end(),
            [](const StepRange& a, const StepRange& b) { return a.start_ns < b.start_ns; });
  return steps;
}

void mark_cut_steps(std::vector<StepSummary>& steps, const std::vector<StepRange>& ranges) {
  for (const StepRange& range : ranges) {
    if (!range.cut) continue;
    for (StepSummary& step : steps) {
      if (step.step == range.step && step.start_ns == range.start_ns) step.cut = true;
    }
  }
}

bool export_has_nvtx(const std::filesystem::path& sqlite_export) {
  const analyze::Database db(sqlite_export);
  if (!db.has_table("NVTX_EVENTS")) return false;
  analyze::Statement statement = db.prepare("SELECT 1 FROM NVTX_EVENTS LIMIT 1");
  return statement.step();
}

namespace {

// "2-3,7" of the numbers, each once.
std::string runs_of(std::vector<long long> numbers) {
  std::sort(numbers.begin(), numbers.end());
  numbers.erase(std::unique(numbers.begin(), numbers.end()), numbers.end());
  std::string out;
  // Runs of consecutive steps: "2-3", "5", "2-3,7".
  for (size_t i = 0; i < numbers.size();) {
    size_t j = i;
    while (j + 1 < numbers.size() && numbers[j + 1] == numbers[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += std::to_string(numbers[i]);
    if (j > i) out += "-" + std::to_string(numbers[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace

std::string describe_steps(const std::vector<StepRange>& steps) {
  std::vector<long long> whole;
  std::vector<long long> cut;
  for (const StepRange& s : steps) (s.cut ? cut : whole).push_back(s.step);
  std::string out = "none";
  if (!whole.empty()) {
    std::sort(whole.begin(), whole.end());
    whole.erase(std::unique(whole.begin(), whole.end()), whole.end());
    out = runs_of(whole) + " (" + std::to_string(whole.size()) +
          (whole.size() == 1 ? " step)" : " steps)");
  }
  if (!cut.empty()) out += ", " + runs_of(cut) + " cut";
  return out;
}

}  // namespace nsel
