#include "nsel/reports/layout.hpp"

#include <charconv>
#include <ctime>
#include <system_error>

#include "nsel/core/error.hpp"
#include "nsel/sys/files.hpp"

namespace nsel {
namespace {

constexpr std::string_view kReportSuffix = ".nsys-rep";

std::optional<long long> parse_positive(std::string_view digits) {
  if (digits.empty()) return std::nullopt;
  long long value = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc() || end != digits.data() + digits.size() || value < 0) return std::nullopt;
  if (digits.front() == '+' || digits.front() == '-') return std::nullopt;
  return value;
}

}  // namespace

std::string report_file_name(std::string_view worker, const StepWindow& window, long long pid) {
  return std::string(worker) + "_" + window.text() + "_" + std::to_string(pid) +
         std::string(kReportSuffix);
}

std::optional<ReportName> parse_report_file_name(std::string_view file_name) {
  if (file_name.size() <= kReportSuffix.size() || !file_name.ends_with(kReportSuffix)) {
    return std::nullopt;
  }
  std::string_view stem = file_name.substr(0, file_name.size() - kReportSuffix.size());
  const size_t last = stem.rfind('_');
  if (last == std::string_view::npos) return std::nullopt;
  const auto pid = parse_positive(stem.substr(last + 1));
  if (!pid) return std::nullopt;
  std::string_view rest = stem.substr(0, last);
  if (rest == "worker_process") return ReportName{"worker_process", std::nullopt, *pid};
  const size_t window_at = rest.rfind('_');
  if (window_at == std::string_view::npos || window_at == 0) return std::nullopt;
  const std::string_view window_text = rest.substr(window_at + 1);
  const size_t colon = window_text.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  const auto start = parse_positive(window_text.substr(0, colon));
  const auto stop = parse_positive(window_text.substr(colon + 1));
  if (!start || !stop) return std::nullopt;
  return ReportName{std::string(rest.substr(0, window_at)), StepWindow{*start, *stop}, *pid};
}

bool is_ray_session_name(std::string_view name) {
  return name.size() > 8 && name.starts_with("session_") && name[8] >= '0' && name[8] <= '9';
}

std::string ray_session_name(std::chrono::system_clock::time_point when, long long pid) {
  const auto since_epoch = when.time_since_epoch();
  const std::time_t seconds = std::chrono::duration_cast<std::chrono::seconds>(since_epoch).count();
  const auto micros =
      std::chrono::duration_cast<std::chrono::microseconds>(since_epoch).count() % 1000000;
  std::tm local{};
  localtime_r(&seconds, &local);
  char stamp[64];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%d_%H-%M-%S", &local);
  char micro_text[16];
  std::snprintf(micro_text, sizeof micro_text, "%06lld", static_cast<long long>(micros));
  return std::string("session_") + stamp + "_" + micro_text + "_" + std::to_string(pid);
}

std::optional<std::string> ray_session_start_text(std::string_view name) {
  if (!is_ray_session_name(name)) return std::nullopt;
  // "YYYY-MM-DD_HH-MM-SS": 19 characters after "session_".
  const std::string_view stamp = name.substr(8);
  constexpr std::string_view kForm = "dddd-dd-dd_dd-dd-dd";
  if (stamp.size() < kForm.size()) return std::nullopt;
  for (std::size_t i = 0; i < kForm.size(); ++i) {
    const bool digit = stamp[i] >= '0' && stamp[i] <= '9';
    if (kForm[i] == 'd' ? !digit : stamp[i] != kForm[i]) return std::nullopt;
  }
  std::string text(stamp.substr(0, kForm.size()));
  text[10] = ' ';
  text[13] = ':';
  text[16] = ':';
  return text;
}

std::filesystem::path create_ray_session(const std::filesystem::path& root,
                                         std::chrono::system_clock::time_point when,
                                         long long pid) {
  namespace fs = std::filesystem;
  const std::string session = ray_session_name(when, pid);
  const fs::path nsight = root / session / "logs" / "nsight";
  std::error_code ec;
  fs::create_directories(nsight, ec);
  if (ec) {
    throw Error("cannot create " + quote(nsight.string()) + ": " + ec.message(), 1);
  }
  // Readers never see the link missing.
  ec = replace_symlink(session, root / "session_latest");
  if (ec) {
    throw Error("cannot point " + quote((root / "session_latest").string()) + " at " +
                    quote(session) + ": " + ec.message(),
                1);
  }
  return nsight;
}

}  // namespace nsel
