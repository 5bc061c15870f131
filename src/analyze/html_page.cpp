// The pieces both HTML pages share; see html_page.hpp.
#include "analyze/html_page.hpp"

namespace nsel::html_page {

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

void table(std::ostringstream& out, const std::vector<std::string>& header,
           const std::vector<std::vector<std::string>>& rows, std::size_t text_columns,
           bool last_is_text) {
  out << (last_is_text ? "<table>" : "<table class=num>") << "<thead><tr>";
  for (std::size_t i = 0; i < header.size(); ++i) {
    out << (i < text_columns ? "<th class=t>" : "<th>") << escape(header[i]) << "</th>";
  }
  out << "</tr></thead><tbody>\n";
  for (const auto& row : rows) {
    out << "<tr>";
    for (std::size_t i = 0; i < row.size(); ++i) {
      const bool text = i < text_columns || (last_is_text && i + 1 == row.size());
      out << (text ? "<td class=t>" : "<td>") << escape(row[i]) << "</td>";
    }
    out << "</tr>\n";
  }
  out << "</tbody></table>\n";
}

const char* const kStyle = R"(
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#1d232a;background:#fff}
h1{font-size:22px}h2{font-size:18px;margin-top:32px}h3{font-size:15px;margin:18px 0 6px}
table{border-collapse:collapse;margin:6px 0 14px}th,td{padding:3px 10px;border-bottom:1px solid #e3e6ea}
th{background:#f3f5f7;text-align:right}td{text-align:right;font-variant-numeric:tabular-nums}
td.t,th.t,th:last-child{text-align:left}table.num th:last-child{text-align:right}.note{color:#5c6670}.bad{color:#b3261e}
.wide{overflow-x:auto;max-width:100%}
.tl-controls{margin:4px 0 6px}.tl-controls button{font:14px system-ui,sans-serif;min-width:32px;margin-right:4px}
.tl-controls .note{margin-left:10px;font-size:12px}
.tl-body{display:flex;border:1px solid #e3e6ea;background:#fff}
.tl-labels{flex:0 0 220px;width:220px;border-right:1px solid #e3e6ea;overflow:hidden}
.wl{display:flex;white-space:nowrap;font-size:12px;padding:0 8px;justify-content:flex-end;color:#1d232a}
.wl .wa{overflow:hidden;text-overflow:ellipsis;min-width:0}.wl .wb{flex:0 0 auto}
.tl-head .wl{color:#5c6670}.bandlabel{font-size:11px}
.tl-scroll{flex:1 1 auto;overflow-x:auto;overflow-y:hidden;min-width:0}
#plot text{font:11px system-ui,sans-serif}.stephead{text-anchor:middle;fill:#5c6670}
.col{fill:#fff}.col.odd{fill:#f6f7f9}.stepbar{fill:#dde3ea}
.straggler .stepbar{stroke:#b3261e;stroke-width:2}
rect.busy{fill:#455a64}rect.comm{fill:#d81b60}rect.idle{fill:#e3e6ea}
.legend span{display:inline-block;margin-right:14px}
.legend i,i.sw{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:-1px}
i.sw{margin-left:8px}
details>summary{cursor:pointer;font-size:18px;font-weight:bold;margin-top:24px}
)";

}  // namespace nsel::html_page
