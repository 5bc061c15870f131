// nsel sync's settings: flags first, then the SLURM job script's variables; every bad value is
// one line naming the flag or variable, quoting the value and giving the expected form.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "nsel/core/error.hpp"
#include "nsel/sync/mirror.hpp"
#include "sync_test_support.hpp"

namespace {

namespace fs = std::filesystem;
using nsel::sync_test::env_of;
using nsel::sync_test::TempDir;
using std::chrono::milliseconds;

// A request that names its own destination, so that only the field under test can fail.
nsel::SyncRequest with_dest() {
  nsel::SyncRequest request;
  request.source = "/nonexistent-ray-source";
  request.dest = "/nonexistent-log-dir";
  return request;
}

// The message of the nsel::Error that resolving throws (exit code 2), or "accepted".
std::string refusal(const nsel::SyncRequest& request,
                    const std::map<std::string, std::string>& env = {}) {
  try {
    nsel::resolve_sync_settings(request, env_of(env));
  } catch (const nsel::Error& e) {
    if (e.exit_code() != 2) return "exit code " + std::to_string(e.exit_code()) + ": " + e.what();
    return e.what();
  }
  return "accepted";
}

const std::string kEveryForm = "; expected seconds between passes, e.g. '30' or '0.5'";

}  // namespace

TEST(SyncSettings, FlagsGiveEverythingAndWinOverTheEnvironment) {
  nsel::SyncRequest request = with_dest();
  request.every = "0.5";
  request.full_every = "120";
  request.max_watches = "10000";
  request.node = "10.0.0.2";
  // Variables that would each fail, or say otherwise, are not read when a flag is given.
  const auto settings =
      nsel::resolve_sync_settings(request, env_of({{"RAY_LOG_SYNC_FREQUENCY", "soon"},
                                                   {"BASE_LOG_DIR", "/elsewhere"},
                                                   {"SLURM_JOB_ID", "9"},
                                                   {"SLURM_NODEID", "0"}}));
  EXPECT_EQ(settings.source, "/nonexistent-ray-source");
  EXPECT_EQ(settings.log_dir, "/nonexistent-log-dir");
  EXPECT_EQ(settings.every, milliseconds(500));
  EXPECT_EQ(settings.full_every, milliseconds(120000));
  EXPECT_EQ(settings.max_watches, std::optional<std::size_t>(10000));
  EXPECT_EQ(settings.node, "10.0.0.2");
}

TEST(SyncSettings, WithNothingGivenItIsOnePassFromTmpRayAsTheHead) {
  nsel::SyncRequest request;
  request.dest = "/nonexistent-log-dir";
  const auto settings = nsel::resolve_sync_settings(request, env_of({}));
  EXPECT_EQ(settings.source, "/tmp/ray");
  EXPECT_EQ(settings.every, milliseconds(0));
  EXPECT_EQ(settings.full_every, milliseconds(600000));
  EXPECT_EQ(settings.max_watches, std::nullopt);
  EXPECT_EQ(settings.node, "");
}

TEST(SyncSettings, TheDestinationAndPeriodComeFromTheSlurmJobScript) {
  nsel::SyncRequest request;
  request.source = "/nonexistent-ray-source";
  const auto settings =
      nsel::resolve_sync_settings(request, env_of({{"BASE_LOG_DIR", "/logs"},
                                                   {"SLURM_JOB_ID", "123"},
                                                   {"SLURM_RESTART_COUNT", "2"},
                                                   {"RAY_LOG_SYNC_FREQUENCY", "30"}}));
  EXPECT_EQ(settings.log_dir, "/logs/123-restart2-logs");
  EXPECT_EQ(settings.every, milliseconds(30000));
}

TEST(SyncSettings, ARestartCountThatIsNotAPositiveNumberKeepsTheFirstRunsFolder) {
  for (const char* count : {"", "0", "-1", "x", " 2", "2x"}) {
    EXPECT_EQ(nsel::slurm_log_dir("/logs", "77", count), "/logs/77-logs") << count;
  }
  EXPECT_EQ(nsel::slurm_log_dir("/logs", "77", "01"), "/logs/77-restart1-logs");
  EXPECT_EQ(nsel::slurm_log_dir("/logs/", "77", "12"), "/logs/77-restart12-logs");
}

TEST(SyncSettings, NoDestinationNamesTheMissingVariable) {
  nsel::SyncRequest request;
  request.source = "/nonexistent-ray-source";
  const std::string tail =
      " is not set; expected --dest LOG_DIR, or BASE_LOG_DIR and SLURM_JOB_ID (LOG_DIR is then "
      "$BASE_LOG_DIR/$SLURM_JOB_ID-logs)";
  EXPECT_EQ(refusal(request, {}), "no destination: --dest is not given and BASE_LOG_DIR" + tail);
  EXPECT_EQ(refusal(request, {{"BASE_LOG_DIR", "/logs"}}),
            "no destination: --dest is not given and SLURM_JOB_ID" + tail);
  // A variable set to nothing is as good as unset (a job script's `export X=`).
  EXPECT_EQ(refusal(request, {{"BASE_LOG_DIR", "/logs"}, {"SLURM_JOB_ID", ""}}),
            "no destination: --dest is not given and SLURM_JOB_ID" + tail);
  EXPECT_EQ(refusal(request, {{"BASE_LOG_DIR", ""}, {"SLURM_JOB_ID", "5"}}),
            "no destination: --dest is not given and BASE_LOG_DIR" + tail);
}

TEST(SyncSettings, EmptyFolderFlagsAreRefused) {
  nsel::SyncRequest request = with_dest();
  request.source = "";
  EXPECT_EQ(refusal(request), "--src='': empty; expected the Ray temp folder, e.g. /tmp/ray");
  request = with_dest();
  request.dest = "";
  EXPECT_EQ(refusal(request), "--dest='': empty; expected the job's log folder (LOG_DIR)");
}

TEST(SyncSettings, ABadPeriodIsOneLineNamingItsSource) {
  // Not numbers, not positive, past a year, or with anything around the number.
  const std::vector<std::string> bad = {"soon", "0",  "-5", "-0",   "1e9", "nan", "inf", " 5",
                                        "5 ",   "5s", "+5", "0x10", "1,5", "",    "\n5"};
  for (const std::string& value : bad) {
    nsel::SyncRequest request = with_dest();
    request.every = value;
    EXPECT_EQ(refusal(request),
              "--every=" + nsel::quote(value) + ": not a positive number of seconds" + kEveryForm)
        << value;
    if (value.empty()) continue;  // an empty variable is unset
    EXPECT_EQ(refusal(with_dest(), {{"RAY_LOG_SYNC_FREQUENCY", value}}),
              "RAY_LOG_SYNC_FREQUENCY=" + nsel::quote(value) +
                  ": not a positive number of seconds" + kEveryForm)
        << value;
  }
  // The value is quoted so that the message stays on one line.
  nsel::SyncRequest request = with_dest();
  request.every = "1\n2'";
  EXPECT_EQ(refusal(request), "--every='1\\n2\\'': not a positive number of seconds" + kEveryForm);
}

TEST(SyncSettings, PeriodsTakeFractionsAndExponentsAndNeverRoundToZero) {
  const std::vector<std::pair<std::string, milliseconds>> good = {
      {"30", milliseconds(30000)},    {"0.5", milliseconds(500)},
      {"1e3", milliseconds(1000000)}, {"0.0004", milliseconds(1)},
      {"0.0015", milliseconds(2)},    {"31536000", milliseconds(31536000000)}};
  for (const auto& [text, expected] : good) {
    nsel::SyncRequest request = with_dest();
    request.every = text;
    EXPECT_EQ(nsel::resolve_sync_settings(request, env_of({})).every, expected) << text;
  }
}

TEST(SyncSettings, FullEveryTakesZeroAndRefusesTheRest) {
  nsel::SyncRequest request = with_dest();
  request.every = "1";
  request.full_every = "0";
  EXPECT_EQ(nsel::resolve_sync_settings(request, env_of({})).full_every, milliseconds(0));
  request.full_every = "2.5";
  EXPECT_EQ(nsel::resolve_sync_settings(request, env_of({})).full_every, milliseconds(2500));
  for (const std::string value : {"", "-1", "ten", "nan", "1e12", "60s"}) {
    request.full_every = value;
    EXPECT_EQ(refusal(request),
              "--full-every=" + nsel::quote(value) +
                  ": not a number of seconds; expected the most seconds between passes that look "
                  "at every file, e.g. '600'; '0': every pass does")
        << value;
  }
}

// One pass looks at every file: --full-every means something only between passes.
TEST(SyncSettings, FullEveryWithoutEveryIsRefused) {
  nsel::SyncRequest request = with_dest();
  request.full_every = "60";
  EXPECT_EQ(refusal(request),
            "--full-every='60': given without --every (or RAY_LOG_SYNC_FREQUENCY): a single pass "
            "looks at every file anyway; expected --full-every together with --every SECONDS");
  EXPECT_EQ(
      nsel::resolve_sync_settings(request, env_of({{"RAY_LOG_SYNC_FREQUENCY", "5"}})).full_every,
      milliseconds(60000));
}

// A restart count that is not a whole number is refused, never read as the first run's folder.
TEST(SyncSettings, ARestartCountThatIsNotAWholeNumberIsRefused) {
  nsel::SyncRequest request;
  for (const std::string count : {"abc", "-1", " 2", "2x", "1.5"}) {
    EXPECT_EQ(refusal(request, {{"BASE_LOG_DIR", "/logs"},
                                {"SLURM_JOB_ID", "123"},
                                {"SLURM_RESTART_COUNT", count}}),
              "SLURM_RESTART_COUNT=" + nsel::quote(count) +
                  ": not a whole number; expected the count of restarts SLURM sets, e.g. '1' "
                  "(LOG_DIR is then $BASE_LOG_DIR/$SLURM_JOB_ID-restart1-logs)");
  }
  EXPECT_EQ(nsel::resolve_sync_settings(request, env_of({{"BASE_LOG_DIR", "/logs"},
                                                         {"SLURM_JOB_ID", "123"},
                                                         {"SLURM_RESTART_COUNT", "0"}}))
                .log_dir,
            "/logs/123-logs");
}

TEST(SyncSettings, MaxWatchesIsAWholeNumber) {
  nsel::SyncRequest request = with_dest();
  request.max_watches = "0";
  EXPECT_EQ(nsel::resolve_sync_settings(request, env_of({})).max_watches,
            std::optional<std::size_t>(0));
  for (const std::string value : {"", "-1", "1.5", "many", " 3", "99999999999999999999999"}) {
    request.max_watches = value;
    EXPECT_EQ(refusal(request), "--max-watches=" + nsel::quote(value) +
                                    ": not a whole number; expected the most folders to watch for "
                                    "changes, e.g. '10000'; '0': none")
        << value;
  }
}

TEST(SyncSettings, ANodeNameMustBeUsableAsAFolderName) {
  for (const std::string value : {"", ".", "..", "a/b", "/abs", "session_2026"}) {
    nsel::SyncRequest request = with_dest();
    request.node = value;
    EXPECT_EQ(refusal(request), "--node=" + nsel::quote(value) +
                                    ": not usable as a folder name; expected the node's host name "
                                    "or IP, without '/'")
        << value;
  }
  nsel::SyncRequest request = with_dest();
  request.node = "n1";
  request.head = true;
  EXPECT_EQ(refusal(request),
            "--node='n1': given together with --head; expected either --head (copies go to "
            "LOG_DIR/ray/<session>) or --node NAME");
}

TEST(SyncSettings, SlurmNodeZeroIsTheHeadAndOthersUseTheHostName) {
  char host[256] = {};
  ASSERT_EQ(::gethostname(host, sizeof host - 1), 0);
  nsel::SyncRequest request = with_dest();
  EXPECT_EQ(nsel::resolve_sync_settings(request, env_of({{"SLURM_NODEID", "0"}})).node, "");
  EXPECT_EQ(nsel::resolve_sync_settings(request, env_of({{"SLURM_NODEID", "3"}})).node, host);
  EXPECT_EQ(nsel::resolve_sync_settings(request, env_of({{"SLURM_NODEID", ""}})).node, "");
  // --head says so whatever SLURM numbers the node.
  request.head = true;
  EXPECT_EQ(nsel::resolve_sync_settings(request, env_of({{"SLURM_NODEID", "3"}})).node, "");
}

// The source holding the destination is found through the job script's variables too. The one
// line names BASE_LOG_DIR, so it must quote what BASE_LOG_DIR holds.
TEST(SyncSettings, ADestinationFromTheJobScriptInsideTheSourceIsRefusedQuotingTheVariable) {
  const TempDir temp;
  ASSERT_FALSE(temp.path().empty());
  const fs::path source = temp.path() / "ray";
  fs::create_directories(source);
  nsel::SyncRequest request;
  request.source = source.string();
  const std::string base = (source / "logs").string();
  const std::string said = refusal(request, {{"BASE_LOG_DIR", base}, {"SLURM_JOB_ID", "8"}});
  EXPECT_TRUE(said.starts_with("BASE_LOG_DIR='")) << said;
  EXPECT_NE(said.find(": inside the source folder '" + source.string() +
                      "', whose copies would then hold copies of themselves; expected a folder "
                      "outside it, e.g. on the shared file system"),
            std::string::npos)
      << said;
  EXPECT_TRUE(said.starts_with("BASE_LOG_DIR='" + base + "': ")) << said;
}
