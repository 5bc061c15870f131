// Names as the terminal shows them in nsel ls's, nsel check's and the other commands' lines;
// --json keeps them exact.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "nsel/core/terminal_text.hpp"

namespace nsel::render_detail {

// A name (folder, file, worker, a note about them): control characters escaped, cut at 512
// bytes (nsel/core/terminal_text.hpp).
inline std::string shown(const std::string& text) {
  return terminal_text(text, kNameCutBytes);
}

// A column's cell of the tables nsel ls and nsel check print: empty shows as "-", escaped and
// cut at 64 bytes so that one long name does not widen every row.
inline std::string cell(const std::string& text) {
  return text.empty() ? "-" : terminal_text(text, kCellCutBytes);
}

// The folders searched, as one comma-separated list.
inline std::string joined_paths(const std::vector<std::filesystem::path>& paths) {
  std::string out;
  for (const std::filesystem::path& p : paths) out += (out.empty() ? "" : ", ") + shown(p.string());
  return out;
}

}  // namespace nsel::render_detail
