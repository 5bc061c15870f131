#include "nsel/launch/nsys_check.hpp"

#include <stdlib.h>

#include <filesystem>
#include <mutex>
#include <set>

#include "nsel/core/error.hpp"
#include "nsel/core/nsys_install.hpp"
#include "nsel/core/nsys_options.hpp"
#include "nsel/launch/supervisor.hpp"
#include "nsel/sys/files.hpp"
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

NsysOptionsAnswer ask_nsys_about_options(const std::string& nsys,
                                         const std::vector<std::string>& option_argv) {
  std::vector<std::string> argv = {nsys, "profile"};
  argv.insert(argv.end(), option_argv.begin(), option_argv.end());
  argv.emplace_back("--help");
  const CapturedRun run = run_capturing(argv, std::chrono::seconds(20));
  NsysOptionsAnswer answer;
  if (run.exit_code == 0) {
    answer.asked = true;
    return answer;
  }
  const std::string marker = "unrecognised option";
  if (const size_t at = run.output.find(marker); at != std::string::npos) {
    answer.asked = true;
    answer.known = false;
    answer.refusal = first_line(run.output.substr(at));
    return answer;
  }
  answer.problem = "'nsys profile ... --help' " +
                   (run.timed_out ? std::string("did not answer within 20 s")
                                  : "exited with code " + std::to_string(run.exit_code) + ": " +
                                        quote(first_line(run.output)));
  return answer;
}

NsysTrialAnswer try_nsys_options(const std::string& nsys, NsysOptions options) {
  NsysTrialAnswer answer;
  const std::optional<std::string> program =
      find_program("true", "/usr/bin:/bin:" + environment_variable("PATH").value_or(""));
  if (!program) {
    answer.problem = "no 'true' program to try the options on";
    return answer;
  }
  const fs::path temporary = temporary_folder();
  std::string scratch = (temporary / "nsel-option-trial.XXXXXX").string();  // mkdtemp's template
  if (mkdtemp(scratch.data()) == nullptr) {
    answer.problem = "cannot create a folder for the trial in " + temporary.string();
    return answer;
  }
  for (const char* key : {"o", "output", "force-overwrite", "f"}) options.erase(key);
  options.set("o", (fs::path(scratch) / "trial").string());
  options.set("force-overwrite", "true");
  std::vector<std::string> argv = {nsys, "profile"};
  for (std::string& word : options.to_argv()) argv.push_back(std::move(word));
  argv.push_back(*program);
  CapturedRun run;
  {
    // A whole nsys session: it takes its turn with the workers' (nsel exec's keepers), whose
    // start-ups it could otherwise spoil (docs/nsys-facts.md).
    const FileLock turn(nsys_start_turn_lock(), std::chrono::seconds(30));
    run = run_capturing(argv, std::chrono::seconds(30));
  }
  std::error_code ignored;
  fs::remove_all(scratch, ignored);
  if (run.exit_code == -1 || run.timed_out) {
    answer.problem = run.timed_out ? "'nsys profile ... true' did not end within 30 s"
                                   : "'nsys profile' could not start";
    return answer;
  }
  answer.ran = true;
  if (run.exit_code == 0) return answer;
  answer.accepted = false;
  answer.usage = run.output.find("usage: nsys profile") != std::string::npos;
  answer.refusal = first_line(run.output);
  if (answer.refusal.empty()) answer.refusal = "exit code " + std::to_string(run.exit_code);
  return answer;
}

void require_known_options(const NsysOptions& options, const std::string& nsys_path,
                           const std::string& nsys_version,
                           const std::optional<std::string>& extra_options, bool trial_run) {
  const std::string nsys = "Nsight Systems " + nsys_version + " (" + nsys_path + ")";
  const auto refused = [&](const std::string& refusal) {
    const std::string who = nsys + " refuses it: " + refusal;
    if (extra_options) {
      throw Error(bad_value(kExtraOptionsVariable, *extra_options, who,
                            "options and values that 'nsys profile --help' lists, for example "
                            "'{\"t\": \"cuda,nvtx,osrt\"}'"));
    }
    throw Error("nsel's own nsys options are not accepted by " + who + "; set " +
                    std::string(kExtraOptionsVariable) +
                    " to remove the option (its key with the value null), and report it",
                1);
  };
  const NsysOptionsAnswer answer = ask_nsys_about_options(nsys_path, options.to_argv());
  if (!answer.asked) return;
  if (!answer.known) refused(answer.refusal);
  if (!trial_run) return;
  // One trial per nsys and options in a process (Ray's agent sets up many actors alike); the
  // output name is the worker's, so it is left out of the key.
  static std::mutex tried_mutex;
  static std::set<std::string> accepted;
  NsysOptions key_options = options;
  for (const char* key : {"o", "output"}) key_options.erase(key);
  std::string key = nsys_path;
  for (const std::string& word : key_options.to_argv()) key += '\0' + word;
  {
    const std::lock_guard<std::mutex> lock(tried_mutex);
    if (accepted.count(key) != 0) return;
  }
  const NsysTrialAnswer trial = try_nsys_options(nsys_path, options);
  if (!trial.ran) return;
  if (trial.accepted) {
    const std::lock_guard<std::mutex> lock(tried_mutex);
    accepted.insert(key);
    return;
  }
  if (trial.usage) refused(trial.refusal);
  throw Error(nsys + " failed a trial run of the worker's options ('nsys profile ... true'): " +
                  quote(trial.refusal),
              1);
}

std::vector<NsysGeneration> installed_generations(const std::optional<std::string>& nsel_nsys,
                                                  std::string_view path_variable) {
  std::vector<NsysGeneration> generations;
  for (NsysInstall& install : find_nsys_installs(nsel_nsys, path_variable)) {
    NsysGeneration g{std::move(install), ""};
    g.importer = importer_of(g.install).value_or("");
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
