// main() of a test executable that CTest runs as one entry (SINGLE): GoogleTest's own, except
// that a run in which every case skipped and none failed exits 77, which CTest reports as
// Skipped (SKIP_RETURN_CODE), not as Passed with nothing tested.
#include <gtest/gtest.h>

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  const int code = RUN_ALL_TESTS();
  const testing::UnitTest& run = *testing::UnitTest::GetInstance();
  if (code == 0 && run.successful_test_count() == 0 && run.skipped_test_count() > 0 &&
      run.failed_test_count() == 0) {
    return 77;
  }
  return code;
}
