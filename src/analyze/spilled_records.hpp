// Fixed-size records kept in a small buffer and, past it, in an unlinked temporary file: memory
// stays that of the buffer however many records there are, and nothing is left behind on disk.
#pragma once

#include <algorithm>
#include <cstdio>
#include <memory>
#include <type_traits>
#include <vector>

#include "nsel/core/error.hpp"

namespace nsel::analyze {

template <typename Record>
class SpilledRecords {
  static_assert(std::is_trivially_copyable_v<Record>, "records are written as bytes");

 public:
  explicit SpilledRecords(std::size_t buffer_records) : buffer_records_(buffer_records) {}

  void push_back(const Record& record) {
    if (buffer_.capacity() == 0) buffer_.reserve(buffer_records_);  // only once used
    buffer_.push_back(record);
    if (buffer_.size() == buffer_records_) spill();
  }

  long long size() const { return spilled_ + static_cast<long long>(buffer_.size()); }

  // Every record, in the order pushed.
  template <typename Visit>
  void for_each(Visit visit) {
    if (file_) {
      std::rewind(file_.get());
      std::vector<Record> chunk(buffer_records_);
      long long left = spilled_;
      while (left > 0) {
        const auto want = static_cast<std::size_t>(
            std::min<long long>(left, static_cast<long long>(chunk.size())));
        if (std::fread(chunk.data(), sizeof(Record), want, file_.get()) != want) {
          throw Error("cannot read back a temporary file for summaries", 1);
        }
        for (std::size_t i = 0; i < want; ++i) visit(chunk[i]);
        left -= static_cast<long long>(want);
      }
    }
    for (const Record& r : buffer_) visit(r);
  }

 private:
  void spill() {
    if (!file_) {
      file_.reset(std::tmpfile());  // unlinked: nothing is left behind, whatever happens
      if (!file_) throw Error("cannot create a temporary file for summaries", 1);
    }
    std::fseek(file_.get(), 0, SEEK_END);  // after reading back, writing resumes at the end
    if (std::fwrite(buffer_.data(), sizeof(Record), buffer_.size(), file_.get()) !=
        buffer_.size()) {
      throw Error("cannot write a temporary file for summaries (disk full?)", 1);
    }
    spilled_ += static_cast<long long>(buffer_.size());
    buffer_.clear();
  }

  struct Closer {
    void operator()(std::FILE* file) const { std::fclose(file); }
  };
  std::size_t buffer_records_;
  std::vector<Record> buffer_;
  std::unique_ptr<std::FILE, Closer> file_;
  long long spilled_ = 0;
};

}  // namespace nsel::analyze
