// Parsing of plain values that settings and flags share: each throws nsel::Error naming the
// source (variable or flag), quoting the value and giving the expected form.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace nsel {

// "60", "2.5", " 90 ": seconds > 0 and at most a day, to the millisecond.
std::chrono::milliseconds parse_seconds(std::string_view value, std::string_view source);

// "1", "0", "true", "false", "yes", "no" (any case).
bool parse_switch(std::string_view value, std::string_view source);

// A whole number in [min, max], surrounding blanks allowed.
long long parse_whole_number(std::string_view value, std::string_view source, long long min,
                             long long max);

// A finite decimal number in [min, max] ("5", "0.01", " 2.5 "); `expected` is the form the
// message asks for ("a percentage >= 0, for example 5").
double parse_decimal(std::string_view value, std::string_view source, double min, double max,
                     std::string_view expected);

// A worker name that can name a report file: not empty, valid UTF-8, no NUL byte, no '/'. Any
// other character stays literal (quotes, '$', spaces, newlines, non-ASCII).
std::string parse_worker_name(std::string_view value, std::string_view source);

// "812 B", "126.6 KiB", "2.0 GiB".
std::string size_text(std::uintmax_t bytes);

// A moment in UTC as ISO 8601: "2026-12-07T23:25:52Z", or "2026-12-07T23:25:52.123Z" with
// milliseconds (the manifest's times).
std::string utc_time_text(std::chrono::system_clock::time_point when, bool with_milliseconds);

// The length of the well-formed UTF-8 character at `at` of `text` (RFC 3629: no overlong forms,
// surrogates or code points past U+10FFFF), or 0 where there is none.
std::size_t utf8_character_length(std::string_view text, std::size_t at);

// `text` with every byte that is not part of a well-formed UTF-8 character replaced by U+FFFD.
std::string valid_utf8(std::string_view text);

}  // namespace nsel
