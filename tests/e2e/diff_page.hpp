// nsel diff's HTML page as a real headless Chromium lays it out: what its DOM dump says was
// drawn (the per-rank bars and labels with their measured boxes, the verdict banner, the page's
// width). For the page's own checks and for end-to-end tests on real captures.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace nsel::test {

// left, top, right, bottom in CSS pixels of the page, as the browser measured them.
struct Box {
  double left = 0, top = 0, right = 0, bottom = 0;
};

struct DrawnRankBar {
  double change = 0;  // data-change: the pair's step change in percent
  std::string verdict;
  bool out_of_line = false;
  Box bar;          // the bar's rectangle (zero width for no change)
  double zero = 0;  // where the zero line is, in the same pixels
};

struct DrawnRankLabel {
  std::string pair;  // its full text, from its title
  Box box;
  bool cut = false;        // its start shrank to an ellipsis
  bool end_shown = false;  // its end (" rank 12") is whole inside its box
  double chart_left = 0;   // the left edge of its row's bar chart
};

struct DrawnDiffPage {
  std::string dom;
  std::string verdict;                       // the banner's data-verdict
  std::string banner_text;                   // the banner's words, tags dropped, entities decoded
  std::map<std::string, DrawnRankBar> bars;  // by pair key
  std::vector<DrawnRankLabel> labels;        // in the page's order
  std::vector<std::string> out_of_line;      // the list above the chart, in order
  std::vector<Box> step_numbers;             // the per-step chart's step numbers, left to right
  std::size_t step_points = 0;               // per-step chart: one per step and side
  double page_width = 0;                     // document scroll width
  double window_width = 0;
};

// Opens `page` in `chromium --headless` at `window_size` ("1280,900") with a fresh profile in
// `profile`, and reads the DOM it dumps. Fails the calling test when Chromium does not run.
DrawnDiffPage draw_diff_in_chromium(const std::filesystem::path& page,
                                    const std::filesystem::path& profile,
                                    const std::string& window_size = "1280,900");

}  // namespace nsel::test
