// A name a report, a manifest or a folder may hold: an escape sequence, a newline that would
// forge a line, and a byte that is not UTF-8. The terminal shows it escaped; JSON keeps it
// exact (the bad byte, which JSON cannot hold, becomes U+FFFD when printed).
#pragma once

#include <string>

namespace nsel::test {

inline const std::string kHostile = "evil\x1b[31m\nname\xff";
// As terminal_text shows it (19 bytes).
inline const std::string kHostileShown = "evil\\x1b[31m\\nname\xff";
// As the commands print it in JSON (dump with invalid UTF-8 replaced).
inline const std::string kHostileJson = "\"evil\\u001b[31m\\nname\xef\xbf\xbd\"";

}  // namespace nsel::test
