// Who this process is (rank, local rank, node) from what its command line gave, the environment
// and the host name: for `nsel exec` and `nsel plan`.
#pragma once

#include <optional>
#include <string>

#include "nsel/core/rank_selection.hpp"
#include "nsel/core/settings.hpp"

namespace nsel {

// The --rank, --local-rank and --node values as given; nullopt: the flag was not given.
struct GivenIdentity {
  std::optional<std::string> rank;
  std::optional<std::string> local_rank;
  std::optional<std::string> node;
};

// The flags first (a bad or empty value throws nsel::Error naming the flag), then RANK,
// SLURM_PROCID, ..., LOCAL_RANK, ... from `environment`, and this machine's host name.
ProcessIdentity identify_this_process(const GivenIdentity& given, const EnvLookup& environment);

}  // namespace nsel
