// The file side of the Ray launcher fix: reading nsight.py, rewriting it atomically, and finding
// the site-packages folder of a Python interpreter's Ray.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "nsel/core/error.hpp"
#include "nsel/launch/ray_patch_file.hpp"
#include "nsel/sys/files.hpp"
#include "nsel/sys/process.hpp"

namespace nsel {
namespace fs = std::filesystem;
namespace {

// Rewrites `target` atomically, keeping its mode. Returns the system's reason on failure, with
// nothing left behind.
std::optional<std::string> replace_file(const fs::path& target, const std::string& text) {
  struct stat info {};
  if (stat(target.c_str(), &info) != 0) return std::string(std::strerror(errno));
  // Asked first so that a read-only file is reported even to a user the folder lets write.
  if (access(target.c_str(), W_OK) != 0) return std::string(std::strerror(errno));
  return replace_file_atomically(target, text, info.st_mode & 07777);
}

}  // namespace

fs::path ray_nsight_file(const fs::path& site_packages) {
  return site_packages / "ray" / "_private" / "runtime_env" / "nsight.py";
}

RayPatchReport patch_ray_nsight_file(const fs::path& nsight_py, RayPatchAction action) {
  RayPatchReport report;
  report.file = nsight_py;
  const auto version_text =
      read_small_file(nsight_py.parent_path().parent_path().parent_path() / "_version.py");
  report.ray_version =
      version_text ? ray_version_from_source(*version_text).value_or("unknown") : "unknown";
  const auto source = read_small_file(nsight_py);
  if (!source) {
    throw Error("cannot read " + quote(nsight_py.string()) + " (Ray " + report.ray_version +
                    "); expected Ray's runtime_env/nsight.py: is Ray installed there?",
                1);
  }
  const RayNsightEdit edit = edit_ray_nsight_source(*source, action == RayPatchAction::revert);
  report.line = edit.first_line;
  if (edit.before == RayNsightState::not_found) {
    report.outcome = RayPatchOutcome::expected_line_not_found;
    return report;
  }
  const bool apply = action == RayPatchAction::apply;
  if (action == RayPatchAction::check) {
    report.outcome = edit.before == RayNsightState::unpatched ? RayPatchOutcome::not_patched
                                                              : RayPatchOutcome::already_patched;
    return report;
  }
  if (edit.changed_lines == 0) {
    report.outcome = apply ? RayPatchOutcome::already_patched : RayPatchOutcome::not_patched;
    return report;
  }
  report.outcome = apply ? RayPatchOutcome::patched : RayPatchOutcome::reverted;
  if (auto error = replace_file(nsight_py, edit.text)) {
    report.outcome = RayPatchOutcome::not_writable;
    report.detail = *error;
  }
  return report;
}

std::string_view to_string(RayPatchOutcome outcome) {
  switch (outcome) {
    case RayPatchOutcome::patched:
      return "patched";
    case RayPatchOutcome::already_patched:
      return "already patched";
    case RayPatchOutcome::reverted:
      return "reverted";
    case RayPatchOutcome::not_patched:
      return "not patched";
    case RayPatchOutcome::expected_line_not_found:
      return "expected line not found";
    case RayPatchOutcome::not_writable:
      return "not writable";
  }
  return "unknown";
}

std::string describe(const RayPatchReport& report) {
  std::string where = report.file.string() + " (Ray " + report.ray_version;
  if (report.line > 0) where += ", line " + std::to_string(report.line);
  where += ")";
  const std::string head = std::string(to_string(report.outcome)) + ": " + where;
  switch (report.outcome) {
    case RayPatchOutcome::patched:
    case RayPatchOutcome::already_patched:
      return head + ": workers under nsys keep their own interpreter";
    case RayPatchOutcome::reverted:
      return head + ": Ray's original launcher line is back (workers under nsys run 'python')";
    case RayPatchOutcome::not_patched:
      return head +
             ": workers under nsys run the 'python' on PATH, not their own interpreter; "
             "fix it with 'nsel ray patch'";
    case RayPatchOutcome::expected_line_not_found:
      return head +
             ": no line 'context.py_executable = \" \".join(self.nsight_cmd) + \" python\"'" +
             " in either form; Ray version may have changed; nothing was written";
    case RayPatchOutcome::not_writable:
      return head + ": " + report.detail +
             "; nothing was written; run as the owner of Ray's installation";
  }
  return head;
}

fs::path find_ray_site_packages(const std::string& python, std::string_view source) {
  const std::string program =
      resolve_program(python, environment_variable("PATH").value_or(""), source);
  char answer_template[] = "/tmp/nsel-ray-site-XXXXXX";
  const int fd = mkstemp(answer_template);
  if (fd < 0)
    throw Error(std::string("cannot create a temporary file: ") + std::strerror(errno), 1);
  close(fd);
  const fs::path answer = answer_template;
  // find_spec on a top-level package locates it without importing it (Ray's import is slow).
  const char* script =
      "import importlib.util, os, sys\n"
      "spec = importlib.util.find_spec('ray')\n"
      "where = list(spec.submodule_search_locations or []) if spec else []\n"
      "open(sys.argv[1], 'w').write(os.path.dirname(os.path.abspath(where[0])) if where else '')\n";
  int code = 0;
  try {
    code = wait_exit_code(
        spawn_process({program, "-c", script, answer.string()}, {}, "", ChildOutput::discard));
  } catch (...) {
    fs::remove(answer);
    throw;
  }
  const std::string site = read_small_file(answer).value_or("");
  std::error_code ec;
  fs::remove(answer, ec);
  if (code != 0) {
    throw Error(std::string(source) + "=" + quote(python) + ": it exited with code " +
                    std::to_string(code) + "; expected a Python interpreter",
                1);
  }
  if (site.empty()) {
    throw Error(std::string(source) + "=" + quote(python) +
                    ": Ray is not installed for this interpreter; expected the Python that runs "
                    "your Ray job, or pass --site-packages DIR",
                1);
  }
  return site;
}

}  // namespace nsel
