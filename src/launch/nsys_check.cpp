#include "nsel/launch/nsys_check.hpp"

#include <filesystem>

#include "nsel/core/error.hpp"
#include "nsel/core/nsys_install.hpp"
#include "nsel/sys/nsys_installs.hpp"
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

std::vector<NsysGeneration> installed_generations(const std::optional<std::string>& nsel_nsys,
                                                  std::string_view path_variable) {
  std::vector<NsysGeneration> generations;
  for (NsysInstall& install : find_nsys_installs(nsel_nsys, path_variable)) {
    NsysGeneration g{std::move(install), ""};
    std::error_code ec;
    const fs::path real = fs::canonical(g.install.path, ec);
    if (!ec) {
      for (const fs::path& importer : importers_near_nsys(real)) {
        if (is_executable_file(importer)) {
          g.importer = importer.string();
          break;
        }
      }
    }
    generations.push_back(std::move(g));
  }
  return generations;
}

std::string describe_generations(const std::vector<NsysGeneration>& generations) {
  if (generations.empty()) return "no Nsight Systems found";
  std::string text;
  std::string imports;
  const NsysVersion* newest = nullptr;
  for (const NsysGeneration& g : generations) {
    text += (text.empty() ? "" : ", ") + g.install.version.release_text() + " at " +
            g.install.path + " (" + g.install.origin + (g.importer.empty() ? ", no importer" : "") +
            ")";
    if (!g.importer.empty()) {
      imports += (imports.empty() ? "" : ", ") + g.install.version.release_text();
    }
    if (!newest || compare_versions(g.install.version, *newest) > 0) newest = &g.install.version;
  }
  return text + "; reads reports written by up to " + newest->release_text() +
         "; imports .qdstrm files of " + (imports.empty() ? std::string("none") : imports);
}

}  // namespace nsel
