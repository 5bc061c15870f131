// nsel ray patch: applies, checks or reverts the fix of Ray's nsight launcher on disk.
#include <cstdio>
#include <filesystem>
#include <memory>

#include "cli/commands.hpp"
#include "nsel/core/error.hpp"
#include "nsel/launch/ray_patch_file.hpp"
#include "nsel/render/json_text.hpp"
#include "nsel/render/ray.hpp"

namespace nsel::cli {
namespace {

struct RayPatchOptions {
  bool check = false;
  bool revert = false;
  bool json = false;
  std::string site_packages;
  std::string python = "python3";
};

int run_patch(const RayPatchOptions& options) {
  std::filesystem::path site;
  if (!options.site_packages.empty()) {
    site = options.site_packages;
    if (!std::filesystem::is_regular_file(ray_nsight_file(site))) {
      throw Error(bad_value(
          "--site-packages", options.site_packages, "it has no ray/_private/runtime_env/nsight.py",
          "the site-packages folder that holds Ray (the folder with 'ray/' in it)"));
    }
  } else {
    site = find_ray_site_packages(options.python, "--python");
  }
  const RayPatchAction action = options.check    ? RayPatchAction::check
                                : options.revert ? RayPatchAction::revert
                                                 : RayPatchAction::apply;
  const RayPatchReport report = patch_ray_nsight_file(ray_nsight_file(site), action);
  const bool failed =
      report.outcome == RayPatchOutcome::expected_line_not_found ||
      report.outcome == RayPatchOutcome::not_writable ||
      (action == RayPatchAction::check && report.outcome == RayPatchOutcome::not_patched);
  if (options.json) {
    std::printf("%s\n", json_text(render_ray_patch_json(report), JsonLayout::line).c_str());
    return failed ? 1 : 0;
  }
  if (failed) throw Error(describe(report), 1);
  std::fputs(render_ray_patch_text(report).c_str(), stdout);
  return 0;
}

}  // namespace

Action add_ray(CLI::App& app) {
  CLI::App* ray = app.add_subcommand(
      "ray",
      "Ray integration. 'nsel ray patch' fixes Ray's own nsight launcher so that workers under\n"
      "nsys keep their interpreter (virtualenv, uv, conda) instead of the 'python' on PATH.");
  ray->require_subcommand(1);
  auto options = std::make_shared<RayPatchOptions>();
  CLI::App* patch = ray->add_subcommand(
      "patch",
      "Fix ray/_private/runtime_env/nsight.py on disk, before Ray starts (containers, SLURM):\n"
      "its launcher line\n"
      "  context.py_executable = \" \".join(self.nsight_cmd) + \" python\"\n"
      "becomes\n"
      "  context.py_executable = \" \".join(self.nsight_cmd) + f\" {context.py_executable}\"\n"
      "(older Ray builds: self.nsys_cmd). Idempotent. Prints one of: patched, already patched,\n"
      "reverted, not patched; fails (exit 1) with: expected line not found (names Ray's version\n"
      "and the file), not writable. Nothing is written half-way (a temporary file is renamed).\n"
      "Usage: nsel ray patch [--check | --revert] [--site-packages DIR | --python PY] [--json]");
  auto* check = patch->add_flag("--check", options->check,
                                "change nothing; exit 1 when the file is not patched");
  auto* revert = patch->add_flag("--revert", options->revert, "put Ray's original line back");
  check->excludes(revert);
  auto* site = patch
                   ->add_option("--site-packages", options->site_packages,
                                "the folder holding Ray's 'ray/' package (default: where --python "
                                "finds it)")
                   ->type_name("DIR");
  auto* python = patch
                     ->add_option("--python", options->python,
                                  "the interpreter whose Ray to fix (default: python3 on PATH)")
                     ->type_name("PROGRAM");
  site->excludes(python);
  patch->add_flag("--json", options->json,
                  std::string("print one JSON object: schema (") + kRayPatchJsonSchema +
                      "), file, ray_version, status, line, message");

  return [options, patch](const std::vector<std::string>& trailing) -> int {
    if (!trailing.empty()) {
      throw Error("unexpected arguments after '--'; expected 'nsel ray patch [OPTIONS]'");
    }
    if (patch->parsed()) return run_patch(*options);
    return kUsageExitCode;
  };
}

}  // namespace nsel::cli
