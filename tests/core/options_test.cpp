#include <gtest/gtest.h>

#include <algorithm>

#include "nsel/core/error.hpp"
#include "nsel/core/nsys_options.hpp"

using nsel::NsysOptions;
using nsel::StepWindow;

namespace {

std::vector<std::string> argv_of(const NsysOptions& options) {
  return options.to_argv();
}

std::string merge_error(std::string_view json) {
  NsysOptions options = NsysOptions::contract_defaults("w", {2, 4});
  const auto before = options.entries();
  try {
    options.merge_json(json);
  } catch (const nsel::Error& e) {
    EXPECT_EQ(options.entries(), before) << "a failed merge must change nothing";
    return e.what();
  }
  return "";
}

}  // namespace

TEST(NsysOptions, ContractDefaults) {
  const NsysOptions options = NsysOptions::contract_defaults("dtensor_policy_worker", {2, 4});
  EXPECT_EQ(argv_of(options),
            (std::vector<std::string>{"-t", "cuda,nvtx", "-s", "none", "-o",
                                      "dtensor_policy_worker_2:4_%p", "--stop-on-exit=true",
                                      "--capture-range=cudaProfilerApi", "--capture-range-end=stop",
                                      "--cuda-graph-trace=node"}));
}

TEST(NsysOptions, PercentInWorkerNameIsKeptLiterally) {
  EXPECT_EQ(NsysOptions::contract_defaults("a%pb", {1, 2}).get("o"), "a%%pb_1:2_%p");
}

TEST(NsysOptions, ExtraOptionsOverrideAndAdd) {
  NsysOptions options = NsysOptions::contract_defaults("w", {2, 4});
  options.merge_json(R"({"t": "cuda,nvtx,osrt", "cuda-memory-usage": true, "d": 30,
                         "cuda-graph-trace": null})");
  EXPECT_EQ(options.get("t"), "cuda,nvtx,osrt");
  EXPECT_EQ(options.get("cuda-memory-usage"), "true");
  EXPECT_EQ(options.get("d"), "30");
  EXPECT_FALSE(options.has("cuda-graph-trace"));
}

TEST(NsysOptions, LongAndShortSpellingsAreOneOption) {
  NsysOptions options = NsysOptions::contract_defaults("w", {2, 4});
  options.merge_json(R"({"trace": "nvtx"})");
  EXPECT_EQ(options.get("t"), "nvtx");
  const auto argv = argv_of(options);
  EXPECT_EQ(std::count(argv.begin(), argv.end(), "-t"), 0);
  EXPECT_EQ(std::count(argv.begin(), argv.end(), "--trace=nvtx"), 1);
}

TEST(NsysOptions, BadExtraOptionsAreClearErrors) {
  const std::string expected =
      "; expected a JSON object of nsys options, for example '{\"t\": \"cuda,nvtx,osrt\", "
      "\"cuda-memory-usage\": true}'";
  EXPECT_EQ(merge_error("{\"t\": "),
            "NRL_NSYS_EXTRA_OPTIONS='{\"t\": ': not valid JSON (at byte 7)" + expected);
  EXPECT_EQ(merge_error("[1, 2]"),
            "NRL_NSYS_EXTRA_OPTIONS='[1, 2]': a JSON array is not an object" + expected);
  EXPECT_EQ(merge_error("\"t\""),
            "NRL_NSYS_EXTRA_OPTIONS='\"t\"': a JSON string is not an object" + expected);
  EXPECT_EQ(merge_error(R"({"t": ["cuda"]})"),
            "NRL_NSYS_EXTRA_OPTIONS='{\"t\": [\"cuda\"]}': value of 't' is a JSON array; option "
            "values must be strings, numbers, booleans or null (null removes a default)" +
                expected);
  EXPECT_EQ(merge_error(R"({"--t": "x"})"),
            "NRL_NSYS_EXTRA_OPTIONS='{\"--t\": \"x\"}': key '--t' is not an nsys option name "
            "(letters, digits, '-' and '_', without leading dashes)" +
                expected);
  EXPECT_EQ(merge_error(R"({"a; rm -rf /": "x"})"),
            "NRL_NSYS_EXTRA_OPTIONS='{\"a; rm -rf /\": \"x\"}': key 'a; rm -rf /' is not an nsys "
            "option name (letters, digits, '-' and '_', without leading dashes)" +
                expected);
}

TEST(NsysOptions, NumbersReachNsysAsNeMoRlWritesThem) {
  // NeMo RL reads NRL_NSYS_EXTRA_OPTIONS with json.loads and Ray writes str() of each value into
  // nsys's command: integers keep every digit, NaN and Infinity are Python's nan and inf, floats
  // print as Python prints them.
  NsysOptions options;
  options.merge_json(
      R"({"d": 18446744073709551616, "a": -9223372036854775809, "b": NaN, "c": Infinity,
          "e": -Infinity, "f": 1e400, "g": 1e16, "h": 1e15, "i": 0.00001, "j": 0.0001, "k": -0,
          "l": -0.0, "m": 1.5e-7, "n": 2.50, "q": 1E5, "r": 4.9e-324})");
  EXPECT_EQ(options.get("d"), "18446744073709551616");
  EXPECT_EQ(options.get("a"), "-9223372036854775809");
  EXPECT_EQ(options.get("b"), "nan");
  EXPECT_EQ(options.get("c"), "inf");
  EXPECT_EQ(options.get("e"), "-inf");
  EXPECT_EQ(options.get("f"), "inf");
  EXPECT_EQ(options.get("g"), "1e+16");
  EXPECT_EQ(options.get("h"), "1000000000000000.0");
  EXPECT_EQ(options.get("i"), "1e-05");
  EXPECT_EQ(options.get("j"), "0.0001");
  EXPECT_EQ(options.get("k"), "0");
  EXPECT_EQ(options.get("l"), "-0.0");
  EXPECT_EQ(options.get("m"), "1.5e-07");
  EXPECT_EQ(options.get("n"), "2.5");
  EXPECT_EQ(options.get("q"), "100000.0");
  EXPECT_EQ(options.get("r"), "5e-324");
  const std::vector<std::string> argv = argv_of(options);
  const auto d = std::find(argv.begin(), argv.end(), "-d");
  ASSERT_NE(d, argv.end());
  EXPECT_EQ(*std::next(d), "18446744073709551616");
}

TEST(NsysOptions, PythonJsonRefusalsStayRefused) {
  const std::string expected =
      "; expected a JSON object of nsys options, for example '{\"t\": \"cuda,nvtx,osrt\", "
      "\"cuda-memory-usage\": true}'";
  // Lower-case nan, a leading '+' or zero, a number key: json.loads refuses them too. The byte
  // is counted in the value as given.
  EXPECT_EQ(
      merge_error(R"({"d": NaN, "t": nan})"),
      "NRL_NSYS_EXTRA_OPTIONS='{\"d\": NaN, \"t\": nan}': not valid JSON (at byte 18)" + expected);
  EXPECT_NE(merge_error(R"({"d": +1})"), "");
  EXPECT_NE(merge_error(R"({"d": 01})"), "");
  EXPECT_NE(merge_error(R"({1: 2})"), "");
  EXPECT_NE(merge_error(R"({"d": 1_0})"), "");
  // A leading UTF-8 byte-order mark: json.loads raises "Unexpected UTF-8 BOM".
  EXPECT_EQ(
      merge_error("\xEF\xBB\xBF{\"t\": \"nvtx\"}"),
      "NRL_NSYS_EXTRA_OPTIONS='\xEF\xBB\xBF{\"t\": \"nvtx\"}': not valid JSON: it starts with "
      "a UTF-8 byte-order mark (Python's json.loads, which NeMo RL uses, refuses it)" +
          expected);
  // Python 3.11's json.loads refuses integers of more than 4300 digits.
  const std::string huge = "{\"d\": " + std::string(4301, '7') + "}";
  EXPECT_NE(merge_error(huge).find("not valid JSON: an integer of 4301 digits (Python's "
                                   "json.loads, which NeMo RL uses, refuses more than 4300)"),
            std::string::npos);
  NsysOptions options;
  options.merge_json("{\"d\": " + std::string(4300, '7') + "}");
  EXPECT_EQ(options.get("d")->size(), 4300u);
}
