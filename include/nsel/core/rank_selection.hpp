// Narrowing the selection to some ranks, node-local ranks and nodes of the matched workers, and
// finding out which rank, local rank and node this process is.
#pragma once

#include <array>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nsel {

inline constexpr std::string_view kRanksVariable = "NSEL_PROFILE_RANKS";
inline constexpr std::string_view kLocalRanksVariable = "NSEL_PROFILE_LOCAL_RANKS";
inline constexpr std::string_view kNodesVariable = "NSEL_PROFILE_NODES";

// Where a launcher leaves the global rank, first found wins (torchrun/Ray Train, SLURM, Open MPI,
// MPICH/Intel MPI, PMIx, MVAPICH2).
inline constexpr std::array<std::string_view, 6> kRankVariables = {
    "RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "MV2_COMM_WORLD_RANK"};
// The same for the rank within the node.
inline constexpr std::array<std::string_view, 5> kLocalRankVariables = {
    "LOCAL_RANK", "SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
    "MV2_COMM_WORLD_LOCAL_RANK"};

// "0,8-15": ranks and inclusive ranges, separated by commas.
class RankList {
 public:
  // Throws nsel::Error naming `source`, quoting `value` and giving the expected form.
  static RankList parse(std::string_view value, std::string_view source);

  bool contains(long long rank) const;
  // Every rank in the list, in order (for `nsel plan --ranks`); throws when there are more
  // than `limit`, which a plan for that many ranks would not be read anyway.
  std::vector<long long> expand(std::string_view source, std::size_t limit = 4096) const;
  const std::string& text() const { return text_; }

 private:
  std::vector<std::pair<long long, long long>> ranges_;
  std::string text_;
};

// A whole number >= 0 given for a rank (a flag or an API argument). Throws nsel::Error.
long long parse_rank(std::string_view value, std::string_view source);

// What the caller knows better than the environment (flags, API arguments).
struct IdentityOverrides {
  std::optional<long long> rank;
  std::optional<long long> local_rank;
  std::optional<std::string> node;
  // How the plan names them ("--rank" for the flag).
  std::string rank_source = "the caller";
  std::string local_rank_source = "the caller";
  std::string node_source = "the caller";
};

// One of rank, local rank, node: its value and where it came from, or why it is unknown.
template <typename Value>
struct Identified {
  std::optional<Value> value;
  std::string source;   // "RANK", "--rank", "host name", ...
  std::string problem;  // set when a variable holds something that is not a rank
};

struct ProcessIdentity {
  Identified<long long> rank;
  Identified<long long> local_rank;
  Identified<std::string> node;
};

// The source of a node that nobody gave: this machine's host name.
inline constexpr std::string_view kHostNameSource = "host name";

// Overrides first, then the variables in lookup order; the node is `host_name` unless given.
// `lookup` returns nullopt for an unset variable (the same shape as nsel::EnvLookup).
ProcessIdentity identify_process(
    const std::function<std::optional<std::string>(std::string_view)>& lookup,
    const IdentityOverrides& given, std::string_view host_name);

// "RANK, SLURM_PROCID, ...": for messages that say where nsel looked.
std::string rank_variables_text(bool local);

}  // namespace nsel
