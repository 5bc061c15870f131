// Where reports go and what their names say: the contract's file names and Ray's session layout.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "nsel/core/step_window.hpp"

namespace nsel {

// "<worker>_<start>:<stop>_<pid>.nsys-rep" (the colon stays).
std::string report_file_name(std::string_view worker, const StepWindow& window, long long pid);

// What a report's file name tells without opening it.
struct ReportName {
  std::string worker;                // "worker_process" for vLLM's inner workers
  std::optional<StepWindow> window;  // absent for worker_process_<PID>
  long long pid = 0;
};

// Parses "<worker>_<start>:<stop>_<PID>.nsys-rep" and "worker_process_<PID>.nsys-rep"; nullopt
// for any other name.
std::optional<ReportName> parse_report_file_name(std::string_view file_name);

// Whether a folder name is one of Ray's sessions ("session_" and a digit): not session_latest,
// which only links to one of them.
bool is_ray_session_name(std::string_view name);

// "session_<YYYY-MM-DD_HH-MM-SS_ffffff>_<pid>", as Ray names its sessions (local time).
std::string ray_session_name(std::chrono::system_clock::time_point when, long long pid);

// When a session began, from its name: "session_2026-12-01_13-29-27_271611_12001" ->
// "2026-12-01 13:29:27" (the local time of the machine that named it); nullopt for any other
// name (session_latest, or one not in Ray's form).
std::optional<std::string> ray_session_start_text(std::string_view name);

// Creates <root>/<session>/logs/nsight/ and points <root>/session_latest at the session
// (replaced atomically). Returns the nsight folder.
std::filesystem::path create_ray_session(const std::filesystem::path& root,
                                         std::chrono::system_clock::time_point when, long long pid);

}  // namespace nsel
