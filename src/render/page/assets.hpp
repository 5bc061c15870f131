// The HTML pages' assets: the files of this folder, each embedded into the render room at build
// time as the text of one source that cmake/NselPageAssets.cmake generates (the build embeds a
// file again when it changes). Kept as files so that CSS and JavaScript are edited, parsed and
// checked as such (CTest page_scripts_parse and page_styles_parse).
#pragma once

#include <string_view>

namespace nsel::page_assets {

// The style sheet both pages share (fonts, colours, tables, nsel report's timeline): page.css.
extern const std::string_view page_css;

// nsel diff's own styles (its banner, verdicts, charts and rank bars), after page.css: diff.css.
extern const std::string_view diff_css;

// Draws nsel report's timeline from the page's data: column widths from the zoom, every k-th
// step header so that none overlap, and after each drawing marks what the browser laid out with
// a size (the bars, the GPU strips, the header boxes), so a headless browser's DOM dump shows
// what was drawn: report.js.
extern const std::string_view report_js;

// Measures nsel diff's rank labels and bars and the step numbers as laid out (data-box: left top
// right bottom; data-cut: the label shows an ellipsis) and the page's width, then lets a click on
// a header sort its table: diff.js.
extern const std::string_view diff_js;

// The page around either page's body; placeholders {{title}}, {{style}}, {{body}}, {{script}}:
// page.html.
extern const std::string_view page_html;

// nsel report's timeline: its zoom controls, the label column, the plot the script draws into,
// its notes and the page data; placeholders {{top}} and {{head}} (px), {{band_label}},
// {{worker_labels}}, {{strip_note}}, {{data}}: timeline.html.
extern const std::string_view timeline_html;

}  // namespace nsel::page_assets
