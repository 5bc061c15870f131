#include "nsel/workflow/identity.hpp"

#include "nsel/core/error.hpp"
#include "nsel/sys/host.hpp"

namespace nsel {

ProcessIdentity identify_this_process(const GivenIdentity& given, const EnvLookup& environment) {
  IdentityOverrides overrides;
  overrides.rank_source = "--rank";
  overrides.local_rank_source = "--local-rank";
  overrides.node_source = "--node";
  // A flag given with an empty value is a mistake, not "look it up".
  if (given.rank) overrides.rank = parse_rank(*given.rank, "--rank");
  if (given.local_rank) overrides.local_rank = parse_rank(*given.local_rank, "--local-rank");
  if (given.node) {
    if (given.node->empty()) {
      throw Error(bad_value("--node", *given.node, "empty node name",
                            "the node's name as NSEL_PROFILE_NODES patterns see it, for "
                            "example 'node07'"));
    }
    overrides.node = *given.node;
  }
  return identify_process(environment, overrides, host_name());
}

}  // namespace nsel
