#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "nsel/reports/layout.hpp"

namespace fs = std::filesystem;

TEST(ReportNames, ContractFileNames) {
  EXPECT_EQ(nsel::report_file_name("dtensor_policy_worker", {2, 3}, 48113),
            "dtensor_policy_worker_2:3_48113.nsys-rep");
  const auto parsed = nsel::parse_report_file_name("dtensor_policy_worker_2:3_48113.nsys-rep");
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->worker, "dtensor_policy_worker");
  EXPECT_EQ(parsed->window, (nsel::StepWindow{2, 3}));
  EXPECT_EQ(parsed->pid, 48113);
  const auto inner = nsel::parse_report_file_name("worker_process_777.nsys-rep");
  ASSERT_TRUE(inner);
  EXPECT_EQ(inner->worker, "worker_process");
  EXPECT_FALSE(inner->window);
  EXPECT_FALSE(nsel::parse_report_file_name("report1.nsys-rep"));
  EXPECT_FALSE(nsel::parse_report_file_name("w_2:3_12.qdstrm"));
  EXPECT_FALSE(nsel::parse_report_file_name("w_2:x_12.nsys-rep"));
}

TEST(RaySession, NameAndLatestLink) {
  using namespace std::chrono;
  const auto when =
      sys_days{year{2026} / 11 / 29} + hours{10} + minutes{5} + seconds{7} + microseconds{42};
  const std::string name = nsel::ray_session_name(when, 123);
  // Local time, like Ray; the shape is fixed.
  EXPECT_EQ(name.size(), std::string("session_2026-11-29_10-05-07_000042_123").size());
  EXPECT_TRUE(name.starts_with("session_2026-11-"));
  EXPECT_TRUE(name.ends_with("_000042_123"));

  const fs::path root = fs::temp_directory_path() / ("nsel-layout-" + std::to_string(getpid()));
  const fs::path first = nsel::create_ray_session(root, when, 1);
  const fs::path second = nsel::create_ray_session(root, when + seconds{1}, 2);
  EXPECT_TRUE(fs::is_directory(first));
  EXPECT_EQ(second.filename(), "nsight");
  EXPECT_EQ(second.parent_path().filename(), "logs");
  EXPECT_EQ(fs::read_symlink(root / "session_latest"),
            second.parent_path().parent_path().filename());
  fs::remove_all(root);
}

// nsel check says when the session it judges began.
TEST(RaySession, StartFromItsName) {
  EXPECT_EQ(nsel::ray_session_start_text("session_2026-12-01_13-29-27_271611_12001"),
            "2026-12-01 13:29:27");
  EXPECT_FALSE(nsel::ray_session_start_text("session_latest"));
  EXPECT_FALSE(nsel::ray_session_start_text("session_2026-12-01"));
  EXPECT_FALSE(nsel::ray_session_start_text("session_2026-12-01_13:29:27_1_2"));
}
