// What the HTML pages of `nsel report` and `nsel diff` share (an analyze internal): the escaping
// of text for HTML, the plain table and the style sheet, so both pages look alike.
#pragma once

#include <sstream>
#include <string>
#include <vector>

namespace nsel::html_page {

// Text made safe for an element's content and for an attribute value in either quote.
std::string escape(const std::string& text);

// A table of escaped text cells, numbers right-aligned: the first `text_columns` columns (and
// the last, when `last_is_text`) are text, aligned left.
void table(std::ostringstream& out, const std::vector<std::string>& header,
           const std::vector<std::vector<std::string>>& rows, std::size_t text_columns = 0,
           bool last_is_text = true);

// The style sheet of nsel report's page (fonts, colours, tables, its timeline).
extern const char* const kStyle;

}  // namespace nsel::html_page
