// nsel doctor and the nsys-missing opt-out, with the real nsel, nsys and Python. A folder named
// ray/ with only nsight.py in it stands in for a Ray installation (doctor reads that file's text
// and nothing else of Ray).
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "support.hpp"

namespace fs = std::filesystem;

namespace {

const std::string kNsel = NSEL_BINARY;
const std::string kWorker = NSEL_WORKER_BINARY;

struct Doctor {
  int exit_code = -1;
  std::map<std::string, nlohmann::json> checks;  // by name
  std::string err;
};

Doctor doctor(const std::map<std::string, std::string>& env, const fs::path& output_dir) {
  const auto r =
      nsel::test::run({kNsel, "doctor", "--json", "--output-dir", output_dir.string()}, env);
  Doctor d;
  d.exit_code = r.exit_code;
  d.err = r.err;
  const auto out = nlohmann::json::parse(r.out);
  for (const auto& check : out["checks"]) d.checks[check["name"]] = check;
  EXPECT_EQ(out["problems"].get<int>() > 0, r.exit_code == 1) << r.out;
  return d;
}

std::string status(const Doctor& d, const std::string& name) {
  return d.checks.at(name)["status"].get<std::string>();
}

std::string detail(const Doctor& d, const std::string& name) {
  return d.checks.at(name)["detail"].get<std::string>();
}

// A Ray stand-in whose nsight.py ends the way `last_line` says.
fs::path fake_ray(const fs::path& dir, const std::string& last_line) {
  const fs::path plugin = dir / "ray" / "_private" / "runtime_env";
  fs::create_directories(plugin);
  std::ofstream(dir / "ray" / "__init__.py") << "";
  std::ofstream(plugin / "nsight.py") << "class NsightPlugin:\n"
                                      << "    def modify_context(self, context):\n"
                                      << "        " << last_line << "\n";
  return dir;
}

// A PATH with python3 but without nsys (or with `nsys_stand_in` as nsys).
std::string path_without_nsys(const fs::path& dir, const std::string& nsys_stand_in = "") {
  const fs::path bin = dir / "bin";
  fs::create_directories(bin);
  for (const char* tool : {"python3", "sh", "env"}) {
    for (const char* folder : {"/usr/bin/", "/bin/"}) {
      if (fs::exists(std::string(folder) + tool) && !fs::exists(bin / tool)) {
        fs::create_symlink(std::string(folder) + tool, bin / tool);
      }
    }
  }
  if (!nsys_stand_in.empty()) {
    std::ofstream(bin / "nsys") << nsys_stand_in;
    fs::permissions(bin / "nsys", fs::perms::owner_all);
  }
  return bin.string();
}

}  // namespace

TEST(Doctor, ThisNodeHasAWorkingNsysAndReportsItsCaptureMode) {
  const fs::path dir = nsel::test::make_temp_dir("doctor");
  const Doctor d = doctor({}, dir / "reports");
  EXPECT_EQ(status(d, "nsys"), "ok");
  EXPECT_NE(detail(d, "nsys").find("Nsight Systems 20"), std::string::npos);
  EXPECT_EQ(status(d, "importer"), "ok");
  // The capture mode follows the GPU, as nsel exec decides it.
  const bool gpu = status(d, "gpu") == "ok";
  EXPECT_EQ(detail(d, "capture").substr(0, 5), gpu ? "cuda:" : "nvtx:");
  EXPECT_EQ(status(d, "settings"), "ok");
  EXPECT_EQ(status(d, "space"), "ok") << detail(d, "space");
  EXPECT_NE(detail(d, "space").find("GiB free for " + (dir / "reports").string()),
            std::string::npos);
  fs::remove_all(dir);
}

TEST(Doctor, TellsWhetherRaysNsightPluginIsPatched) {
  const fs::path dir = nsel::test::make_temp_dir("doctor-ray");
  const auto with_ray = [&](const std::string& line) {
    fs::remove_all(dir / "site");
    return std::map<std::string, std::string>{
        {"PYTHONPATH", fake_ray(dir / "site", line).string()}};
  };
  Doctor unpatched =
      doctor(with_ray("context.py_executable = \" \".join(self.nsight_cmd) + \" python\""), dir);
  EXPECT_EQ(status(unpatched, "ray_nsight"), "problem");
  EXPECT_EQ(unpatched.exit_code, 1);
  EXPECT_NE(detail(unpatched, "ray_nsight").find("not patched"), std::string::npos);
  EXPECT_EQ(unpatched.checks.at("ray_nsight")["fix"],
            "run 'nsel ray patch' before Ray starts: the line must end in "
            "f\" {context.py_executable}\" instead of \" python\" (see README, \"Ray's "
            "launcher fix\")");
  // The README section the fix points to exists.
  std::ifstream readme(std::string(NSEL_SOURCE_DIR) + "/README.md");
  ASSERT_TRUE(readme) << "README.md not found";
  const std::string text{std::istreambuf_iterator<char>(readme), {}};
  EXPECT_NE(text.find("\n### Ray's launcher fix\n"), std::string::npos);
  Doctor old_ray =
      doctor(with_ray("context.py_executable = \" \".join(self.nsys_cmd) + \" python\""), dir);
  EXPECT_EQ(status(old_ray, "ray_nsight"), "problem");
  Doctor patched = doctor(with_ray("context.py_executable = \" \".join(self.nsight_cmd) + "
                                   "f\" {context.py_executable}\""),
                          dir);
  EXPECT_EQ(status(patched, "ray_nsight"), "ok");
  Doctor changed = doctor(with_ray("context.py_executable = build(self.nsight_cmd)"), dir);
  EXPECT_EQ(status(changed, "ray_nsight"), "warning");
  EXPECT_NE(detail(changed, "ray_nsight").find("Ray version may have changed"), std::string::npos);
  fs::remove_all(dir);
}

// The Ray stand-in holds no nsel package, so the plugin cannot be imported with it; the real
// package's import is checked by python/tests/test_ray_plugin.py.
TEST(Doctor, SaysWhetherRayWillLoadNselsPlugin) {
  const fs::path dir = nsel::test::make_temp_dir("doctor-plugin");
  const std::string site =
      fake_ray(dir / "site", "context.py_executable = \" \".join(self.nsight_cmd) + \" python\"")
          .string();
  const Doctor unset = doctor({{"PYTHONPATH", site}, {"RAY_RUNTIME_ENV_PLUGINS", ""}}, dir);
  EXPECT_EQ(status(unset, "ray_plugin"), "warning");
  EXPECT_EQ(detail(unset, "ray_plugin").rfind("RAY_RUNTIME_ENV_PLUGINS is not set: ", 0), 0u)
      << detail(unset, "ray_plugin");
  EXPECT_EQ(
      unset.checks.at("ray_plugin")["fix"].get<std::string>().rfind(
          "export RAY_RUNTIME_ENV_PLUGINS='[{\"class\": \"nsel.ray_plugin.NselPlugin\"}]'", 0),
      0u);
  const Doctor other = doctor(
      {{"PYTHONPATH", site}, {"RAY_RUNTIME_ENV_PLUGINS", R"([{"class": "x.Plugin"}])"}}, dir);
  EXPECT_EQ(status(other, "ray_plugin"), "warning");
  EXPECT_NE(detail(other, "ray_plugin").find("does not name nsel's plugin"), std::string::npos);
  const Doctor malformed =
      doctor({{"PYTHONPATH", site}, {"RAY_RUNTIME_ENV_PLUGINS", "nsel.ray_plugin"}}, dir);
  EXPECT_EQ(status(malformed, "ray_plugin"), "problem");
  EXPECT_EQ(malformed.exit_code, 1);
  EXPECT_NE(detail(malformed, "ray_plugin").find("'nsel.ray_plugin', not a JSON list"),
            std::string::npos);
  const Doctor unimportable =
      doctor({{"PYTHONPATH", site},
              {"RAY_RUNTIME_ENV_PLUGINS", R"([{"class": "nsel.ray_plugin.NselPlugin"}])"}},
             dir);
  EXPECT_EQ(status(unimportable, "ray_plugin"), "problem");
  EXPECT_NE(detail(unimportable, "ray_plugin")
                .find("cannot import nsel.ray_plugin (ModuleNotFoundError: No module named "
                      "'nsel'"),
            std::string::npos)
      << detail(unimportable, "ray_plugin");
  fs::remove_all(dir);
}

TEST(Doctor, BadSettingsAndMissingNsysAreProblemsWithFixes) {
  const fs::path dir = nsel::test::make_temp_dir("doctor-bad");
  const Doctor bad = doctor({{"NSEL_CAPTURE", "gpu"}}, dir);
  EXPECT_EQ(status(bad, "settings"), "problem");
  EXPECT_EQ(detail(bad, "settings"),
            "NSEL_CAPTURE='gpu': unknown capture mode; expected one of 'auto' (CUDA profiler API "
            "with a GPU, NVTX range without), 'cuda', 'nvtx', 'none'");
  const Doctor missing = doctor({{"PATH", path_without_nsys(dir)}}, dir);
  EXPECT_EQ(status(missing, "nsys"), "problem");
  EXPECT_EQ(detail(missing, "nsys"), "nsys (Nsight Systems) is not on PATH");
  EXPECT_NE(missing.checks.at("nsys")["fix"].get<std::string>().find("apt-get install "
                                                                     "nsight-systems"),
            std::string::npos);
  EXPECT_EQ(missing.exit_code, 1);
  fs::remove_all(dir);
}

TEST(Doctor, MegatronLibraryPathPitfall) {
  const fs::path dir = nsel::test::make_temp_dir("doctor-ld");
  fs::create_directories(dir / "cuda");
  std::ofstream(dir / "cuda" / "libcudart.so.12") << "";  // stands in for the CUDA runtime
  const Doctor good = doctor({{"NRL_NSYS_WORKER_PATTERNS", "*megatron*"},
                              {"NRL_NSYS_PROFILE_STEP_RANGE", "2:4"},
                              {"LD_LIBRARY_PATH", "/nowhere:" + (dir / "cuda").string()}},
                             dir);
  EXPECT_EQ(status(good, "ld_library_path"), "ok");
  EXPECT_EQ(detail(good, "ld_library_path"),
            "LD_LIBRARY_PATH holds CUDA libraries: " + (dir / "cuda").string());
  const Doctor other =
      doctor({{"NRL_NSYS_WORKER_PATTERNS", "*vllm*"}, {"NRL_NSYS_PROFILE_STEP_RANGE", "2:4"}}, dir);
  EXPECT_EQ(detail(other, "ld_library_path"),
            "not needed: the patterns do not select megatron_policy_worker");
  fs::remove_all(dir);
}

TEST(OptOut, WithoutNsysASelectedWorkerFailsWithHowToInstall) {
  const fs::path dir = nsel::test::make_temp_dir("optout");
  const std::map<std::string, std::string> env = {{"NRL_NSYS_WORKER_PATTERNS", "*policy*"},
                                                  {"NRL_NSYS_PROFILE_STEP_RANGE", "1:2"},
                                                  {"PATH", path_without_nsys(dir)}};
  const auto r = nsel::test::run({kNsel, "exec", "--worker", "dtensor_policy_worker", "--", kWorker,
                                  "--steps", "1", "--describe", (dir / "ran").string()},
                                 env);
  EXPECT_EQ(r.exit_code, 127);
  EXPECT_EQ(r.err,
            "nsel: error: worker 'dtensor_policy_worker' is selected but nsys (Nsight Systems) is "
            "not on PATH; install Nsight Systems: on Debian 12 'apt-get install nsight-systems "
            "nsight-systems-target' from the non-free component (or run scripts/setup.sh); "
            "elsewhere NVIDIA's installer, with nsys on PATH; or set NSEL_ALLOW_UNPROFILED=1 to "
            "run it unprofiled\n");
  EXPECT_FALSE(fs::exists(dir / "ran")) << "the worker must not start";
  fs::remove_all(dir);
}

TEST(OptOut, AllowedUnprofiledRunsBareAndSaysSo) {
  const fs::path dir = nsel::test::make_temp_dir("optout-bare");
  // A broken nsys stands in for a damaged installation.
  std::map<std::string, std::string> env = {
      {"NRL_NSYS_WORKER_PATTERNS", "*policy*"},
      {"NRL_NSYS_PROFILE_STEP_RANGE", "1:2"},
      {"PATH", path_without_nsys(dir, "#!/bin/sh\necho 'libQt: cannot open' >&2\nexit 1\n")},
      {"NSEL_ALLOW_UNPROFILED", "1"}};
  const auto r = nsel::test::run({kNsel, "exec", "--worker", "dtensor_policy_worker", "--", kWorker,
                                  "--steps", "1", "--describe", (dir / "ran").string()},
                                 env);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err,
            "nsel: warning: worker 'dtensor_policy_worker' is selected but runs UNPROFILED "
            "(NSEL_ALLOW_UNPROFILED=1): nsys at '" +
                (dir / "bin" / "nsys").string() +
                "' does not work ('nsys --version' exited with code 1: 'libQt: cannot open'); to "
                "profile it, reinstall it; install Nsight Systems: on Debian 12 'apt-get install "
                "nsight-systems nsight-systems-target' from the non-free component (or run "
                "scripts/setup.sh); elsewhere NVIDIA's installer, with nsys on PATH\n");
  // Bare: nsel replaced itself with the program.
  const auto described = nsel::test::read_description(dir / "ran");
  EXPECT_EQ(described.at("pid"), std::to_string(r.pid));
  EXPECT_EQ(described.at("ld_preload"), "");
  env.erase("NSEL_ALLOW_UNPROFILED");
  const auto refused = nsel::test::run(
      {kNsel, "exec", "--worker", "dtensor_policy_worker", "--", kWorker, "--steps", "1"}, env);
  EXPECT_EQ(refused.exit_code, 127);
  fs::remove_all(dir);
}
