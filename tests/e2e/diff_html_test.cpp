// nsel diff's HTML page drawn by a real headless Chromium (Debian's), on made-up diffs of 64 and
// 512 pairs (tests/support/diff_fixture.hpp): every pair's bar on the side and at the length
// its change says, rank labels that never overlap nor run into the bars, long labels cut with
// their full text kept, a page no wider than the window, and the verdict in the banner.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "diff_fixture.hpp"
#include "diff_page.hpp"
#include "nsel/render/diff.hpp"
#include "support.hpp"

namespace fs = std::filesystem;

namespace {

constexpr double kPixel = 0.6;  // the boxes are measured to 0.1 px, bars drawn to 0.01 px

bool overlap(const nsel::test::Box& a, const nsel::test::Box& b) {
  const double e = 0.05;
  return a.left < b.right - e && b.left < a.right - e && a.top < b.bottom - e &&
         b.top < a.bottom - e;
}

// Draws the diff, then checks what every layout of it must hold; returns the drawing.
// `extra` is added at the end of the page's body (a probe script).
nsel::test::DrawnDiffPage draw_and_check(const nsel::RunDiff& diff, const std::string& label,
                                         const std::string& window_size = "1280,900",
                                         const std::string& extra = "") {
  const fs::path dir = nsel::test::make_temp_dir("diff-html-" + label);
  const fs::path page = dir / "diff.html";
  std::string html = nsel::render_diff_html(diff);
  html.insert(html.rfind("</body>"), extra);
  nsel::test::spit(page, html);
  nsel::test::DrawnDiffPage d =
      nsel::test::draw_diff_in_chromium(page, dir / "profile", window_size);
  fs::remove_all(dir);

  // Every pair's bar, from the zero line towards its sign, all on one scale: pixels per
  // percentage point taken from the longest bar.
  EXPECT_EQ(d.bars.size(), diff.pairs.size()) << label;
  const nsel::ProcessPairDiff* largest = &diff.pairs.front();
  for (const nsel::ProcessPairDiff& p : diff.pairs) {
    if (std::fabs(p.step.change_percent) > std::fabs(largest->step.change_percent)) largest = &p;
  }
  if (d.bars.count(largest->key) != 1) {
    ADD_FAILURE() << label << ": no bar for " << largest->key;
    return d;
  }
  const nsel::test::Box& longest = d.bars.at(largest->key).bar;
  const double scale = (longest.right - longest.left) / std::fabs(largest->step.change_percent);
  // It reaches most of the half chart: 292 of 300 px at a round scale end no more than 2.5
  // times the largest change.
  EXPECT_GE(longest.right - longest.left, 292.0 / 2.5 - 1) << label;
  EXPECT_LE(longest.right - longest.left, 292.0 + 1) << label;
  for (const nsel::ProcessPairDiff& p : diff.pairs) {
    const auto found = d.bars.find(p.key);
    if (found == d.bars.end()) {
      ADD_FAILURE() << label << ": no bar for " << p.key;
      continue;
    }
    const nsel::test::DrawnRankBar& b = found->second;
    const double c = p.step.change_percent;
    EXPECT_NEAR(b.change, c, 1e-6) << p.key;
    EXPECT_EQ(b.out_of_line, p.out_of_line) << p.key;
    if (c > 0) {
      EXPECT_NEAR(b.bar.left, b.zero, kPixel) << p.key;
      EXPECT_GT(b.bar.right, b.zero + kPixel) << p.key;
    } else {
      EXPECT_NEAR(b.bar.right, b.zero, kPixel) << p.key;
      EXPECT_LT(b.bar.left, b.zero - kPixel) << p.key;
    }
    EXPECT_NEAR(b.bar.right - b.bar.left, scale * std::fabs(c), kPixel) << p.key;
  }

  // Labels: one per pair, in the pairs' order, each of a real size, none over another nor
  // over its bars, every row under the one before.
  EXPECT_EQ(d.labels.size(), diff.pairs.size()) << label;
  for (std::size_t i = 0; i < d.labels.size() && i < diff.pairs.size(); ++i) {
    const nsel::test::DrawnRankLabel& l = d.labels[i];
    EXPECT_EQ(l.pair, diff.pairs[i].key) << label;
    EXPECT_GT(l.box.right - l.box.left, 10) << l.pair;
    EXPECT_GE(l.box.bottom - l.box.top, 12) << l.pair << ": too low to read";
    EXPECT_LE(l.box.right, l.chart_left + 0.05) << l.pair << " runs into its bars";
    EXPECT_TRUE(l.end_shown) << l.pair << ": its end is cut off";
    if (i > 0) {
      EXPECT_GE(l.box.top, d.labels[i - 1].box.bottom - 0.05) << l.pair;
    }
  }
  std::size_t overlapping = 0;
  for (std::size_t i = 0; i < d.labels.size(); ++i) {
    for (std::size_t j = i + 1; j < d.labels.size(); ++j) {
      if (overlap(d.labels[i].box, d.labels[j].box)) ++overlapping;
    }
  }
  EXPECT_EQ(overlapping, 0u) << label << ": rank labels overlap";

  // The page scrolls down, never sideways.
  EXPECT_GT(d.window_width, 0) << label;
  EXPECT_LE(d.page_width, d.window_width) << label;
  // The per-step chart: both medians of every step.
  EXPECT_EQ(d.step_points, 2 * diff.steps.size()) << label;
  // Its step numbers apart from each other, and more than one of them.
  EXPECT_GE(d.step_numbers.size(), std::min<std::size_t>(diff.steps.size(), 5)) << label;
  for (std::size_t i = 1; i < d.step_numbers.size(); ++i) {
    EXPECT_LT(d.step_numbers[i - 1].right, d.step_numbers[i].left)
        << label << ": step numbers " << i - 1 << " and " << i;
  }
  // The out-of-line pairs listed above the chart: at most 12, the furthest from the job first.
  std::vector<const nsel::ProcessPairDiff*> out_of_line;
  for (const nsel::ProcessPairDiff& p : diff.pairs) {
    if (p.out_of_line) out_of_line.push_back(&p);
  }
  std::stable_sort(out_of_line.begin(), out_of_line.end(), [](const auto* a, const auto* b) {
    return std::fabs(a->change_vs_job_points) > std::fabs(b->change_vs_job_points);
  });
  std::vector<std::string> listed;
  for (std::size_t i = 0; i < out_of_line.size() && i < 12; ++i) {
    listed.push_back(out_of_line[i]->key);
  }
  EXPECT_EQ(d.out_of_line, listed) << label;
  return d;
}

TEST(DiffHtml, SixtyFourPairsDrawnWithEveryBarAndLabelApart) {
  const nsel::RunDiff diff = nsel::test::made_up_diff(64, 50, "dtensor_policy_worker");
  const nsel::test::DrawnDiffPage d = draw_and_check(diff, "64");
  EXPECT_EQ(d.verdict, "slower");
  EXPECT_NE(d.banner_text.find("Step time: slower, +2.5 %"), std::string::npos) << d.banner_text;
  EXPECT_NE(d.banner_text.find("two-sided Mann-Whitney U over 50 and 50 steps"), std::string::npos)
      << d.banner_text;
  // Short keys fit whole.
  for (const nsel::test::DrawnRankLabel& l : d.labels) EXPECT_FALSE(l.cut) << l.pair;
}

// A narrow window: the charts and tables scroll in their own boxes, the page never sideways; a
// long unbroken path still wraps.
TEST(DiffHtml, NarrowWindowKeepsThePageInsideIt) {
  nsel::RunDiff diff = nsel::test::made_up_diff(64, 50, "dtensor_policy_worker");
  diff.candidate.failures.push_back(
      {"/" + std::string(300, 'x') + ".nsys-rep", "a very long path without a single space"});
  const nsel::test::DrawnDiffPage d = draw_and_check(diff, "narrow", "700,600");
  EXPECT_LE(d.window_width, 700);
}

// A click on a header sorts its table, by the cells' numbers: the pairs by change, largest
// first on the first click.
TEST(DiffHtml, HeaderClickSortsThePairsByChange) {
  const nsel::RunDiff diff = nsel::test::made_up_diff(64, 20, "dtensor_policy_worker");
  const std::string probe = R"(<script>
(function () {
  var table = document.getElementById('pairs');
  table.tHead.rows[0].cells[4].click();
  var order = Array.prototype.map.call(table.tBodies[0].rows, function (r) {
    return r.getAttribute('data-pair');
  });
  document.body.setAttribute('data-sorted', order.join('|'));
})();
</script>)";
  const nsel::test::DrawnDiffPage d = draw_and_check(diff, "sorted", "1280,900", probe);
  std::vector<const nsel::ProcessPairDiff*> order;
  for (const nsel::ProcessPairDiff& p : diff.pairs) order.push_back(&p);
  std::stable_sort(order.begin(), order.end(), [](const auto* a, const auto* b) {
    return a->step.change_percent > b->step.change_percent;
  });
  std::string expected;
  for (const auto* p : order) expected += (expected.empty() ? "" : "|") + p->key;
  const std::size_t at = d.dom.find(" data-sorted=\"");
  ASSERT_NE(at, std::string::npos);
  const std::size_t from = at + std::string(" data-sorted=\"").size();
  EXPECT_EQ(d.dom.substr(from, d.dom.find('"', from) - from), expected);
}

TEST(DiffHtml, FiveHundredTwelvePairsOfLongNamesGrowDownAndCutLabels) {
  const std::string worker = "vllm_async_generation_worker_of_a_deployment_named_at_length";
  nsel::RunDiff diff = nsel::test::made_up_diff(512, 200, worker);
  diff.metrics[0].change.verdict = nsel::ChangeVerdict::inconclusive;
  diff.metrics[0].change.reason = "4 steps in the candidate, at least 5 needed";
  const nsel::test::DrawnDiffPage d = draw_and_check(diff, "512");
  EXPECT_EQ(d.verdict, "inconclusive");
  EXPECT_NE(d.banner_text.find("Step time: inconclusive"), std::string::npos) << d.banner_text;
  EXPECT_NE(d.banner_text.find("4 steps in the candidate, at least 5 needed"), std::string::npos)
      << d.banner_text;
  // Each label cut on screen, its whole text in its title.
  ASSERT_EQ(d.labels.size(), 512u);
  for (const nsel::test::DrawnRankLabel& l : d.labels) {
    EXPECT_TRUE(l.cut) << l.pair;
    EXPECT_EQ(l.pair.rfind(worker + " rank ", 0), 0u) << l.pair;
  }
  // The chart grew in height: a row for each pair, none squeezed.
  const double rows = d.labels.back().box.bottom - d.labels.front().box.top;
  EXPECT_GE(rows, 512 * 12.0);
}

TEST(DiffHtml, HostileKeysStayLiteralInTheBrowser) {
  nsel::RunDiff diff = nsel::test::made_up_diff(8, 20, "dtensor_policy_worker");
  const std::string hostile = "rank \"7\" <script>document.body.remove()</script> & co";
  diff.pairs[7].key = hostile;
  const nsel::test::DrawnDiffPage d = draw_and_check(diff, "hostile");
  EXPECT_EQ(d.bars.count(hostile), 1u);
  EXPECT_EQ(d.labels.back().pair, hostile);
  EXPECT_EQ(d.verdict, "slower");
}

}  // namespace
