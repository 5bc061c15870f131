#include <gtest/gtest.h>

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
