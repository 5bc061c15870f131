// Reads nsel diff's page out of Chromium's DOM dump (attributes in double quotes, as Chromium
// writes them back).
#include "diff_page.hpp"

#include <gtest/gtest.h>

#include <regex>
#include <sstream>

#include "support.hpp"

namespace nsel::test {
namespace {

std::string decoded(const std::string& text) {
  static const std::pair<const char*, const char*> kEntities[] = {{"&lt;", "<"},    {"&gt;", ">"},
                                                                  {"&quot;", "\""}, {"&#39;", "'"},
                                                                  {"&nbsp;", " "},  {"&amp;", "&"}};
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    bool replaced = false;
    if (text[i] == '&') {
      for (const auto& [entity, character] : kEntities) {
        if (text.compare(i, std::char_traits<char>::length(entity), entity) == 0) {
          out += character;
          i += std::char_traits<char>::length(entity);
          replaced = true;
          break;
        }
      }
    }
    if (!replaced) out += text[i++];
  }
  return out;
}

std::string attribute(const std::string& tag, const std::string& name) {
  const std::regex pattern(" " + name + "=\"([^\"]*)\"");
  std::smatch m;
  return std::regex_search(tag, m, pattern) ? decoded(m[1].str()) : std::string();
}

// The opening tag that starts at or after `from` with `start`; "" when none.
std::string tag_at(const std::string& dom, const std::string& start, std::size_t from,
                   std::size_t before = std::string::npos) {
  const std::size_t at = dom.find(start, from);
  if (at == std::string::npos || at >= before) return {};
  return dom.substr(at, dom.find('>', at) - at + 1);
}

Box box_of(const std::string& tag) {
  Box b;
  std::istringstream in(attribute(tag, "data-box"));
  in >> b.left >> b.top >> b.right >> b.bottom;
  EXPECT_FALSE(in.fail()) << "no measured box in " << tag;
  return b;
}

std::string text_of(const std::string& html) {
  return decoded(std::regex_replace(html, std::regex("<[^>]*>"), ""));
}

}  // namespace

DrawnDiffPage draw_diff_in_chromium(const std::filesystem::path& page,
                                    const std::filesystem::path& profile,
                                    const std::string& window_size) {
  const RunResult browser =
      run({"chromium", "--headless", "--no-sandbox", "--disable-gpu",
           "--user-data-dir=" + profile.string(), "--window-size=" + window_size, "--dump-dom",
           "file://" + page.string()},
          {});
  EXPECT_EQ(browser.exit_code, 0) << "Debian's chromium is needed (scripts/setup.d): "
                                  << browser.err;
  DrawnDiffPage d;
  d.dom = browser.out;
  const std::string& dom = d.dom;

  const std::size_t banner = dom.find("<div id=\"verdict\"");
  if (banner != std::string::npos) {
    d.verdict = attribute(tag_at(dom, "<div", banner), "data-verdict");
    const std::size_t open = dom.find('>', banner) + 1;
    d.banner_text = text_of(dom.substr(open, dom.find("</div>", open) - open));
  }

  // One row per pair: its label, then its chart with the zero line and the bar.
  const std::string row_start = "<div class=\"rk";
  for (std::size_t at = dom.find(row_start); at != std::string::npos;) {
    const std::size_t next = dom.find(row_start, at + 1);
    const std::string label = tag_at(dom, "<span class=\"rl\"", at, next);
    const std::string chart = tag_at(dom, "<svg class=\"rb\"", at, next);
    const std::string bar = tag_at(dom, "<rect class=\"bar", at, next);
    if (!label.empty() && !chart.empty() && !bar.empty()) {
      const Box chart_box = box_of(chart);
      const std::string pair = attribute(bar, "data-pair");
      DrawnRankBar& b = d.bars[pair];
      b.change = std::stod(attribute(bar, "data-change"));
      b.verdict = attribute(bar, "data-verdict");
      b.out_of_line = attribute(bar, "data-out-of-line") == "yes";
      b.bar = box_of(bar);
      // The chart is drawn at its own size (width attribute = viewBox width): no scaling.
      b.zero = chart_box.left + std::stod(attribute(chart, "data-zero"));
      d.labels.push_back({attribute(label, "title"), box_of(label),
                          attribute(label, "data-cut") == "yes",
                          attribute(label, "data-end") == "yes", chart_box.left});
    }
    at = next;
  }

  const std::size_t list = dom.find("<ul id=\"out-of-line\"");
  if (list != std::string::npos) {
    const std::size_t end = dom.find("</ul>", list);
    for (std::size_t at = dom.find("<li data-pair=", list); at != std::string::npos && at < end;
         at = dom.find("<li data-pair=", at + 1)) {
      d.out_of_line.push_back(attribute(tag_at(dom, "<li", at), "data-pair"));
    }
  }

  const std::size_t steps = dom.find("<svg id=\"steps\"");
  if (steps != std::string::npos) {
    const std::size_t end = dom.find("</svg>", steps);
    for (std::size_t at = dom.find("<circle ", steps); at != std::string::npos && at < end;
         at = dom.find("<circle ", at + 1)) {
      ++d.step_points;
    }
    for (std::size_t at = dom.find("<text class=\"xtick\"", steps);
         at != std::string::npos && at < end; at = dom.find("<text class=\"xtick\"", at + 1)) {
      d.step_numbers.push_back(box_of(tag_at(dom, "<text", at)));
    }
  }

  std::istringstream body(attribute(tag_at(dom, "<body", 0), "data-page"));
  body >> d.page_width >> d.window_width;
  return d;
}

}  // namespace nsel::test
