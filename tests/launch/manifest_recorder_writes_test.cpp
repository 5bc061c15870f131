// What the manifest recorder writes while nsys runs and when it ends, on real files and with real
// child processes: the pending manifest, the claim of the report's name once the program's pid is
// known, the state and reason of every end, hostile values, and folders that refuse the manifest.
#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/inotify.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "nsel/core/error.hpp"
#include "nsel/core/manifest.hpp"
#include "nsel/core/plan.hpp"
#include "nsel/launch/manifest_recorder.hpp"
#include "nsel/sys/host.hpp"
#include "sample_manifest.hpp"

namespace {

namespace fs = std::filesystem;

// A folder made by mkdtemp for one test, removed with everything in it at the end.
class TempDir {
 public:
  TempDir() {
    std::string name = (fs::temp_directory_path() / "nsel-recorder-test-XXXXXX").string();
    if (::mkdtemp(name.data()) != nullptr) path_ = name;
  }
  ~TempDir() {
    if (path_.empty()) return;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(path_, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (it->is_directory(ec) && !it->is_symlink(ec)) ::chmod(it->path().c_str(), 0700);
    }
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// Sets a variable for one test, restoring what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

void write_file(const fs::path& file, const std::string& text) {
  std::ofstream(file, std::ios::binary | std::ios::trunc) << text;
}

std::optional<std::string> read_file(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return std::nullopt;
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

nsel::Manifest manifest_at(const fs::path& file) {
  const auto text = read_file(file);
  if (!text) throw std::runtime_error("no manifest at " + file.string());
  return nsel::parse_manifest(*text, file.string());
}

std::vector<std::string> names_in(const fs::path& folder) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(folder)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// Sets a file's modification time an hour back: a file of an older run.
void age(const fs::path& file) {
  fs::last_write_time(file, fs::file_time_type::clock::now() - std::chrono::hours(1));
}

// nsel's own process as the launcher: its children are the candidates for the program.
nsel::Manifest sample_manifest(const std::string& worker = "w") {
  nsel::Manifest m = nsel::test::window_manifest(worker);
  m.nsel_pid = ::getpid();
  m.command = {"nsys", "profile", "prog"};
  m.host = "host-1";
  m.start_time = "2026-01-02T03:04:05.678Z";
  return m;
}

// Waits up to 10 s for `file` to exist.
bool appears(const fs::path& file) {
  for (int i = 0; i < 1000; ++i) {
    if (fs::exists(file)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// A real program for the recorder to find: /bin/sh, which waits for a line on its standard input
// and then runs `script` (with $0 the folder).
struct Program {
  pid_t pid = -1;
  int input = -1;

  Program(const std::string& script, const fs::path& folder) {
    int channel[2];
    if (::pipe(channel) != 0) return;
    pid = ::fork();
    if (pid == 0) {
      ::dup2(channel[0], 0);
      ::close(channel[0]);
      ::close(channel[1]);
      ::execl("/bin/sh", "sh", "-c", ("read go; " + script).c_str(), folder.c_str(), nullptr);
      ::_exit(127);
    }
    ::close(channel[0]);
    input = channel[1];
  }
  // Lets it run its script and waits for its end; its exit code.
  int finish() {
    if (input >= 0) {
      const ssize_t n = ::write(input, "go\n", 3);
      (void)n;
      ::close(input);
      input = -1;
    }
    int status = 0;
    if (pid > 0) ::waitpid(pid, &status, 0);
    pid = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  ~Program() { finish(); }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
};

constexpr int kCannotBecomeNobody = 90;
constexpr int kCannotMount = 99;

// Runs `body` in a forked child after `prepare`; its exit code and the text it returned.
std::pair<int, std::string> in_child(const std::function<void()>& prepare,
                                     const std::function<std::string()>& body) {
  int channel[2];
  if (::pipe(channel) != 0) return {-1, ""};
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(channel[0]);
    prepare();
    std::string text;
    try {
      text = body();
    } catch (const std::exception& e) {
      text = std::string("threw: ") + e.what();
    }
    const bool sent =
        ::write(channel[1], text.data(), text.size()) == static_cast<ssize_t>(text.size());
    ::_exit(sent ? 0 : 91);
  }
  ::close(channel[1]);
  std::string text;
  char buffer[4096];
  for (ssize_t n; (n = ::read(channel[0], buffer, sizeof buffer)) > 0;) {
    text.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(channel[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, text};
}

class Recorder : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(temp_.path().empty());
    dir_ = temp_.path() / "reports";
    fs::create_directories(dir_);
    fs::create_directories(temp_.path() / "tmp");
    // Where nsys leaves what it could not write: empty unless a test plants a capture there.
    tmpdir_.emplace("TMPDIR", (temp_.path() / "tmp").string());
  }
  void TearDown() override { tmpdir_.reset(); }

  std::string output() const { return (dir_ / "w_%p").string(); }

  TempDir temp_;
  fs::path dir_;
  std::optional<ScopedEnv> tmpdir_;
};

}  // namespace

TEST_F(Recorder, TheFirstManifestIsRunningUnderAHiddenPendingName) {
  std::string pending;
  {
    nsel::ManifestRecorder recorder(sample_manifest(), output());
    pending = recorder.path().filename().string();
    EXPECT_EQ(recorder.path().parent_path(), dir_);
    EXPECT_TRUE(std::regex_match(pending, std::regex("\\.w-pending-" + std::to_string(::getpid()) +
                                                     "-[0-9a-f]{8}\\.nsel\\.json")))
        << pending;
    EXPECT_EQ(names_in(dir_), std::vector<std::string>{pending});
    nsel::Manifest expected = sample_manifest();
    expected.report = (dir_ / "w_0.nsys-rep").string();  // the pid is not known yet
    EXPECT_EQ(manifest_at(dir_ / pending), expected);
    EXPECT_EQ(recorder.manifest(), expected);
  }
  // A launcher that ends without finish() (killed) leaves the running manifest as it was.
  EXPECT_EQ(names_in(dir_), std::vector<std::string>{pending});
  EXPECT_EQ(manifest_at(dir_ / pending).state, "running");
}

TEST_F(Recorder, TheProgramIsFoundAmongTheChildrenAndItsReportGetsItsName) {
  Program program("printf new > \"$0/.w_$$.nselX.nsys-rep\"", dir_);
  ASSERT_GT(program.pid, 0);
  const std::string stem = "w_" + std::to_string(program.pid);
  nsel::ManifestRecorder recorder(sample_manifest(), (dir_ / ".w_%p.nselX").string(),
                                  (dir_ / "w_%p").string());
  // While the program runs, the pending manifest has moved to the report's name.
  ASSERT_TRUE(appears(dir_ / (stem + ".nsel.json")));
  nsel::Manifest running = manifest_at(dir_ / (stem + ".nsel.json"));
  EXPECT_EQ(running.pid, program.pid);
  EXPECT_EQ(running.state, "running");
  EXPECT_EQ(running.report, (dir_ / (stem + ".nsys-rep")).string());
  EXPECT_EQ(names_in(dir_), std::vector<std::string>{stem + ".nsel.json"});

  ASSERT_EQ(program.finish(), 0);
  EXPECT_EQ(recorder.finish(0), "complete");
  EXPECT_EQ(recorder.path(), dir_ / (stem + ".nsel.json"));
  EXPECT_EQ(names_in(dir_), (std::vector<std::string>{stem + ".nsel.json", stem + ".nsys-rep"}));
  EXPECT_EQ(read_file(dir_ / (stem + ".nsys-rep")), "new");
  const nsel::Manifest done = manifest_at(dir_ / (stem + ".nsel.json"));
  EXPECT_EQ(done, recorder.manifest());
  EXPECT_EQ(done.state, "complete");
  EXPECT_EQ(done.reason, "");
  EXPECT_EQ(done.exit_status, 0);
  ASSERT_TRUE(done.end_time.has_value());
  EXPECT_TRUE(std::regex_match(*done.end_time,
                               std::regex("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z")))
      << *done.end_time;
}

// Another file takes the claimed name while nsys runs: it is left alone, the report keeps nsys's
// hidden name, and the manifest says where it is.
TEST_F(Recorder, ANameTakenAfterTheClaimKeepsTheHiddenNameAndTheOtherFileIsUntouched) {
  Program program("printf new > \"$0/.w_$$.nselX.nsys-rep\"", dir_);
  ASSERT_GT(program.pid, 0);
  const std::string stem = "w_" + std::to_string(program.pid);
  nsel::ManifestRecorder recorder(sample_manifest(), (dir_ / ".w_%p.nselX").string(),
                                  (dir_ / "w_%p").string());
  ASSERT_TRUE(appears(dir_ / (stem + ".nsel.json")));
  write_file(dir_ / (stem + ".nsys-rep"), "someone else's");
  ASSERT_EQ(program.finish(), 0);
  const fs::path hidden = dir_ / ("." + stem + ".nselX.nsys-rep");
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(recorder.finish(0), "complete");
  const std::string said = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(said, "nsel: warning: cannot rename " + hidden.string() + " to " +
                      (dir_ / (stem + ".nsys-rep")).string() +
                      ": File exists; it keeps its name\n");
  EXPECT_EQ(read_file(dir_ / (stem + ".nsys-rep")), "someone else's");
  EXPECT_EQ(read_file(hidden), "new");
  const nsel::Manifest done = manifest_at(dir_ / (stem + ".nsel.json"));
  EXPECT_EQ(done.report, hidden.string());
  EXPECT_EQ(done.state, "complete");
}

// Every name the report may take is another file's (small, predictable container pids and
// restarts make that easy): the whole report stays under nsys's hidden name, and the manifest
// says name_taken, names that file and how to name it, never "complete" and never a window not
// reached. No other file is touched.
TEST_F(Recorder, EveryNameTakenKeepsTheReportHiddenAndSaysNameTaken) {
  Program program("printf new > \"$0/.w_$$.nselX.nsys-rep\"", dir_);
  ASSERT_GT(program.pid, 0);
  const std::string stem = "w_" + std::to_string(program.pid);
  const fs::path wanted = dir_ / (stem + ".nsys-rep");
  for (int k = 1; k <= nsel::kReportNameVariants; ++k) {
    write_file(nsel::report_name_variant(wanted, k), "another's " + std::to_string(k));
  }
  nsel::ManifestRecorder recorder(sample_manifest(), (dir_ / ".w_%p.nselX").string(),
                                  (dir_ / "w_%p").string());
  ASSERT_EQ(program.finish(), 0);
  EXPECT_EQ(recorder.finish(0), "name_taken");
  const fs::path hidden = dir_ / ("." + stem + ".nselX.nsys-rep");
  EXPECT_EQ(read_file(hidden), "new");
  for (int k = 1; k <= nsel::kReportNameVariants; ++k) {
    EXPECT_EQ(read_file(nsel::report_name_variant(wanted, k)), "another's " + std::to_string(k));
  }
  const nsel::Manifest done = manifest_at(recorder.path());
  EXPECT_EQ(done.state, "name_taken");
  EXPECT_EQ(done.report, hidden.string());
  EXPECT_EQ(done.reason, "every name the report may take (" + stem +
                             ".nsys-rep and its -2 to -99 variants) is another file's; the whole "
                             "report stays under nsys's hidden name ." +
                             stem +
                             ".nselX.nsys-rep, which 'nsel recover' renames once a name "
                             "is free");
}

// A program that ended before the watcher saw it: its pid comes from the one new report whose
// name fits the -o value. Each end has its state and its reason.
TEST_F(Recorder, EveryEndIsNamedWithItsStateAndReason) {
  struct End {
    std::string file;  // what nsys left ("" for nothing)
    int exit_status;
    bool timed_out;
    std::string state;
    std::string reason;
  };
  const std::string timeout =
      "nsys did not finish within NSEL_STOP_TIMEOUT and was interrupted (exit status 137)";
  const std::vector<End> ends = {
      {"w_77.nsys-rep", 0, false, "complete", ""},
      {"w_77.nsys-rep", 137, true, "complete", timeout + "; the report may lack the last steps"},
      {"w_77.qdstrm", 1, false, "qdstrm",
       "nsys left w_77.qdstrm without importing it; 'nsel recover' converts it"},
      // No program was ever seen: nsys ended without starting it.
      {"", 3, false, "nsys_failed",
       "the program never started: nsys ended (exit status 3) before running it, a failure of "
       "Nsight Systems itself; run it again"},
      {"", 137, true, "stop_timeout", timeout + "; no report was written"},
  };
  for (const End& end : ends) {
    SCOPED_TRACE(end.state + " " + end.file);
    const fs::path folder = temp_.path() / ("end-" + std::to_string(&end - ends.data()));
    fs::create_directories(folder);
    nsel::ManifestRecorder recorder(sample_manifest(), (folder / "w_%p").string());
    if (!end.file.empty()) write_file(folder / end.file, "capture");
    EXPECT_EQ(recorder.finish(end.exit_status, end.timed_out), end.state);
    const nsel::Manifest m = manifest_at(recorder.path());
    EXPECT_EQ(m, recorder.manifest());
    EXPECT_EQ(m.state, end.state);
    EXPECT_EQ(m.reason, end.reason);
    EXPECT_EQ(m.exit_status, end.exit_status);
    EXPECT_EQ(m.qdstrm, std::nullopt);
    if (end.file.empty()) {
      // The pid stays unknown: the manifest keeps its pending name, the only file there.
      EXPECT_EQ(m.pid, 0);
      EXPECT_EQ(names_in(folder), std::vector<std::string>{recorder.path().filename().string()});
    } else {
      EXPECT_EQ(m.pid, 77);
      EXPECT_EQ(recorder.path(), folder / "w_77.nsel.json");
      EXPECT_EQ(names_in(folder), (std::vector<std::string>{"w_77.nsel.json", end.file}));
    }
  }
}

// Where nsys wrote nothing, the program's step record tells why: a capture opened is nsys's
// failure (named with its version); step control that never opened is a window not reached;
// no record and no program ever seen is nsys's failure to start it (what Nsight Systems 2023.4
// does now and then with exit status 0 when sessions start together). The record goes.
TEST_F(Recorder, TheStepRecordTellsAFailureOfNsysFromAWindowNotReached) {
  const std::vector<std::pair<std::string, std::pair<std::string, std::string>>> records = {
      {"controlled\nopened\n",
       {"nsys_failed",
        "the program opened its capture, yet nsys 2022.4.2.1-df9881f wrote no report (exit "
        "status 0): a failure of Nsight Systems itself; run it again"}},
      {"controlled\n",
       {"missing",
        "nsys wrote no report (exit status 0); the program's step control never opened its "
        "window"}},
      {"",
       {"nsys_failed",
        "the program never started: nsys 2022.4.2.1-df9881f ended (exit status 0) before running "
        "it, a failure of Nsight Systems itself; run it again"}},
      // Only whole lines count.
      {"controlled\nopenedx\n",
       {"missing",
        "nsys wrote no report (exit status 0); the program's step control never opened its "
        "window"}},
  };
  for (const auto& [told, expected] : records) {
    SCOPED_TRACE(told);
    const fs::path folder = temp_.path() / ("told-" + std::to_string(&told - &records[0].first));
    fs::create_directories(folder);
    const fs::path record = temp_.path() / "step-record";
    write_file(record, told);
    nsel::ManifestRecorder recorder(sample_manifest(), (folder / "w_%p").string());
    recorder.read_step_record(record, "2022.4.2.1-df9881f");
    EXPECT_EQ(recorder.finish(0), expected.first);
    EXPECT_EQ(manifest_at(recorder.path()).reason, expected.second);
    EXPECT_FALSE(fs::exists(record));
  }
  // A program that ran without nsel's step control (no record) leaves the cause open.
  {
    const fs::path folder = temp_.path() / "seen";
    fs::create_directories(folder);
    const fs::path record = temp_.path() / "step-record";
    write_file(record, "");
    Program program("exit 0", folder);
    ASSERT_GT(program.pid, 0);
    const std::string stem = "w_" + std::to_string(program.pid);
    nsel::ManifestRecorder recorder(sample_manifest(), (folder / "w_%p").string());
    recorder.read_step_record(record, "2022.4.2.1-df9881f");
    ASSERT_TRUE(appears(folder / (stem + ".nsel.json")));  // the watcher has seen it
    EXPECT_EQ(program.finish(), 0);
    EXPECT_EQ(recorder.finish(0), "missing");
    EXPECT_EQ(recorder.manifest().reason,
              "nsys wrote no report (exit status 0); the step window may never have been reached");
  }
  // A report written is complete, whatever the record says.
  const fs::path record = temp_.path() / "step-record";
  write_file(record, "controlled\nopened\n");
  nsel::ManifestRecorder recorder(sample_manifest(), output());
  recorder.read_step_record(record, "");
  write_file(dir_ / "w_83.nsys-rep", "capture");
  EXPECT_EQ(recorder.finish(0), "complete");
  // Without a version the failure names nsys alone.
  write_file(record, "opened\n");
  const fs::path unversioned = temp_.path() / "unversioned";
  fs::create_directories(unversioned);
  nsel::ManifestRecorder without(sample_manifest(), (unversioned / "w_%p").string());
  without.read_step_record(record, "");
  EXPECT_EQ(without.finish(0), "nsys_failed");
  EXPECT_NE(without.manifest().reason.find("yet nsys wrote no report"), std::string::npos)
      << without.manifest().reason;
}

// Under a user's own output name, a report older than this run is another's: nsys refused to
// write over it. The old report is kept; the manifest says the name was taken.
TEST_F(Recorder, AnOlderReportUnderTheSameNameIsNameTakenAndKept) {
  write_file(dir_ / "w_81.nsys-rep", "an old run's report");
  age(dir_ / "w_81.nsys-rep");
  nsel::ManifestRecorder recorder(sample_manifest(), output());
  EXPECT_EQ(recorder.finish(0), "name_taken");
  const nsel::Manifest m = manifest_at(dir_ / "w_81.nsel.json");
  EXPECT_EQ(m.pid, 81);
  EXPECT_EQ(m.reason,
            "w_81.nsys-rep was taken by another file before the program started; nsys wrote no "
            "report under it (Nsight Systems puts it in $TMPDIR as nsys-report-<id>.nsys-rep)");
  EXPECT_EQ(read_file(dir_ / "w_81.nsys-rep"), "an old run's report");
}

// An old run's report with its own manifest is never taken for this run's, and its manifest is
// never written over.
TEST_F(Recorder, AnOldRunsReportAndManifestAreLeftAlone) {
  write_file(dir_ / "w_82.nsys-rep", "old report");
  write_file(dir_ / "w_82.nsel.json", "old manifest");
  nsel::ManifestRecorder recorder(sample_manifest(), output());
  // No program ran: nsys's failure to start it, never the old run's report.
  EXPECT_EQ(recorder.finish(0), "nsys_failed");
  EXPECT_EQ(recorder.manifest().pid, 0);
  EXPECT_EQ(read_file(dir_ / "w_82.nsel.json"), "old manifest");
  EXPECT_EQ(read_file(dir_ / "w_82.nsys-rep"), "old report");
  EXPECT_EQ(names_in(dir_), (std::vector<std::string>{recorder.path().filename().string(),
                                                      "w_82.nsel.json", "w_82.nsys-rep"}));
}

// What nsys left in $TMPDIR is this run's only when it is new and its end names this run's -o
// value (and the program's pid, when known); that one is recorded for 'nsel recover'.
TEST_F(Recorder, TheCaptureNsysLeftInTmpdirIsRecordedWhenItIsThisRuns) {
  write_file(dir_ / "w_81.nsys-rep", "an old run's report");
  age(dir_ / "w_81.nsys-rep");
  nsel::ManifestRecorder recorder(sample_manifest(), output());
  const fs::path tmp = temp_.path() / "tmp";
  // nsys writes its capture seconds after the start; file times lag the clock by up to a tick.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const std::string tail = " --output=" + output() + " ... pid_";
  write_file(tmp / "nsys-report-other-pid.qdstrm", "capture" + tail + "99_stdout");
  write_file(tmp / "nsys-report-other-run.qdstrm", "capture --output=/elsewhere/w_%p pid_81_std");
  write_file(tmp / "nsys-report-old.qdstrm", "capture" + tail + "81_stdout");
  age(tmp / "nsys-report-old.qdstrm");
  write_file(tmp / "not-nsys-81.qdstrm", "capture" + tail + "81_stdout");
  write_file(tmp / "nsys-report-ours.nsys-rep", "capture" + tail + "81_stdout");
  EXPECT_EQ(recorder.finish(0), "name_taken");
  const nsel::Manifest m = manifest_at(dir_ / "w_81.nsel.json");
  EXPECT_EQ(m.qdstrm, (tmp / "nsys-report-ours.nsys-rep").string());
  EXPECT_TRUE(m.reason.ends_with("; nsys left the capture in " +
                                 (tmp / "nsys-report-ours.nsys-rep").string() +
                                 ", which 'nsel recover' converts"))
      << m.reason;
}

// nsel's own -o value holds the launch's tag, so it alone names the run: 2023.4 compressed the
// pid in "pid_<pid>_stdout" of a left .nsys-rep (a back-reference where the digits were), and
// the capture went unnamed.
TEST_F(Recorder, TheCaptureLeftUnderNselsOwnOutputNeedsNoPidAsText) {
  Program program("exit 0", dir_);
  ASSERT_GT(program.pid, 0);
  nsel::ManifestRecorder recorder(sample_manifest(), (dir_ / ".w_%p.nsel7-0a1b2c3d").string(),
                                  (dir_ / "w_%p").string());
  ASSERT_TRUE(appears(dir_ / ("w_" + std::to_string(program.pid) + ".nsel.json")));
  ASSERT_EQ(program.finish(), 0);
  const fs::path left = temp_.path() / "tmp" / "nsys-report-e4f8.nsys-rep";
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  write_file(left, std::string("capture --output=") + (dir_ / ".w_%p.nsel7-0a1b2c3d").string() +
                       " ... pid_\x01\x02_stdout");
  recorder.finish(0);
  const nsel::Manifest m = manifest_at(recorder.path());
  EXPECT_EQ(m.qdstrm, left.string()) << m.state << ": " << m.reason;
}

TEST_F(Recorder, ThePidUnknownAnyCaptureWithThisRunsOutputIsTaken) {
  nsel::ManifestRecorder recorder(sample_manifest(), output());
  const fs::path capture = temp_.path() / "tmp" / "nsys-report-1a2b.qdstrm";
  // nsys writes its capture seconds after the start; file times lag the clock by up to a tick.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  write_file(capture, std::string(300 * 1024, 'x') + " -o " + output() + " end");
  EXPECT_EQ(recorder.finish(0), "missing");
  EXPECT_EQ(recorder.manifest().qdstrm, capture.string());
  EXPECT_EQ(recorder.manifest().reason,
            "nsys wrote no report (exit status 0); the step window may never have been reached; "
            "nsys left the capture in " +
                capture.string() + ", which 'nsel recover' converts");
}

// Every write of the manifest under its final name is a rename of a whole file; nothing is left
// behind under a temporary name.
TEST_F(Recorder, TheFinalManifestIsOnlyEverReplacedByARename) {
  const int watch = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  ASSERT_GE(watch, 0);
  ASSERT_GE(::inotify_add_watch(watch, dir_.c_str(),
                                IN_CREATE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO | IN_DELETE),
            0);
  {
    nsel::ManifestRecorder recorder(sample_manifest(), output());
    write_file(dir_ / "w_77.nsys-rep", "report");
    EXPECT_EQ(recorder.finish(0), "complete");
  }
  std::vector<std::string> on_final;
  alignas(inotify_event) char buffer[1 << 16];
  for (ssize_t n; (n = ::read(watch, buffer, sizeof buffer)) > 0;) {
    for (ssize_t at = 0; at < n;) {
      const auto* event = reinterpret_cast<const inotify_event*>(buffer + at);
      at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
      if (event->len == 0 || std::string(event->name) != "w_77.nsel.json") continue;
      on_final.push_back((event->mask & IN_MOVED_TO) ? "moved-to" : "written");
    }
  }
  ::close(watch);
  // Claimed by the pending manifest's move, then replaced by the finished one.
  EXPECT_EQ(on_final, (std::vector<std::string>{"moved-to", "moved-to"}));
  EXPECT_EQ(names_in(dir_), (std::vector<std::string>{"w_77.nsel.json", "w_77.nsys-rep"}));
}

// The temporary name of the final manifest is known in advance: a link planted there must not
// have the manifest written wherever it points.
TEST_F(Recorder, ALinkPlantedAtTheManifestsTemporaryNameIsNotWrittenThrough) {
  const fs::path precious = temp_.path() / "precious";
  write_file(precious, "keep me");
  fs::create_symlink(precious, dir_ / (".w_77.nsel.json.tmp-" + std::to_string(::getpid())));
  nsel::ManifestRecorder recorder(sample_manifest(), output());
  write_file(dir_ / "w_77.nsys-rep", "report");
  ::testing::internal::CaptureStderr();
  recorder.finish(0);
  ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(read_file(precious), "keep me");
  EXPECT_FALSE(fs::is_symlink(dir_ / "w_77.nsel.json"));
}

// Quotes, backslashes, newlines, tabs, shell syntax and non-ASCII UTF-8 arrive exactly, in a
// manifest that stays valid JSON at the exact path.
TEST_F(Recorder, HostileValuesArriveLiterallyInTheManifest) {
  const std::string worker = "w'\"\\ $(touch x) `id`;|&\n\t caf\xc3\xa9 \xe2\x9c\x93";
  nsel::Manifest m = sample_manifest(worker);
  m.pattern = "*'\"*\n";
  m.command = {"nsys",   "profile",     "--",   "prog",         "a b",       "'q'",
               "\"dq\"", "$(rm -rf /)", "`id`", "line1\nline2", "tab\there", "back\\slash",
               ""};
  m.rank_variables = {{"RANK", "0\n1"}, {"SLURM_JOB_NAME", "job \"x\" 'y'"}};
  m.node = "node \"7\"";
  const fs::path folder = temp_.path() / "o'ut \"dq\" $(x)\ncaf\xc3\xa9";
  fs::create_directories(folder);
  nsel::ManifestRecorder recorder(m, (folder / "w_%p").string());
  write_file(folder / "w_90.nsys-rep", "report");
  EXPECT_EQ(recorder.finish(0), "complete");
  const nsel::Manifest read = manifest_at(folder / "w_90.nsel.json");
  EXPECT_EQ(read.worker, worker);
  EXPECT_EQ(read.pattern, m.pattern);
  EXPECT_EQ(read.command, m.command);
  EXPECT_EQ(read.rank_variables, m.rank_variables);
  EXPECT_EQ(read.node, m.node);
  EXPECT_EQ(read.report, (folder / "w_90.nsys-rep").string());
  EXPECT_EQ(read, recorder.manifest());
  EXPECT_EQ(names_in(folder), (std::vector<std::string>{"w_90.nsel.json", "w_90.nsys-rep"}));
}

// Bytes that are not UTF-8 cannot be JSON text: in a command word they become U+FFFD, but the
// report's path must still name the file on disk (nsel recover renames the report to it).
TEST_F(Recorder, ANonUtf8FolderNameIsKeptInTheManifestsReportPath) {
  nsel::Manifest m = sample_manifest();
  m.command = {"nsys", "profile", "prog", "\xff\xfe"};
  const fs::path folder = temp_.path() / "caf\xe9";
  fs::create_directories(folder);
  nsel::ManifestRecorder recorder(m, (folder / "w_%p").string());
  write_file(folder / "w_91.nsys-rep", "report");
  EXPECT_EQ(recorder.finish(0), "complete");
  const nsel::Manifest read = manifest_at(folder / "w_91.nsel.json");
  ASSERT_EQ(read.command.size(), 4u);
  EXPECT_EQ(read.command.back(), "\xef\xbf\xbd\xef\xbf\xbd");
  EXPECT_EQ(read.report, (folder / "w_91.nsys-rep").string());
}

TEST_F(Recorder, OneManifestPerWindowReplacesTheSessions) {
  nsel::ManifestRecorder recorder(sample_manifest(), output());
  write_file(dir_ / "w_77.nsys-rep", "session");
  ASSERT_EQ(recorder.finish(0), "complete");
  recorder.split_by_window({});  // nothing written per window: the session's manifest says so
  EXPECT_TRUE(fs::exists(dir_ / "w_77.nsel.json"));

  write_file(dir_ / "w_2:4_77.nsys-rep", "first");
  write_file(dir_ / "w_10:12_77.nsys-rep", "second");
  recorder.split_by_window({{nsel::StepWindow{2, 4}, dir_ / "w_2:4_77.nsys-rep"},
                            {nsel::StepWindow{10, 12}, dir_ / "w_10:12_77.nsys-rep"}});
  EXPECT_EQ(names_in(dir_),
            (std::vector<std::string>{"w_10:12_77.nsel.json", "w_10:12_77.nsys-rep",
                                      "w_2:4_77.nsel.json", "w_2:4_77.nsys-rep", "w_77.nsys-rep"}));
  for (const auto& [text, start, stop] : std::vector<std::tuple<std::string, long long, long long>>{
           {"2:4", 2, 4}, {"10:12", 10, 12}}) {
    const nsel::Manifest m = manifest_at(dir_ / ("w_" + text + "_77.nsel.json"));
    EXPECT_EQ(m.step_window, text);
    EXPECT_EQ(m.step_start, start);
    EXPECT_EQ(m.step_stop, stop);
    EXPECT_EQ(m.report, (dir_ / ("w_" + text + "_77.nsys-rep")).string());
    EXPECT_EQ(m.state, "complete");
    EXPECT_EQ(m.pid, 77);
    EXPECT_EQ(m.exit_status, 0);
  }
}

// ---- folders that refuse the manifest (in a forked child) -------------------------------------

// The report folder turns read-only while nsys runs. As root, permission bits stop nothing: the
// recorder runs as nobody (65534), owner of the folder.
TEST_F(Recorder, AFolderTurnedReadOnlyIsNotWritableAndTheManifestStaysWhole) {
  if (::geteuid() == 0) {
    ASSERT_EQ(::chown(temp_.path().c_str(), 65534, 65534), 0);
    ASSERT_EQ(::chown(dir_.c_str(), 65534, 65534), 0);
  }
  const auto [code, text] = in_child(
      [] {
        if (::geteuid() == 0 &&
            (::setgroups(0, nullptr) != 0 || ::setresgid(65534, 65534, 65534) != 0 ||
             ::setresuid(65534, 65534, 65534) != 0)) {
          ::_exit(kCannotBecomeNobody);
        }
      },
      [&] {
        ::testing::internal::CaptureStderr();
        nsel::ManifestRecorder recorder(sample_manifest(), output());
        ::chmod(dir_.c_str(), 0555);
        const std::string state = recorder.finish(0);
        ::testing::internal::GetCapturedStderr();
        std::string on_disk;
        try {
          on_disk = manifest_at(recorder.path()).state;
        } catch (const std::exception& e) {
          on_disk = e.what();
        }
        return state + "\n" + recorder.manifest().reason + "\non disk: " + on_disk;
      });
  if (code == kCannotBecomeNobody) {
    GTEST_SKIP() << "running as root, and cannot become nobody (65534) here, so a read-only "
                    "folder would not refuse the report";
  }
  ASSERT_EQ(code, 0) << text;
  EXPECT_EQ(text,
            "not_writable\nnsys could not write w_0.nsys-rep: its folder is not writable "
            "(Permission denied)\non disk: running");
}

// A 64 KiB tmpfs as the report folder, filled up while nsys runs.
TEST_F(Recorder, AFullFolderIsDiskFullAndTheManifestStaysWhole) {
  const auto [code, text] = in_child(
      [this] {
        if (::unshare(CLONE_NEWNS) != 0 ||
            ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
            ::mount("tmpfs", dir_.c_str(), "tmpfs", 0, "size=64k") != 0) {
          ::_exit(kCannotMount);
        }
      },
      [&] {
        ::testing::internal::CaptureStderr();
        nsel::ManifestRecorder recorder(sample_manifest(), output());
        {
          std::ofstream fill(dir_ / "filler", std::ios::binary);
          const std::string block(4096, 'x');
          for (int i = 0; i < 64 && fill; ++i) fill.write(block.data(), block.size());
        }
        const std::string state = recorder.finish(0);
        ::testing::internal::GetCapturedStderr();
        return state + "\n" + recorder.manifest().reason +
               "\non disk: " + manifest_at(recorder.path()).state;
      });
  if (code == kCannotMount) {
    GTEST_SKIP() << "cannot mount a small tmpfs here (needs root and mount namespaces), so a "
                    "full disk cannot be made";
  }
  ASSERT_EQ(code, 0) << text;
  EXPECT_EQ(text,
            "disk_full\nnsys could not write w_0.nsys-rep: its folder is full (no free space)\non "
            "disk: running");
}

// With a plan, the recorder knows about how big the report will be: a folder with less free space
// than that is full, before the last block is gone.
TEST_F(Recorder, AFolderWithLessRoomThanTheReportNeedsIsDiskFull) {
  nsel::WorkerPlan plan;
  plan.worker = "w";
  plan.profile = true;
  plan.window = nsel::StepWindow{2, 40};
  plan.windows = {*plan.window};
  plan.options.set("t", "cuda,nvtx");
  plan.options.set("o", output());
  const auto [code, text] = in_child(
      [this] {
        if (::unshare(CLONE_NEWNS) != 0 ||
            ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
            ::mount("tmpfs", dir_.c_str(), "tmpfs", 0, "size=256k") != 0) {
          ::_exit(kCannotMount);
        }
      },
      [&] {
        nsel::ManifestRecorder recorder(plan);
        return recorder.finish(1) + "\n" + recorder.manifest().reason;
      });
  if (code == kCannotMount) {
    GTEST_SKIP() << "cannot mount a small tmpfs here (needs root and mount namespaces), so a "
                    "full disk cannot be made";
  }
  ASSERT_EQ(code, 0) << text;
  EXPECT_TRUE(std::regex_match(
      text, std::regex("disk_full\nnsys could not write w_0\\.nsys-rep: its folder is full "
                       "\\([0-9.]+ KiB free, the report needs about [0-9.]+ MiB\\)")))
      << text;
}

TEST_F(Recorder, APlansManifestDescribesThisProcessAndThePlansIdentity) {
  const ScopedEnv rank("RANK", "5");
  nsel::WorkerPlan plan;
  plan.worker = "policy";
  plan.pattern = "pol*";
  plan.window = nsel::StepWindow{2, 4};
  plan.windows = {*plan.window};
  plan.command = {"nsys", "profile", "prog", "--flag"};
  plan.identity.rank.value = 3;  // --rank given: it wins over RANK
  plan.identity.local_rank.value = 1;
  plan.identity.node = {"n7", "--node", ""};
  plan.options.set("o", output());
  nsel::ManifestRecorder recorder(plan);
  const nsel::Manifest m = manifest_at(recorder.path());
  EXPECT_EQ(m.worker, "policy");
  EXPECT_EQ(m.pattern, "pol*");
  EXPECT_EQ(m.step_window, "2:4");
  EXPECT_EQ(m.step_start, 2);
  EXPECT_EQ(m.step_stop, 4);
  EXPECT_EQ(m.command, plan.command);
  EXPECT_EQ(m.nsel_pid, ::getpid());
  EXPECT_EQ(m.host, nsel::host_name());
  EXPECT_EQ(m.rank, 3);
  EXPECT_EQ(m.local_rank, 1);
  EXPECT_EQ(m.node, "n7");
  EXPECT_EQ(m.rank_variables.at("RANK"), "5");
  for (const auto& [name, value] : m.rank_variables) {
    EXPECT_EQ(std::getenv(name.c_str()), value) << name;
  }
  EXPECT_TRUE(std::regex_match(m.start_time,
                               std::regex("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z")))
      << m.start_time;
  EXPECT_EQ(m.report, (dir_ / "w_0.nsys-rep").string());
  EXPECT_EQ(m.state, "running");

  // A node nobody gave (the host name) is left for the readers to tell.
  plan.identity.node = {"this-host", std::string(nsel::kHostNameSource), ""};
  nsel::ManifestRecorder other(plan);
  EXPECT_EQ(other.manifest().node, std::nullopt);
}

TEST(ReportPath, FollowsNsysExpansionOfEveryCode) {
  const ScopedEnv variable("NSEL_TEST_RUN", "run-7");
  ::unsetenv("NSEL_TEST_UNSET");
  EXPECT_EQ(nsel::expand_report_path("r_%h_%p", 9, "/w"),
            "/w/r_" + nsel::host_name() + "_9.nsys-rep");
  EXPECT_EQ(nsel::expand_report_path("r_%q{NSEL_TEST_RUN}_%p", 9, "/w"), "/w/r_run-7_9.nsys-rep");
  EXPECT_EQ(nsel::expand_report_path("r_%q{NSEL_TEST_UNSET}_%p", 9, "/w"), "/w/r__9.nsys-rep");
  // What nsys does not expand stays as written.
  EXPECT_EQ(nsel::expand_report_path("r_%q{open", 9, "/w"), "/w/r_%q{open.nsys-rep");
  EXPECT_EQ(nsel::expand_report_path("r_%x_%", 9, "/w"), "/w/r_%x_%.nsys-rep");
  EXPECT_EQ(nsel::expand_report_path("r_%%p", 9, "/w"), "/w/r_%p.nsys-rep");
  // Relative to the working folder, normalised; the suffix is never doubled.
  EXPECT_EQ(nsel::expand_report_path("a/../b/./r_%p.nsys-rep", 9, "/w"), "/w/b/r_9.nsys-rep");
  EXPECT_EQ(nsel::expand_report_path("/abs/r", 9, "/w"), "/abs/r.nsys-rep");
}

TEST(LongestFileName, IsTheLongestNameNselOrNsysMakesForThePlan) {
  nsel::WorkerPlan plan;
  plan.worker = "w";
  // Without 'o': the pending manifest's temporary name is the longest.
  EXPECT_EQ(nsel::longest_file_name(plan), "..w-pending-4194304-00000000.nsel.json.tmp-4194304");
  // A long output name: nsel recover's work file beside the report.
  plan.options.set("o", "a_very_long_output_name_%p");
  EXPECT_EQ(nsel::longest_file_name(plan),
            ".a_very_long_output_name_4194304.nsel-recover-4194304.nsys-rep");
  // A report renamed at the end may take its 99th variant.
  plan.options.set("o", ".w_%p.nselX");
  plan.report_output = "a_very_long_output_name_%p";
  EXPECT_EQ(nsel::longest_file_name(plan),
            ".a_very_long_output_name_4194304-99.nsel-recover-4194304.nsys-rep");
}
