// The outputs of `nsel sync`: a pass's progress line, and with --json one JSON line per
// finished pass.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "nsel/sync/mirror.hpp"

namespace nsel {

// Each line's "schema": bumped when a field changes meaning or goes away.
inline constexpr const char* kSyncJsonSchema = "nsel.sync/1";

// What a pass did so far (`final` false) or did (true), without a line feed: "pass done: 12
// file(s) checked, 3 copied (4.0 KiB), 0 failed, 0.2 s; ENDED seen, stopping".
std::string render_sync_progress_text(const PassStats& stats, bool final);
// A finished pass, for machines: "schema" first, then pass, full, sessions, folders, files,
// copied, bytes_copied, failed, seconds, ended (their sorted order, as before the schema id).
nlohmann::ordered_json render_sync_pass_json(const PassStats& stats);

}  // namespace nsel
