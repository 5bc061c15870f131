// Names as a terminal shows them. A name read from a report, a manifest, a file name or the
// command line (an NVTX range, a kernel, a worker, a folder) may hold any byte; printed raw, a
// newline forges a line of output and an escape sequence drives the terminal. Every text
// (terminal) renderer passes names through here; JSON and CSV keep them exact, with their own
// escaping.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace nsel {

// The widths every command cuts text to on a terminal (the docs promise them): a name or a
// line of its own, a column's cell, an item of a list on one line.
inline constexpr std::size_t kNameCutBytes = 512;
inline constexpr std::size_t kCellCutBytes = 64;
inline constexpr std::size_t kListItemCutBytes = 128;

// The rule: newline, carriage return and tab show as "\n", "\r", "\t", every other C0 control
// byte and DEL as "\xHH", a C1 control character (U+0080..U+009F, UTF-8 C2 80..C2 9F) as
// "\u00HH" and a stray byte 0x80..0x9F (an 8-bit C1 control, not part of a UTF-8 character) as
// "\xHH"; every other byte as it is (UTF-8 text stays readable; a backslash too, so that text
// already made safe by quote() passes unchanged).
// With `max_bytes`, a longer result is cut to at most that many bytes, ending in "...", never
// inside an escape or a UTF-8 character; the work is bounded by `max_bytes`, not by the name.
std::string terminal_text(std::string_view name, std::size_t max_bytes = std::string::npos);

// Whether `text` holds a character terminal_text escapes.
bool has_control_characters(std::string_view text);

// The last line of a program's output that is not blank (nsys's or Python's error after its
// progress or traceback), with what a progress bar redrew on it (up to its last '\r') dropped.
std::string last_output_line(std::string_view output);

// The last `count` lines of a program's output that are not blank, each as last_output_line
// takes it, joined with '\n': what a failure shows of a helper's log.
std::string last_output_lines(std::string_view output, std::size_t count);

}  // namespace nsel
