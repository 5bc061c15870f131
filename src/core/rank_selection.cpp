#include "nsel/core/rank_selection.hpp"

#include <charconv>

#include "nsel/core/error.hpp"

namespace nsel {
namespace {

constexpr std::string_view kRankListExpected =
    "ranks and inclusive ranges separated by commas, for example '0,8-15' (whole numbers >= 0)";
constexpr std::string_view kRankExpected = "a whole number >= 0, for example '3'";

std::string_view strip(std::string_view s) {
  const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!s.empty() && blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && blank(s.back())) s.remove_suffix(1);
  return s;
}

// Sets `rank` from digits only (no sign, no spaces), or says what is wrong ("too large").
std::string read_rank(std::string_view digits, long long& rank) {
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), rank);
  if (ec == std::errc::result_out_of_range) return "too large";
  if (digits.empty() || digits.front() == '-' || ec != std::errc() ||
      end != digits.data() + digits.size()) {
    return "not a whole number >= 0";
  }
  return "";
}

// One rank from what the caller gave, else from the first variable set.
Identified<long long> find_rank(
    const std::optional<long long>& given, std::string_view given_source,
    const std::vector<std::pair<std::string_view, std::string>>& found) {
  if (given) return {given, std::string(given_source), ""};
  if (found.empty()) return {};
  const auto& [name, value] = found.front();
  Identified<long long> out;
  out.source = std::string(name);
  long long rank = 0;
  if (std::string problem = read_rank(strip(value), rank); !problem.empty()) {
    out.problem = std::string(name) + "=" + quote(value) + " is " + problem;
  } else {
    out.value = rank;
  }
  return out;
}

}  // namespace

RankList RankList::parse(std::string_view value, std::string_view source) {
  RankList list;
  list.text_ = std::string(value);
  size_t begin = 0;
  int item_number = 0;
  while (begin <= value.size()) {
    size_t comma = value.find(',', begin);
    if (comma == std::string_view::npos) comma = value.size();
    const std::string_view item = strip(value.substr(begin, comma - begin));
    begin = comma + 1;
    ++item_number;
    const auto fail = [&](const std::string& problem) {
      throw Error(bad_value(source, value, problem, kRankListExpected));
    };
    if (item.empty()) fail("item " + std::to_string(item_number) + " is empty");
    const size_t dash = item.find('-');
    long long first = 0, last = 0;
    if (dash == std::string_view::npos) {
      if (std::string problem = read_rank(item, first); !problem.empty()) {
        fail(quote(item) + " is " + problem);
      }
      last = first;
    } else {
      const std::string_view low = strip(item.substr(0, dash));
      const std::string_view high = strip(item.substr(dash + 1));
      if (low.empty()) fail("range " + quote(item) + " lacks its first rank");
      if (high.empty()) fail("range " + quote(item) + " lacks its last rank");
      for (auto [part, rank] : {std::pair{low, &first}, std::pair{high, &last}}) {
        if (std::string problem = read_rank(part, *rank); !problem.empty()) {
          fail(quote(part) + " is " + problem);
        }
      }
      if (last < first) {
        fail("range " + quote(item) + " is reversed (" + std::to_string(first) + " > " +
             std::to_string(last) + ")");
      }
    }
    list.ranges_.emplace_back(first, last);
  }
  return list;
}

bool RankList::contains(long long rank) const {
  for (const auto& [first, last] : ranges_) {
    if (first <= rank && rank <= last) return true;
  }
  return false;
}

std::vector<long long> RankList::expand(std::string_view source, std::size_t limit) const {
  std::vector<long long> ranks;
  for (const auto& [first, last] : ranges_) {
    for (long long rank = first; rank <= last; ++rank) {
      if (ranks.size() == limit) {
        throw Error(bad_value(source, text_,
                              "more than " + std::to_string(limit) + " ranks to show",
                              "at most " + std::to_string(limit) + " ranks, for example '0-7'"));
      }
      ranks.push_back(rank);
    }
  }
  return ranks;
}

long long parse_rank(std::string_view value, std::string_view source) {
  long long rank = 0;
  const std::string problem = read_rank(strip(value), rank);
  if (!problem.empty()) throw Error(bad_value(source, value, problem, kRankExpected));
  return rank;
}

ProcessIdentity identify_process(
    const std::function<std::optional<std::string>(std::string_view)>& lookup,
    const IdentityOverrides& given, std::string_view host_name) {
  const auto collect = [&](const auto& names) {
    std::vector<std::pair<std::string_view, std::string>> found;
    for (std::string_view name : names) {
      if (auto value = lookup(name); value && !value->empty()) found.emplace_back(name, *value);
    }
    return found;
  };
  ProcessIdentity identity;
  identity.rank = find_rank(given.rank, given.rank_source, collect(kRankVariables));
  identity.local_rank =
      find_rank(given.local_rank, given.local_rank_source, collect(kLocalRankVariables));
  if (given.node) {
    identity.node = {given.node, given.node_source, ""};
  } else if (!host_name.empty()) {
    identity.node = {std::string(host_name), std::string(kHostNameSource), ""};
  }
  return identity;
}

std::string rank_variables_text(bool local) {
  std::string out;
  const auto add = [&](const auto& names) {
    for (std::string_view name : names) {
      if (!out.empty()) out += ", ";
      out += name;
    }
  };
  if (local) {
    add(kLocalRankVariables);
  } else {
    add(kRankVariables);
  }
  return out;
}

}  // namespace nsel
