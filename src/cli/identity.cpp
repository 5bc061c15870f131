#include "cli/identity.hpp"

#include "cli/commands.hpp"
#include "nsel/core/error.hpp"
#include "nsel/sys/host.hpp"

namespace nsel::cli {

std::shared_ptr<IdentityFlags> add_identity_flags(CLI::App* command) {
  auto flags = std::make_shared<IdentityFlags>();
  flags->rank_option =
      command
          ->add_option(
              "--rank", flags->rank,
              "this process's global rank, for NSEL_PROFILE_RANKS (default: the first of " +
                  rank_variables_text(false) + " that is set)")
          ->type_name("N");
  flags->local_rank_option =
      command
          ->add_option("--local-rank", flags->local_rank,
                       "its rank within the node, for NSEL_PROFILE_LOCAL_RANKS (default: the "
                       "first of " +
                           rank_variables_text(true) + " that is set)")
          ->type_name("N");
  flags->node_option =
      command
          ->add_option("--node", flags->node,
                       "its node's name, for NSEL_PROFILE_NODES (default: the host name)")
          ->type_name("NAME");
  return flags;
}

ProcessIdentity identify_this_process(const IdentityFlags& flags) {
  IdentityOverrides given;
  given.rank_source = "--rank";
  given.local_rank_source = "--local-rank";
  given.node_source = "--node";
  // A flag given with an empty value is a mistake, not "look it up".
  if (flags.rank_option->count() > 0) given.rank = parse_rank(flags.rank, "--rank");
  if (flags.local_rank_option->count() > 0) {
    given.local_rank = parse_rank(flags.local_rank, "--local-rank");
  }
  if (flags.node_option->count() > 0) {
    if (flags.node.empty()) {
      throw Error(bad_value("--node", flags.node, "empty node name",
                            "the node's name as NSEL_PROFILE_NODES patterns see it, for "
                            "example 'node07'"));
    }
    given.node = flags.node;
  }
  return identify_process(environment_variable, given, host_name());
}

}  // namespace nsel::cli
