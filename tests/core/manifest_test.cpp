// The manifest's text form: round trip, stable layout, and one-line errors naming the file.
#include <gtest/gtest.h>

#include "nsel/core/error.hpp"
#include "nsel/core/manifest.hpp"

namespace {

nsel::Manifest sample() {
  nsel::Manifest m;
  m.worker = "dtensor_policy_worker";
  m.pattern = "*policy*";
  m.step_window = "2:4";
  m.step_start = 2;
  m.step_stop = 4;
  m.pid = 4250;
  m.nsel_pid = 4249;
  m.host = "node-a";
  m.node_ip = "10.0.0.7";
  m.pid_namespace = 4026532175ULL;
  m.boot_id = "a2575bea-7064-4b8d-a8ca-4a74dcd35b78";
  m.rank_variables = {{"RANK", "1"}, {"SLURM_PROCID", "1"}};
  m.command = {"/usr/bin/nsys", "profile", "-o", "dtensor_policy_worker_2:4_%p", "/bin/prog"};
  m.start_time = "2026-11-29T12:00:00.000Z";
  m.end_time = "2026-11-29T12:01:00.500Z";
  m.exit_status = 0;
  m.report = "/tmp/ray/session_x/logs/nsight/dtensor_policy_worker_2:4_4250.nsys-rep";
  m.state = "complete";
  return m;
}

TEST(Manifest, RoundTripsEveryField) {
  const nsel::Manifest m = sample();
  EXPECT_EQ(nsel::parse_manifest(nsel::serialize_manifest(m), "m.json"), m);
  nsel::Manifest running = m;
  running.pattern.reset();
  running.end_time.reset();
  running.exit_status.reset();
  running.state = "running";
  EXPECT_EQ(nsel::parse_manifest(nsel::serialize_manifest(running), "m.json"), running);
  nsel::Manifest lost = m;
  lost.state = std::string(nsel::kManifestDiskFull);
  lost.qdstrm = "/tmp/nsys-report-cb3a.qdstrm";
  EXPECT_EQ(nsel::parse_manifest(nsel::serialize_manifest(lost), "m.json"), lost);
  // A manifest written before "qdstrm" existed reads as one without it.
  std::string old = nsel::serialize_manifest(m);
  old.erase(old.find(",\n  \"qdstrm\""), std::string(",\n  \"qdstrm\": null").size());
  EXPECT_EQ(nsel::parse_manifest(old, "m.json"), m);
  // One written before the PID namespace and boot id were recorded reads without them.
  nsel::Manifest older = m;
  older.pid_namespace.reset();
  older.boot_id.reset();
  std::string before = nsel::serialize_manifest(m);
  before.erase(before.find(",\n  \"pid_namespace\""),
               before.find(",\n  \"rank_variables\"") - before.find(",\n  \"pid_namespace\""));
  EXPECT_EQ(nsel::parse_manifest(before, "m.json"), older);
  // The identity nsel decided (a rank given by --rank or rank= in Python).
  nsel::Manifest given = m;
  given.rank = 7;
  given.local_rank = 3;
  given.node = "gpu-07";
  EXPECT_EQ(nsel::parse_manifest(nsel::serialize_manifest(given), "m.json"), given);
}

TEST(Manifest, KeysComeInAFixedOrder) {
  const std::string text = nsel::serialize_manifest(sample());
  const char* keys[] = {
      "\"nsel_manifest\"",  "\"worker\"",   "\"pattern\"",     "\"step_window\"",   "\"pid\"",
      "\"nsel_pid\"",       "\"host\"",     "\"node_ip\"",     "\"pid_namespace\"", "\"boot_id\"",
      "\"rank_variables\"", "\"rank\"",     "\"local_rank\"",  "\"node\"",          "\"command\"",
      "\"start_time\"",     "\"end_time\"", "\"exit_status\"", "\"report\"",        "\"state\"",
      "\"reason\"",         "\"qdstrm\""};
  size_t at = 0;
  for (const char* key : keys) {
    const size_t found = text.find(key, at);
    ASSERT_NE(found, std::string::npos) << key;
    at = found;
  }
  EXPECT_EQ(text.back(), '\n');
}

TEST(Manifest, BadTextNamesTheFile) {
  const auto message = [](const std::string& text) {
    try {
      nsel::parse_manifest(text, "/r/x.nsel.json");
    } catch (const nsel::Error& e) {
      EXPECT_EQ(e.exit_code(), 1);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message("[1]"),
            "/r/x.nsel.json: not a JSON object; expected an nsel manifest (version 1)");
  EXPECT_EQ(message("{\"worker\": \"w\"}"),
            "/r/x.nsel.json: no \"nsel_manifest\" version; expected an nsel manifest (version 1)");
  EXPECT_EQ(message("{\"nsel_manifest\": 7, \"worker\": \"w\", \"state\": \"running\"}"),
            "/r/x.nsel.json: version 7 is not known to this nsel; expected an nsel manifest "
            "(version 1)");
  EXPECT_EQ(message("{\"nsel_manifest\": 1, \"worker\": 3, \"state\": \"running\"}"),
            "/r/x.nsel.json: \"worker\" is not a string; expected an nsel manifest (version 1)");
  EXPECT_EQ(message("{\"nsel_manifest\": 1, \"worker\": \"w\"}"),
            "/r/x.nsel.json: missing \"state\"; expected an nsel manifest (version 1)");
  EXPECT_NE(message("{\"nsel_manifest\": 1,").find("not valid JSON"), std::string::npos);
  // A number too large for JSON's integers (found by fuzzing), and, found beside it, a version
  // that narrowing would turn into 1, an exit status out of int range and a variable name
  // holding a line break.
  EXPECT_NE(message("{\"nsel_manifest\": 1, \"pid\": 1e400}").find("not valid JSON"),
            std::string::npos);
  EXPECT_EQ(message("{\"nsel_manifest\": 4294967297, \"worker\": \"w\", \"state\": \"x\"}"),
            "/r/x.nsel.json: version 4294967297 is not known to this nsel; expected an nsel "
            "manifest (version 1)");
  EXPECT_EQ(message("{\"nsel_manifest\": 1, \"worker\": \"w\", \"state\": \"x\", "
                    "\"exit_status\": 18446744073709551615}"),
            "/r/x.nsel.json: \"exit_status\" is not an exit status; expected an nsel manifest "
            "(version 1)");
  EXPECT_EQ(message("{\"nsel_manifest\": 1, \"worker\": \"w\", \"state\": \"x\", "
                    "\"rank_variables\": {\"A\\nB\": 3}}"),
            "/r/x.nsel.json: rank variable 'A\\nB' is not a string; expected an nsel manifest "
            "(version 1)");
}

TEST(Manifest, ARankGivenToNselWinsOverTheVariables) {
  nsel::Manifest m = sample();
  m.rank_variables = {{"RANK", "0"}, {"LOCAL_RANK", "0"}, {"SLURMD_NODENAME", "n2"}};
  m.rank = 5;
  m.local_rank = 1;
  m.node = "given-node";
  EXPECT_EQ(nsel::manifest_rank(m), 5);
  EXPECT_EQ(nsel::manifest_local_rank(m), 1);
  EXPECT_EQ(nsel::manifest_node(m), "given-node");
  const auto message = [](const std::string& field) {
    try {
      nsel::parse_manifest(
          "{\"nsel_manifest\": 1, \"worker\": \"w\", \"state\": \"x\", " + field + "}",
          "/r/x.nsel.json");
    } catch (const nsel::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message("\"rank\": -1"),
            "/r/x.nsel.json: \"rank\" is not a rank (a whole number >= 0); expected an nsel "
            "manifest (version 1)");
  EXPECT_EQ(message("\"local_rank\": \"2\""),
            "/r/x.nsel.json: \"local_rank\" is not a rank (a whole number >= 0); expected an nsel "
            "manifest (version 1)");
  EXPECT_EQ(message("\"rank\": 18446744073709551615"),
            "/r/x.nsel.json: \"rank\" is not a rank (a whole number >= 0); expected an nsel "
            "manifest (version 1)");
  EXPECT_EQ(message("\"rank\": null, \"node\": \"\""), "no error");
}

TEST(Manifest, RankAndNodeComeFromTheSchedulersVariables) {
  nsel::Manifest m = sample();
  m.rank_variables = {{"SLURM_PROCID", "3"}, {"SLURM_LOCALID", "1"}, {"SLURMD_NODENAME", "n2"}};
  EXPECT_EQ(nsel::manifest_rank(m), 3);
  EXPECT_EQ(nsel::manifest_local_rank(m), 1);
  EXPECT_EQ(nsel::manifest_node(m), "n2") << "SLURM's node name, not the host";
  m.rank_variables = {{"RANK", "0"}, {"SLURM_PROCID", "3"}, {"LOCAL_RANK", "2"}};
  EXPECT_EQ(nsel::manifest_rank(m), 0) << "RANK comes first, as for selection";
  EXPECT_EQ(nsel::manifest_local_rank(m), 2);
  EXPECT_EQ(nsel::manifest_node(m), "node-a");
  m.rank_variables = {{"RANK", "abc"}, {"SLURM_PROCID", "3"}};
  EXPECT_EQ(nsel::manifest_rank(m), 3) << "a value that is no number is passed over";
  m.rank_variables = {{"RANK", ""}, {"SLURM_PROCID", "-1"}};
  EXPECT_EQ(nsel::manifest_rank(m), std::nullopt);
  m.rank_variables.clear();
  EXPECT_EQ(nsel::manifest_rank(m), std::nullopt);
  EXPECT_EQ(nsel::manifest_local_rank(m), std::nullopt);
}

}  // namespace
