// Command lines that may have to pass through a shell (Ray runs workers with `bash -c`).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace nsel {

// Quotes one argument so that a POSIX shell reads it back unchanged: as-is when it holds only
// characters no shell treats specially, otherwise in single quotes.
std::string shell_quote(std::string_view argument);

// Joins quoted arguments with spaces.
std::string shell_join(const std::vector<std::string>& argv);

}  // namespace nsel
