// CSV rows as nsel report and nsel diff write them (an analyze internal): a field with a
// comma, quote or line break is quoted, quotes doubled.
#pragma once

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

}  // namespace nsel::analyze
