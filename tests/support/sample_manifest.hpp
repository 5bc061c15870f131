// The manifest tests start from (header only: unit tests link their room alone).
#pragma once

#include <string>

#include "nsel/core/manifest.hpp"

namespace nsel::test {

// A launch of worker `worker` for the window 2:4 (steps 2 to 4), as nsel exec begins one; each
// test adds the ids, host, files and state its case needs.
inline Manifest window_manifest(const std::string& worker = "w") {
  Manifest m;
  m.worker = worker;
  m.step_window = "2:4";
  m.step_start = 2;
  m.step_stop = 4;
  return m;
}

}  // namespace nsel::test
