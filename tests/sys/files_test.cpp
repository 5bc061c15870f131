// write_file_atomically on paths that are not regular files: a device or a FIFO is written in
// place or refused, never replaced by a regular file; a folder is refused. Device nodes are made
// in a temporary folder (mknod, as root): the system's own /dev is never an output here.
#include "nsel/sys/files.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "nsel/core/error.hpp"

namespace fs = std::filesystem;

namespace {

class SpecialOutputs : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("nsel-files-test-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A character device node in dir_, or a skip where mknod is not allowed.
  bool device(const std::string& name, unsigned minor) {
    return ::mknod((dir_ / name).c_str(), S_IFCHR | 0666, makedev(1, minor)) == 0;
  }
  static bool is_char_device(const fs::path& p) {
    struct stat info {};
    return ::lstat(p.c_str(), &info) == 0 && S_ISCHR(info.st_mode);
  }
  std::string error_of(const fs::path& p, const std::string& text) {
    try {
      nsel::write_file_atomically(p, text);
    } catch (const nsel::Error& e) {
      EXPECT_EQ(e.exit_code(), 1);
      return e.what();
    }
    return "";
  }
  fs::path dir_;
};

TEST_F(SpecialOutputs, AFullDeviceFailsAndStaysADevice) {
  if (!device("full", 7)) GTEST_SKIP() << "mknod is not allowed here (not root)";
  const fs::path full = dir_ / "full";
  EXPECT_EQ(error_of(full, "page"),
            "cannot write " + nsel::quote(full.string()) + ": No space left on device");
  EXPECT_TRUE(is_char_device(full));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1)
      << "no temporary file left behind";
}

TEST_F(SpecialOutputs, ANullDeviceIsWrittenInPlace) {
  if (!device("null", 3)) GTEST_SKIP() << "mknod is not allowed here (not root)";
  EXPECT_EQ(error_of(dir_ / "null", "page"), "");
  EXPECT_TRUE(is_char_device(dir_ / "null"));
}

TEST_F(SpecialOutputs, AFifoIsWrittenToItsReaderOrRefusedWithoutOne) {
  const fs::path fifo = dir_ / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  EXPECT_EQ(error_of(fifo, "page"),
            "cannot write " + nsel::quote(fifo.string()) + ": it is a named pipe with no reader");
  EXPECT_TRUE(fs::is_fifo(fifo));

  // With a reader: the text arrives through the pipe, which stays a pipe.
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  EXPECT_EQ(error_of(fifo, "page"), "");
  char buffer[16] = {};
  EXPECT_EQ(::read(reader, buffer, sizeof buffer), 4);
  EXPECT_EQ(std::string(buffer, 4), "page");
  ::close(reader);
  EXPECT_TRUE(fs::is_fifo(fifo));
}

TEST_F(SpecialOutputs, AFolderIsRefused) {
  fs::create_directories(dir_ / "folder");
  EXPECT_EQ(error_of(dir_ / "folder", "page"),
            "cannot write " + nsel::quote((dir_ / "folder").string()) + ": it is a folder");
  EXPECT_TRUE(fs::is_directory(dir_ / "folder"));
}

TEST_F(SpecialOutputs, ARegularFileIsStillReplacedWhole) {
  std::ofstream(dir_ / "page.html") << "old and longer";
  EXPECT_EQ(error_of(dir_ / "page.html", "new"), "");
  std::ifstream in(dir_ / "page.html");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "new");
}

}  // namespace
