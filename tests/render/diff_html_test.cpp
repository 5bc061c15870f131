// nsel diff's HTML page on hand-built diffs (tests/support/diff_fixture.hpp; no engine): each
// part once, hostile names escaped, nothing fetched, every unpaired process and unreadable
// report shown, the per-rank bars as long and on the side their changes say, times in readable
// units. How a browser lays it out is checked in e2e/diff_html_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "diff_fixture.hpp"
#include "nsel/render/diff.hpp"

namespace {

using nsel::test::made_up_diff;

const std::string kWorker = "dtensor_policy_worker";

std::size_t count(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) {
    ++n;
  }
  return n;
}

// The page's own escaping, written out again: what a name must look like in the page.
std::string escaped(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '&')
      out += "&amp;";
    else if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '"')
      out += "&quot;";
    else if (c == '\'')
      out += "&#39;";
    else
      out += c;
  }
  return out;
}

struct Bar {
  std::string verdict;
  double change = 0;
  bool out_of_line = false;
  double x = 0;
  double width = 0;
};

std::map<std::string, Bar> bars(const std::string& html) {
  std::map<std::string, Bar> out;
  const std::regex rect(
      "<rect class='bar (\\w+)' data-pair='([^']*)' data-change=(\\S+) data-verdict=\\w+ "
      "data-out-of-line=(\\w+) x=(\\S+) y=3 width=(\\S+) height=12>");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), rect); it != std::sregex_iterator();
       ++it) {
    const std::smatch& m = *it;
    EXPECT_EQ(out.count(m[2]), 0u) << "two bars for " << m[2];
    out[m[2]] = {m[1], std::stod(m[3]), m[4] == "yes", std::stod(m[5]), std::stod(m[6])};
  }
  return out;
}

TEST(RenderDiffHtml, HoldsEachPartOnce) {
  const nsel::RunDiff diff = made_up_diff(8, 20, kWorker);
  const std::string html = nsel::render_diff_html(diff);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(count(html, "<h1>nsel diff</h1>"), 1u);
  EXPECT_EQ(count(html, "id=verdict"), 1u);
  ASSERT_EQ(diff.metrics.size(), 4u);
  for (const nsel::MetricDiff& m : diff.metrics) {
    EXPECT_EQ(count(html, "<tr data-metric='" + m.name + "'"), 1u) << m.name;
    EXPECT_EQ(count(html, "<svg class=dist width=240 height=30 viewBox='0 0 240 30' data-metric='" +
                              m.name + "'>"),
              1u)
        << m.name;
  }
  EXPECT_EQ(count(html, "<g class=stepcol data-step="), 20u);
  for (int s = 1; s <= 20; ++s) {
    EXPECT_EQ(count(html, "<g class=stepcol data-step=" + std::to_string(s) + " "), 1u) << s;
  }
  EXPECT_NE(html.find("Steps only in the candidate: 21</p>"), std::string::npos);
  for (const nsel::ProcessPairDiff& p : diff.pairs) {
    EXPECT_EQ(
        count(html, "<rect class='bar " +
                        std::string(p.step.verdict == nsel::ChangeVerdict::faster   ? "faster"
                                    : p.step.verdict == nsel::ChangeVerdict::slower ? "slower"
                                                                                    : "unchanged") +
                        "' data-pair='" + p.key + "'"),
        1u)
        << p.key;
    EXPECT_EQ(count(html, "<tr data-pair='" + p.key + "'"), 1u) << p.key;
    // The label's end, " rank N", apart: only the start may shrink to an ellipsis.
    const std::size_t rank = p.key.rfind(" rank ");
    EXPECT_EQ(
        count(html, "<span class=rl title='" + p.key + "'><span class=ra>" + p.key.substr(0, rank) +
                        "</span><span class=rz>" + p.key.substr(rank) + "</span></span>"),
        1u)
        << p.key;
  }
  EXPECT_EQ(bars(html).size(), 8u);
  // 30 kernels: the top 25 shown, the rest counted; the communication one marked.
  EXPECT_EQ(count(html, "<tr data-kernel="), 25u);
  EXPECT_NE(html.find("<p class=note data-more=5>The top 25 by change; 5 more rows are in the "
                      "JSON output and diff_kernels.csv.</p>"),
            std::string::npos);
  EXPECT_EQ(count(html, "data-more="), 1u);
  EXPECT_EQ(count(html, " data-communication=yes"), 1u);
  EXPECT_EQ(count(html, "<span class=tag title='communication kernel'>comm</span>"), 1u);
  EXPECT_NE(html.find("<tr data-kernel='ncclDevKernel_AllReduce"), std::string::npos);
  EXPECT_EQ(count(html, "<tr data-range="), 3u);
  // Out of line: rank 3 (+33%, 30.5 points from the job's +2.5%) before rank 0 (-9.25%,
  // 11.75 points).
  const std::regex listed("<li data-pair='([^']*)'>");
  std::vector<std::string> out_of_line;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), listed);
       it != std::sregex_iterator(); ++it) {
    out_of_line.push_back((*it)[1]);
  }
  EXPECT_EQ(out_of_line, (std::vector<std::string>{kWorker + " rank 3", kWorker + " rank 0"}));
  EXPECT_EQ(count(html, "<div class='rk out'"), 2u);
  EXPECT_NE(html.find("<p>2 pairs out of line with the job (+2.5 %): their own verdict is faster "
                      "or slower and not the job's:</p>"),
            std::string::npos);
}

TEST(RenderDiffHtml, RankLabelWithoutRankKeepsItsLastEightCharacters) {
  nsel::RunDiff diff = made_up_diff(2, 20, kWorker);
  diff.pairs[0].key = "vllm_generation_worker/node-a";
  diff.pairs[1].key = "short";
  const std::string html = nsel::render_diff_html(diff);
  EXPECT_NE(html.find("<span class=rl title='vllm_generation_worker/node-a'><span "
                      "class=ra>vllm_generation_worke</span><span class=rz>r/node-a</span>"),
            std::string::npos);
  EXPECT_NE(html.find("<span class=rl title='short'><span class=ra></span><span "
                      "class=rz>short</span>"),
            std::string::npos);
}

TEST(RenderDiffHtml, OutOfLineListStaysShortFurthestFromTheJobFirst) {
  nsel::RunDiff diff = made_up_diff(40, 20, kWorker);
  std::size_t marked = 0;
  for (std::size_t i = 0; i < diff.pairs.size(); ++i) {
    // Pairs 0..19 out of line, pair i at i points from the job.
    diff.pairs[i].out_of_line = i < 20;
    diff.pairs[i].change_vs_job_points = (i % 2 ? -1.0 : 1.0) * static_cast<double>(i);
    marked += diff.pairs[i].out_of_line;
  }
  ASSERT_EQ(marked, 20u);
  const std::string html = nsel::render_diff_html(diff);
  const std::regex listed("<li data-pair='([^']*)'>");
  std::vector<std::string> out_of_line;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), listed);
       it != std::sregex_iterator(); ++it) {
    out_of_line.push_back((*it)[1]);
  }
  std::vector<std::string> expected;
  for (int i = 19; i >= 8; --i) expected.push_back(kWorker + " rank " + std::to_string(i));
  EXPECT_EQ(out_of_line, expected);
  EXPECT_NE(html.find("<li class=note>and 8 more, outlined in the chart"), std::string::npos);
  EXPECT_NE(html.find("<ul id=out-of-line data-count=20>"), std::string::npos);
  EXPECT_EQ(count(html, "<div class='rk out'"), 20u);
}

TEST(RenderDiffHtml, EscapesHostileNamesAndFetchesNothing) {
  const std::string hostile = "rank \"7\" <script>alert('x')</script> & co";
  nsel::RunDiff diff = made_up_diff(8, 20, kWorker);
  diff.pairs[2].key = hostile;
  diff.metrics[1].name = hostile;
  diff.kernels[0].name = hostile;
  diff.nvtx[0].name = hostile;
  diff.unpaired[0].label = hostile;
  diff.candidate.paths.push_back(hostile);
  diff.candidate.failures.push_back({"/x/" + hostile, hostile});
  diff.metrics[3].change.reason = hostile;
  const std::string html = nsel::render_diff_html(diff);
  EXPECT_EQ(html.find("<script>alert"), std::string::npos);
  EXPECT_EQ(html.find("alert('x')"), std::string::npos);
  EXPECT_EQ(count(html, "<script"), 1u) << "the page's own script only";
  EXPECT_EQ(count(html, "</script>"), 1u);
  // Bar, label and its title, table row, out-of-line list (not: +7.75 is "slower", in line),
  // metric row and chart, kernel, range, unpaired, path, failure (path and message), reason.
  EXPECT_GE(count(html, escaped(hostile)), 13u);
  EXPECT_EQ(bars(html).count(escaped(hostile)), 1u);
  EXPECT_EQ(html.find("http"), std::string::npos);
  EXPECT_EQ(html.find(" src="), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("@import"), std::string::npos);
  EXPECT_EQ(html.find("url("), std::string::npos);
}

TEST(RenderDiffHtml, ShowsEveryUnpairedProcessAndUnreadableReport) {
  nsel::RunDiff diff = made_up_diff(8, 20, kWorker);
  diff.unpaired.push_back({"baseline", "megatron_policy_worker rank 0", "megatron_policy_worker/77",
                           "/runs/base/megatron_policy_worker_77.nsys-rep"});
  diff.candidate.failures.push_back({"/runs/cand/logs/empty.nsys-rep", "the report is empty"});
  const std::string html = nsel::render_diff_html(diff);
  // Nothing folded away.
  EXPECT_EQ(html.find("<details"), std::string::npos);
  EXPECT_EQ(count(html, "<tr data-unpaired="), 2u);
  for (const nsel::UnpairedProcess& u : diff.unpaired) {
    EXPECT_NE(
        html.find("<tr data-unpaired='" + u.label + "' data-side='" + u.side + "'><td class=t>" +
                  u.side + "</td><td class=t>" + u.key + "</td><td class=t>" + u.label +
                  "</td><td class=t>" + u.report.string() + "</td></tr>"),
        std::string::npos)
        << u.label;
  }
  EXPECT_NE(html.find("<li class=bad data-failure=baseline>/runs/base &amp; co/logs/"
                      "broken.nsys-rep: not a &lt;report&gt;</li>"),
            std::string::npos);
  EXPECT_NE(html.find("<li class=bad data-failure=candidate>/runs/cand/logs/empty.nsys-rep: the "
                      "report is empty</li>"),
            std::string::npos);
  EXPECT_EQ(count(html, "<li class=bad data-failure="), 2u);
  // The sides' table counts them too.
  EXPECT_NE(html.find("<tr data-side=baseline><td class=t>baseline</td><td class='t path'>"
                      "/runs/base &amp; co/logs</td><td>8</td><td>1</td></tr>"),
            std::string::npos);
  EXPECT_NE(html.find("<td class='t path'>/runs/cand/logs<br>/runs/cand/more</td><td>9</td>"
                      "<td>1</td></tr>"),
            std::string::npos);

  // None of either: said, not left out.
  nsel::RunDiff clean = made_up_diff(8, 20, kWorker);
  clean.unpaired.clear();
  clean.baseline.failures.clear();
  const std::string tidy = nsel::render_diff_html(clean);
  EXPECT_NE(tidy.find("None: every process has its pair."), std::string::npos);
  EXPECT_NE(tidy.find("Every report of both runs was read."), std::string::npos);
}

TEST(RenderDiffHtml, RankBarsFollowTheChangesFromTheZeroLine) {
  const nsel::RunDiff diff = made_up_diff(8, 20, kWorker);
  const std::map<std::string, Bar> drawn = bars(nsel::render_diff_html(diff));
  ASSERT_EQ(drawn.size(), diff.pairs.size());
  // The zero line at 300 of 600 px; the largest change, +33%, rounds up to a scale of 50%
  // over 292 px.
  const double px_per_percent = 292.0 / 50.0;
  for (const nsel::ProcessPairDiff& p : diff.pairs) {
    const Bar& b = drawn.at(p.key);
    const double c = p.step.change_percent;
    EXPECT_NEAR(b.change, c, 1e-9) << p.key;
    EXPECT_NEAR(b.width, std::fabs(c) * px_per_percent, 0.006) << p.key;
    if (c > 0) {
      EXPECT_NEAR(b.x, 300, 0.006) << p.key;
    } else {
      EXPECT_NEAR(b.x + b.width, 300, 0.006) << p.key;
    }
    EXPECT_EQ(b.out_of_line, p.out_of_line) << p.key;
  }
  // By hand: rank 0 -9.25 (faster, left), rank 3 +33 (the longest, right).
  EXPECT_NEAR(drawn.at(kWorker + " rank 0").x, 300 - 9.25 * px_per_percent, 0.006);
  EXPECT_NEAR(drawn.at(kWorker + " rank 3").width, 192.72, 0.006);
  EXPECT_EQ(drawn.at(kWorker + " rank 0").verdict, "faster");
  EXPECT_EQ(drawn.at(kWorker + " rank 7").verdict, "unchanged");

  // Smaller changes: the scale follows (largest 1.6% -> 2%).
  nsel::RunDiff small = made_up_diff(4, 20, kWorker);
  const double changes[] = {-1.6, 0.4, 1.2, -0.1};
  for (std::size_t i = 0; i < 4; ++i) small.pairs[i].step.change_percent = changes[i];
  small.metrics[0].change.change_percent = 0.5;
  const std::map<std::string, Bar> scaled = bars(nsel::render_diff_html(small));
  for (std::size_t i = 0; i < 4; ++i) {
    const Bar& b = scaled.at(small.pairs[i].key);
    EXPECT_NEAR(b.width, std::fabs(changes[i]) * 292.0 / 2.0, 0.006) << i;
    EXPECT_NEAR(changes[i] > 0 ? b.x : b.x + b.width, 300, 0.006) << i;
  }
}

TEST(RenderDiffHtml, VerdictBannerNamesTheVerdictTheTestAndItsThresholds) {
  nsel::RunDiff diff = made_up_diff(8, 20, kWorker);
  nsel::Change& step = diff.metrics[0].change;
  step.baseline_steps.median = 12.34e6;
  step.candidate_steps.median = 987.6e3;
  step.baseline_steps.count = 20;
  step.candidate_steps.count = 18;
  step.change_percent = -92.0;
  step.verdict = nsel::ChangeVerdict::faster;
  step.p_value = 0.0004;
  diff.options.alpha = 0.05;
  diff.options.min_change_percent = 2.5;
  std::string html = nsel::render_diff_html(diff);
  EXPECT_NE(html.find("<div id=verdict class='banner faster' data-verdict=faster "
                      "data-change=-92 data-p=0.0004><b>Step time: faster, -92.0 %</b> (median "
                      "12.3 ms → 988 µs)<br>p = 4.0e-04, two-sided Mann-Whitney U over 20 and 18 "
                      "steps (each the median across the paired processes); alpha 0.05, minimum "
                      "change 2.5 %, at least 5 steps a side</div>"),
            std::string::npos);

  step.verdict = nsel::ChangeVerdict::inconclusive;
  step.p_value = 1;
  step.reason = "4 steps in the candidate, at least 5 needed";
  html = nsel::render_diff_html(diff);
  EXPECT_NE(html.find("<div id=verdict class='banner inconclusive' data-verdict=inconclusive"),
            std::string::npos);
  EXPECT_NE(html.find("p = 1.000, two-sided"), std::string::npos);
  EXPECT_NE(html.find("<br><span class=reason>4 steps in the candidate, at least 5 needed</span>"
                      "</div>"),
            std::string::npos);

  step.verdict = nsel::ChangeVerdict::unchanged;
  step.reason.clear();
  step.change_percent = 0.3;
  html = nsel::render_diff_html(diff);
  EXPECT_NE(html.find("data-verdict=unchanged data-change=0.3 "), std::string::npos);
  EXPECT_NE(html.find("<b>Step time: unchanged, +0.3 %</b>"), std::string::npos);

  // No metrics at all: still one banner, inconclusive.
  diff.metrics.clear();
  html = nsel::render_diff_html(diff);
  EXPECT_EQ(count(html, "id=verdict"), 1u);
  EXPECT_NE(html.find("data-verdict=inconclusive"), std::string::npos);
}

TEST(RenderDiffHtml, TimesInReadableUnitsWithThreeSignificantDigits) {
  nsel::RunDiff diff = made_up_diff(2, 20, kWorker);
  diff.kernels.resize(3);
  // Totals: 999 ns -> 1234 ns; 999.6 us (rounds up into ms) -> 0; 2.5 s -> 61.04 s.
  const long long totals[][2] = {{999, 1234}, {999600, 0}, {2500000000, 61040000000}};
  for (std::size_t i = 0; i < 3; ++i) {
    diff.kernels[i].name = "k" + std::to_string(i);
    diff.kernels[i].baseline.total = totals[i][0];
    diff.kernels[i].candidate.total = totals[i][1];
  }
  diff.kernels[0].total_change_percent = 23.5235;
  diff.kernels[1].total_change_percent = -100;
  diff.kernels[2].baseline.mean = 0.5;
  diff.kernels[2].candidate.mean = 12.345;
  const std::string html = nsel::render_diff_html(diff);
  EXPECT_NE(html.find("<td data-sort=1234>999 ns → 1.23 µs</td><td data-sort=23.5235>+23.5 %</td>"),
            std::string::npos);
  EXPECT_NE(html.find(">1.00 ms → 0 ns</td><td data-sort=-100>-100.0 %</td>"), std::string::npos);
  EXPECT_NE(html.find(">2.50 s → 61.0 s</td>"), std::string::npos);
  EXPECT_NE(html.find(">0.50 ns → 12.3 ns</td>"), std::string::npos);
  // A kernel new in the candidate has no baseline total to compare with.
  diff.kernels[1].baseline.total = 0;
  diff.kernels[1].candidate.total = 5000;
  diff.kernels[1].total_change_percent = 0;
  EXPECT_NE(nsel::render_diff_html(diff).find(">0 ns → 5.00 µs</td><td data-sort=0>new</td>"),
            std::string::npos);
}

TEST(RenderDiffHtml, MetricChartDrawsBothSidesOnOneScale) {
  nsel::RunDiff diff = made_up_diff(2, 20, kWorker);
  nsel::Change& c = diff.metrics[1].change;
  c.baseline_steps = {20, 10, 9, 11, 8, 12};
  c.candidate_steps = {20, 12, 11, 13, 10, 14};
  const std::string html = nsel::render_diff_html(diff);
  const std::size_t at = html.find("data-metric='forward'>");
  ASSERT_NE(at, std::string::npos);
  const std::string svg = html.substr(at, html.find("</svg>", at) - at);
  // One scale from 8 to 14 over 6..234 px: x(v) = 6 + (v - 8) * 38.
  const std::size_t base = svg.find("<g class=baseline data-side=baseline>");
  const std::size_t cand = svg.find("<g class=candidate data-side=candidate>");
  ASSERT_NE(base, std::string::npos);
  ASSERT_NE(cand, std::string::npos);
  ASSERT_LT(base, cand);
  const std::string b = svg.substr(base, cand - base), k = svg.substr(cand);
  EXPECT_NE(b.find("<line class=whisker x1=6 x2=158 y1=8 y2=8 /><rect class=box x=44 y=4 "
                   "width=76 height=8 /><line class=median x1=82 x2=82 y1=2 y2=14 />"),
            std::string::npos)
      << b;
  EXPECT_NE(k.find("<line class=whisker x1=82 x2=234 y1=22 y2=22 /><rect class=box x=120 y=18 "
                   "width=76 height=8 /><line class=median x1=158 x2=158 y1=16 y2=28 />"),
            std::string::npos)
      << k;
}

}  // namespace
