// Where nsel sync puts a SLURM job's logs.
#include <gtest/gtest.h>

#include "nsel/sync/mirror.hpp"

TEST(SyncSettings, DestinationFollowsTheSlurmJob) {
  EXPECT_EQ(nsel::slurm_log_dir("/logs", "123", ""), "/logs/123-logs");
  EXPECT_EQ(nsel::slurm_log_dir("/logs", "123", "0"), "/logs/123-logs");
  EXPECT_EQ(nsel::slurm_log_dir("/logs", "123", "2"), "/logs/123-restart2-logs");
}
