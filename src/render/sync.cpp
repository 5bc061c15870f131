#include "nsel/render/sync.hpp"

#include "nsel/core/values.hpp"
#include "render/formatted.hpp"
#include "render/json_schema.hpp"

namespace nsel {

std::string render_sync_progress_text(const PassStats& stats, bool final) {
  const double seconds = std::chrono::duration<double>(stats.elapsed).count();
  return std::string(!final       ? ""
                     : stats.full ? "pass done: "
                                  : "pass done (only what changed): ") +
         render_detail::formatted("%llu file(s) checked, %llu copied (%s), %llu failed, %.1f s",
                                  static_cast<unsigned long long>(stats.files),
                                  static_cast<unsigned long long>(stats.copied),
                                  size_text(stats.bytes_copied).c_str(),
                                  static_cast<unsigned long long>(stats.failed), seconds) +
         (final && stats.saw_ended ? "; ENDED seen, stopping" : "");
}

nlohmann::ordered_json render_sync_pass_json(const PassStats& stats) {
  const nlohmann::json line = {
      {"pass", stats.number},
      {"full", stats.full},
      {"sessions", stats.sessions},
      {"folders", stats.folders},
      {"files", stats.files},
      {"copied", stats.copied},
      {"bytes_copied", stats.bytes_copied},
      {"failed", stats.failed},
      {"seconds", std::chrono::duration<double>(stats.elapsed).count()},
      {"ended", stats.saw_ended},
  };
  return render_detail::schema_first(kSyncJsonSchema, line);
}

}  // namespace nsel
