// The pure part of the Ray launcher fix: recognising and rewriting the launcher line.
#include <array>
#include <string>

#include "nsel/core/ray_patch.hpp"

namespace nsel {
namespace {

// The line without the whitespace outside string literals, with every string delimiter spelled
// `"` and a trailing comment dropped, so that formatting changes do not hide the line.
std::string squeeze(std::string_view line) {
  std::string out;
  char open_quote = 0;
  for (char c : line) {
    if (open_quote != 0) {
      out += c == open_quote ? '"' : c;
      if (c == open_quote) open_quote = 0;
    } else if (c == '"' || c == '\'') {
      open_quote = c;
      out += '"';
    } else if (c == '#') {
      break;
    } else if (c != ' ' && c != '\t' && c != '\r') {
      out += c;
    }
  }
  return out;
}

// Attributes that hold the nsys command: the current release, then older builds.
constexpr std::array<std::string_view, 2> kCommandAttributes = {"nsight_cmd", "nsys_cmd"};

std::string original_form(std::string_view attribute) {
  return "context.py_executable = \" \".join(self." + std::string(attribute) + ") + \" python\"";
}

std::string fixed_form(std::string_view attribute) {
  return "context.py_executable = \" \".join(self." + std::string(attribute) +
         ") + f\" {context.py_executable}\"";
}

// Which form `line` is in, and with which attribute.
enum class Form { other, original, fixed };
struct Match {
  Form form = Form::other;
  std::string_view attribute;
};

Match classify(std::string_view line) {
  const std::string squeezed = squeeze(line);
  for (std::string_view attribute : kCommandAttributes) {
    if (squeezed == squeeze(original_form(attribute))) return {Form::original, attribute};
    if (squeezed == squeeze(fixed_form(attribute))) return {Form::fixed, attribute};
  }
  return {};
}

}  // namespace

RayNsightEdit edit_ray_nsight_source(std::string_view source, bool revert) {
  RayNsightEdit edit;
  const Form wanted = revert ? Form::fixed : Form::original;
  bool seen_original = false;
  bool seen_fixed = false;
  int line_number = 0;
  size_t begin = 0;
  while (begin <= source.size()) {
    size_t end = source.find('\n', begin);
    const bool last = end == std::string_view::npos;
    if (last) end = source.size();
    const std::string_view line = source.substr(begin, end - begin);
    ++line_number;
    const Match match = classify(line);
    if (match.form != Form::other && edit.first_line == 0) edit.first_line = line_number;
    seen_original = seen_original || match.form == Form::original;
    seen_fixed = seen_fixed || match.form == Form::fixed;
    if (match.form == wanted) {
      const std::string_view indent = line.substr(0, line.find_first_not_of(" \t"));
      edit.text += indent;
      edit.text += revert ? original_form(match.attribute) : fixed_form(match.attribute);
      if (line.ends_with('\r')) edit.text += '\r';
      ++edit.changed_lines;
    } else {
      edit.text += line;
    }
    if (last) break;
    edit.text += '\n';
    begin = end + 1;
  }
  edit.before = seen_original ? RayNsightState::unpatched
                : seen_fixed  ? RayNsightState::patched
                              : RayNsightState::not_found;
  return edit;
}

std::optional<std::string> ray_version_from_source(std::string_view version_py) {
  size_t begin = 0;
  while (begin < version_py.size()) {
    size_t end = version_py.find('\n', begin);
    if (end == std::string_view::npos) end = version_py.size();
    const std::string squeezed = squeeze(version_py.substr(begin, end - begin));
    if (squeezed.starts_with("version=\"") && squeezed.size() > 10 && squeezed.back() == '"') {
      return squeezed.substr(9, squeezed.size() - 10);
    }
    begin = end + 1;
  }
  return std::nullopt;
}

}  // namespace nsel
