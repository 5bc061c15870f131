// The --rank, --local-rank and --node flags that `exec` and `plan` share, and this process's
// identity (rank, local rank, node) from them, the environment and the host name.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "nsel/core/rank_selection.hpp"
#include "nsel/workflow/identity.hpp"

namespace nsel::cli {

struct IdentityFlags {
  std::string rank;
  std::string local_rank;
  std::string node;
  CLI::Option* rank_option = nullptr;
  CLI::Option* local_rank_option = nullptr;
  CLI::Option* node_option = nullptr;
};

// Adds the three flags to `command`; their values are read once parsing is done.
std::shared_ptr<IdentityFlags> add_identity_flags(CLI::App* command);

// The flags given, as the workflow takes them (read once parsing is done).
GivenIdentity given_identity(const IdentityFlags& flags);

// nsel::identify_this_process for the flags given and this process's environment.
ProcessIdentity identify_this_process(const IdentityFlags& flags);

}  // namespace nsel::cli
