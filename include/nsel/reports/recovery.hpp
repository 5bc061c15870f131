// Turning a .qdstrm that nsys left behind (its importer missing, or killed while importing)
// into the .nsys-rep it should have written, with Nsight Systems' own QdstrmImporter.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace nsel {

// QdstrmImporter: on PATH (`path_variable`), beside the nsys found on PATH (its
// ../host-linux-x64 and ../../host-linux-x64 folders, following links), then in the usual
// install folders (/usr/lib/nsight-systems, /opt/nvidia/nsight-systems/*,
// /usr/local/cuda*/nsight-systems-*). nullopt when there is none.
std::optional<std::filesystem::path> find_qdstrm_importer(std::string_view path_variable);

struct Recovery {
  std::filesystem::path qdstrm;
  std::filesystem::path report;  // <stem>.nsys-rep beside it
  bool converted = false;
  std::string message;  // what happened, one line
};

// Converts `qdstrm` into <stem>.nsys-rep. The importer works on a copy under a hidden name and
// its report is renamed into place only when complete, so a failure changes nothing; the
// .qdstrm is removed after success unless `keep_qdstrm`. An existing report is never replaced.
Recovery recover_qdstrm(const std::filesystem::path& qdstrm, const std::filesystem::path& importer,
                        bool keep_qdstrm = false);

}  // namespace nsel
