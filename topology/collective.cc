#include "topology/collective.h"

#include <array>
#include <cctype>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "sim/check.h"

namespace clustersim::topology {
namespace {

constexpr std::array<Collective, 6> kCollectives = {
    Collective::kAllReduce, Collective::kReduceScatter, Collective::kAllGather,
    Collective::kAllToAll,  Collective::kBroadcast,     Collective::kSendRecv};
constexpr std::array<Algorithm, 5> kAlgorithms = {Algorithm::kAuto, Algorithm::kRing,
                                                  Algorithm::kTree, Algorithm::kNvls,
                                                  Algorithm::kHierarchical};
constexpr std::array<Protocol, 4> kProtocols = {Protocol::kAuto, Protocol::kLl, Protocol::kLl128,
                                                Protocol::kSimple};

std::string Normalize(std::string_view s) {
  std::string out;
  for (char ch : s) {
    if (ch == '-' || ch == '_') continue;
    out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(ch))));
  }
  return out;
}

template <typename Enum, size_t N, typename NameFn>
absl::StatusOr<Enum> Parse(std::string_view what, std::string_view name,
                           const std::array<Enum, N>& values, NameFn name_of) {
  std::string valid;
  for (Enum v : values) {
    if (Normalize(name_of(v)) == Normalize(name)) return v;
    absl::StrAppend(&valid, valid.empty() ? "" : ", ", std::string(name_of(v)));
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown ", std::string(what), " '",
                                                 std::string(name), "'; valid: ", valid));
}

}  // namespace

std::string_view CollectiveName(Collective c) {
  switch (c) {
    case Collective::kAllReduce:
      return "all_reduce";
    case Collective::kReduceScatter:
      return "reduce_scatter";
    case Collective::kAllGather:
      return "all_gather";
    case Collective::kAllToAll:
      return "all_to_all";
    case Collective::kBroadcast:
      return "broadcast";
    case Collective::kSendRecv:
      return "send_recv";
  }
  return "unknown";
}

std::string_view AlgorithmName(Algorithm a) {
  switch (a) {
    case Algorithm::kAuto:
      return "auto";
    case Algorithm::kRing:
      return "ring";
    case Algorithm::kTree:
      return "tree";
    case Algorithm::kNvls:
      return "nvls";
    case Algorithm::kHierarchical:
      return "hierarchical";
  }
  return "unknown";
}

std::string_view ProtocolName(Protocol p) {
  switch (p) {
    case Protocol::kAuto:
      return "auto";
    case Protocol::kLl:
      return "ll";
    case Protocol::kLl128:
      return "ll128";
    case Protocol::kSimple:
      return "simple";
  }
  return "unknown";
}

int ProtocolIndex(Protocol p) {
  SIM_CHECK(p != Protocol::kAuto) << "ProtocolIndex needs a concrete protocol";
  return static_cast<int>(p) - 1;
}

absl::StatusOr<Collective> ParseCollective(std::string_view name) {
  return Parse("collective", name, kCollectives, CollectiveName);
}

absl::StatusOr<Algorithm> ParseAlgorithm(std::string_view name) {
  return Parse("algorithm", name, kAlgorithms, AlgorithmName);
}

absl::StatusOr<Protocol> ParseProtocol(std::string_view name) {
  return Parse("protocol", name, kProtocols, ProtocolName);
}

double BusBandwidthFactor(Collective c, int ranks) {
  SIM_CHECK(ranks >= 1) << "ranks must be >= 1, got " << ranks;
  const double n = ranks;
  switch (c) {
    case Collective::kAllReduce:
      return 2.0 * (n - 1) / n;
    case Collective::kReduceScatter:
    case Collective::kAllGather:
    case Collective::kAllToAll:
      return (n - 1) / n;
    case Collective::kBroadcast:
    case Collective::kSendRecv:
      return 1.0;
  }
  return 1.0;
}

}  // namespace clustersim::topology
