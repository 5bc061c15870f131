#include "nsel/core/pattern.hpp"

#include <algorithm>
#include <cstdint>

#include "core/python_text.hpp"

namespace nsel {
namespace {

using CodePoints = std::u32string;

using python::decode;
using python::utf8_width;

// One bracket expression, already resolved to literal members and inclusive ranges.
struct CharSet {
  bool negated = false;
  CodePoints singles;
  std::vector<std::pair<char32_t, char32_t>> ranges;

  bool contains(char32_t c) const {
    for (char32_t s : singles) {
      if (s == c) return true;
    }
    for (auto [lo, hi] : ranges) {
      if (lo <= c && c <= hi) return true;
    }
    return false;
  }
  bool matches(char32_t c) const { return contains(c) != negated; }
};

// Builds the set from the text between '[' (after an optional '!') and its closing ']',
// following CPython's fnmatch.translate: hyphens split the text into chunks, the search for the
// next range hyphen skips the character after a hyphen, and reversed ranges are dropped together
// with both of their end points.
CharSet make_set(const CodePoints& body, bool negated) {
  CharSet set;
  set.negated = negated;
  std::vector<CodePoints> chunks;
  bool has_hyphen = body.find(U'-') != CodePoints::npos;
  if (!has_hyphen) {
    set.singles = body;
    return set;
  }
  size_t begin = 0;
  size_t search = 1;
  while (true) {
    size_t hyphen = search < body.size() ? body.find(U'-', search) : CodePoints::npos;
    if (hyphen == CodePoints::npos) break;
    chunks.push_back(body.substr(begin, hyphen - begin));
    begin = hyphen + 1;
    search = hyphen + 3;
  }
  CodePoints last = body.substr(begin);
  if (!last.empty()) {
    chunks.push_back(last);
  } else {
    chunks.back().push_back(U'-');
  }
  for (size_t k = chunks.size() - 1; k > 0; --k) {
    if (chunks[k - 1].back() > chunks[k].front()) {
      CodePoints merged = chunks[k - 1].substr(0, chunks[k - 1].size() - 1) + chunks[k].substr(1);
      chunks[k - 1] = merged;
      chunks.erase(chunks.begin() + static_cast<std::ptrdiff_t>(k));
    }
  }
  // Adjacent chunks are joined by a range from the last of one to the first of the next; every
  // other character is a literal member.
  for (size_t k = 0; k < chunks.size(); ++k) {
    const CodePoints& chunk = chunks[k];
    size_t first = k > 0 ? 1 : 0;
    size_t end = k + 1 < chunks.size() ? chunk.size() - 1 : chunk.size();
    if (k > 0) set.ranges.emplace_back(chunks[k - 1].back(), chunk.front());
    for (size_t m = first; m < end; ++m) set.singles.push_back(chunk[m]);
  }
  return set;
}

struct Token {
  enum Kind { kLiteral, kAny, kStar, kSet } kind;
  char32_t literal = 0;
  size_t set_index = 0;
};

struct CompiledPattern {
  std::vector<Token> tokens;
  std::vector<CharSet> sets;
};

CompiledPattern compile(const CodePoints& pat) {
  CompiledPattern out;
  size_t i = 0;
  const size_t n = pat.size();
  while (i < n) {
    char32_t c = pat[i++];
    if (c == U'*') {
      if (out.tokens.empty() || out.tokens.back().kind != Token::kStar) {
        out.tokens.push_back({Token::kStar});
      }
    } else if (c == U'?') {
      out.tokens.push_back({Token::kAny});
    } else if (c == U'[') {
      size_t j = i;
      if (j < n && pat[j] == U'!') ++j;
      if (j < n && pat[j] == U']') ++j;
      while (j < n && pat[j] != U']') ++j;
      if (j >= n) {
        out.tokens.push_back({Token::kLiteral, U'['});
        continue;
      }
      bool negated = pat[i] == U'!';
      CodePoints body = pat.substr(negated ? i + 1 : i, j - (negated ? i + 1 : i));
      out.sets.push_back(make_set(body, negated));
      out.tokens.push_back({Token::kSet, 0, out.sets.size() - 1});
      i = j + 1;
    } else {
      out.tokens.push_back({Token::kLiteral, c});
    }
  }
  return out;
}

bool token_matches(const CompiledPattern& p, const Token& t, char32_t c) {
  switch (t.kind) {
    case Token::kLiteral:
      return t.literal == c;
    case Token::kAny:
      return true;
    case Token::kSet:
      return p.sets[t.set_index].matches(c);
    case Token::kStar:
      return false;
  }
  return false;
}

}  // namespace

bool fnmatch_case(std::string_view pattern, std::string_view name) {
  const CompiledPattern p = compile(decode(pattern));
  const CodePoints s = decode(name);
  // Every token but '*' consumes exactly one code point, so remembering only the latest star is
  // enough: extending it is the only choice that can ever help (linear-time glob matching).
  size_t ti = 0, si = 0;
  size_t star_token = SIZE_MAX, star_text = 0;
  while (si < s.size()) {
    if (ti < p.tokens.size() && p.tokens[ti].kind == Token::kStar) {
      star_token = ti++;
      star_text = si;
    } else if (ti < p.tokens.size() && token_matches(p, p.tokens[ti], s[si])) {
      ++ti;
      ++si;
    } else if (star_token != SIZE_MAX) {
      ti = star_token + 1;
      si = ++star_text;
    } else {
      return false;
    }
  }
  while (ti < p.tokens.size() && p.tokens[ti].kind == Token::kStar) ++ti;
  return ti == p.tokens.size();
}

PatternList PatternList::parse(std::string_view comma_separated) {
  PatternList list;
  size_t begin = 0;
  while (begin <= comma_separated.size()) {
    size_t comma = comma_separated.find(',', begin);
    if (comma == std::string_view::npos) comma = comma_separated.size();
    std::string_view piece = comma_separated.substr(begin, comma - begin);
    // Strip as Python's str.strip() does, on whole code points: find how many bytes of leading
    // and trailing whitespace there are by decoding the piece's edges.
    while (!piece.empty()) {
      const CodePoints head = decode(piece.substr(0, std::min<size_t>(4, piece.size())));
      const size_t width = utf8_width(head.front());
      if (!python::is_space(head.front()) || width > piece.size()) break;
      piece.remove_prefix(width);
    }
    while (!piece.empty()) {
      size_t start = piece.size() - 1;
      while (start > 0 && piece.size() - start < 4 &&
             (static_cast<unsigned char>(piece[start]) & 0xC0) == 0x80) {
        --start;
      }
      const CodePoints tail = decode(piece.substr(start));
      if (tail.size() != 1 || !python::is_space(tail.front())) break;
      piece.remove_suffix(piece.size() - start);
    }
    if (!piece.empty()) list.patterns_.emplace_back(piece);
    begin = comma + 1;
  }
  return list;
}

std::optional<std::string> PatternList::first_match(std::string_view name) const {
  for (const std::string& pattern : patterns_) {
    if (fnmatch_case(pattern, name)) return pattern;
  }
  return std::nullopt;
}

}  // namespace nsel
