// nsel check's table, verdict line and JSON, drawn from a RunCheck built by hand.
#include "nsel/render/check.hpp"

#include <gtest/gtest.h>

#include "hostile_name.hpp"

namespace {

using nsel::CheckedReport;
using nsel::RunCheck;
using nsel::test::kHostile;
using nsel::test::kHostileJson;
using nsel::test::kHostileShown;

constexpr auto kReplace = nlohmann::json::error_handler_t::replace;

CheckedReport checked(const std::string& worker, long long rank, long long pid,
                      nsel::Verdict verdict, const std::string& reason) {
  CheckedReport c;
  c.found.path =
      "/runs/a/" + std::string("dtensor_policy_worker_2:4_") + std::to_string(pid) + ".nsys-rep";
  c.found.root = "/runs/a";
  c.found.worker = worker;
  c.found.window = "2:4";
  c.found.pid = pid;
  c.found.rank = rank;
  c.found.bytes = 4096;
  c.verdict = verdict;
  c.reason = reason;
  c.window_steps = {2, 3};
  return c;
}

// Two processes, one killed inside its window, under a hostile worker name and note.
RunCheck two_processes() {
  RunCheck check;
  check.roots = {"/runs/a"};
  check.sessions = 1;
  check.processes = 2;
  check.reports.push_back(checked("dtensor_policy_worker", 0, 101, nsel::Verdict::ok, ""));
  check.reports.push_back(
      checked(kHostile, 1, 102, nsel::Verdict::killed_in_window, "killed by SIGKILL in step 3"));
  check.notes.push_back({"/runs/a", "/runs/a/x.nsel.json", "bad_manifest", "bad\tmanifest"});
  return check;
}

}  // namespace

TEST(RenderCheck, TableAndVerdictLineWithTheNameEscaped) {
  const std::string text = nsel::render_check_text(two_processes(), {"/runs/a"});
  EXPECT_EQ(text,
            "Checking /runs/a\n"
            "  note: bad\\tmanifest\n"
            "  VERDICT           WORKER                 WINDOW   RANK   PID       WHY\n"
            "  ok                dtensor_policy_worker  2:4      0      101       "
            "dtensor_policy_worker_2:4_101.nsys-rep\n"
            "  killed_in_window  " +
                kHostileShown +
                "    2:4      1      102       killed by SIGKILL in step 3\n"
                "Verdict: FAILED: 2 report(s) of 2 process(es): 1 ok, 1 killed_in_window\n");
}

TEST(RenderCheck, NeverStartedAndExpectedAreCounted) {
  RunCheck check = two_processes();
  check.reports.pop_back();
  check.notes.clear();
  check.expected = 3;
  check.never_started = 2;
  check.processes = 1;
  EXPECT_EQ(nsel::render_check_text(check, {"/runs/a", "/runs/b"}),
            "Checking /runs/a, /runs/b\n"
            "  VERDICT  WORKER                 WINDOW   RANK   PID       WHY\n"
            "  ok       dtensor_policy_worker  2:4      0      101       "
            "dtensor_policy_worker_2:4_101.nsys-rep\n"
            "  never_started  2 selected process(es) expected but never started (no manifest)\n"
            "Verdict: FAILED: 1 report(s) of 1 process(es), 3 expected: 1 ok, 2 never_started\n");
}

TEST(RenderCheck, AllOkAndStillWriting) {
  RunCheck check = two_processes();
  check.notes.clear();
  check.reports.pop_back();
  check.processes = 1;
  check.session = "session_2026-12-01_13-29-27_000001_77";
  check.session_started = "2026-12-01 13:29:27";
  const std::string ok = nsel::render_check_text(check, {"/tmp/ray"});
  EXPECT_EQ(ok.substr(0, ok.find('\n') + 1),
            "Checking session_2026-12-01_13-29-27_000001_77 (the newest session under /tmp/ray, "
            "started 2026-12-01 13:29:27)\n");
  EXPECT_TRUE(ok.ends_with("Verdict: OK: 1 report(s) of 1 process(es): 1 ok\n")) << ok;
  check.reports[0].verdict = nsel::Verdict::writing;
  EXPECT_TRUE(nsel::render_check_text(check, {"/tmp/ray"})
                  .ends_with("Verdict: NOT YET (still being written; check again): 1 report(s) "
                             "of 1 process(es): 1 writing\n"));
}

TEST(RenderCheck, NothingFoundNamesWhereAndWhatCouldNotBeRead) {
  RunCheck check;
  check.notes.push_back(
      {"/runs/a", "/runs/a/locked", std::string(nsel::kUnreadableFolderNote), "cannot read it"});
  EXPECT_EQ(nsel::render_check_text(check, {"/runs/a"}),
            "Checking /runs/a\n"
            "  note: cannot read it\n"
            "Verdict: FAILED: no report or manifest found under /runs/a; cannot read "
            "/runs/a/locked\n");
  check.session = "session_" + kHostile;
  EXPECT_EQ(nsel::render_check_text(check, {"/tmp/ray"}),
            "Checking session_" + kHostileShown +
                " (the newest session under /tmp/ray)\n"
                "  note: cannot read it\n"
                "Verdict: FAILED: the newest session, session_" +
                kHostileShown +
                ", left no report or manifest (another session is not judged in its place); "
                "cannot read /runs/a/locked\n");
}

TEST(RenderCheck, JsonHasTheSchemaFirstAndNamesExact) {
  const nlohmann::ordered_json json = nsel::render_check_json(two_processes());
  ASSERT_FALSE(json.empty());
  EXPECT_EQ(json.begin().key(), "schema");
  EXPECT_EQ(json["schema"], nsel::kCheckJsonSchema);
  EXPECT_EQ(std::string(nsel::kCheckJsonSchema), "nsel.check/1");
  EXPECT_EQ(std::next(json.begin()).key(), "nsel_check");
  EXPECT_EQ(json["nsel_check"], 1);
  EXPECT_EQ(json["reports"][1]["worker"].get<std::string>(), kHostile);
  EXPECT_EQ(json["reports"][1]["worker"].dump(-1, ' ', false, kReplace), kHostileJson);
  EXPECT_EQ(json["counts"]["killed_in_window"], 1);
  EXPECT_EQ(json["exit_code"], 1);
  EXPECT_EQ(json["notes"][0]["message"], "bad\tmanifest");
}

TEST(RenderCheck, JsonOfAnEmptyCheckWhole) {
  EXPECT_EQ(nsel::render_check_json(RunCheck{}).dump(),
            R"({"schema":"nsel.check/1","nsel_check":1,"roots":[],"session":null,)"
            R"("session_path":null,"session_started":null,"session_chosen_by":null,)"
            R"("sessions":0,"processes":0,)"
            R"("expected":null,"never_started":0,"counts":{"ok":0,"never_started":0,)"
            R"("killed_before_window":0,"killed_in_window":0,"window_not_reached":0,)"
            R"("lost_steps":0,"empty":0,"writing":0,"qdstrm":0,"missing":0,"unreadable":0,)"
            R"("not_exported":0},)"
            R"("exit_code":1,"notes":[],"unreadable_folders":[],"reports":[]})");
}

TEST(RenderCheck, JsonOfAReport) {
  RunCheck check = two_processes();
  check.reports[0].steps = std::vector<long long>{2, 3};
  check.reports[0].exit_status = 0;
  check.reports[0].found.manifest = "/runs/a/w.nsel.json";
  EXPECT_EQ(nsel::render_check_json(check)["reports"][0].dump(),
            R"({"path":"/runs/a/dtensor_policy_worker_2:4_101.nsys-rep","verdict":"ok",)"
            R"("reason":null,"state":"complete","worker":"dtensor_policy_worker","window":"2:4",)"
            R"("pid":101,"rank":0,"node":null,"session":null,"exit_status":0,)"
            R"("window_steps":[2,3],"steps":[2,3],"cut_steps":[],"bytes":4096,)"
            R"("manifest":"/runs/a/w.nsel.json"})");
}
