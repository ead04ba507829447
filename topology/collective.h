// File: topology/collective.h
//
// Collective operations and algorithms (NCCL's vocabulary), the request a
// network model costs, and nccl-tests' bus-bandwidth definitions.
//
// Sizes follow nccl-tests' "size" column: all-reduce and broadcast = the
// per-rank buffer; all-gather / reduce-scatter = the full (gathered) size;
// all-to-all = the per-rank send buffer; send/recv = the bytes sent.
// busbw = algbw x factor, factor = 2(n-1)/n for all-reduce, (n-1)/n for
// all-gather, reduce-scatter and all-to-all, 1 for broadcast and send/recv.
//
// Example:
//   CollectiveRequest r{Collective::kAllReduce, {0, 1, 2, 3}, sim::MiB(64)};
//   double f = BusBandwidthFactor(r.op, 4);   // 1.5
#ifndef CLUSTERSIM_TOPOLOGY_COLLECTIVE_H_
#define CLUSTERSIM_TOPOLOGY_COLLECTIVE_H_

#include <array>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/units.h"

namespace clustersim::topology {

enum class Collective { kAllReduce, kReduceScatter, kAllGather, kAllToAll, kBroadcast, kSendRecv };
enum class Algorithm { kAuto, kRing, kTree, kNvls, kHierarchical };
// NCCL's protocols: LL (8-byte lines, 4 B data + 4 B flag: low latency, half
// the bandwidth), LL128 (128-byte lines with 8 B of flags, NVLink paths only)
// and Simple (bulk copies with memory fences: full bandwidth, highest latency).
enum class Protocol { kAuto, kLl, kLl128, kSimple };
inline constexpr std::array<Protocol, 3> kConcreteProtocols = {Protocol::kLl, Protocol::kLl128,
                                                               Protocol::kSimple};
// 0, 1, 2 for LL, LL128, Simple (index into per-protocol arrays).
// REQUIRES: p != Protocol::kAuto.
int ProtocolIndex(Protocol p);

// nccl-tests names: "all_reduce", "reduce_scatter", "all_gather", "all_to_all",
// "broadcast", "send_recv".
std::string_view CollectiveName(Collective c);
// "auto", "ring", "tree", "nvls", "hierarchical".
std::string_view AlgorithmName(Algorithm a);
// "auto", "ll", "ll128", "simple".
std::string_view ProtocolName(Protocol p);
// Case-insensitive; '-' and '_' are ignored ("all-reduce", "AllReduce" work).
absl::StatusOr<Collective> ParseCollective(std::string_view name);
absl::StatusOr<Algorithm> ParseAlgorithm(std::string_view name);
absl::StatusOr<Protocol> ParseProtocol(std::string_view name);

struct CollectiveRequest {
  Collective op;
  std::vector<int> gpus;  // participating global GPU indices (>= 2 to cost anything);
                          // send/recv: exactly {src, dst}
  sim::Bytes bytes;       // nccl-tests "size" (see above)
  Algorithm algorithm = Algorithm::kAuto;
  Protocol protocol = Protocol::kAuto;
};

struct CollectiveEstimate {
  sim::Duration time;
  Algorithm algorithm;  // the algorithm used (never kAuto)
  Protocol protocol;    // the protocol used (never kAuto)
  double algbw_gbs;     // bytes / time, GB/s (1e9)
  double busbw_gbs;     // algbw x BusBandwidthFactor
};

// nccl-tests' busbw factor for `ranks` ranks. REQUIRES: ranks >= 1.
double BusBandwidthFactor(Collective c, int ranks);

}  // namespace clustersim::topology

#endif  // CLUSTERSIM_TOPOLOGY_COLLECTIVE_H_
