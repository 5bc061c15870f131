#include <algorithm>

#include "analyze/sqlite_db.hpp"
#include "nsel/analyze/step_ranges.hpp"
#include "nsel/analyze/summary.hpp"

namespace nsel {

std::vector<StepRange> read_step_ranges(const std::filesystem::path& sqlite_export) {
  const analyze::Database db(sqlite_export);
  std::vector<StepRange> steps;
  if (!db.has_table("NVTX_EVENTS")) return steps;
  // Newer exports keep the text in StringIds (textId); older ones inline it (text).
  const std::string query =
      db.has_table("StringIds")
          ? "SELECT COALESCE(e.text, s.value), e.start, e.end FROM NVTX_EVENTS e "
            "LEFT JOIN StringIds s ON e.textId = s.id "
            "WHERE e.end IS NOT NULL AND COALESCE(e.text, s.value) LIKE 'step %'"
          : "SELECT text, start, end FROM NVTX_EVENTS "
            "WHERE end IS NOT NULL AND text LIKE 'step %'";
  analyze::Statement statement = db.prepare(query);
  const StepNamePattern pattern;
  while (statement.step()) {
    const std::optional<long long> step = pattern.match(statement.text(0));
    if (!step) continue;  // "step 2 fwd"
    steps.push_back({*step, statement.integer(1), statement.integer(2)});
  }
  std::sort(steps.begin(), steps.end(),
            [](const StepRange& a, const StepRange& b) { return a.start_ns < b.start_ns; });
  return steps;
}

bool export_has_nvtx(const std::filesystem::path& sqlite_export) {
  const analyze::Database db(sqlite_export);
  if (!db.has_table("NVTX_EVENTS")) return false;
  analyze::Statement statement = db.prepare("SELECT 1 FROM NVTX_EVENTS LIMIT 1");
  return statement.step();
}

std::string describe_steps(const std::vector<StepRange>& steps) {
  if (steps.empty()) return "none";
  std::vector<long long> numbers;
  for (const StepRange& s : steps) numbers.push_back(s.step);
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
  out += " (" + std::to_string(numbers.size()) + (numbers.size() == 1 ? " step)" : " steps)");
  return out;
}

}  // namespace nsel
