// The mirror never writes outside its destination, whatever was planted there, and refuses a
// destination that the source would then hold (a copy of itself, level upon level).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "nsel/core/error.hpp"
#include "nsel/sync/mirror.hpp"

namespace fs = std::filesystem;

namespace {

class MirrorSafety : public ::testing::Test {
 protected:
  void SetUp() override {
    char name[] = "/tmp/nsel-mirror-safety-XXXXXX";
    ASSERT_NE(::mkdtemp(name), nullptr);
    root_ = name;
    source_ = root_ / "ray";
    logs_ = source_ / "session_2026-12-02_05-00-00_000000_1" / "logs";
    fs::create_directories(logs_ / "nsight");
    write(logs_ / "nsight" / "w_1:3_42.nsys-rep", "the report");
    dest_ = root_ / "dest";
    mirrored_ = dest_ / "ray" / "session_2026-12-02_05-00-00_000000_1" / "logs";
    outside_ = root_ / "outside";
    fs::create_directories(outside_);
    write(outside_ / "precious", "keep me");
  }
  void TearDown() override { fs::remove_all(root_); }

  static void write(const fs::path& file, const std::string& text) {
    std::ofstream(file, std::ios::binary) << text;
  }
  static std::string read(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  }

  nsel::PassStats pass(std::vector<std::string>* problems = nullptr) {
    nsel::SyncSettings settings;
    settings.source = source_;
    settings.log_dir = dest_;
    nsel::SyncObserver observer;
    observer.problem = [problems](const std::string& message) {
      if (problems != nullptr) problems->push_back(message);
    };
    return nsel::sync_pass(settings, observer);
  }

  fs::path root_, source_, logs_, dest_, mirrored_, outside_;
};

TEST_F(MirrorSafety, APlantedLinkAtTheTemporaryNameIsNotWrittenThrough) {
  fs::create_directories(mirrored_ / "nsight");
  fs::create_symlink(outside_ / "precious",
                     mirrored_ / "nsight" / ".w_1:3_42.nsys-rep.nsel-partial");
  pass();
  EXPECT_EQ(read(outside_ / "precious"), "keep me");
  EXPECT_EQ(read(mirrored_ / "nsight" / "w_1:3_42.nsys-rep"), "the report");
  EXPECT_FALSE(fs::is_symlink(mirrored_ / "nsight" / "w_1:3_42.nsys-rep"));
}

TEST_F(MirrorSafety, APlantedLinkInPlaceOfAFolderIsNotFollowed) {
  fs::create_directories(mirrored_);
  fs::create_symlink(outside_, mirrored_ / "nsight");
  std::vector<std::string> problems;
  const nsel::PassStats stats = pass(&problems);
  EXPECT_FALSE(fs::exists(outside_ / "w_1:3_42.nsys-rep"));
  EXPECT_EQ(read(outside_ / "precious"), "keep me");
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("not a folder"), std::string::npos) << problems[0];
  EXPECT_EQ(stats.failed, 1u);
}

TEST_F(MirrorSafety, ALinkedDestinationFolderIsNotFollowedEither) {
  // The session folder itself, one level up, replaced by a link.
  fs::create_directories(dest_ / "ray");
  fs::create_symlink(outside_, dest_ / "ray" / "session_2026-12-02_05-00-00_000000_1");
  std::vector<std::string> problems;
  pass(&problems);
  EXPECT_FALSE(fs::exists(outside_ / "logs"));
  EXPECT_EQ(problems.size(), 1u);
}

TEST_F(MirrorSafety, ADestinationInsideTheSourceIsRefused) {
  for (const fs::path& dest : {source_ / "copies", logs_ / "x", source_}) {
    nsel::SyncRequest request;
    request.source = source_.string();
    request.dest = dest.string();
    try {
      nsel::resolve_sync_settings(request, [](std::string_view) { return std::nullopt; });
      ADD_FAILURE() << dest << " was accepted";
    } catch (const nsel::Error& e) {
      EXPECT_EQ(e.exit_code(), 2);
      EXPECT_EQ(std::string(e.what()),
                "--dest='" + dest.string() + "': inside the source folder '" + source_.string() +
                    "', whose copies would then hold copies of themselves; expected a folder "
                    "outside it, e.g. on the shared file system");
    }
  }
  // Reached through a link, the same.
  fs::create_symlink(source_, root_ / "link-to-source");
  nsel::SyncRequest request;
  request.source = source_.string();
  request.dest = (root_ / "link-to-source" / "copies").string();
  EXPECT_THROW(nsel::resolve_sync_settings(request, [](std::string_view) { return std::nullopt; }),
               nsel::Error);
  // Beside it is fine.
  request.dest = (root_ / "dest").string();
  EXPECT_EQ(
      nsel::resolve_sync_settings(request, [](std::string_view) { return std::nullopt; }).log_dir,
      root_ / "dest");
}

}  // namespace
