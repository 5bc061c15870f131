// Helpers for end-to-end tests: run the real nsel binary with a chosen environment, and read a
// report's steps through a real `nsys export`.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace nsel::test {

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
  pid_t pid = 0;  // the process started (nsel itself)
};

// Runs argv with the current environment minus every NRL_NSYS_* and NSEL_* variable, plus `env`.
RunResult run(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
              const std::filesystem::path& working_directory = {});

// run() in two halves, so that several processes can run at once: start() returns as soon as
// the process is started, finish() waits for it and collects its exit code and output.
struct Started {
  pid_t pid = 0;
  std::filesystem::path output;  // <output>.out and <output>.err until finish()
};
// With `own_process_group` the child leads a new process group, as a scheduler's job step does.
Started start(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
              const std::filesystem::path& working_directory = {}, bool own_process_group = false);
RunResult finish(const Started& started);

// The real GPU captures beside the checkout (`source_dir`/../shared/gpu-reports), read in place
// and never copied into the repository; absent on machines that do not have them.
inline std::filesystem::path gpu_reports_dir(const std::filesystem::path& source_dir) {
  return source_dir / ".." / "shared" / "gpu-reports";
}
// Skips the calling test, with the reason, where `dir` (gpu_reports_dir) is absent.
#define NSEL_SKIP_WITHOUT_GPU_REPORTS(dir)                  \
  if (!std::filesystem::is_directory(dir)) {                \
    GTEST_SKIP() << "no real GPU captures here: " << (dir)  \
                 << " is absent (see ../shared/DESIGN.md)"; \
  }

// A fresh empty folder under the system temp folder, removed by the caller.
std::filesystem::path make_temp_dir(const std::string& label);

// `nsys export --type sqlite` of the report, then the "step <n>" NVTX ranges it holds, in order.
std::vector<long long> exported_steps(const std::filesystem::path& report);

// Rows in `table` of the report's export (0 when the table is absent).
long long exported_row_count(const std::filesystem::path& report, const std::string& table);

// A file's bytes ("" when it cannot be read), and a file written whole (folders made).
std::string slurp(const std::filesystem::path& path);
void spit(const std::filesystem::path& path, const std::string& bytes);

// key=value lines written by `nsel-example-worker --describe FILE`.
std::map<std::string, std::string> read_description(const std::filesystem::path& file);

std::vector<std::filesystem::path> files_in(const std::filesystem::path& dir);

// The .nsys-rep files in `dir` (nsel exec also leaves a manifest beside each).
std::vector<std::filesystem::path> reports_in(const std::filesystem::path& dir);

}  // namespace nsel::test

namespace nsel::test {
// Processes whose command line holds every one of `arguments` (whole arguments or prefixes
// ending in '*').
int count_processes_with(const std::vector<std::string>& arguments);
}  // namespace nsel::test
