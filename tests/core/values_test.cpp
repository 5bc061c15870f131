#include <gtest/gtest.h>

#include "nsel/core/error.hpp"
#include "nsel/core/launch_settings.hpp"
#include "nsel/core/values.hpp"

using namespace std::chrono_literals;

TEST(Values, SecondsToTheMillisecond) {
  EXPECT_EQ(nsel::parse_seconds("60", "S"), 60000ms);
  EXPECT_EQ(nsel::parse_seconds(" 2.5 ", "S"), 2500ms);
  EXPECT_EQ(nsel::parse_seconds("0.001", "S"), 1ms);
  EXPECT_EQ(nsel::parse_seconds("86400", "S"), 86400000ms);
  EXPECT_EQ(nsel::parse_seconds("000000000000000000007", "S"), 7000ms);
  for (const char* bad : {"", "0", "0.0", ".5", "5.", "1e3", "-1", "+1", "inf", "nan", "1,5",
                          "86400.001", "99999999999999999999"}) {
    EXPECT_THROW(nsel::parse_seconds(bad, "S"), nsel::Error) << bad;
  }
}

TEST(Values, SwitchesAndWholeNumbers) {
  EXPECT_TRUE(nsel::parse_switch("1", "A"));
  EXPECT_TRUE(nsel::parse_switch("Yes", "A"));
  EXPECT_FALSE(nsel::parse_switch("false", "A"));
  EXPECT_THROW(nsel::parse_switch("on", "A"), nsel::Error);
  EXPECT_EQ(nsel::parse_whole_number(" 42 ", "N", 1, 100), 42);
  EXPECT_THROW(nsel::parse_whole_number("101", "N", 1, 100), nsel::Error);
  EXPECT_THROW(nsel::parse_whole_number("+5", "N", 1, 100), nsel::Error);
}

TEST(Values, WorkerNamesAreNonEmptyUtf8WithoutSlash) {
  EXPECT_EQ(nsel::parse_worker_name("policy $(x) 名前 🙂\n", "W"), "policy $(x) 名前 🙂\n");
  for (const char* bad :
       {"", "a/b", "w\xff", "w\xc3", "w\xed\xa0\x80", "w\xc0\xaf", "w\xf4\x90\x80\x80"}) {
    EXPECT_THROW(nsel::parse_worker_name(bad, "W"), nsel::Error) << bad;
  }
  // A NUL inside (the Python API can pass one): refused, named, escaped.
  try {
    nsel::parse_worker_name(std::string_view("w\0x", 3), "worker");
    ADD_FAILURE() << "a NUL byte was taken";
  } catch (const nsel::Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "worker='w\\x00x': holds a NUL byte, which no command line can carry; expected a "
              "worker name such as 'dtensor_policy_worker'");
  }
}

TEST(LaunchSettings, DefaultsAndVariables) {
  const auto none = nsel::LaunchSettings::from_environment(
      [](std::string_view) -> std::optional<std::string> { return std::nullopt; });
  EXPECT_EQ(none.stop_timeout, 60s);
  EXPECT_FALSE(none.allow_unprofiled);
  const auto set = nsel::LaunchSettings::from_environment(
      [](std::string_view name) -> std::optional<std::string> {
        if (name == "NSEL_STOP_TIMEOUT") return "1.5";
        if (name == "NSEL_ALLOW_UNPROFILED") return "1";
        return std::nullopt;
      });
  EXPECT_EQ(set.stop_timeout, 1500ms);
  EXPECT_TRUE(set.allow_unprofiled);
}

TEST(Values, UtcTimeTextIsIso8601WithOrWithoutMilliseconds) {
  using namespace std::chrono;
  // 2026-12-07 23:25:52.045 UTC.
  const system_clock::time_point when{milliseconds(1796685952045LL)};
  EXPECT_EQ(nsel::utc_time_text(when, false), "2026-12-07T23:25:52Z");
  EXPECT_EQ(nsel::utc_time_text(when, true), "2026-12-07T23:25:52.045Z");
}
