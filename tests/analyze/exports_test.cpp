// What makes an export usable: nsys's metadata table (a failed 2022.4 export leaves a database
// holding only StringIds), the capture version an export names, and folders root must not
// write. Real exports from ../shared/gpu-reports are unpacked into a temporary folder (skipped
// where that folder is absent).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "nsel/analyze/exports.hpp"
#include "nsel/analyze/summary.hpp"
#include "nsel/core/error.hpp"
#include "nsel/sys/process.hpp"
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

// A stand-in nsys (2022.4, so full exports named <stem>.sqlite): its export of a report whose
// text is N is the prepared export-N.sqlite of `dir`, whose one step lasts N ns; each export is
// counted in `dir`/exports.log.
nsel::ExportSettings stand_in_nsys(const fs::path& dir) {
  for (const char* n : {"100", "200"}) {
    nsel::test::execute_sql(dir / (std::string("export-") + n + ".sqlite"),
                            "CREATE TABLE EXPORT_META_DATA (name TEXT, value TEXT);"
                            "CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType "
                            "INTEGER, text TEXT); INSERT INTO NVTX_EVENTS VALUES (0, " +
                                std::string(n) + ", 59, 'step 1');");
  }
  const fs::path nsys = dir / "nsys";
  std::ofstream(nsys) << "#!/bin/sh\n"
                         "if [ \"$1\" = --version ]; then\n"
                         "  echo 'NVIDIA Nsight Systems version 2022.4.2.1-df9881f'; exit 0\n"
                         "fi\n"
                         "echo \"$8\" >> '"
                      << (dir / "exports.log").string()
                      << "'\n"
                         "cp '"
                      << dir.string() << "/export-'\"$(cat \"$8\")\".sqlite \"$7\"\n";
  fs::permissions(nsys, fs::perms::owner_all);
  nsel::ExportSettings settings;
  settings.nsys = nsys.string();
  settings.cache_dir = dir / "cache";
  return settings;
}

long long exports_made(const fs::path& dir) {
  std::ifstream log(dir / "exports.log");
  return std::count(std::istreambuf_iterator<char>(log), std::istreambuf_iterator<char>(), '\n');
}

long long step_ns(const fs::path& export_file) {
  const nsel::ProcessSummary summary = nsel::summarize_export(export_file, {});
  return summary.steps.empty() ? -1 : summary.steps.front().duration_ns();
}

TEST(ExportTrust, AReportReplacedWithItsTimeKeptIsExportedAgain) {
  const fs::path dir = nsel::test::fresh_dir("exports", "replaced");
  const nsel::ExportSettings settings = stand_in_nsys(dir);
  fs::create_directories(dir / "run");
  const fs::path report = dir / "run" / "r.nsys-rep";
  std::ofstream(report) << "100";
  const nsel::ExportResult first = nsel::ensure_export(report, settings);
  ASSERT_TRUE(first.made);
  EXPECT_EQ(step_ns(first.file), 100);
  EXPECT_TRUE(fs::exists(first.file.string() + std::string(nsel::kExportSourceSuffix)));
  EXPECT_FALSE(nsel::ensure_export(report, settings).made);  // the same report: kept
  // Another capture of the same size copied over it with its (older) time, as cp -p does.
  std::ofstream(dir / "other.nsys-rep") << "200";
  fs::last_write_time(dir / "other.nsys-rep",
                      fs::last_write_time(first.file) - std::chrono::hours(1));
  ASSERT_EQ(
      std::system(
          ("cp -p '" + (dir / "other.nsys-rep").string() + "' '" + report.string() + "'").c_str()),
      0);
  const nsel::ExportResult second = nsel::ensure_export(report, settings);
  EXPECT_TRUE(second.made);
  EXPECT_EQ(step_ns(second.file), 200);
  EXPECT_EQ(exports_made(dir), 2);
  fs::remove_all(dir);
}

// Anyone who may write the report's folder (mode 1777, say) can plant an export and a record
// that carry the report's fingerprint: another user's file is never read as the report's. The
// export is made afresh in the private cache, and a note names the file passed over and its
// owner. Before: the planted export, with a step edited to 999 ns, was read as the report's.
TEST(ExportTrust, AnotherUsersExportBesideTheReportIsNeverReadButMadeAfreshInTheCache) {
  const fs::path dir = nsel::test::fresh_dir("exports", "planted");
  const nsel::ExportSettings settings = stand_in_nsys(dir);
  fs::create_directories(dir / "run");
  fs::permissions(dir / "run", fs::perms::all | fs::perms::sticky_bit);
  const fs::path report = dir / "run" / "r.nsys-rep";
  std::ofstream(report) << "100";
  // This user's own export beside the report, with its record, is used again.
  const nsel::ExportResult own = nsel::ensure_export(report, settings);
  ASSERT_TRUE(own.made);
  EXPECT_EQ(own.file, dir / "run" / "r.sqlite");
  EXPECT_TRUE(own.notes.empty());
  EXPECT_FALSE(nsel::ensure_export(report, settings).made);
  // The same export and record made another user's, its step edited: the fingerprint matches.
  nsel::test::execute_sql(own.file, "UPDATE NVTX_EVENTS SET end = 999;");
  const std::string record = own.file.string() + std::string(nsel::kExportSourceSuffix);
  ASSERT_EQ(::chown(own.file.c_str(), 65534, 65534), 0);
  ASSERT_EQ(::chown(record.c_str(), 65534, 65534), 0);
  const nsel::ExportResult afresh = nsel::ensure_export(report, settings);
  EXPECT_TRUE(afresh.made);
  EXPECT_EQ(afresh.file.parent_path(), settings.cache_dir);
  EXPECT_EQ(step_ns(afresh.file), 100);
  ASSERT_EQ(afresh.notes.size(), 1u);
  EXPECT_EQ(afresh.notes.front(), "'" + own.file.string() +
                                      "' belongs to another user (uid 65534): not read as this "
                                      "report's export; exported afresh into '" +
                                      settings.cache_dir.string() + "'");
  // Found in the cache next time, the note still said; the other user's files are untouched.
  const nsel::ExportResult again = nsel::ensure_export(report, settings);
  EXPECT_FALSE(again.made);
  EXPECT_EQ(again.file, afresh.file);
  EXPECT_EQ(again.notes, afresh.notes);
  EXPECT_EQ(step_ns(own.file), 999);
  // Only a record of another user's, beside this user's export, is passed over too.
  ASSERT_EQ(::chown(own.file.c_str(), ::geteuid(), ::getegid()), 0);
  EXPECT_EQ(nsel::ensure_export(report, settings).file, afresh.file);
  EXPECT_EQ(exports_made(dir), 2);
  fs::remove_all(dir);
}

TEST(ExportTrust, TheCacheIsPrivateAndOthersFilesInItAreNeverRead) {
  const fs::path dir = nsel::test::fresh_dir("exports", "cache");
  const nsel::ExportSettings settings = stand_in_nsys(dir);
  fs::create_directories(dir / "run");
  const fs::path report = dir / "run" / "r.nsys-rep";
  std::ofstream(report) << "100";
  // A folder nsel may not write (for root too): the export goes to the cache.
  fs::permissions(dir / "run", fs::perms::owner_read | fs::perms::owner_exec);
  const nsel::ExportResult first = nsel::ensure_export(report, settings);
  ASSERT_TRUE(first.made);
  EXPECT_EQ(first.file.parent_path(), settings.cache_dir);
  struct stat st {};
  ASSERT_EQ(::stat(settings.cache_dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  EXPECT_FALSE(nsel::ensure_export(report, settings).made);
  // A cached export owned by someone else (who could have written anything) is not read.
  ASSERT_EQ(::chown(first.file.c_str(), 65534, 65534), 0);
  const nsel::ExportResult again = nsel::ensure_export(report, settings);
  EXPECT_TRUE(again.made);
  ASSERT_EQ(::stat(again.file.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, ::geteuid());
  // A cache folder others may write, or someone else's, is refused with its reason.
  fs::permissions(settings.cache_dir, fs::perms::all);
  try {
    nsel::ensure_export(report, settings);
    ADD_FAILURE() << "a cache folder of mode 0777 was used";
  } catch (const nsel::Error& e) {
    EXPECT_NE(std::string(e.what()).find("export cache folder not used: writable by others"),
              std::string::npos)
        << e.what();
  }
  fs::permissions(settings.cache_dir, fs::perms::owner_all);
  ASSERT_EQ(::chown(settings.cache_dir.c_str(), 65534, 65534), 0);
  EXPECT_THROW(nsel::ensure_export(report, settings), nsel::Error);
  EXPECT_EQ(exports_made(dir), 2);
  // Without a home, one folder per user under the temp folder.
  EXPECT_EQ(nsel::default_export_cache_dir(std::nullopt, std::nullopt).filename(),
            "nsel-exports-" + std::to_string(::geteuid()));
  fs::permissions(dir / "run", fs::perms::owner_all);
  fs::remove_all(dir);
}

// nsys may end just before a stop signal: its output is then complete but still under its
// temporary name while nsel checks and renames it. A SIGTERM there (made to come at that very
// moment, in a forked child) must leave no temporary behind, as one while nsys runs does not.
TEST(ExportStop, ASignalAfterNsysEndedBeforeTheRenameLeavesNoTemporary) {
  const fs::path dir = nsel::test::fresh_dir("exports", "stopped");
  nsel::ExportSettings settings = stand_in_nsys(dir);
  fs::create_directories(dir / "run");
  const fs::path report = dir / "run" / "r.nsys-rep";
  std::ofstream(report) << "100";
  settings.nsys_output = [](const fs::path&, const std::string&) { std::raise(SIGTERM); };
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const nsel::StopCleanup stop_cleanup;
    try {
      nsel::ensure_export(report, settings);
    } catch (...) {
    }
    ::_exit(0);  // never reached when the signal's cleanup ran
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGTERM);
  std::vector<std::string> left;
  for (const auto& entry : fs::directory_iterator(dir / "run")) {
    left.push_back(entry.path().filename().string());
  }
  EXPECT_EQ(left, std::vector<std::string>{"r.nsys-rep"});
  EXPECT_EQ(exports_made(dir), 1);  // nsys did run and end
  fs::remove_all(dir);
}

}  // namespace
