#include "cli/identity.hpp"

#include "cli/commands.hpp"

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

GivenIdentity given_identity(const IdentityFlags& flags) {
  GivenIdentity given;
  if (flags.rank_option->count() > 0) given.rank = flags.rank;
  if (flags.local_rank_option->count() > 0) given.local_rank = flags.local_rank;
  if (flags.node_option->count() > 0) given.node = flags.node;
  return given;
}

ProcessIdentity identify_this_process(const IdentityFlags& flags) {
  return nsel::identify_this_process(given_identity(flags), environment_variable);
}

}  // namespace nsel::cli
