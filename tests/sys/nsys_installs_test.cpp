// The search for installed Nsight Systems with the real nsys of this machine (Debian's
// /usr/bin/nsys, and 2023.4 under /opt where scripts/setup.sh unpacked it), and NSEL_NSYS's
// bad values.
#include "nsel/sys/nsys_installs.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "nsel/core/error.hpp"

namespace fs = std::filesystem;

namespace {

const std::string kDebian = "/usr/bin/nsys";
const std::string k2023 = "/opt/nsight-systems-2023.4/usr/bin/nsys";

std::string error_of(const std::string& nsel_nsys) {
  try {
    nsel::find_nsys_installs(nsel_nsys, "");
  } catch (const nsel::Error& e) {
    EXPECT_EQ(e.exit_code(), 2);
    return e.what();
  }
  return "";
}

TEST(NsysInstalls, NselNsysAloneIsUsedInItsOrder) {
  if (access(kDebian.c_str(), X_OK) != 0 || access(k2023.c_str(), X_OK) != 0) {
    GTEST_SKIP() << "needs both " << kDebian << " and " << k2023 << " (scripts/setup.sh)";
  }
  const auto both = nsel::find_nsys_installs(k2023 + ":" + kDebian, "/usr/bin");
  ASSERT_EQ(both.size(), 2u);
  EXPECT_EQ(both[0].path, k2023);
  EXPECT_EQ(both[0].version.release_text(), "2023.4.4");
  EXPECT_EQ(both[0].origin, "NSEL_NSYS");
  EXPECT_EQ(both[1].path, kDebian);
  EXPECT_EQ(both[1].version.text, "2022.4.2.1-df9881f");
  // One entry: that one only, nothing from PATH or the known locations.
  const auto one = nsel::find_nsys_installs(kDebian, "/opt/nsight-systems-2023.4/usr/bin");
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].path, kDebian);
  // The same install twice counts once.
  EXPECT_EQ(nsel::find_nsys_installs(kDebian + "::" + kDebian, "").size(), 1u);
}

TEST(NsysInstalls, PathFirstThenKnownLocationsEachOnce) {
  if (access(kDebian.c_str(), X_OK) != 0 || access(k2023.c_str(), X_OK) != 0) {
    GTEST_SKIP() << "needs both " << kDebian << " and " << k2023 << " (scripts/setup.sh)";
  }
  const auto found = nsel::find_nsys_installs(std::nullopt, "/opt/nsight-systems-2023.4/usr/bin");
  ASSERT_GE(found.size(), 2u);
  EXPECT_EQ(found[0].path, k2023);
  EXPECT_EQ(found[0].origin, "PATH");
  EXPECT_EQ(found[1].path, kDebian);
  EXPECT_EQ(found[1].origin, "known location");
  for (std::size_t i = 2; i < found.size(); ++i) EXPECT_NE(found[i].path, k2023);
  // An empty NSEL_NSYS is as if unset.
  EXPECT_EQ(nsel::find_nsys_installs("", "/opt/nsight-systems-2023.4/usr/bin").size(),
            found.size());
}

TEST(NsysInstalls, BadNselNsysIsNamedQuotedWithTheExpectedForm) {
  const std::string form =
      "expected a path of nsys, or several separated by ':', e.g. "
      "/opt/nsight-systems-2023.4/usr/bin/nsys:/usr/bin/nsys";
  EXPECT_EQ(error_of("nsys"),
            "NSEL_NSYS='nsys': 'nsys' is not the absolute path of an executable file; " + form);
  EXPECT_EQ(error_of("/nonexistent/nsys:/usr/bin/nsys"),
            "NSEL_NSYS='/nonexistent/nsys:/usr/bin/nsys': '/nonexistent/nsys' is not the "
            "absolute path of an executable file; " +
                form);
  // An executable that is no nsys.
  EXPECT_EQ(error_of("/bin/true"),
            "NSEL_NSYS='/bin/true': '/bin/true' does not answer 'nsys --version'; " + form);
  // Separators alone name nothing: never "no nsys found".
  EXPECT_EQ(error_of(":"), "NSEL_NSYS=':': names no path; " + form);
  EXPECT_EQ(error_of("::"), "NSEL_NSYS='::': names no path; " + form);
}

}  // namespace
