// What the HTML pages of `nsel report` and `nsel diff` share (a render internal): the escaping
// of text for HTML, the plain table, the filling of templates, and the page around each page's
// body (src/render/page/page.html with page.css), so both pages look alike.
#pragma once

#include <initializer_list>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nsel::html_page {

// Text made safe for an element's content and for an attribute value in either quote.
std::string escape(const std::string& text);

// A table of escaped text cells, numbers right-aligned: the first `text_columns` columns (and
// the last, when `last_is_text`) are text, aligned left.
void table(std::ostringstream& out, const std::vector<std::string>& header,
           const std::vector<std::vector<std::string>>& rows, std::size_t text_columns = 0,
           bool last_is_text = true);

// Each placeholder's name and what replaces it.
using Fills = std::initializer_list<std::pair<std::string_view, std::string_view>>;

// `text` (a template of src/render/page) with each {{name}} replaced by its value, in one pass,
// so that a value holding "{{" (a range's name, say) is never read as a placeholder. A placeholder
// without a value or a value without its placeholder is a mistake in the template or its caller:
// std::logic_error.
std::string fill(std::string_view text, Fills values);

// A whole page: page.html around `body`, with page.css then the page's own style sheet, and the
// page's script.
std::string page(std::string_view title, std::string_view own_style, std::string_view body,
                 std::string_view script);

}  // namespace nsel::html_page
