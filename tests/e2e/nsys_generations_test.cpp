// Two Nsight Systems generations end to end (real nsel, real nsys 2022.4 and 2023.4): each
// report is exported by an nsys that can read it, whichever is first on PATH; with none that
// can, one line says which version wrote it and which were found; a .qdstrm is imported by
// its writer's importer; a partial export beside a report is never taken for data. Skipped
// where 2023.4 is not unpacked (scripts/setup.sh does it).
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "support.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using nsel::test::run;

namespace {

const std::string kNsel = NSEL_BINARY;
const std::string kWorker = NSEL_WORKER_BINARY;
const std::string kDebianNsys = "/usr/bin/nsys";
const std::string kNsys2023 = "/opt/nsight-systems-2023.4/usr/bin/nsys";
const fs::path kShared = fs::path(NSEL_SOURCE_DIR) / "../shared/gpu-reports";

// PATH with 2022.4 (Debian's /usr/bin) first and 2023.4 nowhere on it.
std::string path_2022_first() {
  return "/usr/bin:/bin";
}

bool has_table(const fs::path& db_file, const std::string& table) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(db_file.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    sqlite3_close(db);
    return false;
  }
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", -1, &s,
                     nullptr);
  sqlite3_bind_text(s, 1, table.c_str(), -1, SQLITE_TRANSIENT);
  const bool found = sqlite3_step(s) == SQLITE_ROW;
  sqlite3_finalize(s);
  sqlite3_close(db);
  return found;
}

// A report of the example worker (4 steps) by `nsys` into dir/<name>.nsys-rep.
fs::path profile_with(const std::string& nsys, const fs::path& dir, const std::string& name) {
  const auto r = run({nsys, "profile", "-t", "nvtx,osrt", "-s", "none", "--cpuctxsw=none", "-o",
                      (dir / name).string(), kWorker, "--steps", "4", "--work-ms", "20"},
                     {});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  return dir / (name + ".nsys-rep");
}

// A .qdstrm of `nsys` (its own folder copied without the importer beside it: the report stays
// a .qdstrm, as when the importer is missing or killed).
fs::path qdstrm_with(const std::string& nsys, const fs::path& dir, const std::string& name) {
  const fs::path real = fs::canonical(nsys);
  const fs::path target = dir / ("no-importer-" + name) / "target-linux-x64";
  fs::create_directories(target);
  for (const auto& entry : fs::directory_iterator(real.parent_path())) {
    if (entry.path().filename() != "nsys") {
      fs::create_symlink(entry.path(), target / entry.path().filename());
    }
  }
  fs::copy_file(real, target / "nsys");
  run({(target / "nsys").string(), "profile", "-t", "nvtx,osrt", "-s", "none", "--cpuctxsw=none",
       "-o", (dir / name).string(), kWorker, "--steps", "3", "--work-ms", "20"},
      {});
  fs::remove_all(target.parent_path());
  const fs::path qdstrm = dir / (name + ".qdstrm");
  EXPECT_TRUE(fs::is_regular_file(qdstrm)) << qdstrm;
  // Older than nsel recover's 30 s "still being written" guard.
  fs::last_write_time(qdstrm, fs::file_time_type::clock::now() - std::chrono::minutes(10));
  return qdstrm;
}

class Generations : public ::testing::Test {
 protected:
  void SetUp() override {
    if (access(kNsys2023.c_str(), X_OK) != 0 || access(kDebianNsys.c_str(), X_OK) != 0) {
      GTEST_SKIP() << "needs " << kDebianNsys << " and " << kNsys2023 << " (scripts/setup.sh)";
    }
    dir_ = nsel::test::make_temp_dir("generations");
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  fs::path dir_;
};

TEST_F(Generations, A2023ReportIsExportedBy2023WhenDebians2022IsFirstOnPath) {
  const fs::path report = profile_with(kNsys2023, dir_, "new");
  const auto r =
      run({kNsel, "report", "--json", "-q", report.string()}, {{"PATH", path_2022_first()}});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const json set = json::parse(r.out);
  ASSERT_EQ(set["processes"].size(), 1u) << r.out;
  EXPECT_EQ(set["processes"][0]["steps"].size(), 4u) << r.out;
  // 2023.4 made the export (its metadata table), not 2022.4, of only the tables nsel reads
  // (--tables), under a name `nsys stats` never takes for its own export of the report.
  EXPECT_TRUE(has_table(dir_ / "new.nsel.sqlite", "META_DATA_EXPORT"));
  EXPECT_FALSE(has_table(dir_ / "new.nsel.sqlite", "EXPORT_META_DATA"));
  EXPECT_FALSE(has_table(dir_ / "new.nsel.sqlite", "ANALYSIS_DETAILS"));
  EXPECT_FALSE(fs::exists(dir_ / "new.sqlite"));
  // The same summary as from a full export of the same report, which nsel uses when it is there.
  ASSERT_EQ(run({kNsys2023, "export", "--type", "sqlite", "-o", (dir_ / "full.sqlite").string(),
                 report.string()},
                {})
                .exit_code,
            0);
  EXPECT_TRUE(has_table(dir_ / "full.sqlite", "ANALYSIS_DETAILS"));
  const auto full = run({kNsel, "report", "--json", "-q", (dir_ / "full.sqlite").string()}, {});
  ASSERT_EQ(full.exit_code, 0) << full.err;
  json from_full = json::parse(full.out)["processes"][0];
  json from_tables = set["processes"][0];
  for (json* p : {&from_full, &from_tables}) {
    p->erase("export");
    p->erase("report");
    p->erase("label");
    p->erase("file");
  }
  EXPECT_EQ(from_tables["nvtx"], from_full["nvtx"]);
  EXPECT_EQ(from_tables["steps"], from_full["steps"]);
  EXPECT_EQ(from_tables["osrt"], from_full["osrt"]);
  fs::remove(dir_ / "full.sqlite");
  // Found in a folder, the tables export is the report's cache, not a second report.
  const auto folder =
      run({kNsel, "report", "--json", "-q", dir_.string()}, {{"PATH", path_2022_first()}});
  ASSERT_EQ(folder.exit_code, 0) << folder.err;
  EXPECT_EQ(json::parse(folder.out)["processes"].size(), 1u) << folder.out;
  // A 2022.4 report beside it is exported by the PATH one, 2022.4.
  const fs::path old = profile_with(kDebianNsys, dir_, "old");
  const auto both =
      run({kNsel, "report", "--json", "-q", old.string()}, {{"PATH", path_2022_first()}});
  ASSERT_EQ(both.exit_code, 0) << both.out << both.err;
  EXPECT_TRUE(has_table(dir_ / "old.sqlite", "EXPORT_META_DATA"));
}

TEST_F(Generations, WithOnly2022ItSaysWhichVersionWroteTheReportInOneLine) {
  const fs::path report = profile_with(kNsys2023, dir_, "new");
  const auto r = run({kNsel, "report", "-q", report.string()},
                     {{"PATH", path_2022_first()}, {"NSEL_NSYS", kDebianNsys}});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const std::string line = "nsel: '" + report.string() +
                           "': written by Nsight Systems 2023.4.4.54-234433681190v0, needs Nsight "
                           "Systems 2023.4.4 or newer; found: 2022.4.2 (/usr/bin/nsys); install "
                           "such a version and set NSEL_NSYS=<its nsys> (a path, or several "
                           "separated by ':')\n";
  EXPECT_EQ(r.err, line);
  EXPECT_EQ(r.out.find("not a readable"), std::string::npos) << r.out;
  // Nothing was written beside it, not even a partial export.
  EXPECT_EQ(nsel::test::files_in(dir_), std::vector<fs::path>{report});
}

TEST_F(Generations, BadNselNsysIsABadValue) {
  const fs::path report = dir_ / "r.nsys-rep";
  nsel::test::spit(report, "x");
  const auto r = run({kNsel, "report", "-q", report.string()}, {{"NSEL_NSYS", "nsys"}});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_EQ(r.err,
            "nsel: error: NSEL_NSYS='nsys': 'nsys' is not the absolute path of an executable "
            "file; expected a path of nsys, or several separated by ':', e.g. "
            "/opt/nsight-systems-2023.4/usr/bin/nsys:/usr/bin/nsys\n");
}

TEST_F(Generations, RecoverImportsA2022QdstrmWithItsOwnImporterWhen2023IsFirstOnPath) {
  const fs::path qdstrm = qdstrm_with(kDebianNsys, dir_, "old");
  const std::string path = "/opt/nsight-systems-2023.4/usr/bin:/usr/bin:/bin";
  const auto r = run({kNsel, "recover", dir_.string()}, {{"PATH", path}});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find(qdstrm.string() + ": converted to old.nsys-rep"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("(2022.4.2.1-df9881f)"), std::string::npos) << r.out;
  EXPECT_EQ(nsel::test::exported_steps(dir_ / "old.nsys-rep"), (std::vector<long long>{1, 2, 3}));
}

TEST_F(Generations, RecoverWithoutTheWritersImporterSaysSoInOneLine) {
  const fs::path qdstrm = qdstrm_with(kDebianNsys, dir_, "old");
  const auto r = run({kNsel, "recover", dir_.string()}, {{"NSEL_NSYS", kNsys2023}});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_EQ(r.err, "nsel: error: '" + qdstrm.string() +
                       "': written by Nsight Systems 2022.4.2.1-df9881f, needs the importer of "
                       "Nsight Systems 2022.4.2; found: 2023.4.4 (" +
                       kNsys2023 +
                       "); install such a version and set NSEL_NSYS=<its nsys> (a path, or "
                       "several separated by ':')\n");
  EXPECT_TRUE(fs::is_regular_file(qdstrm));
  EXPECT_FALSE(fs::exists(dir_ / "old.nsys-rep"));
}

TEST_F(Generations, APartialExportBesideAReportIsNotTakenForData) {
  const fs::path report = profile_with(kDebianNsys, dir_, "r");
  // What a failed 2022.4 export leaves under the final name: StringIds only, newer than the
  // report.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir_ / "r.sqlite").c_str(), &db), SQLITE_OK);
  sqlite3_exec(db, "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT)", nullptr, nullptr,
               nullptr);
  sqlite3_close(db);
  const auto r = run({kNsel, "report", "--json", "-q", dir_.string()}, {});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const json set = json::parse(r.out);
  ASSERT_EQ(set["processes"].size(), 1u) << r.out;
  EXPECT_EQ(set["processes"][0]["steps"].size(), 4u) << r.out;
  // Made again, whole (by whichever generation is first on PATH: 2023.4 exports only nsel's
  // tables, into r.nsel.sqlite).
  EXPECT_TRUE(has_table(dir_ / "r.sqlite", "EXPORT_META_DATA") ||
              has_table(dir_ / "r.nsel.sqlite", "META_DATA_EXPORT"));
}

TEST_F(Generations, TheRealSc23CaptureIsSummarisedWith2022FirstOnPath) {
  // nsys 2023.2.3 wrote it with the old header layout; 2022.4 fails on it and leaves a partial
  // export. Linked into a temporary folder: nothing is ever written into the shared folder.
  const fs::path original = kShared / "nersc-sc23-vit/dali_amp_bf16_fused_jit.nsys-rep";
  if (!fs::is_regular_file(original)) GTEST_SKIP() << original << " is absent";
  fs::create_symlink(original, dir_ / "sc23.nsys-rep");
  const auto r = run({kNsel, "report", "--json", "-q", (dir_ / "sc23.nsys-rep").string()},
                     {{"PATH", path_2022_first()}});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const json set = json::parse(r.out);
  ASSERT_EQ(set["processes"].size(), 1u) << r.out;
  EXPECT_EQ(set["processes"][0]["steps"].size(), 31u);
  EXPECT_TRUE(has_table(dir_ / "sc23.nsel.sqlite", "META_DATA_EXPORT"));
}

}  // namespace
