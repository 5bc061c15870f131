// The pieces both HTML pages share; see html_page.hpp.
#include "render/html_page.hpp"

#include <algorithm>
#include <stdexcept>

#include "render/page/assets.hpp"

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

std::string fill(std::string_view text, Fills values) {
  std::string out;
  std::vector<bool> used(values.size(), false);
  std::size_t at = 0;
  for (std::size_t open = text.find("{{"); open != std::string_view::npos;
       open = text.find("{{", at)) {
    const std::size_t close = text.find("}}", open + 2);
    if (close == std::string_view::npos) {
      throw std::logic_error("a template's '{{' at " + std::to_string(open) + " has no '}}'");
    }
    const std::string_view name = text.substr(open + 2, close - open - 2);
    const auto value = std::find_if(values.begin(), values.end(),
                                    [&](const auto& fill) { return fill.first == name; });
    if (value == values.end()) {
      throw std::logic_error("a template's {{" + std::string(name) + "}} has no value");
    }
    used[static_cast<std::size_t>(value - values.begin())] = true;
    out.append(text.substr(at, open - at)).append(value->second);
    at = close + 2;
  }
  out.append(text.substr(at));
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (!used[i]) {
      throw std::logic_error("a value for {{" + std::string(values.begin()[i].first) +
                             "}}, which the template lacks");
    }
  }
  return out;
}

std::string page(std::string_view title, std::string_view own_style, std::string_view body,
                 std::string_view script) {
  const std::string style = std::string(page_assets::page_css).append(own_style);
  return fill(page_assets::page_html,
              {{"title", title}, {"style", style}, {"body", body}, {"script", script}});
}

}  // namespace nsel::html_page
