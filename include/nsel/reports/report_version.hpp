// Which Nsight Systems version wrote a report (.nsys-rep, .qdrep) or a raw capture (.qdstrm),
// read from the file itself, so that the nsys that exports or imports it can be chosen.
#pragma once

#include <filesystem>
#include <optional>

#include "nsel/core/nsys_version.hpp"

namespace nsel {

// From the file's first bytes: a .qdstrm starts "U3w[END]NVIDIA Nsight Systems Stream
// <version>!", a report from 2023.3 on "NVIDIA Tegra Profiler Report <YYYY@M@m@b-...>". Older
// reports start "...Report 1." and keep the version in their last block (the report's facts,
// before its "[END]" trailer), read from the file's last 4 KiB. nullopt when it is neither.
std::optional<NsysVersion> report_writer_version(const std::filesystem::path& file);

}  // namespace nsel
