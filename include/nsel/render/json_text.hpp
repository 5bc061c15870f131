// How every command writes its JSON: the one serialisation, so that no command indents,
// escapes or orders differently.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace nsel {

enum class JsonLayout {
  document,  // one document, indented by two (report, check, ls, diff, doctor, demo)
  line,      // one object per line, for the commands that stream them (plan, ray patch, sync)
};

// `document`'s text. Its first key must be "schema" (every command's rule; std::logic_error
// otherwise, a bug of nsel). Bytes that are not UTF-8 (a name read from a file) are replaced by
// U+FFFD, so the output always parses; the text output shows them escaped.
std::string json_text(const nlohmann::ordered_json& document, JsonLayout layout);

}  // namespace nsel
