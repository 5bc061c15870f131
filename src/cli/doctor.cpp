// nsel doctor: can this node profile as asked? Each problem with its fix.
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "nsel/core/error.hpp"
#include "nsel/doctor/doctor.hpp"

namespace nsel::cli {
namespace {

struct DoctorOptions {
  bool json = false;
  std::string output_dir;
  std::string python = "python3";
};

}  // namespace

Action add_doctor(CLI::App& app) {
  auto options = std::make_shared<DoctorOptions>();
  CLI::App* doctor = app.add_subcommand(
      "doctor",
      "Check this node: nsys and its importer (version), GPU and CUDA driver, the profiling\n"
      "variables, the capture mode nsel exec would use, whether Ray's nsight.py is patched,\n"
      "LD_LIBRARY_PATH for Megatron workers, and free space where reports go. Each warning or\n"
      "problem comes with its fix. Exit code 1 when there is a problem, 0 otherwise.");
  doctor->add_flag("--json", options->json, "one JSON object: checks[] and the problem count");
  doctor
      ->add_option("--output-dir", options->output_dir,
                   "where reports will go (default: /tmp/ray if it exists, else here)")
      ->type_name("DIR");
  doctor
      ->add_option("--python", options->python,
                   "the Python that runs Ray's workers, to find Ray (default: python3)")
      ->type_name("PROGRAM");

  return [options](const std::vector<std::string>& trailing) -> int {
    if (!trailing.empty()) throw Error("nsel doctor takes no PROGRAM; see 'nsel doctor --help'");
    const std::vector<DoctorCheck> checks =
        run_doctor({environment_variable, options->output_dir, options->python});
    int problems = 0;
    for (const DoctorCheck& check : checks) {
      problems += check.status == DoctorCheck::Status::problem ? 1 : 0;
    }
    if (options->json) {
      nlohmann::json out = {{"checks", nlohmann::json::array()}, {"problems", problems}};
      for (const DoctorCheck& check : checks) {
        out["checks"].push_back(
            {{"name", check.name},
             {"status", to_string(check.status)},
             {"detail", check.detail},
             {"fix", check.fix.empty() ? nlohmann::json(nullptr) : nlohmann::json(check.fix)}});
      }
      std::printf("%s\n",
                  out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    } else {
      for (const DoctorCheck& check : checks) {
        std::printf("%-8s %-16s %s\n", std::string(to_string(check.status)).c_str(),
                    check.name.c_str(), check.detail.c_str());
        if (!check.fix.empty()) std::printf("%-8s %-16s fix: %s\n", "", "", check.fix.c_str());
      }
      std::printf("%d problem%s\n", problems, problems == 1 ? "" : "s");
    }
    return problems == 0 ? 0 : 1;
  };
}

}  // namespace nsel::cli
