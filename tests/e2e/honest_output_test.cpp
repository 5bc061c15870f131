// Output is honest: a write that fails (standard output or an output file on a full device) is
// an error, an output path that is a device or a FIFO is never replaced by a regular file, names
// with control characters cannot forge terminal lines, and nsel diff with nothing paired says so
// and never passes its gate. The real nsel binary on small SQLite exports (no nsys needed).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "nsel/core/error.hpp"
#include "support.hpp"
#include "unit_files.hpp"

namespace fs = std::filesystem;

namespace {

const std::string kNsel = NSEL_BINARY;

// An export of one process running `steps` steps of 1 ms, each with a range named `range`.
void write_export(const fs::path& file, int steps, const std::string& range = "forward") {
  std::string rows;
  for (int s = 1; s <= steps; ++s) {
    const long long start = 1000 + (s - 1) * 1'000'010LL;
    std::string quoted;
    for (char c : range) quoted += c == '\'' ? std::string("''") : std::string(1, c);
    rows += std::string(rows.empty() ? "" : ", ") + "(" + std::to_string(start) + ", " +
            std::to_string(start + 1'000'000) + ", 59, 'step " + std::to_string(s) + "', 5), (" +
            std::to_string(start + 1) + ", " + std::to_string(start + 500'000) + ", 59, '" +
            quoted + "', 5)";
  }
  nsel::test::execute_sql(file,
                          "CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType "
                          "INTEGER, text TEXT, globalTid INTEGER); INSERT INTO NVTX_EVENTS "
                          "VALUES " +
                              rows + ";");
}

std::size_t lines_in(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

// A control byte other than the newline: one that a terminal would act on.
bool has_control(const std::string& text) {
  return std::any_of(text.begin(), text.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return (u < 0x20 && c != '\n') || u == 0x7f;
  });
}

// A line that starts with what a hostile name put after its newline.
bool forged_line(const std::string& text) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("nsel: FORGED", 0) == 0 || line.rfind("FORGED", 0) == 0) return true;
  }
  return false;
}

// A character device node made in `dir` (as root), else nullopt: the tests never touch the
// system's own /dev nodes with an output path.
std::optional<fs::path> make_device(const fs::path& dir, const std::string& name, unsigned minor) {
  const fs::path node = dir / name;
  if (::mknod(node.c_str(), S_IFCHR | 0666, makedev(1, minor)) != 0) return std::nullopt;
  return node;
}

bool is_char_device(const fs::path& path) {
  struct stat info {};
  return ::lstat(path.c_str(), &info) == 0 && S_ISCHR(info.st_mode);
}

class HonestOutput : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = nsel::test::make_temp_dir("honest-output");
    write_export(dir_ / "run" / "trainer_0.sqlite", 6);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

// Standard output on a full device: every command that prints says so and fails.
TEST_F(HonestOutput, AFullStandardOutputIsAnErrorForEveryCommand) {
  // The redirection only opens the device; a node of our own where mknod works.
  const std::string full = make_device(dir_, "full", 7).value_or("/dev/full").string();
  const std::string run = (dir_ / "run").string();
  const fs::path empty = dir_ / "empty";
  fs::create_directories(empty);
  const std::vector<std::vector<std::string>> commands = {
      {"--help"},
      {"report", "--help"},
      {"plan", "dtensor_policy_worker"},
      {"ls", empty.string()},
      {"ls", "--json", run},
      {"report", "-q", run},
      {"report", "-q", "--json", run},
      {"diff", "-q", run, run},
      {"diff", "-q", "--json", run, run},
  };
  for (const auto& args : commands) {
    std::vector<std::string> argv = {"/bin/sh", "-c", "exec \"$0\" \"$@\" > \"$NSEL_TEST_FULL\"",
                                     kNsel};
    argv.insert(argv.end(), args.begin(), args.end());
    const auto r = nsel::test::run(argv, {{"NSEL_TEST_FULL", full}}, dir_);
    const std::string what = "nsel " + args.front() + (args.size() > 1 ? " " + args[1] : "");
    EXPECT_EQ(r.exit_code, 1) << what << ": " << r.err;
    EXPECT_EQ(r.err, "nsel: error: cannot write to standard output: No space left on device\n")
        << what;
  }
  EXPECT_TRUE(is_char_device(full));
}

// --html on a device or a FIFO: written in place or refused, never replaced by a regular file.
TEST_F(HonestOutput, AnOutputFileThatIsADeviceOrAFifoIsNeverReplaced) {
  const auto full = make_device(dir_, "full", 7);
  const auto null = make_device(dir_, "null", 3);
  if (!full || !null) GTEST_SKIP() << "mknod is not allowed here (not root)";
  const std::string run = (dir_ / "run").string();

  auto r = nsel::test::run({kNsel, "report", "-q", "--html", full->string(), run}, {});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "nsel: error: cannot write " + nsel::quote(full->string()) +
                       ": No space left on device\n");
  EXPECT_TRUE(is_char_device(*full)) << "the device node was replaced";

  r = nsel::test::run({kNsel, "diff", "-q", "--html", full->string(), run, run}, {});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(lines_in(r.err), 1u) << r.err;
  EXPECT_TRUE(is_char_device(*full));

  r = nsel::test::run({kNsel, "report", "-q", "--html", null->string(), run}, {});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(is_char_device(*null));

  // --csv names a folder: a device is refused, and left as it was.
  r = nsel::test::run({kNsel, "report", "-q", "--csv", null->string(), run}, {});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(lines_in(r.err), 1u) << r.err;
  EXPECT_TRUE(is_char_device(*null));

  // A FIFO nobody reads: refused at once rather than waited on, and still a FIFO.
  const fs::path fifo = dir_ / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  r = nsel::test::run({kNsel, "report", "-q", "--html", fifo.string(), run}, {});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "nsel: error: cannot write " + nsel::quote(fifo.string()) +
                       ": it is a named pipe with no reader\n");
  EXPECT_TRUE(fs::is_fifo(fifo));
}

// Another user's link in a shared folder, and a disk: an output path never reaches them. Before,
// `report --html shared/run.html`, a co-tenant's link to a block device, wrote the page onto
// the disk.
TEST_F(HonestOutput, AnOutputNeverGoesToADiskOrThroughAnotherUsersLink) {
  const fs::path disk = dir_ / "disk";
  // An unattached loop device's number: no disk is touched even if it were written.
  if (::geteuid() != 0 || ::mknod(disk.c_str(), S_IFBLK | 0600, makedev(7, 250)) != 0) {
    GTEST_SKIP() << "mknod is not allowed here (not root)";
  }
  const std::string run = (dir_ / "run").string();
  auto r = nsel::test::run({kNsel, "report", "-q", "--html", disk.string(), run}, {});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "nsel: error: cannot write " + nsel::quote(disk.string()) +
                       ": it is a block device (a disk): nsel writes no device\n");
  // A character device other than null, zero, full or a terminal (1:1 is /dev/mem's number).
  const auto memory = make_device(dir_, "mem", 1);
  ASSERT_TRUE(memory.has_value());
  r = nsel::test::run({kNsel, "report", "-q", "--html", memory->string(), run}, {});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "nsel: error: cannot write " + nsel::quote(memory->string()) +
                       ": it is a character device (1:1) other than /dev/null, /dev/zero, "
                       "/dev/full or a terminal: nsel writes no device\n");

  // A folder anybody may write (as /tmp), and a link in it made by another user.
  const fs::path shared = dir_ / "shared";
  fs::create_directories(shared);
  fs::permissions(shared, fs::perms::all | fs::perms::sticky_bit);
  const fs::path target = dir_ / "mine.txt";
  nsel::test::spit(target, "keep me\n");
  const fs::path link = shared / "run.html";
  fs::create_symlink(target, link);
  ASSERT_EQ(::lchown(link.c_str(), 65534, 65534), 0);
  r = nsel::test::run({kNsel, "report", "-q", "--html", link.string(), run}, {});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "nsel: error: cannot write " + nsel::quote(link.string()) +
                       ": it is a link made by another user (uid 65534) in a folder anybody may "
                       "write: not followed\n");
  EXPECT_EQ(nsel::test::slurp(target), "keep me\n");
  EXPECT_TRUE(fs::is_symlink(link));
  // This user's own link there is used.
  ASSERT_EQ(::lchown(link.c_str(), ::geteuid(), ::getegid()), 0);
  r = nsel::test::run({kNsel, "report", "-q", "--html", link.string(), run}, {});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

// A range name and a folder name holding a newline and an escape sequence: the terminal output
// shows them escaped (no raw control byte, no forged line); JSON keeps them exact.
TEST_F(HonestOutput, ControlCharactersInNamesAreEscapedInTextAndExactInJson) {
  const std::string evil = "fwd\nnsel: FORGED\x1b[2J";
  const fs::path folder = dir_ / "odd\nFORGED-FOLDER\x1b]0;title\x07";
  write_export(folder / "trainer_0.sqlite", 6, evil);
  write_export(folder / "trainer_1.sqlite", 6, evil);
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"report", "-q", folder.string()},
        std::vector<std::string>{"diff", "-q", folder.string(), folder.string()},
        std::vector<std::string>{"ls", folder.string()}}) {
    std::vector<std::string> argv = {kNsel};
    argv.insert(argv.end(), args.begin(), args.end());
    const auto r = nsel::test::run(argv, {});
    EXPECT_FALSE(has_control(r.out)) << args.front() << ":\n" << r.out;
    EXPECT_FALSE(forged_line(r.out)) << args.front() << ":\n" << r.out;
    EXPECT_FALSE(has_control(r.err)) << args.front() << ":\n" << r.err;
  }
  const auto r = nsel::test::run({kNsel, "report", "-q", "--json", folder.string()}, {});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(nlohmann::json(evil).dump()), std::string::npos)
      << "the exact name, JSON-escaped";
  const std::string folder_json = nlohmann::json(folder.filename().string()).dump();
  EXPECT_NE(r.out.find(folder_json.substr(1, folder_json.size() - 2)), std::string::npos);
}

// The same names given on the command line, to the commands that told them raw before: the demo
// (its --root in every line it told and printed), sync (its --src in its first line) and plan (a
// worker name in its notices). None reaches the terminal raw or forges a line.
TEST_F(HonestOutput, ControlCharactersInGivenFoldersAndWorkersNeverReachTheTerminalRaw) {
  const fs::path folder = dir_ / "odd\nFORGED-FOLDER\x1b[31m";
  fs::create_directories(folder / "ray");
  const std::vector<std::pair<std::vector<std::string>, std::map<std::string, std::string>>> runs =
      {
          {{"demo", "--steps", "3", "--work-ms", "20", "--root", (folder / "demo").string()}, {}},
          {{"sync", "--src", (folder / "ray").string(), "--dest", (folder / "logs").string()}, {}},
          {{"plan", "w\nFORGED\x1b[31m"},
           {{"NRL_NSYS_WORKER_PATTERNS", "w*"},
            {"NRL_NSYS_PROFILE_STEP_RANGE", "2:4"},
            {"NSEL_PROFILE_RANKS", "0"}}},
      };
  for (const auto& [args, env] : runs) {
    std::vector<std::string> argv = {kNsel};
    argv.insert(argv.end(), args.begin(), args.end());
    const auto r = nsel::test::run(argv, env);
    EXPECT_NE(r.out.size() + r.err.size(), 0u) << args.front();
    EXPECT_FALSE(has_control(r.out)) << args.front() << ":\n" << r.out;
    EXPECT_FALSE(has_control(r.err)) << args.front() << ":\n" << r.err;
    EXPECT_FALSE(forged_line(r.out)) << args.front() << ":\n" << r.out;
    EXPECT_FALSE(forged_line(r.err)) << args.front() << ":\n" << r.err;
  }
}

// Two runs whose processes pair with nothing: said, with each side's keys, and --gate fails.
TEST_F(HonestOutput, ADiffWithNothingPairedSaysSoAndNeverPassesTheGate) {
  write_export(dir_ / "a" / "alpha_0.sqlite", 6);
  write_export(dir_ / "a" / "alpha_1.sqlite", 6);
  write_export(dir_ / "b" / "beta_0.sqlite", 6);
  write_export(dir_ / "b" / "beta_1.sqlite", 6);
  const std::string a = (dir_ / "a").string();
  const std::string b = (dir_ / "b").string();
  auto r = nsel::test::run({kNsel, "diff", "-q", a, b}, {});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const std::string first_line = r.out.substr(0, r.out.find('\n'));
  EXPECT_NE(first_line.find("inconclusive (no process could be paired by worker,rank: the "
                            "baseline has 'alpha",
                            0),
            std::string::npos)
      << first_line;
  EXPECT_NE(first_line.find("the candidate 'beta"), std::string::npos) << first_line;

  r = nsel::test::run({kNsel, "diff", "-q", "--gate", "5", a, b}, {});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(lines_in(r.err), 1u) << r.err;
  EXPECT_EQ(r.err.rfind("nsel: error: --gate 5: no process could be paired", 0), 0u) << r.err;
}

// Too few steps to tell a change from the spread: the gate saw no evidence, so it fails with the
// reason (before: exit 0, nothing on stderr, no gate in --json), and --json says so.
TEST_F(HonestOutput, AGateOnTooFewStepsFailsWithTheReason) {
  write_export(dir_ / "a" / "w_0.sqlite", 2);
  write_export(dir_ / "b" / "w_0.sqlite", 2);
  const std::string a = (dir_ / "a").string();
  const std::string b = (dir_ / "b").string();
  auto r = nsel::test::run({kNsel, "diff", "-q", "--gate", "5", a, b}, {});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.err,
            "nsel: error: --gate 5: 2 steps in each run, at least 5 needed; nothing was "
            "compared\n");
  r = nsel::test::run({kNsel, "diff", "-q", "--json", "--gate", "5", a, b}, {});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const nlohmann::json gate = nlohmann::json::parse(r.out)["gate"];
  EXPECT_EQ(gate["outcome"], "no_evidence") << r.out;
  EXPECT_EQ(gate["percent"], 5);
  EXPECT_EQ(gate["reason"], "2 steps in each run, at least 5 needed");
  r = nsel::test::run({kNsel, "diff", "-q", "--json", a, b}, {});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(nlohmann::json::parse(r.out)["gate"].is_null());
}

}  // namespace
