// The plain tables nsel report and nsel diff write (a render internal): CSV rows (a field with
// a comma, quote or line break is quoted, quotes doubled) and aligned terminal columns.
#pragma once

#include <algorithm>
#include <deque>
#include <filesystem>
#include <string>
#include <vector>

#include "nsel/core/error.hpp"
#include "nsel/core/terminal_text.hpp"
#include "nsel/sys/files.hpp"

namespace nsel::render_detail {

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
// left-aligned, numbers right-aligned. Every cell goes through terminal_text: control
// characters escaped, a cell cut with "..." at kMaxCellBytes (the last column at
// kMaxLastCellBytes), so that one long name neither widens a column for every row nor costs
// time beyond the table's own size; --json and --csv keep names whole.
class TextTable {
 public:
  static constexpr std::size_t kMaxCellBytes = kCellCutBytes;
  static constexpr std::size_t kMaxLastCellBytes = kNameCutBytes;

  explicit TextTable(std::vector<std::string> header, std::size_t left = 0) : left_(left) {
    add(std::move(header));
  }
  void add(std::vector<std::string> row) {
    for (std::size_t i = 0; i < row.size(); ++i) {
      row[i] = terminal_text(row[i], i + 1 == row.size() ? kMaxLastCellBytes : kMaxCellBytes);
    }
    rows_.push_back(std::move(row));
  }
  std::string render(const std::string& indent) const {
    std::vector<std::size_t> width;
    for (const auto& row : rows_) {
      width.resize(std::max(width.size(), row.size()));
      for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
    }
    std::string out;
    for (const auto& row : rows_) {
      out += indent;
      for (std::size_t i = 0; i < row.size(); ++i) {
        const bool last = i + 1 == row.size();
        // The last cell is never padded: no trailing blanks, and no cost from a long name.
        const std::size_t pad = last ? 0 : width[i] - row[i].size();
        if (i < left_ || last) {
          out += row[i];
          out.append(pad, ' ');
        } else {
          out.append(pad, ' ');
          out += row[i];
        }
        if (!last) out += "  ";
      }
      out += "\n";
    }
    return out;
  }

 private:
  std::size_t left_;
  std::vector<std::vector<std::string>> rows_;
};

// CSV files written together into one folder (--csv DIR): the folder made first (an error names
// the flag), the files filled, then each written under a temporary name and renamed.
class CsvFolder {
 public:
  explicit CsvFolder(std::filesystem::path dir) : dir_(std::move(dir)) {
    std::error_code ec;
    std::filesystem::create_directories(dir_, ec);
    if (ec) {
      throw Error("--csv=" + quote(dir_.string()) + ": cannot create the folder: " + ec.message());
    }
  }
  // The file's rows; the reference stays valid as more files are added.
  Csv& add(const std::string& name) { return files_.emplace_back(name, Csv()).second; }
  std::vector<std::filesystem::path> write() const {
    std::vector<std::filesystem::path> written;
    for (const auto& [name, csv] : files_) {
      write_file_atomically(dir_ / name, csv.text());
      written.push_back(dir_ / name);
    }
    return written;
  }

 private:
  std::filesystem::path dir_;
  std::deque<std::pair<std::string, Csv>> files_;
};

}  // namespace nsel::render_detail
