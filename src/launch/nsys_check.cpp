#include "nsel/launch/nsys_check.hpp"

#include <filesystem>

#include "nsel/core/error.hpp"
#include "nsel/core/nsys_install.hpp"
#include "nsel/sys/process.hpp"

namespace nsel {
namespace {

namespace fs = std::filesystem;

std::string first_line(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  if (line.size() > 200) line.resize(200);
  return line;
}

}  // namespace

NsysCheck check_nsys(std::string_view path_variable) {
  NsysCheck check;
  try {
    check.path = resolve_program("nsys", path_variable, "nsys");
  } catch (const Error&) {
    check.problem = "nsys (Nsight Systems) is not on PATH";
    check.fix = std::string(kNsysInstallHint);
    return check;
  }
  const CapturedRun run = run_capturing({*check.path, "--version"}, std::chrono::seconds(20));
  const std::string marker = "Nsight Systems version ";
  const size_t at = run.output.find(marker);
  if (run.timed_out || run.exit_code != 0 || at == std::string::npos) {
    check.problem = "nsys at " + quote(*check.path) + " does not work ('nsys --version' " +
                    (run.timed_out ? std::string("did not answer within 20 s")
                                   : "exited with code " + std::to_string(run.exit_code) + ": " +
                                         quote(first_line(run.output))) +
                    ")";
    check.fix = "reinstall it; " + std::string(kNsysInstallHint);
    return check;
  }
  check.version = first_line(run.output.substr(at + marker.size()));
  std::error_code ec;
  const fs::path real = fs::canonical(*check.path, ec);
  const fs::path importer = importer_for_nsys(ec ? fs::path(*check.path) : real);
  if (is_executable_file(importer)) {
    check.importer = importer.string();
    check.usable = true;
    return check;
  }
  check.problem = "nsys " + check.version + " has no importer at " + quote(importer.string()) +
                  " (every report would stay an unfinished .qdstrm file)";
  // Debian's nsys finds its package's importer only through a link.
  const fs::path debian_importer = fs::path(kDebianImporterDir) / "QdstrmImporter";
  if (is_executable_file(debian_importer)) {
    check.fix = "link Debian's importer folder: ln -s " + std::string(kDebianImporterDir) + " " +
                importer.parent_path().string() + " (scripts/setup.sh does it)";
  } else {
    check.fix = "reinstall Nsight Systems with its host part (Debian: nsight-systems)";
  }
  return check;
}

}  // namespace nsel
