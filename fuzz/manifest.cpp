// Manifests (".nsel.json" beside each report) are read back by `nsel ls`, `nsel report` and
// `nsel sync` from folders anyone may write to. Any text either parses into a manifest that
// prints back to text parsing the same, or fails with the one-line error naming the file; no
// other exception escapes.
#include <cstdint>
#include <string>
#include <string_view>

#include "check.hpp"
#include "nsel/core/error.hpp"
#include "nsel/core/manifest.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  constexpr std::string_view source = "/r/w_2:4_7.nsel.json";
  nsel::Manifest manifest;
  try {
    manifest = nsel::parse_manifest(input, source);
  } catch (const nsel::Error& e) {
    NSEL_FUZZ_CHECK(e.exit_code() == 1);
    NSEL_FUZZ_CHECK(nsel::fuzz::is_one_line_error(e.what(), source));
    return 0;
  }
  NSEL_FUZZ_CHECK(manifest.version == nsel::kManifestVersion);
  const std::string text = nsel::serialize_manifest(manifest);
  const nsel::Manifest again = nsel::parse_manifest(text, source);
  NSEL_FUZZ_CHECK(again == manifest);
  NSEL_FUZZ_CHECK(nsel::serialize_manifest(again) == text);
  return 0;
}
