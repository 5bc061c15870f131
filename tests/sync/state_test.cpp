// The state a pass leaves in "<mirrored folder>/.nsel-sync/state": what a save writes a load
// reads back, a bad or planted state is no state (it only costs the next pass time), and it is
// never written through a link.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "sync/state.hpp"
#include "sync_test_support.hpp"

namespace {

namespace fs = std::filesystem;
using nsel::sync_detail::SyncState;
using nsel::sync_detail::times_of;
using nsel::sync_test::read_file;
using nsel::sync_test::TempDir;
using nsel::sync_test::write_file;
using Times = SyncState::Times;

class SyncStateFile : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(temp_.path().empty());
    mirrored_ = temp_.path() / "mirrored";
    fs::create_directories(mirrored_);
    const int fd = ::open(mirrored_.c_str(), O_RDONLY | O_DIRECTORY);
    ASSERT_GE(fd, 0);
    SyncState::prepare(fd);
    ::close(fd);
  }

  fs::path state_file() const { return mirrored_ / SyncState::kFileName; }

  // The state file's lines after its header, sorted (the order of entries is not kept).
  std::vector<std::string> lines() const {
    const auto text = read_file(state_file());
    if (!text) return {"(no state file)"};
    std::istringstream in(*text);
    std::vector<std::string> out;
    for (std::string line; std::getline(in, line);) out.push_back(line);
    std::sort(out.begin() + (out.empty() ? 0 : 1), out.end());
    return out;
  }

  static SyncState::Batch batch(const std::string& folder, std::optional<Times> folder_times,
                                std::vector<std::pair<std::string, Times>> files) {
    SyncState::Batch b;
    b.folder = folder;
    b.folder_times = folder_times;
    b.files = std::move(files);
    return b;
  }

  TempDir temp_;
  fs::path mirrored_;
};

}  // namespace

TEST_F(SyncStateFile, WhatASaveWritesALoadReadsBack) {
  SyncState state;
  // Blanks and bytes that are not UTF-8 in names: the name is the rest of its line.
  auto top = batch("", Times{4096, 1700000000, 5},
                   {{"raylet.out", {10, 1700000001, 999999999}},
                    {"a b  c", {0, 0, 0}},
                    {"\xff\xfe caf\xc3\xa9", {1LL << 40, 1, 2}}});
  auto sub = batch("nsight/", std::nullopt, {{"w_1:3_42.nsys-rep", {123456789, 1700000002, 7}}});
  state.merge(top);
  state.merge(sub);
  state.save(mirrored_);
  EXPECT_EQ(lines(),
            (std::vector<std::string>{"nsel-sync-state 1", "D 4096 1700000000 5 ", "F 0 0 0 a b  c",
                                      "F 10 1700000001 999999999 raylet.out",
                                      "F 1099511627776 1 2 \xff\xfe caf\xc3\xa9",
                                      "F 123456789 1700000002 7 nsight/w_1:3_42.nsys-rep"}));

  SyncState loaded;
  loaded.load(mirrored_);
  const SyncState::Folder* root = loaded.folder("");
  ASSERT_NE(root, nullptr);
  EXPECT_EQ(root->times, (Times{4096, 1700000000, 5}));
  EXPECT_EQ(root->files.size(), 3u);
  EXPECT_EQ(root->files.at("raylet.out"), (Times{10, 1700000001, 999999999}));
  EXPECT_EQ(root->files.at("a b  c"), (Times{0, 0, 0}));
  EXPECT_EQ(root->files.at("\xff\xfe caf\xc3\xa9"), (Times{1LL << 40, 1, 2}));
  const SyncState::Folder* nsight = loaded.folder("nsight/");
  ASSERT_NE(nsight, nullptr);
  EXPECT_EQ(nsight->times, std::nullopt);
  EXPECT_EQ(nsight->files.at("w_1:3_42.nsys-rep"), (Times{123456789, 1700000002, 7}));
  EXPECT_EQ(loaded.folder("other/"), nullptr);
}

TEST_F(SyncStateFile, NothingNewIsNotWrittenAgain) {
  SyncState state;
  state.save(mirrored_);
  EXPECT_FALSE(fs::exists(state_file())) << "an empty state is not worth a file";
  auto empty = batch("", std::nullopt, {});
  state.merge(empty);
  state.save(mirrored_);
  EXPECT_FALSE(fs::exists(state_file())) << "an empty batch changes nothing";

  auto one = batch("", std::nullopt, {{"f", {1, 2, 3}}});
  state.merge(one);
  state.save(mirrored_);
  const ino_t first = nsel::sync_test::lstat_of(state_file()).st_ino;
  state.save(mirrored_);
  // Written atomically, so a rewrite would be a new file.
  EXPECT_EQ(nsel::sync_test::lstat_of(state_file()).st_ino, first);
  // take_in() keeps what it takes in for the next save.
  auto two = batch("", std::nullopt, {{"g", {4, 5, 6}}});
  state.merge(two);
  state.take_in();
  state.save(mirrored_);
  EXPECT_NE(nsel::sync_test::lstat_of(state_file()).st_ino, first);
  EXPECT_EQ(lines(), (std::vector<std::string>{"nsel-sync-state 1", "F 1 2 3 f", "F 4 5 6 g"}));
}

TEST_F(SyncStateFile, EntriesOfFilesGoneStayAndNewTimesReplaceOld) {
  SyncState state;
  auto first = batch("", Times{1, 1, 1}, {{"gone", {1, 2, 3}}, {"kept", {4, 5, 6}}});
  state.merge(first);
  state.save(mirrored_);
  auto second = batch("", Times{2, 2, 2}, {{"kept", {7, 8, 9}}});
  state.merge(second);
  state.save(mirrored_);
  EXPECT_EQ(lines(), (std::vector<std::string>{"nsel-sync-state 1", "D 2 2 2 ", "F 1 2 3 gone",
                                               "F 7 8 9 kept"}));
}

TEST_F(SyncStateFile, AStateOfAnotherFormIsNoState) {
  for (const std::string& text :
       {std::string(""), std::string("nsel-sync-state 2\nF 1 2 3 f\n"), std::string("F 1 2 3 f\n"),
        std::string("nsel-sync-state 1"),  // header cut
        std::string("\x00\x01garbage\n", 10), std::string(" nsel-sync-state 1\nF 1 2 3 f\n")}) {
    write_file(state_file(), text);
    SyncState state;
    state.load(mirrored_);
    EXPECT_EQ(state.folder(""), nullptr) << text;
  }
}

TEST_F(SyncStateFile, AGarbledOrCutLineIsSkippedAndTheRestKept) {
  write_file(state_file(),
             "nsel-sync-state 1\n"
             "F 1 2 3 first\n"
             "X 1 2 3 unknown-kind\n"
             "F1 2 3 no-blank\n"
             "F 1 2\n"
             "F a b c not-numbers\n"
             "F 99999999999999999999 1 1 too-big\n"
             "F 1 2 3x bad-end\n"
             "\n"
             "F -4 -5 -6 negative\n"
             "F 7 8 9 last\n"
             "F 1 2 3 cut-off");  // a save killed midway (the file is renamed whole, but still)
  SyncState state;
  state.load(mirrored_);
  const SyncState::Folder* root = state.folder("");
  ASSERT_NE(root, nullptr);
  std::vector<std::string> names;
  for (const auto& [name, times] : root->files) names.push_back(name);
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"first", "last", "negative"}));
  EXPECT_EQ(root->files.at("last"), (Times{7, 8, 9}));
  EXPECT_EQ(root->times, std::nullopt);
}

TEST_F(SyncStateFile, AStateFolderThatIsALinkIsNeitherReadNorWrittenThrough) {
  const fs::path elsewhere = temp_.path() / "elsewhere";
  fs::create_directories(elsewhere);
  const std::string planted = "nsel-sync-state 1\nF 1 2 3 planted\n";
  write_file(elsewhere / "state", planted);
  fs::remove_all(mirrored_ / SyncState::kFolder);
  fs::create_directory_symlink(elsewhere, mirrored_ / SyncState::kFolder);

  SyncState state;
  state.load(mirrored_);
  EXPECT_EQ(state.folder(""), nullptr);
  auto one = batch("", std::nullopt, {{"f", {1, 2, 3}}});
  state.merge(one);
  state.save(mirrored_);
  EXPECT_EQ(read_file(elsewhere / "state"), planted);
  EXPECT_EQ(nsel::sync_test::tree(elsewhere), (std::vector<std::string>{"state"}));
}

TEST_F(SyncStateFile, WithoutItsFolderNothingIsWritten) {
  fs::remove_all(mirrored_ / SyncState::kFolder);
  SyncState state;
  auto one = batch("", std::nullopt, {{"f", {1, 2, 3}}});
  state.merge(one);
  state.save(mirrored_);
  EXPECT_EQ(nsel::sync_test::tree(mirrored_), std::vector<std::string>{});
}

TEST(SyncStateTimes, AreTheSizeAndModificationTimeToTheNanosecond) {
  struct stat st {};
  st.st_size = 42;
  st.st_mtim = {1700000000, 123456789};
  st.st_atim = {5, 6};  // never part of it
  EXPECT_EQ(times_of(st), (Times{42, 1700000000, 123456789}));
}
