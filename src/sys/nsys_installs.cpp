#include "nsel/sys/nsys_installs.hpp"

#include <algorithm>
#include <filesystem>

#include "nsel/core/error.hpp"
#include "nsel/core/nsys_install.hpp"
#include "nsel/sys/process.hpp"

namespace nsel {
namespace fs = std::filesystem;

namespace {

// Folders under `parent` whose names start with `prefix`, sorted (the glob of a known location).
std::vector<fs::path> folders_starting(const fs::path& parent, std::string_view prefix) {
  std::vector<fs::path> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(parent, ec)) {
    if (entry.path().filename().string().starts_with(prefix)) found.push_back(entry.path());
  }
  std::sort(found.begin(), found.end());
  return found;
}

std::vector<fs::path> known_locations() {
  std::vector<fs::path> paths = {"/usr/bin/nsys"};
  for (const fs::path& p : folders_starting("/opt", "nsight-systems-")) {
    paths.push_back(p / "usr/bin/nsys");
  }
  for (const fs::path& p : folders_starting("/opt/nvidia/nsight-systems", "")) {
    paths.push_back(p / "bin/nsys");
  }
  for (const fs::path& p : folders_starting("/usr/local", "cuda")) paths.push_back(p / "bin/nsys");
  return paths;
}

std::string canonical_or_same(const std::string& path) {
  std::error_code ec;
  const fs::path real = fs::canonical(path, ec);
  return ec ? path : real.string();
}

}  // namespace

std::optional<NsysVersion> ask_nsys_version(const std::string& nsys) {
  const CapturedRun run = run_capturing({nsys, "--version"}, std::chrono::seconds(20));
  if (run.timed_out || run.exit_code != 0) return std::nullopt;
  if (run.output.find("Nsight Systems") == std::string::npos) return std::nullopt;
  return parse_nsys_version(run.output);
}

std::vector<NsysInstall> find_nsys_installs(const std::optional<std::string>& nsel_nsys,
                                            std::string_view path_variable) {
  std::vector<NsysInstall> installs;
  std::vector<std::string> seen;
  const auto add = [&](const std::string& path, const std::string& origin) -> bool {
    const std::string real = canonical_or_same(path);
    if (std::find(seen.begin(), seen.end(), real) != seen.end()) return true;
    const auto version = ask_nsys_version(path);
    if (!version) return false;
    seen.push_back(real);
    installs.push_back({path, *version, origin});
    return true;
  };
  if (nsel_nsys && !nsel_nsys->empty()) {
    std::size_t start = 0;
    while (start <= nsel_nsys->size()) {
      const std::size_t end = std::min(nsel_nsys->find(':', start), nsel_nsys->size());
      const std::string entry = nsel_nsys->substr(start, end - start);
      start = end + 1;
      if (entry.empty()) continue;
      if (entry.front() != '/' || !is_executable_file(entry)) {
        throw Error(bad_value("NSEL_NSYS", *nsel_nsys,
                              quote(entry) + " is not the absolute path of an executable file",
                              kNselNsysForm));
      }
      if (!add(entry, "NSEL_NSYS")) {
        throw Error(bad_value("NSEL_NSYS", *nsel_nsys,
                              quote(entry) + " does not answer 'nsys --version'", kNselNsysForm));
      }
    }
    // Only separators (':'): a value that names nothing is a mistake, never "no nsys found".
    if (installs.empty()) {
      throw Error(bad_value("NSEL_NSYS", *nsel_nsys, "names no path", kNselNsysForm));
    }
    return installs;
  }
  if (const auto on_path = find_program("nsys", path_variable)) add(*on_path, "PATH");
  for (const fs::path& known : known_locations()) {
    if (is_executable_file(known)) add(known.string(), "known location");
  }
  return installs;
}

std::optional<std::string> importer_of(const NsysInstall& install) {
  std::error_code ec;
  const std::filesystem::path real = std::filesystem::canonical(install.path, ec);
  if (ec) return std::nullopt;
  for (const std::filesystem::path& importer : importers_near_nsys(real)) {
    if (is_executable_file(importer)) return importer.string();
  }
  return std::nullopt;
}

}  // namespace nsel
