#include "nsel/reports/report_version.hpp"

#include <cctype>
#include <fstream>
#include <string>
#include <string_view>

namespace nsel {
namespace fs = std::filesystem;

namespace {

constexpr std::string_view kStreamMagic = "U3w[END]NVIDIA Nsight Systems Stream ";
constexpr std::string_view kReportMagic = "NVIDIA Tegra Profiler Report ";

std::string read_at(std::ifstream& in, std::streamoff offset, std::size_t size) {
  std::string bytes(size, '\0');
  in.clear();
  in.seekg(offset);
  in.read(bytes.data(), static_cast<std::streamsize>(size));
  bytes.resize(static_cast<std::size_t>(in.gcount()));
  return bytes;
}

// A full version (year.release.patch.build-suffix) in the last block: the report's own facts
// name it three times there; shorter numbers nearby (library versions, dates) are passed over.
std::optional<NsysVersion> full_version_in(std::string_view text) {
  for (std::size_t at = 0; at < text.size(); ++at) {
    if (text[at] != '2' || (at > 0 && (std::isdigit(static_cast<unsigned char>(text[at - 1])) ||
                                       text[at - 1] == '.'))) {
      continue;
    }
    const auto v = nsys_version_prefix(text.substr(at));
    if (v && v->build > 0 && v->text.find('-') != std::string::npos) return v;
  }
  return std::nullopt;
}

}  // namespace

std::optional<NsysVersion> report_writer_version(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return std::nullopt;
  const std::string head = read_at(in, 0, 128);
  if (head.starts_with(kStreamMagic)) {
    return parse_nsys_version(std::string_view(head).substr(kStreamMagic.size()));
  }
  if (!head.starts_with(kReportMagic)) return std::nullopt;
  const std::string_view rest = std::string_view(head).substr(kReportMagic.size());
  if (!rest.starts_with("1.")) return parse_nsys_version(rest.substr(0, rest.find('\n')));
  std::error_code ec;
  const auto size = fs::file_size(file, ec);
  if (ec) return std::nullopt;
  constexpr std::uintmax_t kTail = 4096;
  const auto from = size > kTail ? size - kTail : 0;
  const std::string tail = read_at(in, static_cast<std::streamoff>(from), size - from);
  // The facts (name, id, date, host, versions, then the command line) end the file before its
  // "[END]"; the version comes before the command line, which may name other versions.
  return full_version_in(std::string_view(tail).substr(0, tail.rfind("[END]")));
}

}  // namespace nsel
