// Which QdstrmImporter converts a .qdstrm: one search of the installs (find_nsys_installs) for
// recover, doctor and report alike.
#include "nsel/reports/recovery.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;

namespace {

// A stand-in Nsight Systems install laid out as the real ones are (a script, named as such):
// <root>/target-linux-x64/nsys and its importer <root>/host-linux-x64/QdstrmImporter.
nsel::NsysInstall stand_in_install(const fs::path& root) {
  for (const fs::path& program :
       {root / "target-linux-x64" / "nsys", root / "host-linux-x64" / "QdstrmImporter"}) {
    fs::create_directories(program.parent_path());
    std::ofstream(program) << "#!/bin/sh\nexit 0\n";
    fs::permissions(program, fs::perms::owner_all);
  }
  nsel::NsysInstall install;
  install.path = (root / "target-linux-x64" / "nsys").string();
  install.version = *nsel::parse_nsys_version("2023.4.4.54-234433681190v0");
  install.origin = "known location";
  return install;
}

// A .qdstrm whose writer cannot be read takes the importer of the first install found that has
// one, the installs `nsel report` exports with. Before, recover searched a folder list of its
// own (Debian's folder first, no /opt/nsight-systems-*): with an install at
// /opt/nsight-systems-2023.4 found by every other command, it took Debian's 2022.4 importer, or
// found none where Debian's package was absent.
TEST(QdstrmImporter, AnUnknownWriterTakesTheImporterOfTheInstallsFound) {
  const fs::path dir = fs::temp_directory_path() / ("nsel-importer-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const nsel::NsysInstall bare = [&] {
    nsel::NsysInstall install = stand_in_install(dir / "bare");
    fs::remove(dir / "bare" / "host-linux-x64" / "QdstrmImporter");
    return install;
  }();
  const nsel::NsysInstall with_importer = stand_in_install(dir / "opt-2023.4");
  const fs::path qdstrm = dir / "w_2:4_77.qdstrm";
  std::ofstream(qdstrm) << "not a capture any nsys wrote";
  const nsel::ImporterChoice chosen =
      nsel::choose_qdstrm_importer(qdstrm, {bare, with_importer}, "/nonexistent");
  ASSERT_TRUE(chosen.importer.has_value()) << chosen.problem;
  EXPECT_EQ(*chosen.importer, dir / "opt-2023.4" / "host-linux-x64" / "QdstrmImporter");
  // One on PATH comes first.
  EXPECT_EQ(nsel::choose_qdstrm_importer(qdstrm, {with_importer},
                                         (dir / "bare" / "target-linux-x64").string() + ":" +
                                             (dir / "opt-2023.4" / "host-linux-x64").string())
                .importer,
            dir / "opt-2023.4" / "host-linux-x64" / "QdstrmImporter");
  // No install with an importer, none on PATH: none, and the line says what to do.
  const nsel::ImporterChoice none = nsel::choose_qdstrm_importer(qdstrm, {bare}, "/nonexistent");
  EXPECT_FALSE(none.importer.has_value());
  EXPECT_NE(none.problem.find("no QdstrmImporter found"), std::string::npos) << none.problem;
  fs::remove_all(dir);
}

}  // namespace
