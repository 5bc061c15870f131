// nsel ls's grouped table and JSON, drawn from a Discovery built by hand.
#include "nsel/render/ls.hpp"

#include <gtest/gtest.h>

#include "hostile_name.hpp"

namespace {

using nsel::FoundReport;
using nsel::ReportState;
using nsel::test::kHostile;
using nsel::test::kHostileJson;
using nsel::test::kHostileShown;

constexpr auto kReplace = nlohmann::json::error_handler_t::replace;

FoundReport found(const std::string& folder, const std::string& worker, long long pid,
                  ReportState state) {
  FoundReport r;
  r.path = folder + "/" + "dtensor_policy_worker_2:4_" + std::to_string(pid) + ".nsys-rep";
  r.root = "/runs";
  r.worker = worker;
  r.window = "2:4";
  r.pid = pid;
  r.state = state;
  return r;
}

// Two reports of one session (one under a hostile name, still being written), one of a plain
// folder, and notes about the root and about a root without reports.
nsel::Discovery discovery() {
  nsel::Discovery d;
  d.roots = {"/runs", "/empty"};
  d.sessions = 1;
  const std::string nsight = "/runs/session_1/logs/nsight";
  FoundReport a = found(nsight, "dtensor_policy_worker", 101, ReportState::complete);
  a.node = "n1";
  a.session = "session_1";
  a.rank = 0;
  a.bytes = 5 * 1024 * 1024;
  a.modified = std::chrono::system_clock::from_time_t(1796131767);  // 2026-12-01T13:29:27Z
  FoundReport b = found(nsight, kHostile, 102, ReportState::writing);
  b.node = "n1";
  b.session = "session_1";
  b.rank = 1;
  b.reason = "changed 3 s ago";
  FoundReport c = found("/runs/other", "x", 7, ReportState::missing);
  c.window = "1:2";
  c.reason = "nsys wrote no report";
  d.reports = {a, b, c};
  d.notes.push_back({"/runs", "/runs/session_latest", "stale_session_latest",
                     "session_latest is not the newest\n"});
  d.notes.push_back({"/empty", "/empty/x", "bad_manifest", "cannot parse x"});
  return d;
}

}  // namespace

TEST(RenderLs, GroupsWithColumnsAndTheNameEscaped) {
  EXPECT_EQ(nsel::render_ls_text(nsel::list_reports(discovery()), {"/runs", "/empty"}),
            "/runs\n"
            "  note: session_latest is not the newest\\n\n"
            "  node n1  session_1\n"
            "    in /runs/session_1/logs/nsight\n"
            "    WORKER                 WINDOW   RANK   PID             SIZE  VERDICT        "
            "       STATE\n"
            "    dtensor_policy_worker  2:4      0      101          5.0 MiB  ok             "
            "       complete\n"
            "    " +
                kHostileShown +
                "    2:4      1      102              0 B  writing               writing "
                "(still being written: changed 3 s ago)\n"
                "  node -  \n"
                "    in /runs/other\n"
                "    WORKER  WINDOW   RANK   PID             SIZE  VERDICT               STATE\n"
                "    x       1:2      -      7                0 B  missing               "
                "missing (nsys wrote no report)\n"
                "/empty\n"
                "  note: cannot parse x\n"
                "\n"
                "3 report(s) in 1 session(s): 1 complete, 1 writing, 1 missing\n"
                "'nsel check' opens each complete report for its window's steps and exits "
                "non-zero when any is missing or wrong.\n");
}

TEST(RenderLs, NothingFoundNamesTheFoldersSearched) {
  EXPECT_EQ(nsel::render_ls_text(nsel::list_reports(nsel::Discovery{}),
                                 {"/tmp/ray", "/tmp/nsel-" + kHostile}),
            "No reports found under /tmp/ray, /tmp/nsel-" + kHostileShown + ".\n");
}

TEST(RenderLs, JsonHasTheSchemaFirstAndNamesExact) {
  const nlohmann::ordered_json json = nsel::render_ls_json(nsel::list_reports(discovery()));
  EXPECT_EQ(json.begin().key(), "schema");
  EXPECT_EQ(json["schema"], "nsel.ls/1");
  EXPECT_EQ(std::next(json.begin()).key(), "nsel_ls");
  EXPECT_EQ(json["nsel_ls"], 1);
  EXPECT_EQ(json["counts"].dump(),
            R"({"complete":1,"empty":0,"writing":1,"qdstrm":0,"running":0,"missing":1})");
  EXPECT_EQ(json["reports"][1]["worker"].get<std::string>(), kHostile);
  EXPECT_EQ(json["reports"][1]["worker"].dump(-1, ' ', false, kReplace), kHostileJson);
  EXPECT_EQ(json["reports"][0].dump(),
            R"({"path":"/runs/session_1/logs/nsight/dtensor_policy_worker_2:4_101.nsys-rep",)"
            R"("state":"complete","reason":null,"worker":"dtensor_policy_worker","window":"2:4",)"
            R"("pid":101,"rank":0,"local_rank":null,"node":"n1","session":"session_1",)"
            R"("job":null,"root":"/runs","bytes":5242880,"modified":"2026-12-01T13:29:27Z",)"
            R"("manifest":null,"qdstrm":null,"verdict":"ok","verdict_reason":null})");
  EXPECT_EQ(json["reports"][1]["verdict_reason"], "still being written: changed 3 s ago");
  EXPECT_EQ(json["notes"][0]["message"], "session_latest is not the newest\n");
}

TEST(RenderLs, JsonOfNothingFoundWhole) {
  EXPECT_EQ(nsel::render_ls_json(nsel::list_reports(nsel::Discovery{})).dump(2),
            "{\n"
            "  \"schema\": \"nsel.ls/1\",\n"
            "  \"nsel_ls\": 1,\n"
            "  \"roots\": [],\n"
            "  \"sessions\": 0,\n"
            "  \"counts\": {\n"
            "    \"complete\": 0,\n"
            "    \"empty\": 0,\n"
            "    \"writing\": 0,\n"
            "    \"qdstrm\": 0,\n"
            "    \"running\": 0,\n"
            "    \"missing\": 0\n"
            "  },\n"
            "  \"notes\": [],\n"
            "  \"reports\": []\n"
            "}");
}
