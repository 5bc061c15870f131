// The plain tables nsel report and nsel diff write (an analyze internal): CSV rows (a field with
// a comma, quote or line break is quoted, quotes doubled) and aligned terminal columns.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

namespace nsel::analyze {

inline std::string csv_field(const std::string& value) {
  if (value.find_first_of(",\"\n\r") == std::string::npos) return value;
  std::string out = "\"";
  for (char c : value) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

class Csv {
 public:
  void row(const std::vector<std::string>& cells) {
    for (std::size_t i = 0; i < cells.size(); ++i) text_ += (i ? "," : "") + csv_field(cells[i]);
    text_ += "\n";
  }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

// Columns padded to their widest cell; the first `left` columns and the last (names) are
// left-aligned, numbers right-aligned.
class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header, std::size_t left = 0)
      : left_(left), rows_{std::move(header)} {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  std::string render(const std::string& indent) const {
    std::vector<std::size_t> width;
    for (const auto& row : rows_) {
      width.resize(std::max(width.size(), row.size()));
      for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
    }
    std::string out;
    for (const auto& row : rows_) {
      std::string line = indent;
      for (std::size_t i = 0; i < row.size(); ++i) {
        const std::string pad(width[i] - row[i].size(), ' ');
        const bool last = i + 1 == row.size();
        if (i < left_ || last) {
          line += row[i] + (last ? "" : pad);
        } else {
          line += pad + row[i];
        }
        if (!last) line += "  ";
      }
      out += line + "\n";
    }
    return out;
  }

 private:
  std::size_t left_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace nsel::analyze
