// nsel doctor: can this node profile as asked? Each problem with its fix.
#include <cstdio>
#include <memory>

#include "cli/commands.hpp"
#include "nsel/core/error.hpp"
#include "nsel/doctor/doctor.hpp"
#include "nsel/render/doctor.hpp"
#include "nsel/render/json_text.hpp"

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
  doctor->add_flag("--json", options->json,
                   std::string("one JSON object: schema (") + kDoctorJsonSchema +
                       "), checks[] (name, status, detail, fix) and the problem count");
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
      std::printf("%s\n", json_text(render_doctor_json(checks), JsonLayout::document).c_str());
    } else {
      std::fputs(render_doctor_text(checks).c_str(), stdout);
    }
    return problems == 0 ? 0 : 1;
  };
}

}  // namespace nsel::cli
