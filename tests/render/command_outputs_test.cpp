// The smaller outputs: nsel ray patch, nsel sync, nsel recover and nsel demo, the schema ids of
// nsel report's and nsel diff's documents, and the render room's own helpers.
#include <gtest/gtest.h>

#include "hostile_name.hpp"
#include "nsel/analyze/diff.hpp"
#include "nsel/render/demo.hpp"
#include "nsel/render/diff.hpp"
#include "nsel/render/ray.hpp"
#include "nsel/render/recover.hpp"
#include "nsel/render/report.hpp"
#include "nsel/render/sync.hpp"
#include "render/formatted.hpp"
#include "render/json_schema.hpp"

namespace {

using nsel::test::kHostile;
using nsel::test::kHostileShown;

// One process of `steps` steps of 10 ms.
nsel::ReportSet one_process(long long pid) {
  nsel::ReportSet set;
  nsel::ProcessSummary p;
  p.identity.worker = "w";
  p.identity.pid = pid;
  p.report = "w_" + std::to_string(pid) + ".nsys-rep";
  for (long long s = 1; s <= 3; ++s) {
    nsel::StepSummary step;
    step.step = s;
    step.start_ns = (s - 1) * 10'000'000;
    step.end_ns = s * 10'000'000;
    p.steps.push_back(step);
  }
  set.processes.push_back(p);
  return set;
}

}  // namespace

TEST(RenderHelpers, FormattedIsPrintf) {
  using nsel::render_detail::formatted;
  EXPECT_EQ(formatted("%-*s|%5.1f|%lld|%zu", 6, "ab", 2.25, -3LL, std::size_t{7}),
            "ab    |  2.2|-3|7");
  EXPECT_EQ(formatted("%s", ""), "");
  const std::string long_text(5000, 'x');
  EXPECT_EQ(formatted("<%s>", long_text.c_str()), "<" + long_text + ">");
}

TEST(RenderHelpers, SchemaFirstKeepsTheOtherKeysInOrder) {
  const nlohmann::json sorted = {{"b", 1}, {"a", {{"y", 2}, {"x", 3}}}, {"schema", "old"}};
  EXPECT_EQ(nsel::render_detail::schema_first("nsel.x/1", sorted).dump(),
            R"({"schema":"nsel.x/1","a":{"x":3,"y":2},"b":1})");
}

TEST(RenderRayPatch, TextAndJson) {
  nsel::RayPatchReport report;
  report.file = "/venv/lib/ray/_private/runtime_env/nsight.py";
  report.ray_version = "2.40.0";
  report.outcome = nsel::RayPatchOutcome::patched;
  report.line = 87;
  EXPECT_EQ(nsel::render_ray_patch_text(report),
            "patched: /venv/lib/ray/_private/runtime_env/nsight.py (Ray 2.40.0, line 87): "
            "workers under nsys keep their own interpreter\n");
  EXPECT_EQ(nsel::render_ray_patch_json(report).dump(),
            R"({"schema":"nsel.ray-patch/1","file":"/venv/lib/ray/_private/runtime_env/nsight.py",)"
            R"("line":87,"message":"patched: /venv/lib/ray/_private/runtime_env/nsight.py )"
            R"((Ray 2.40.0, line 87): workers under nsys keep their own interpreter",)"
            R"("ray_version":"2.40.0","status":"patched"})");
}

TEST(RenderSync, ProgressLineAndJsonLine) {
  nsel::PassStats stats;
  stats.number = 4;
  stats.full = false;
  stats.sessions = 1;
  stats.folders = 5;
  stats.files = 12;
  stats.copied = 3;
  stats.bytes_copied = 4096;
  stats.elapsed = std::chrono::milliseconds(250);
  EXPECT_EQ(nsel::render_sync_progress_text(stats, false),
            "12 file(s) checked, 3 copied (4.0 KiB), 0 failed, 0.2 s");
  EXPECT_EQ(nsel::render_sync_progress_text(stats, true),
            "pass done (only what changed): 12 file(s) checked, 3 copied (4.0 KiB), 0 failed, "
            "0.2 s");
  stats.full = true;
  stats.saw_ended = true;
  EXPECT_EQ(nsel::render_sync_progress_text(stats, true),
            "pass done: 12 file(s) checked, 3 copied (4.0 KiB), 0 failed, 0.2 s; ENDED seen, "
            "stopping");
  EXPECT_EQ(nsel::render_sync_pass_json(stats).dump(),
            R"({"schema":"nsel.sync/1","bytes_copied":4096,"copied":3,"ended":true,)"
            R"("failed":0,"files":12,"folders":5,"full":true,"pass":4,"seconds":0.25,)"
            R"("sessions":1})");
}

TEST(RenderRecover, LinesWithNamesEscaped) {
  EXPECT_EQ(nsel::render_recover_file_text("/r/" + kHostile + ".qdstrm", "converted\n"),
            "/r/" + kHostileShown + ".qdstrm: converted\\n\n");
  EXPECT_EQ(nsel::render_recover_left_as_is_text("/r/a.qdstrm", "no importer of 2024.5"),
            "/r/a.qdstrm: left as is: no importer of 2024.5\n");
  EXPECT_EQ(nsel::render_recover_nothing_text(), "No left-over .qdstrm files.\n");
  EXPECT_EQ(nsel::render_recover_summary_text(0, 1, {}),
            "0 converted, 1 left as they were (importer: none)\n");
  const nsel::ImporterChoice a{"/opt/nsys/QdstrmImporter", "2024.5.1", ""};
  const nsel::ImporterChoice b{"/usr/lib/QdstrmImporter", "", ""};
  EXPECT_EQ(nsel::render_recover_summary_text(3, 0, {a, b, a}),
            "3 converted, 0 left as they were (importer: /opt/nsys/QdstrmImporter (2024.5.1), "
            "/usr/lib/QdstrmImporter)\n");
}

TEST(RenderDemo, NoReportsAndTheVerdict) {
  nsel::DemoRun run;
  run.session = "/tmp/nsel-demo/session_1";
  run.nsight_dir = "/tmp/nsel-demo/session_1/logs/nsight";
  run.shows_ranks = true;
  run.workers = {{"dtensor_policy_worker", 0, true, "", 0},
                 {"vllm_generation_worker", 0, false, "", 0}};
  EXPECT_EQ(nsel::render_demo_text(run),
            "\nWorkers:\n"
            "  dtensor_policy_worker    rank 0   profiled\n"
            "  vllm_generation_worker   rank 0   bare (no nsys)\n"
            "\nReports in /tmp/nsel-demo/session_1/logs/nsight:\n"
            "  (none: no worker matched the patterns)\n"
            "\nVerdict (nsel check /tmp/nsel-demo/session_1): FAILED: 0 process(es): no report\n");
  const nlohmann::ordered_json json = nsel::render_demo_json(run);
  EXPECT_EQ(json.begin().key(), "schema");
  EXPECT_EQ(json["schema"], "nsel.demo/1");
  EXPECT_EQ(std::next(json.begin()).key(), "failed_workers");
  EXPECT_EQ(json["verdict"].dump(),
            R"({"counts":{},"exit_code":1,"expected":null,"never_started":0,"processes":0})");
}

TEST(RenderDocuments, ReportAndDiffBeginWithTheirSchema) {
  const nsel::ReportSet set = one_process(1);
  const nlohmann::ordered_json report = nsel::render_report_document(set);
  EXPECT_EQ(report.begin().key(), "schema");
  EXPECT_EQ(report["schema"], "nsel.report/1");
  EXPECT_EQ(report.size(), nsel::render_json(set).size() + 1);

  const nsel::RunDiff diff = nsel::diff_runs(one_process(1), one_process(2), {});
  const nlohmann::ordered_json document = nsel::render_diff_document(diff);
  EXPECT_EQ(document.begin().key(), "schema");
  EXPECT_EQ(document["schema"], nsel::kDiffJsonSchema);
  EXPECT_EQ(document.size(), nsel::render_diff_json(diff).size());
}
