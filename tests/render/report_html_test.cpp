// The HTML page's content on hand-built report sets with known answers: the legend's grouping,
// order and cap, the per-step GPU medians with communication, and the page data that no range
// name can break out of. How the browser lays the page out is checked in e2e/report_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "nsel/analyze/comparison.hpp"
#include "nsel/render/report.hpp"

namespace {

nsel::ProcessSummary process(const std::string& worker, long long pid) {
  nsel::ProcessSummary p;
  p.identity.worker = worker;
  p.identity.pid = pid;
  p.has_nvtx = true;
  return p;
}

nsel::StepSummary step(long long number, long long duration,
                       std::vector<std::pair<std::string, long long>> ranges) {
  nsel::StepSummary s;
  s.step = number;
  s.start_ns = number * 1000000;
  s.end_ns = s.start_ns + duration;
  long long at = s.start_ns;
  for (const auto& [name, ns] : ranges) {
    s.shares.push_back({name, ns, at});
    at += ns;
  }
  return s;
}

std::vector<std::string> legend(const std::string& html) {
  std::vector<std::string> out;
  const std::regex entry(
      "<span class=('entry'|entry|'entry other') title='[^']*'><i [^>]*></i>([^<]*)</span>");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), entry);
       it != std::sregex_iterator(); ++it) {
    out.push_back((*it)[2]);
  }
  return out;
}

std::string page_data(const std::string& html) {
  const std::string start = "<script type=application/json id=nsel-data>";
  const std::size_t at = html.find(start);
  if (at == std::string::npos) return {};
  const std::size_t from = at + start.size();
  return html.substr(from, html.find("</script>", from) - from);
}

nsel::ReportSet finish(std::vector<nsel::ProcessSummary> processes) {
  nsel::ReportSet set;
  set.processes = std::move(processes);
  set.comparison = nsel::compare_steps(set.processes, 10);
  return set;
}

TEST(RenderHtml, LegendGroupsRangesNamedAfterTheirStepAndOrdersThemByTotalTime) {
  nsel::ProcessSummary p = process("dtensor_policy_worker", 7);
  for (long long n = 1; n <= 30; ++n) {
    // "layer 12" carries a number that is not the step's: a name of its own.
    p.steps.push_back(step(n, 900,
                           {{"data copy in " + std::to_string(n), 10},
                            {"forward", 300},
                            {"optimizer", 200},
                            {"layer 12", 5}}));
  }
  const std::string html = nsel::render_html(finish({p}));
  EXPECT_EQ(legend(html),
            (std::vector<std::string>{"forward", "optimizer", "data copy in {n}", "layer 12"}));
  EXPECT_NE(page_data(html).find(
                "\"names\":[\"forward\",\"optimizer\",\"data copy in {n}\",\"layer 12\"]"),
            std::string::npos);
}

TEST(RenderHtml, LegendColoursTwelveNamesAndNamesTheRestInOneGreyEntry) {
  nsel::ProcessSummary p = process("w", 1);
  std::vector<std::pair<std::string, long long>> ranges;
  for (int i = 0; i < 20; ++i) ranges.push_back({"phase " + std::string(1, 'a' + i), 100 - i});
  p.steps.push_back(step(1, 5000, ranges));
  const std::string html = nsel::render_html(finish({p}));
  const std::vector<std::string> entries = legend(html);
  ASSERT_EQ(entries.size(), 13u);
  EXPECT_EQ(entries.front(), "phase a");
  EXPECT_EQ(entries[11], "phase l");
  EXPECT_EQ(entries.back(), "8 other ranges");
  EXPECT_NE(html.find("title='phase m, phase n, phase o, phase p, phase q, phase r, phase s, "
                      "phase t'"),
            std::string::npos);
  // Twelve distinct colours, then grey for each of the rest.
  std::smatch m;
  const std::string data = page_data(html);
  ASSERT_TRUE(std::regex_search(data, m, std::regex("\"colours\":\\[([^\\]]*)\\]")));
  std::vector<std::string> colours;
  const std::string list = m[1];
  const std::regex quoted("\"([^\"]*)\"");
  for (auto it = std::sregex_iterator(list.begin(), list.end(), quoted);
       it != std::sregex_iterator(); ++it) {
    colours.push_back((*it)[1]);
  }
  ASSERT_EQ(colours.size(), 20u);
  EXPECT_EQ(std::set<std::string>(colours.begin(), colours.begin() + 12).size(), 12u);
  for (std::size_t i = 12; i < 20; ++i) EXPECT_EQ(colours[i], "#b8bec6") << i;
  EXPECT_EQ(std::count(colours.begin(), colours.begin() + 12, "#b8bec6"), 0);
}

TEST(RenderHtml, GpuPerStepTableGivesMediansAcrossProcessesWithCommunication) {
  std::vector<nsel::ProcessSummary> processes;
  // Busy 50, 80, 90 % of the step, communication 10, 20, 40 %: medians 80 and 20.
  const std::vector<std::pair<long long, long long>> gpu = {{500, 100}, {800, 200}, {900, 400}};
  for (std::size_t i = 0; i < gpu.size(); ++i) {
    nsel::ProcessSummary p = process("megatron_policy_worker", 100 + static_cast<long long>(i));
    p.has_gpu = true;
    nsel::StepSummary s = step(1, 1000, {{"forward", 600}});
    s.gpu_busy_ns = gpu[i].first;
    s.communication_ns = gpu[i].second;
    s.compute_ns = gpu[i].first - gpu[i].second;
    p.steps.push_back(s);
    processes.push_back(p);
  }
  nsel::ReportSet set = finish(processes);
  set.comparison.steps[0].communication_wait_ns = {0, 100000, 300000};
  set.comparison.steps[0].median_communication_wait_ns = 100000;  // render draws what it is given
  const std::string html = nsel::render_html(set);
  EXPECT_NE(html.find("<th>GPU busy (%)</th><th>GPU idle (%)</th><th>communication (%)</th>"
                      "<th>communication wait (ms)</th>"),
            std::string::npos);
  EXPECT_NE(html.find("<tr><td>1</td><td>0.001</td><td>80.0</td><td>20.0</td><td>20.0</td>"
                      "<td>0.100</td></tr>"),
            std::string::npos);
  // Each process's strip: busy and communication in ns, and its wait.
  EXPECT_NE(page_data(html).find("[0,1000,800,200,100000,0,[0,600]]"), std::string::npos);
  // GPU work without communication kernels: no communication columns of zeros.
  nsel::ProcessSummary alone = process("w", 2);
  alone.has_gpu = true;
  nsel::StepSummary quiet = step(1, 1000, {{"forward", 600}});
  quiet.gpu_busy_ns = 700;
  quiet.communication_ns = 0;
  quiet.compute_ns = 700;
  alone.steps.push_back(quiet);
  nsel::ReportSet computing = finish({alone});
  computing.comparison.steps[0].communication_wait_ns = {0};
  const std::string no_communication = nsel::render_html(computing);
  EXPECT_NE(no_communication.find("<tr><td>1</td><td>0.001</td><td>70.0</td><td>30.0</td></tr>"),
            std::string::npos);
  EXPECT_EQ(no_communication.find("communication (%)"), std::string::npos);
  EXPECT_EQ(no_communication.find("communication (ms)"), std::string::npos);
  EXPECT_EQ(no_communication.find("communication wait"), std::string::npos);
  // Without GPU data: no table and no band.
  nsel::ProcessSummary cpu = process("w", 1);
  cpu.steps.push_back(step(1, 1000, {{"forward", 600}}));
  const std::string plain = nsel::render_html(finish({cpu}));
  EXPECT_EQ(plain.find("GPU per step"), std::string::npos);
  EXPECT_NE(page_data(plain).find("\"band\":0"), std::string::npos);
}

TEST(RenderHtml, NoRangeOrWorkerNameEndsThePageDataEarly) {
  nsel::ProcessSummary p = process("w</script><script>alert(1)</script>", 3);
  p.steps.push_back(step(1, 1000, {{"</script><b>", 600}}));
  const std::string html = nsel::render_html(finish({p}));
  const std::string data = page_data(html);
  ASSERT_FALSE(data.empty());
  EXPECT_EQ(data.find('<'), std::string::npos);
  EXPECT_NE(data.find("\\u003c/script>\\u003cb>"), std::string::npos);
  EXPECT_EQ(html.find("<script>alert"), std::string::npos);
}

}  // namespace
