#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "nsel/core/error.hpp"
#include "nsel/launch/ray_patch_file.hpp"

namespace fs = std::filesystem;

namespace {

const std::string kOriginal =
    "        context.py_executable = \" \".join(self.nsight_cmd) + \" python\"\n";
const std::string kFixed =
    "        context.py_executable = \" \".join(self.nsight_cmd) + f\" {context.py_executable}\"\n";

std::string plugin_text(const std::string& launcher_line) {
  return "class NsightPlugin(RuntimeEnvPlugin):\n"
         "    name = \"_nsight\"\n\n"
         "    def modify_context(self, uris, runtime_env, context, logger):\n"
         "        logger.info(\"Running nsight profiler\")\n" +
         launcher_line;
}

std::string read(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

}  // namespace

TEST(RayNsightEdit, PatchesTheCurrentReleaseLine) {
  const auto edit = nsel::edit_ray_nsight_source(plugin_text(kOriginal));
  EXPECT_EQ(edit.before, nsel::RayNsightState::unpatched);
  EXPECT_EQ(edit.text, plugin_text(kFixed));
  EXPECT_EQ(edit.changed_lines, 1);
  EXPECT_EQ(edit.first_line, 6);
}

TEST(RayNsightEdit, AlreadyPatchedIsLeftAlone) {
  const auto edit = nsel::edit_ray_nsight_source(plugin_text(kFixed));
  EXPECT_EQ(edit.before, nsel::RayNsightState::patched);
  EXPECT_EQ(edit.text, plugin_text(kFixed));
  EXPECT_EQ(edit.changed_lines, 0);
}

TEST(RayNsightEdit, OlderBuildsUseNsysCmd) {
  const auto edit = nsel::edit_ray_nsight_source(
      "    context.py_executable = \" \".join(self.nsys_cmd) + \" python\"");
  EXPECT_EQ(edit.before, nsel::RayNsightState::unpatched);
  EXPECT_EQ(
      edit.text,
      "    context.py_executable = \" \".join(self.nsys_cmd) + f\" {context.py_executable}\"");
}

TEST(RayNsightEdit, SpacingQuotesCommentsAndLineEndingsDoNotHideTheLine) {
  const auto edit = nsel::edit_ray_nsight_source(
      "\tcontext.py_executable=' '.join( self.nsight_cmd )+' python'  # launcher\r\nx = 1\r\n");
  EXPECT_EQ(edit.before, nsel::RayNsightState::unpatched);
  EXPECT_EQ(
      edit.text,
      "\tcontext.py_executable = \" \".join(self.nsight_cmd) + f\" {context.py_executable}\"\r\n"
      "x = 1\r\n");
}

TEST(RayNsightEdit, OtherTextIsNotFound) {
  for (const std::string text :
       {"", "\n", "context.py_executable = 'nsys profile python'",
        "context.py_executable = \" \".join(self.nsight_cmd) + \"python\"",
        "context.py_executable = \" \".join(self.other_cmd) + \" python\"", "\"unterminated"}) {
    const auto edit = nsel::edit_ray_nsight_source(text);
    EXPECT_EQ(edit.before, nsel::RayNsightState::not_found) << text;
    EXPECT_EQ(edit.text, text);
    EXPECT_EQ(edit.first_line, 0);
  }
}

TEST(RayNsightEdit, RevertRestoresTheOriginalBytes) {
  const std::string original = plugin_text(kOriginal);
  const auto patched = nsel::edit_ray_nsight_source(original);
  const auto reverted = nsel::edit_ray_nsight_source(patched.text, /*revert=*/true);
  EXPECT_EQ(reverted.before, nsel::RayNsightState::patched);
  EXPECT_EQ(reverted.text, original);
  EXPECT_EQ(nsel::edit_ray_nsight_source(original, true).changed_lines, 0);
}

TEST(RayVersion, ReadsVersionPy) {
  EXPECT_EQ(nsel::ray_version_from_source("commit = \"abc\"\nversion = \"2.60.0\"\n"), "2.60.0");
  EXPECT_EQ(nsel::ray_version_from_source("version='2.9.3'"), "2.9.3");
  EXPECT_FALSE(nsel::ray_version_from_source("version = \"\"\n"));
  EXPECT_FALSE(nsel::ray_version_from_source("commit = \"abc\"\n"));
}

class RayPatchFile : public ::testing::Test {
 protected:
  void SetUp() override {
    site_ = fs::temp_directory_path() /
            ("nsel-ray-patch-" + std::to_string(getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(site_);
    write(site_ / "ray" / "_version.py", "commit = \"abc\"\nversion = \"2.60.0\"\n");
    file_ = nsel::ray_nsight_file(site_);
  }
  void TearDown() override { fs::remove_all(site_); }
  fs::path site_;
  fs::path file_;
};

TEST_F(RayPatchFile, ApplyCheckRevertRoundTrip) {
  write(file_, plugin_text(kOriginal));
  chmod(file_.c_str(), 0640);
  using nsel::RayPatchAction;
  using nsel::RayPatchOutcome;
  EXPECT_EQ(nsel::patch_ray_nsight_file(file_, RayPatchAction::check).outcome,
            RayPatchOutcome::not_patched);
  EXPECT_EQ(read(file_), plugin_text(kOriginal));

  const auto applied = nsel::patch_ray_nsight_file(file_, RayPatchAction::apply);
  EXPECT_EQ(applied.outcome, RayPatchOutcome::patched);
  EXPECT_EQ(applied.ray_version, "2.60.0");
  EXPECT_EQ(applied.line, 6);
  EXPECT_EQ(read(file_), plugin_text(kFixed));
  EXPECT_EQ(fs::status(file_).permissions(),
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  EXPECT_EQ(nsel::describe(applied),
            "patched: " + file_.string() +
                " (Ray 2.60.0, line 6): workers under nsys keep their own interpreter");

  EXPECT_EQ(nsel::patch_ray_nsight_file(file_, RayPatchAction::apply).outcome,
            RayPatchOutcome::already_patched);
  EXPECT_EQ(nsel::patch_ray_nsight_file(file_, RayPatchAction::check).outcome,
            RayPatchOutcome::already_patched);
  EXPECT_EQ(nsel::patch_ray_nsight_file(file_, RayPatchAction::revert).outcome,
            RayPatchOutcome::reverted);
  EXPECT_EQ(read(file_), plugin_text(kOriginal));
  EXPECT_EQ(nsel::patch_ray_nsight_file(file_, RayPatchAction::revert).outcome,
            RayPatchOutcome::not_patched);
  // No temporary file is left behind.
  EXPECT_EQ(std::distance(fs::directory_iterator(file_.parent_path()), fs::directory_iterator()),
            1);
}

TEST_F(RayPatchFile, ChangedRayIsReportedAndNotTouched) {
  write(file_, "context.py_executable = build_command()\n");
  const auto report = nsel::patch_ray_nsight_file(file_, nsel::RayPatchAction::apply);
  EXPECT_EQ(report.outcome, nsel::RayPatchOutcome::expected_line_not_found);
  EXPECT_EQ(nsel::describe(report),
            "expected line not found: " + file_.string() +
                " (Ray 2.60.0): no line 'context.py_executable = \" \".join(self.nsight_cmd) + "
                "\" python\"' in either form; Ray version may have changed; nothing was written");
  EXPECT_EQ(read(file_), "context.py_executable = build_command()\n");
}

TEST_F(RayPatchFile, MissingFileIsAnError) {
  try {
    nsel::patch_ray_nsight_file(file_, nsel::RayPatchAction::apply);
    FAIL() << "expected an error";
  } catch (const nsel::Error& e) {
    EXPECT_EQ(e.exit_code(), 1);
    EXPECT_EQ(std::string(e.what()),
              "cannot read '" + file_.string() +
                  "' (Ray 2.60.0); expected Ray's runtime_env/nsight.py: is Ray installed there?");
  }
}
