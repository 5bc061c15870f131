// Finding and recovering reports, end to end: real nsys reports (made once per build and
// copied around), real Ray-style and SLURM-style trees, the real nsel binary.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "nsel/core/manifest.hpp"
#include "nsel/launch/manifest_recorder.hpp"
#include "nsel/sys/host.hpp"
#include "nsel/sys/process.hpp"
#include "real_reports.hpp"
#include "sample_manifest.hpp"
#include "support.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using nsel::host_name;
using nsel::e2e::place;
using nsel::e2e::real_files;
using nsel::e2e::RealFiles;
using nsel::e2e::Reports;
using nsel::e2e::start;
using nsel::e2e::wait_for;
using nsel::test::make_temp_dir;
using nsel::test::run;
using nsel::test::slurp;
using nsel::test::spit;

namespace {

const std::string kNsel = NSEL_BINARY;
const std::string kWorker = NSEL_WORKER_BINARY;

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

// A manifest nobody but its owner may read, listed by another user: said to be unreadable, with
// the system's reason (before: "not valid JSON"), and the report beside it still listed.
TEST_F(Reports, AManifestThatCannotBeReadIsSaidSoNeverCalledBadJson) {
  if (::geteuid() != 0) GTEST_SKIP() << "listing as another user needs root";
  const auto setpriv = nsel::find_program("setpriv", std::getenv("PATH"));
  if (!setpriv) GTEST_SKIP() << "setpriv (util-linux) is not installed";
  const RealFiles& f = real_files();
  const fs::path root = make_temp_dir("manifest-unreadable");
  place(f.report, root / f.report.filename());
  place(f.manifest, root / f.manifest.filename());
  fs::permissions(root, fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec |
                            fs::perms::group_read | fs::perms::others_read);
  fs::permissions(root / f.report.filename(), fs::perms::owner_read | fs::perms::owner_write |
                                                  fs::perms::group_read | fs::perms::others_read);
  fs::permissions(root / f.manifest.filename(), fs::perms::owner_read | fs::perms::owner_write);
  // The folders above it must let another user through (the temporary folder does).
  const auto r = run({*setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", kNsel, "ls",
                      "--json", root.string()},
                     {});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json ls = json::parse(r.out);
  ASSERT_EQ(ls["notes"].size(), 1u) << r.out;
  EXPECT_EQ(ls["notes"][0]["kind"], "bad_manifest");
  EXPECT_EQ(ls["notes"][0]["message"],
            (root / f.manifest.filename()).string() +
                ": cannot be read: Permission denied; expected an nsel manifest (version 1)");
  EXPECT_EQ(ls["reports"].size(), 1u) << r.out;
  fs::remove_all(root);
}

// A manifest planted in a shared folder names a capture in a folder only root may read and a
// report outside the folder given to recover. Before, root's recover converted that capture to
// outside/pwn.sh and deleted it. Now recover follows a manifest's paths only where the manifest
// and the capture are its own, and writes the report beside the manifest.
TEST_F(Reports, RecoverNeverFollowsAManifestOutOfItsFolderOrOfAnotherUser) {
  if (::geteuid() != 0) GTEST_SKIP() << "giving a file to another user needs root";
  const RealFiles& f = real_files();
  const fs::path root = make_temp_dir("recover-planted");
  const fs::path shared = root / "shared";
  const fs::path secret = root / "secret";
  const fs::path outside = root / "outside";
  for (const fs::path& folder : {shared, secret, outside}) fs::create_directories(folder);
  fs::permissions(secret, fs::perms::owner_all);
  const fs::path capture = secret / "nsys-report-cb3a.qdstrm";
  place(f.qdstrm, capture);
  nsel::Manifest m = nsel::test::window_manifest();
  m.pid = 4242;
  m.nsel_pid = 999999;
  m.host = host_name();
  m.start_time = "2026-12-02T05:00:00.000Z";
  m.end_time = "2026-12-02T05:01:00.000Z";
  m.exit_status = 0;
  m.state = "disk_full";
  m.reason = "its folder is full";
  m.qdstrm = capture.string();
  m.report = (outside / "pwn.sh").string();
  const fs::path manifest = shared / "w_2:4_4242.nsel.json";
  const auto recover = [&](const nsel::Manifest& written) {
    spit(manifest, nsel::serialize_manifest(written));
    return run({kNsel, "recover", shared.string()}, {});
  };

  spit(manifest, nsel::serialize_manifest(m));
  ASSERT_EQ(::chown(manifest.c_str(), 65534, 65534), 0);
  auto r = run({kNsel, "recover", shared.string()}, {});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_EQ(r.out, manifest.string() +
                       ": left as is: it is another user's (uid 65534): the files it names are "
                       "not followed\n");
  ASSERT_EQ(::chown(manifest.c_str(), 0, 0), 0);

  r = recover(m);  // ours, but what it calls its report is no report
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("left as is: it names '" + m.report +
                       "' as its report, which is no report's name (.nsys-rep): not followed"),
            std::string::npos)
      << r.out;

  nsel::Manifest elsewhere = m;
  elsewhere.report = (outside / "w_2:4_4242.nsys-rep").string();
  ASSERT_EQ(::chown(capture.c_str(), 65534, 65534), 0);
  r = recover(elsewhere);  // the capture it names is another user's
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("as its capture, which is not a file of yours: not followed"),
            std::string::npos)
      << r.out;
  EXPECT_FALSE(fs::exists(outside / "pwn.sh"));
  EXPECT_TRUE(fs::is_regular_file(capture)) << "the capture was taken";

  // Everything its own: converted, beside the manifest, whatever folder the manifest names.
  ASSERT_EQ(::chown(capture.c_str(), 0, 0), 0);
  r = recover(elsewhere);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(fs::is_regular_file(shared / "w_2:4_4242.nsys-rep")) << r.out;
  EXPECT_TRUE(nsel::test::files_in(outside).empty()) << "written outside the folder given";
  fs::remove_all(root);
}

// Every name a report could take was another file's when its run ended (name_taken, the
// manifest written by nsel's own recorder): the whole report stays hidden until a name frees,
// then recover gives it that name and its manifest says complete. Before, recover said nothing
// to recover while the manifest promised it would name the report.
TEST_F(Reports, RecoverNamesAReportLeftHiddenOnceANameIsFree) {
  const RealFiles& f = real_files();
  const fs::path dir = make_temp_dir("recover-name-taken");
  const fs::path wanted = dir / "w_4242.nsys-rep";
  for (int k = 1; k <= nsel::kReportNameVariants; ++k) {
    spit(nsel::report_name_variant(wanted, k), "another's");
  }
  nsel::Manifest m = nsel::test::window_manifest();
  m.nsel_pid = ::getpid();
  m.host = host_name();
  m.start_time = "2026-12-07T05:00:00.000Z";
  const std::string hidden_output = (dir / ".w_%p.nsel77-ab12").string();
  m.command = {"nsys", "profile", "-o", hidden_output, "prog"};
  const fs::path hidden = dir / ".w_4242.nsel77-ab12.nsys-rep";
  fs::path pending;
  {
    nsel::ManifestRecorder recorder(m, hidden_output, (dir / "w_%p").string());
    place(f.report, hidden);  // what nsys wrote
    ASSERT_EQ(recorder.finish(0), "name_taken");
    pending = recorder.path();
  }
  auto r = run({kNsel, "recover", dir.string()}, {});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_EQ(r.out, hidden.string() +
                       ": left as is: every name it may take (w_4242.nsys-rep and its -2 to -99 "
                       "variants) is still another file's\n");
  EXPECT_TRUE(fs::is_regular_file(hidden));

  fs::remove(nsel::report_name_variant(wanted, 7));
  r = run({kNsel, "recover", dir.string()}, {});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  const fs::path named = dir / "w_4242-7.nsys-rep";
  EXPECT_EQ(r.out, hidden.string() + ": named " + named.string() + "\n");
  EXPECT_FALSE(fs::exists(hidden));
  EXPECT_TRUE(fs::is_regular_file(named) && slurp(named) == slurp(f.report)) << "not the capture";
  EXPECT_FALSE(fs::exists(pending));
  const nsel::Manifest done =
      nsel::parse_manifest(slurp(nsel::manifest_path_for(named)), "manifest");
  EXPECT_EQ(done.state, "complete");
  EXPECT_EQ(done.report, named.string());
  EXPECT_EQ(listed(ls_json({dir.string()}), named.filename().string())["state"], "complete");
  for (int k = 1; k <= nsel::kReportNameVariants; ++k) {
    if (k == 7) continue;
    EXPECT_EQ(slurp(nsel::report_name_variant(wanted, k)), "another's") << k;
  }
  r = run({kNsel, "recover", dir.string()}, {});  // once named, nothing more to do
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.find("named"), std::string::npos) << r.out;
  fs::remove_all(dir);
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
