// Finding, recovering and gathering reports, end to end: real nsys reports (made once per run
// of this binary and copied around), real Ray-style and SLURM-style trees, the real nsel binary.
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <thread>

#include "nsel/core/manifest.hpp"
#include "nsel/sync/mirror.hpp"
#include "nsel/sys/host.hpp"
#include "nsel/sys/process.hpp"
#include "support.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using nsel::test::make_temp_dir;
using nsel::test::run;
using nsel::test::slurp;
using nsel::test::spit;

namespace {

const std::string kNsel = NSEL_BINARY;
const std::string kWorker = NSEL_WORKER_BINARY;

std::string host_name() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return host;
}

// Copies `from` to `to` and dates it `age` ago (old files are finished files).
void place(const fs::path& from, const fs::path& to,
           std::chrono::seconds age = std::chrono::seconds(600)) {
  fs::create_directories(to.parent_path());
  fs::copy_file(from, to, fs::copy_options::overwrite_existing);
  fs::last_write_time(to, fs::file_time_type::clock::now() - age);
}

// What the tests share: one real report with its manifest from `nsel exec`, one manifest of a
// worker whose window never came, and one real .qdstrm from an nsys that has no importer.
struct RealFiles {
  fs::path dir;
  fs::path report;
  fs::path manifest;
  fs::path missing_manifest;
  fs::path qdstrm;
  std::string exec_err;
};

// nsys finds its importer beside itself; a copy of its folder without one leaves the .qdstrm,
// exactly as Debian's package does before the importer link is made.
fs::path nsys_without_importer(const fs::path& dir) {
  const char* path = std::getenv("PATH");
  const fs::path real = fs::canonical(nsel::resolve_program("nsys", path ? path : "", "nsys"));
  const fs::path target = dir / "nsys-no-importer" / "target-linux-x64";
  fs::create_directories(target);
  for (const auto& entry : fs::directory_iterator(real.parent_path())) {
    if (entry.path().filename() == "nsys") continue;
    fs::create_symlink(entry.path(), target / entry.path().filename());
  }
  std::error_code ec;
  fs::create_hard_link(real, target / "nsys", ec);
  if (ec) fs::copy_file(real, target / "nsys");
  return target / "nsys";
}

// Made by real nsys once for this build of nsel and kept in the build folder, so that the
// test processes CTest starts (one per test) share them; a lock keeps parallel runs apart.
RealFiles make_real_files(const fs::path& dir) {
  RealFiles f;
  f.dir = dir;
  const std::map<std::string, std::string> env = {{"NRL_NSYS_WORKER_PATTERNS", "*policy*"},
                                                  {"NRL_NSYS_PROFILE_STEP_RANGE", "2:4"},
                                                  {"RANK", "1"},
                                                  {"SLURM_PROCID", "1"},
                                                  {"SLURM_JOB_ID", "4242"}};
  const std::string stamp =
      std::to_string(fs::last_write_time(kNsel).time_since_epoch().count()) + "\n";
  if (slurp(dir / "made-for") != stamp) {
    for (const char* part : {"exec", "never", "left", "nsys-no-importer"})
      fs::remove_all(dir / part);
    const auto exec =
        run({kNsel, "exec", "--worker", "dtensor_policy_worker", "--output-dir",
             (dir / "exec").string(), "--", kWorker, "--steps", "4", "--work-ms", "30"},
            env);
    f.exec_err = exec.err;
    auto never = env;
    never["NRL_NSYS_PROFILE_STEP_RANGE"] = "50:60";
    run({kNsel, "exec", "--worker", "dtensor_policy_worker", "--output-dir",
         (dir / "never").string(), "--", kWorker, "--steps", "2", "--work-ms", "10"},
        never);
    const fs::path nsys = nsys_without_importer(dir);
    fs::create_directories(dir / "left");
    run({nsys.string(), "profile", "-t", "nvtx,osrt", "-s", "none", "--cpuctxsw=none", "-o",
         (dir / "left" / "leftover").string(), kWorker, "--steps", "3", "--work-ms", "20"},
        {});
    spit(dir / "made-for", stamp);
  }
  for (const auto& entry : fs::directory_iterator(dir / "exec")) {
    if (entry.path().extension() == ".nsys-rep") f.report = entry.path();
    if (entry.path().string().ends_with(".nsel.json")) f.manifest = entry.path();
  }
  for (const auto& entry : fs::directory_iterator(dir / "never")) {
    if (entry.path().string().ends_with(".nsel.json")) f.missing_manifest = entry.path();
  }
  f.qdstrm = dir / "left" / "leftover.qdstrm";
  return f;
}

const RealFiles& real_files() {
  static const RealFiles files = [] {
    const fs::path dir = NSEL_TEST_CACHE_DIR;
    fs::create_directories(dir);
    const int lock = ::open((dir / "lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    flock(lock, LOCK_EX);
    RealFiles f = make_real_files(dir);
    flock(lock, LOCK_UN);
    ::close(lock);
    return f;
  }();
  return files;
}

class Reports : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const RealFiles& f = real_files();
    ASSERT_TRUE(fs::is_regular_file(f.report)) << f.exec_err;
    ASSERT_TRUE(fs::is_regular_file(f.manifest)) << f.exec_err;
    ASSERT_TRUE(fs::is_regular_file(f.missing_manifest));
    ASSERT_TRUE(fs::is_regular_file(f.qdstrm));
  }
};

json ls_json(const std::vector<std::string>& roots) {
  std::vector<std::string> argv = {kNsel, "ls", "--json"};
  argv.insert(argv.end(), roots.begin(), roots.end());
  const auto r = run(argv, {});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(r.out);
}

// The listed report whose file is named `name`.
json listed(const json& ls, const std::string& name) {
  for (const json& report : ls["reports"]) {
    if (fs::path(report["path"].get<std::string>()).filename() == name) return report;
  }
  ADD_FAILURE() << name << " is not listed";
  return json::object();
}

long long pid_of_report(const fs::path& report) {
  const std::string stem = report.stem().string();
  return std::stoll(stem.substr(stem.rfind('_') + 1));
}

TEST_F(Reports, ExecWritesAManifestBesideTheReport) {
  const RealFiles& f = real_files();
  const nsel::Manifest m = nsel::parse_manifest(slurp(f.manifest), f.manifest.string());
  EXPECT_EQ(f.manifest, nsel::manifest_path_for(f.report));
  EXPECT_EQ(m.worker, "dtensor_policy_worker");
  EXPECT_EQ(m.pattern, "*policy*");
  EXPECT_EQ(m.step_window, "2:4");
  EXPECT_EQ(m.step_start, 2);
  EXPECT_EQ(m.step_stop, 4);
  EXPECT_EQ(m.pid, pid_of_report(f.report));  // the %p of the report's name
  EXPECT_EQ(m.host, host_name());
  EXPECT_FALSE(m.node_ip.empty());
  EXPECT_EQ(m.rank_variables.at("RANK"), "1");
  EXPECT_EQ(m.rank_variables.at("SLURM_PROCID"), "1");
  EXPECT_EQ(m.rank_variables.at("SLURM_JOB_ID"), "4242");
  EXPECT_EQ(m.rank_variables.count("OMPI_COMM_WORLD_RANK"), 0u);
  ASSERT_FALSE(m.command.empty());
  EXPECT_EQ(fs::path(m.command[0]).filename(), "nsys");
  EXPECT_EQ(m.command.back(), "30");
  EXPECT_EQ(fs::path(m.report), f.report);
  EXPECT_EQ(m.state, "complete");
  EXPECT_EQ(m.exit_status, 0);
  ASSERT_TRUE(m.end_time.has_value());
  EXPECT_LT(m.start_time, *m.end_time);
  // Nothing else is left beside them (no pending manifest, no temporary file).
  EXPECT_EQ(nsel::test::files_in(f.report.parent_path()).size(), 2u);
}

// `nsel report` takes who a process was from the manifest `nsel exec` wrote: here the report's
// own name says nothing, so worker, PID, window, node and rank all come from "<stem>.nsel.json".
TEST_F(Reports, ReportReadsIdentityFromTheManifest) {
  const RealFiles& f = real_files();
  const fs::path root = make_temp_dir("report-identity");
  place(f.report, root / "profile.nsys-rep");
  place(f.manifest, root / "profile.nsel.json");
  const auto r = run({kNsel, "report", "--json", "-q", root.string()}, {});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json report = json::parse(r.out);
  ASSERT_EQ(report["processes"].size(), 1u) << r.out;  // the manifest is not a second report
  const json& process = report["processes"][0];
  EXPECT_EQ(process["worker"], "dtensor_policy_worker");
  EXPECT_EQ(process["pid"], pid_of_report(f.report));
  EXPECT_EQ(process["step_range"], "2:4");
  EXPECT_EQ(process["node"], host_name());
  EXPECT_EQ(process["rank"], 1);  // RANK=1 in nsel exec's environment
  fs::remove_all(root);
}

TEST_F(Reports, ManifestOfAWindowNeverReachedSaysMissing) {
  const RealFiles& f = real_files();
  const nsel::Manifest m =
      nsel::parse_manifest(slurp(f.missing_manifest), f.missing_manifest.string());
  EXPECT_EQ(m.state, "missing");
  EXPECT_EQ(m.exit_status, 0);
  EXPECT_NE(m.reason.find("nsys wrote no report"), std::string::npos) << m.reason;
  EXPECT_FALSE(fs::exists(m.report));
  EXPECT_EQ(nsel::test::files_in(f.missing_manifest.parent_path()).size(), 1u);
}

TEST_F(Reports, RayTreeShowsEveryStateAndCountsSessionLatestOnce) {
  const RealFiles& f = real_files();
  const fs::path root = make_temp_dir("ray-tree");
  const std::string older = "session_2026-01-01_10-00-00_000001_100";
  const std::string newer = "session_2026-01-02_10-00-00_000001_200";
  const fs::path a = root / older / "logs" / "nsight";
  const fs::path b = root / newer / "logs" / "nsight";
  fs::create_directories(b);
  fs::create_directory_symlink(older, root / "session_latest");  // stale: newer exists

  place(f.report, a / f.report.filename());
  place(f.manifest, a / f.manifest.filename());
  // vLLM under model parallelism: the outer worker's report holds nothing, the inner ones do.
  place(f.report, a / "vllm_generation_worker_2:4_501.nsys-rep");
  place(f.report, a / "worker_process_601.nsys-rep");
  place(f.report, a / "worker_process_602.nsys-rep");
  place(f.qdstrm, a / "megatron_policy_worker_2:4_700.qdstrm");

  place(f.report, b / "dtensor_policy_worker_2:4_800.nsys-rep", std::chrono::seconds(0));
  place(f.qdstrm, b / "dtensor_policy_worker_2:4_801.qdstrm", std::chrono::seconds(0));
  spit(b / "sglang_generation_worker_2:4_900.nsys-rep", "");
  fs::last_write_time(b / "sglang_generation_worker_2:4_900.nsys-rep",
                      fs::file_time_type::clock::now() - std::chrono::minutes(10));
  place(f.missing_manifest, b / f.missing_manifest.filename());
  // A worker still running under this very test, and one whose nsel was killed.
  nsel::Manifest running = nsel::parse_manifest(slurp(f.manifest), "m");
  running.state = "running";
  running.end_time.reset();
  running.exit_status.reset();
  running.nsel_pid = getpid();
  running.pid = getpid();
  running.report =
      (b / ("dtensor_policy_worker_2:4_" + std::to_string(getpid()) + ".nsys-rep")).string();
  spit(nsel::manifest_path_for(running.report), nsel::serialize_manifest(running));
  const pid_t gone = fork();
  if (gone == 0) _exit(0);
  waitpid(gone, nullptr, 0);
  nsel::Manifest killed = running;
  killed.nsel_pid = gone;
  killed.pid = gone;
  killed.report =
      (b / ("dtensor_policy_worker_2:4_" + std::to_string(gone) + ".nsys-rep")).string();
  spit(nsel::manifest_path_for(killed.report), nsel::serialize_manifest(killed));

  const json ls = ls_json({root.string()});
  EXPECT_EQ(ls["nsel_ls"], 1);
  EXPECT_EQ(ls["sessions"], 2);
  ASSERT_EQ(ls["reports"].size(), 11u) << ls.dump(2);
  const json complete = listed(ls, f.report.filename().string());
  EXPECT_EQ(complete["state"], "complete");
  EXPECT_EQ(complete["worker"], "dtensor_policy_worker");
  EXPECT_EQ(complete["window"], "2:4");
  EXPECT_EQ(complete["pid"], pid_of_report(f.report));
  EXPECT_EQ(complete["node"], host_name());  // from the manifest
  EXPECT_EQ(complete["session"], older);
  EXPECT_EQ(complete["bytes"], fs::file_size(f.report));
  EXPECT_EQ(complete["manifest"], (a / f.manifest.filename()).string());

  const json vllm = listed(ls, "vllm_generation_worker_2:4_501.nsys-rep");
  EXPECT_EQ(vllm["state"], "empty");
  EXPECT_EQ(vllm["reason"],
            "vLLM model parallelism: the profile is in worker_process_601, worker_process_602");
  EXPECT_EQ(listed(ls, "worker_process_601.nsys-rep")["state"], "complete");
  EXPECT_EQ(listed(ls, "worker_process_601.nsys-rep")["worker"], "worker_process");
  EXPECT_TRUE(listed(ls, "worker_process_601.nsys-rep")["window"].is_null());
  EXPECT_EQ(listed(ls, "megatron_policy_worker_2:4_700.qdstrm")["state"], "qdstrm");
  EXPECT_EQ(listed(ls, "dtensor_policy_worker_2:4_800.nsys-rep")["state"], "writing");
  EXPECT_EQ(listed(ls, "dtensor_policy_worker_2:4_801.qdstrm")["state"], "writing");
  EXPECT_EQ(listed(ls, "sglang_generation_worker_2:4_900.nsys-rep")["state"], "empty");
  EXPECT_EQ(listed(ls, "sglang_generation_worker_2:4_900.nsys-rep")["reason"],
            "0 bytes: too small to hold a profile");
  const nsel::Manifest never = nsel::parse_manifest(slurp(f.missing_manifest), "m");
  EXPECT_EQ(listed(ls, fs::path(never.report).filename().string())["state"], "missing");
  const json alive = listed(ls, fs::path(running.report).filename().string());
  EXPECT_EQ(alive["state"], "running");
  EXPECT_EQ(alive["bytes"], 0);
  const json dead = listed(ls, fs::path(killed.report).filename().string());
  EXPECT_EQ(dead["state"], "missing");
  EXPECT_NE(dead["reason"].get<std::string>().find("killed"), std::string::npos);
  EXPECT_EQ(ls["counts"]["complete"], 3);
  EXPECT_EQ(ls["counts"]["empty"], 2);
  EXPECT_EQ(ls["counts"]["writing"], 2);
  EXPECT_EQ(ls["counts"]["qdstrm"], 1);
  EXPECT_EQ(ls["counts"]["running"], 1);
  EXPECT_EQ(ls["counts"]["missing"], 2);

  ASSERT_EQ(ls["notes"].size(), 1u);
  EXPECT_EQ(ls["notes"][0]["kind"], "stale_session_latest");
  EXPECT_EQ(ls["notes"][0]["message"], "session_latest points to " + older +
                                           ", not to the newest session " + newer +
                                           "; both were searched");

  // The human table groups by session and says the same.
  const auto table = run({kNsel, "ls", root.string()}, {});
  EXPECT_EQ(table.exit_code, 0);
  EXPECT_NE(table.out.find("  note: session_latest points to " + older), std::string::npos);
  EXPECT_NE(table.out.find("node " + host_name() + "  " + older), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("11 report(s) in 2 session(s): 3 complete, 2 empty, 2 writing, 1 "
                           "qdstrm, 1 running, 2 missing"),
            std::string::npos)
      << table.out;
  fs::remove_all(root);
}

TEST_F(Reports, SessionLatestAsACopiedFolderIsCountedOnce) {
  const RealFiles& f = real_files();
  const fs::path root = make_temp_dir("copied-latest");
  const std::string session = "session_2026-01-01_10-00-00_000001_100";
  place(f.report, root / session / "logs" / "nsight" / f.report.filename());
  place(f.report, root / "session_latest" / "logs" / "nsight" / f.report.filename());
  const json ls = ls_json({root.string()});
  ASSERT_EQ(ls["reports"].size(), 1u) << ls.dump(2);
  EXPECT_EQ(ls["reports"][0]["session"], session);
  ASSERT_EQ(ls["notes"].size(), 1u);
  EXPECT_EQ(ls["notes"][0]["kind"], "copied_session_latest");
  fs::remove_all(root);
}

TEST_F(Reports, SlurmTreesOfTwoNodesAsNselSyncWritesThem) {
  const RealFiles& f = real_files();
  const fs::path work = make_temp_dir("slurm-tree");
  const std::string head_session = "session_2026-03-01_08-00-00_000001_11";
  const std::string other_session = "session_2026-03-01_08-00-01_000001_22";
  // Two nodes' /tmp/ray, as Ray leaves them.
  const fs::path head_nsight = work / "head-ray" / head_session / "logs" / "nsight";
  place(f.report, head_nsight / f.report.filename());
  place(f.manifest, head_nsight / f.manifest.filename());
  spit(work / "head-ray" / head_session / "logs" / "raylet.out", "raylet log\n");
  fs::create_directory_symlink(head_session, work / "head-ray" / "session_latest");
  const fs::path other_nsight = work / "other-ray" / other_session / "logs" / "nsight";
  place(f.report, other_nsight / "dtensor_policy_worker_2:4_31337.nsys-rep");
  place(f.qdstrm, other_nsight / "dtensor_policy_worker_2:4_31338.qdstrm");

  // The job script's settings: BASE_LOG_DIR and SLURM_JOB_ID give LOG_DIR.
  const std::map<std::string, std::string> env = {{"BASE_LOG_DIR", (work / "logs").string()},
                                                  {"SLURM_JOB_ID", "777"}};
  auto head = env;
  head["SLURM_NODEID"] = "0";
  const auto synced_head =
      run({kNsel, "sync", "--quiet", "--src", (work / "head-ray").string()}, head);
  ASSERT_EQ(synced_head.exit_code, 0) << synced_head.err;
  const auto synced_other = run(
      {kNsel, "sync", "--quiet", "--src", (work / "other-ray").string(), "--node", "node2"}, env);
  ASSERT_EQ(synced_other.exit_code, 0) << synced_other.err;
  const fs::path log_dir = work / "logs" / "777-logs";
  EXPECT_TRUE(fs::is_regular_file(log_dir / "ray" / head_session / "logs" / "raylet.out"));
  EXPECT_FALSE(fs::exists(log_dir / "ray" / "session_latest"));
  EXPECT_EQ(slurp(log_dir / "ray" / "node2" / other_session / "logs" / "nsight" /
                  "dtensor_policy_worker_2:4_31337.nsys-rep"),
            slurp(f.report));

  const json ls = ls_json({(work / "logs").string()});
  ASSERT_EQ(ls["reports"].size(), 3u) << ls.dump(2);
  EXPECT_EQ(ls["sessions"], 2);
  const json from_head = listed(ls, f.report.filename().string());
  EXPECT_EQ(from_head["job"], "777");
  EXPECT_EQ(from_head["node"], host_name());  // the head's manifest names its host
  EXPECT_EQ(from_head["session"], head_session);
  EXPECT_EQ(from_head["state"], "complete");
  const json from_other = listed(ls, "dtensor_policy_worker_2:4_31337.nsys-rep");
  EXPECT_EQ(from_other["job"], "777");
  EXPECT_EQ(from_other["node"], "node2");
  EXPECT_EQ(from_other["session"], other_session);
  EXPECT_EQ(from_other["pid"], 31337);
  // Without a manifest the rank is unknown; the keys are there all the same.
  EXPECT_TRUE(from_other["rank"].is_null());
  EXPECT_TRUE(from_other["local_rank"].is_null());
  EXPECT_EQ(listed(ls, "dtensor_policy_worker_2:4_31338.qdstrm")["state"], "qdstrm");
  // A root deep inside the tree still knows its job and node.
  const json node_only = ls_json({(log_dir / "ray" / "node2").string()});
  ASSERT_EQ(node_only["reports"].size(), 2u);
  EXPECT_EQ(node_only["reports"][0]["job"], "777");
  EXPECT_EQ(node_only["reports"][0]["node"], "node2");
  fs::remove_all(work);
}

TEST_F(Reports, LsRejectsAMissingRoot) {
  const auto r = run({kNsel, "ls", "/nonexistent/ray"}, {});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "nsel: error: ROOT='/nonexistent/ray': no such folder; expected a folder holding "
            "reports: a Ray temp folder such as /tmp/ray, a SLURM log folder, or any folder\n");
  EXPECT_EQ(r.out, "");
}

TEST_F(Reports, RecoverTurnsALeftOverQdstrmIntoARealReport) {
  const RealFiles& f = real_files();
  const fs::path root = make_temp_dir("recover");
  const fs::path nsight = root / "session_2026-01-01_10-00-00_000001_100" / "logs" / "nsight";
  const fs::path qdstrm = nsight / "dtensor_policy_worker_2:4_1234.qdstrm";
  place(f.qdstrm, qdstrm);
  const auto r = run({kNsel, "recover", root.string()}, {});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find(qdstrm.string() + ": converted to dtensor_policy_worker_2:4_1234.nsys-rep"),
            std::string::npos)
      << r.out;
  const fs::path report = nsight / "dtensor_policy_worker_2:4_1234.nsys-rep";
  EXPECT_FALSE(fs::exists(qdstrm));
  ASSERT_TRUE(fs::is_regular_file(report));
  EXPECT_EQ(nsel::test::files_in(nsight).size(), 1u);  // no temporary file left
  // A real report: nsys reads the steps the worker ran back out of it.
  EXPECT_EQ(nsel::test::exported_steps(report), (std::vector<long long>{1, 2, 3}));
  fs::remove(nsight / "dtensor_policy_worker_2:4_1234.test.sqlite");
  EXPECT_EQ(listed(ls_json({root.string()}), report.filename().string())["state"], "complete");
  // Nothing left to do the second time.
  const auto again = run({kNsel, "recover", root.string()}, {});
  EXPECT_EQ(again.exit_code, 0);
  EXPECT_EQ(again.out, "No left-over .qdstrm files.\n");
  fs::remove_all(root);
}

TEST_F(Reports, RecoverLeavesAnIncompleteQdstrmAsItWas) {
  const RealFiles& f = real_files();
  const fs::path root = make_temp_dir("recover-bad");
  const fs::path qdstrm = root / "dtensor_policy_worker_2:4_99.qdstrm";
  const std::string whole = slurp(f.qdstrm);
  spit(qdstrm, whole.substr(0, whole.size() / 3));  // as a killed session leaves it
  fs::last_write_time(qdstrm, fs::file_time_type::clock::now() - std::chrono::minutes(10));
  const auto r = run({kNsel, "recover", root.string()}, {});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find(qdstrm.string() + ": the importer failed (exit code "), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("0 converted, 1 left as they were"), std::string::npos) << r.out;
  EXPECT_EQ(nsel::test::files_in(root), std::vector<fs::path>{qdstrm});
  EXPECT_EQ(fs::file_size(qdstrm), whole.size() / 3);
  fs::remove_all(root);
}

// ---- nsel sync ----

struct Tree {
  fs::path src;
  fs::path log_dir;
  std::string session = "session_2026-02-01_09-00-00_000001_7";
  fs::path logs() const { return src / session / "logs"; }
  fs::path copy_of(const fs::path& source_file) const {
    return log_dir / "ray" / session / "logs" / fs::relative(source_file, logs());
  }
};

Tree small_tree(const std::string& label) {
  Tree t;
  const fs::path work = make_temp_dir(label);
  t.src = work / "ray";
  t.log_dir = work / "logs" / "1-logs";
  for (int i = 0; i < 20; ++i) {
    spit(t.logs() / ("worker-" + std::to_string(i) + ".out"), std::string(100 * i, 'x'));
  }
  place(real_files().report, t.logs() / "nsight" / real_files().report.filename());
  fs::create_directory_symlink(t.session, t.src / "session_latest");
  return t;
}

std::vector<fs::path> partial_files(const fs::path& dir) {
  std::vector<fs::path> found;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.path().string().ends_with(std::string(nsel::kPartialSuffix))) {
      found.push_back(entry.path());
    }
  }
  return found;
}

TEST_F(Reports, SyncCopiesOnlyWhatChangedAndNeverDeletes) {
  const Tree t = small_tree("sync");
  nsel::SyncSettings settings;
  settings.source = t.src;
  settings.log_dir = t.log_dir;
  nsel::PassStats first = nsel::sync_pass(settings);
  EXPECT_EQ(first.files, 21u);
  EXPECT_EQ(first.copied, 21u);
  EXPECT_EQ(first.failed, 0u);
  for (const auto& entry : fs::recursive_directory_iterator(t.logs())) {
    if (!entry.is_regular_file()) continue;
    const fs::path copy = t.copy_of(entry.path());
    EXPECT_EQ(slurp(copy), slurp(entry.path())) << copy;
    EXPECT_EQ(fs::last_write_time(copy), fs::last_write_time(entry.path())) << copy;
  }
  EXPECT_FALSE(fs::exists(t.log_dir / "ray" / "session_latest"));
  EXPECT_EQ(nsel::sync_pass(settings).copied, 0u);

  // A report still being written grows: it is copied again, as a new file renamed into place.
  const fs::path report = t.logs() / "nsight" / real_files().report.filename();
  const auto inode_before = [&] {
    struct stat st {};
    stat(t.copy_of(report).c_str(), &st);
    return st.st_ino;
  }();
  { std::ofstream(report, std::ios::app) << "more profile data"; }
  const nsel::PassStats grown = nsel::sync_pass(settings);
  EXPECT_EQ(grown.copied, 1u);
  EXPECT_EQ(slurp(t.copy_of(report)), slurp(report));
  struct stat after {};
  stat(t.copy_of(report).c_str(), &after);
  EXPECT_NE(after.st_ino, inode_before);  // replaced whole, never rewritten in place

  // Same size, new time: copied again too.
  fs::last_write_time(report, fs::last_write_time(report) + std::chrono::seconds(5));
  EXPECT_EQ(nsel::sync_pass(settings).copied, 1u);

  // A file removed at the source stays at the destination; a copy removed at the destination
  // comes back.
  fs::remove(t.logs() / "worker-3.out");
  fs::remove(t.copy_of(t.logs() / "worker-4.out"));
  const nsel::PassStats last = nsel::sync_pass(settings);
  EXPECT_EQ(last.copied, 1u);
  EXPECT_TRUE(fs::exists(t.copy_of(t.logs() / "worker-3.out")));
  EXPECT_TRUE(fs::exists(t.copy_of(t.logs() / "worker-4.out")));
  EXPECT_TRUE(partial_files(t.log_dir).empty());
  fs::remove_all(t.src.parent_path());
}

TEST_F(Reports, SyncNodesGoUnderTheirOwnFolder) {
  const Tree t = small_tree("sync-node");
  const auto r = run({kNsel, "sync", "--quiet", "--src", t.src.string(), "--dest",
                      t.log_dir.string(), "--node", "10.1.2.3"},
                     {});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(
      fs::is_regular_file(t.log_dir / "ray" / "10.1.2.3" / t.session / "logs" / "worker-1.out"));
  // Without --node or --head, a node other than SLURM's node 0 uses its host name.
  const auto by_host =
      run({kNsel, "sync", "--quiet", "--src", t.src.string(), "--dest", t.log_dir.string()},
          {{"SLURM_NODEID", "3"}});
  ASSERT_EQ(by_host.exit_code, 0) << by_host.err;
  EXPECT_TRUE(
      fs::is_regular_file(t.log_dir / "ray" / host_name() / t.session / "logs" / "worker-1.out"));
  fs::remove_all(t.src.parent_path());
}

pid_t start(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env) {
  const pid_t child = fork();
  if (child == 0) {
    for (const auto& [name, value] : env) setenv(name.c_str(), value.c_str(), 1);
    const int null = ::open("/dev/null", O_RDWR);
    dup2(null, 0);
    dup2(null, 1);
    dup2(null, 2);
    std::vector<char*> pointers;
    for (const std::string& word : argv) pointers.push_back(const_cast<char*>(word.c_str()));
    pointers.push_back(nullptr);
    execv(pointers[0], pointers.data());
    _exit(127);
  }
  return child;
}

// Waits up to `limit` for `child`; its wait status, or -1 when it is still running.
int wait_for(pid_t child, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  int status = 0;
  while (waitpid(child, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return status;
}

TEST_F(Reports, SyncRepeatsUntilThePassThatSeesEnded) {
  const Tree t = small_tree("sync-loop");
  const pid_t sync = start(
      {kNsel, "sync", "--quiet", "--head", "--src", t.src.string(), "--dest", t.log_dir.string()},
      {{"RAY_LOG_SYNC_FREQUENCY", "0.2"}});
  const fs::path first_copy = t.copy_of(t.logs() / "worker-1.out");
  for (int i = 0; i < 500 && !fs::exists(first_copy); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(fs::exists(first_copy));
  EXPECT_EQ(wait_for(sync, std::chrono::milliseconds(600)), -1);  // still repeating
  // The job ends: its last words are written, then ENDED.
  spit(t.logs() / "driver-final.log", "done\n");
  spit(t.log_dir / "ENDED", "");
  const int status = wait_for(sync, std::chrono::seconds(20));
  if (status == -1) kill(sync, SIGKILL);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(slurp(t.copy_of(t.logs() / "driver-final.log")), "done\n");
  fs::remove_all(t.src.parent_path());
}

TEST_F(Reports, SyncRejectsBadSettingsWithOneLine) {
  const auto every =
      run({kNsel, "sync", "--src", "/tmp", "--dest", "/tmp/x", "--every", "soon"}, {});
  EXPECT_EQ(every.exit_code, 2);
  EXPECT_EQ(every.err,
            "nsel: error: --every='soon': not a positive number of seconds; expected seconds "
            "between passes, e.g. '30' or '0.5'\n");
  const auto frequency =
      run({kNsel, "sync", "--src", "/tmp", "--dest", "/tmp/x"}, {{"RAY_LOG_SYNC_FREQUENCY", "-5"}});
  EXPECT_EQ(frequency.exit_code, 2);
  EXPECT_EQ(frequency.err,
            "nsel: error: RAY_LOG_SYNC_FREQUENCY='-5': not a positive number of seconds; expected "
            "seconds between passes, e.g. '30' or '0.5'\n");
  const auto nowhere = run({kNsel, "sync", "--src", "/tmp"}, {{"SLURM_JOB_ID", "5"}});
  EXPECT_EQ(nowhere.exit_code, 2);
  EXPECT_EQ(nowhere.err,
            "nsel: error: no destination: --dest is not given and BASE_LOG_DIR is not set; "
            "expected --dest LOG_DIR, or BASE_LOG_DIR and SLURM_JOB_ID (LOG_DIR is then "
            "$BASE_LOG_DIR/$SLURM_JOB_ID-logs)\n");
}

// Deterministic content for version `version` of file `index`.
std::string content(int index, int version, size_t size) {
  std::string text(size, '\0');
  std::uint64_t x = 0x9E3779B97F4A7C15ull * static_cast<std::uint64_t>(index * 1000 + version + 1);
  for (size_t i = 0; i + 8 <= size; i += 8) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    std::memcpy(&text[i], &x, 8);
  }
  return text;
}

TEST_F(Reports, SyncKilledAtRandomMomentsNeverLeavesAPartialFile) {
  const fs::path work = make_temp_dir("sync-kill");
  const fs::path src = work / "ray";
  const fs::path log_dir = work / "logs";
  const std::string session = "session_2026-02-02_09-00-00_000001_8";
  const fs::path logs = src / session / "logs";
  std::mt19937 random(std::random_device{}());
  const unsigned seed = random();
  random.seed(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  // Every version each file has had: a copy must be exactly one of them.
  std::map<fs::path, std::set<std::size_t>> versions;
  std::map<fs::path, int> version_of;
  std::vector<fs::path> big;
  const auto write_version = [&](const fs::path& file, int index, size_t size) {
    const std::string text = content(index, version_of[file]++, size);
    spit(file, text);
    versions[fs::relative(file, logs)].insert(std::hash<std::string>{}(text));
  };
  for (int i = 0; i < 24; ++i) {  // ~250 MB of reports
    big.push_back(logs / "nsight" /
                  ("dtensor_policy_worker_2:4_" + std::to_string(1000 + i) + ".nsys-rep"));
    write_version(big.back(), i, (4u << 20) + (random() % (12u << 20)));
  }
  for (int i = 0; i < 1500; ++i) {
    write_version(
        logs / ("folder" + std::to_string(i % 15)) / ("worker-" + std::to_string(i) + ".out"),
        100 + i, 1024 + random() % 20000);
  }

  const fs::path copies = log_dir / "ray" / session / "logs";
  std::map<fs::path, std::pair<std::uintmax_t, fs::file_time_type>> checked;
  // Every file under a final name is complete: equal to some version of its source.
  const auto check_copies = [&] {
    if (!fs::exists(copies)) return;
    for (const auto& entry : fs::recursive_directory_iterator(copies)) {
      const std::string name = entry.path().filename().string();
      if (!entry.is_regular_file() || name.ends_with(std::string(nsel::kPartialSuffix)) ||
          entry.path().parent_path().filename() == ".nsel-sync") {
        continue;
      }
      const auto stamp = std::make_pair(entry.file_size(), entry.last_write_time());
      if (checked[entry.path()] == stamp) continue;
      checked[entry.path()] = stamp;
      const fs::path relative = fs::relative(entry.path(), copies);
      ASSERT_EQ(versions.count(relative), 1u) << relative;
      EXPECT_EQ(versions[relative].count(std::hash<std::string>{}(slurp(entry.path()))), 1u)
          << "partial or foreign content under the final name " << entry.path();
    }
  };

  int kills = 0;
  int rounds = 0;
  const std::vector<std::string> argv = {kNsel,   "sync",       "--quiet", "--head",
                                         "--src", src.string(), "--dest",  log_dir.string()};
  while (kills < 20 && rounds < 200) {
    ++rounds;
    const pid_t sync = start(argv, {});
    std::this_thread::sleep_for(std::chrono::milliseconds(2 + random() % 60));
    kill(sync, SIGKILL);
    int status = 0;
    waitpid(sync, &status, 0);
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) ++kills;
    check_copies();
    if (HasFatalFailure()) break;
    // The job goes on: reports are rewritten, so there is always more to copy (enough that a
    // pass outlasts the kill's delay on an idle machine too).
    for (int n = 0; n < 3; ++n) {
      const size_t which = random() % big.size();
      write_version(big[which], static_cast<int>(which), (4u << 20) + (random() % (12u << 20)));
    }
  }
  EXPECT_GE(kills, 20) << "in " << rounds << " rounds";
  std::printf("[ sync-kill ] %d SIGKILLs in %d rounds (seed %u)\n", kills, rounds, seed);

  const auto finished = run(argv, {});
  ASSERT_EQ(finished.exit_code, 0) << finished.err;
  check_copies();
  for (const auto& entry : fs::recursive_directory_iterator(logs)) {
    if (!entry.is_regular_file()) continue;
    EXPECT_EQ(slurp(copies / fs::relative(entry.path(), logs)), slurp(entry.path()))
        << entry.path();
  }
  EXPECT_TRUE(partial_files(log_dir).empty());
  fs::remove_all(work);
}

}  // namespace

namespace {

TEST_F(Reports, LsFollowsARealWorkerFromRunningToComplete) {
  const fs::path root = make_temp_dir("live");
  const fs::path nsight = root / "session_2026-04-01_08-00-00_000001_5" / "logs" / "nsight";
  const pid_t exec =
      start({kNsel, "exec", "--worker", "dtensor_policy_worker", "--output-dir", nsight.string(),
             "--", kWorker, "--steps", "25", "--work-ms", "100"},
            {{"NRL_NSYS_WORKER_PATTERNS", "*policy*"}, {"NRL_NSYS_PROFILE_STEP_RANGE", "2:40"}});
  // The manifest names the profiled program as soon as nsys has started it.
  json seen;
  for (int i = 0; i < 300; ++i) {
    seen = ls_json({root.string()});
    if (seen["reports"].size() == 1 && !seen["reports"][0]["pid"].is_null()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_EQ(seen["reports"].size(), 1u) << seen.dump(2);
  const json running = seen["reports"][0];
  EXPECT_EQ(running["state"], "running") << running.dump(2);
  const long long pid = running["pid"].get<long long>();
  std::error_code ec;
  EXPECT_EQ(fs::read_symlink("/proc/" + std::to_string(pid) + "/exe", ec), fs::path(kWorker));
  const int status = wait_for(exec, std::chrono::seconds(120));
  if (status == -1) kill(exec, SIGKILL);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  const json done = ls_json({root.string()});
  ASSERT_EQ(done["reports"].size(), 1u) << done.dump(2);
  EXPECT_EQ(done["reports"][0]["state"], "complete");
  EXPECT_EQ(done["reports"][0]["pid"], pid);
  EXPECT_EQ(fs::path(done["reports"][0]["path"].get<std::string>()).filename(),
            "dtensor_policy_worker_2:40_" + std::to_string(pid) + ".nsys-rep");
  fs::remove_all(root);
}

}  // namespace

namespace {

TEST_F(Reports, NumberedReportsOfRepeatedWindowsShareTheirManifest) {
  const RealFiles& f = real_files();
  const fs::path root = make_temp_dir("repeat");
  const std::string stem = f.report.stem().string();
  place(f.report, root / (stem + ".1.nsys-rep"));
  place(f.report, root / (stem + ".2.nsys-rep"));
  place(f.manifest, root / f.manifest.filename());
  const json ls = ls_json({root.string()});
  ASSERT_EQ(ls["reports"].size(), 2u) << ls.dump(2);
  for (const json& report : ls["reports"]) {
    EXPECT_EQ(report["state"], "complete");
    EXPECT_EQ(report["worker"], "dtensor_policy_worker");
    EXPECT_EQ(report["pid"], pid_of_report(f.report));
    EXPECT_EQ(report["manifest"], (root / f.manifest.filename()).string());
  }
  fs::remove_all(root);
}

}  // namespace
