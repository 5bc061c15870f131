// What makes an export usable: nsys's metadata table (a failed 2022.4 export leaves a database
// holding only StringIds), the capture version an export names, and folders root must not
// write. Real exports from ../shared/gpu-reports are unpacked into a temporary folder (skipped
// where that folder is absent).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "nsel/analyze/exports.hpp"
#include "nsel/core/error.hpp"
#include "unit_files.hpp"

namespace fs = std::filesystem;

namespace {

const fs::path kShared = fs::path(NSEL_SOURCE_DIR) / "../shared/gpu-reports";

// Unpacks a shared `exports/*.sqlite.xz` into `dir` (never beside the original).
fs::path unpack(const fs::path& xz, const fs::path& dir) {
  const fs::path out = dir / xz.stem();
  const std::string command = "xz -dkc '" + xz.string() + "' > '" + out.string() + "'";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  return out;
}

TEST(Exports, OnlyADatabaseWithNsysMetadataIsAnExport) {
  const fs::path dir = nsel::test::fresh_dir("exports", "complete");
  // What 2022.4 leaves when it fails on a 2023.2 report: StringIds and nothing else.
  nsel::test::execute_sql(dir / "partial.sqlite",
                          "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"
                          "INSERT INTO StringIds VALUES (0, 'x');");
  EXPECT_FALSE(nsel::is_complete_export(dir / "partial.sqlite"));
  nsel::test::execute_sql(dir / "old.sqlite",
                          "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"
                          "CREATE TABLE EXPORT_META_DATA (name TEXT, value TEXT);");
  EXPECT_TRUE(nsel::is_complete_export(dir / "old.sqlite"));
  std::ofstream(dir / "junk.sqlite") << "not a database";
  EXPECT_FALSE(nsel::is_complete_export(dir / "junk.sqlite"));
  EXPECT_FALSE(nsel::is_complete_export(dir / "missing.sqlite"));
  fs::remove_all(dir);
}

TEST(Exports, RealExportsOfBothSchemasAreCompleteAndNameTheirCapture) {
  if (!fs::is_directory(kShared)) GTEST_SKIP() << kShared << " is absent (real GPU captures)";
  const fs::path dir = nsel::test::fresh_dir("exports", "real");
  // 2023.4's export (schema 3.7.2, META_DATA_EXPORT) of a 2023.2.3 capture, whose install
  // folder names its version.
  const fs::path sc23 =
      unpack(kShared / "nersc-sc23-vit/exports/dali_amp_bf16_fused_jit.nsys2023.4.sqlite.xz", dir);
  EXPECT_TRUE(nsel::is_complete_export(sc23));
  const auto captured = nsel::export_capture_version(sc23);
  ASSERT_TRUE(captured);
  EXPECT_EQ(captured->release_text(), "2023.2.3");
  // 2022.4's export (schema 3.0.0, EXPORT_META_DATA).
  const fs::path sc22 =
      unpack(kShared / "nersc-sc22-ddp/exports/4gpu_baseline.nsys2022.4.sqlite.xz", dir);
  EXPECT_TRUE(nsel::is_complete_export(sc22));
  // Exports made elsewhere: schema 2.9.1 and 3.13.2.
  EXPECT_TRUE(nsel::is_complete_export(kShared / "pipit/saxpy-mpi-cuda_nsys_perlmutter0.sqlite"));
  EXPECT_TRUE(nsel::is_complete_export(kShared / "pipit/perlmutter-cloverleaf-cuda.sqlite"));
  fs::remove_all(dir);
}

TEST(Exports, AFolderWithoutWriteBitsIsNotWrittenEvenByRoot) {
  const fs::path dir = nsel::test::fresh_dir("exports", "bits");
  fs::create_directories(dir / "closed");
  fs::create_directories(dir / "open");
  fs::permissions(dir / "closed", fs::perms::owner_read | fs::perms::owner_exec);
  EXPECT_FALSE(nsel::folder_allows_writing(dir / "closed"));
  EXPECT_TRUE(nsel::folder_allows_writing(dir / "open"));
  EXPECT_FALSE(nsel::folder_allows_writing(dir / "missing"));
  // The report there is exported into the cache instead: ensure_export never writes beside it.
  std::ofstream(dir / "open" / "r.nsys-rep") << "not a report";
  fs::rename(dir / "open" / "r.nsys-rep", dir / "closed" / "r.nsys-rep");  // root may
  nsel::ExportSettings settings;
  settings.nsys = "/bin/false";  // a stand-in: exporting fails, which is all this needs
  settings.cache_dir = dir / "cache";
  EXPECT_THROW(nsel::ensure_export(dir / "closed" / "r.nsys-rep", settings), nsel::Error);
  EXPECT_FALSE(fs::exists(dir / "closed" / "r.sqlite"));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir / "closed"), fs::directory_iterator()), 1);
  fs::permissions(dir / "closed", fs::perms::owner_all);
  fs::remove_all(dir);
}

}  // namespace
