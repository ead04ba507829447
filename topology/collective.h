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

#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/units.h"

namespace clustersim::topology {

enum class Collective { kAllReduce, kReduceScatter, kAllGather, kAllToAll, kBroadcast, kSendRecv };
enum class Algorithm { kAuto, kRing, kTree, kNvls, kHierarchical };

// nccl-tests names: "all_reduce", "reduce_scatter", "all_gather", "all_to_all",
// "broadcast", "send_recv".
std::string_view CollectiveName(Collective c);
// "auto", "ring", "tree", "nvls", "hierarchical".
std::string_view AlgorithmName(Algorithm a);
// Case-insensitive; '-' and '_' are ignored ("all-reduce", "AllReduce" work).
absl::StatusOr<Collective> ParseCollective(std::string_view name);
absl::StatusOr<Algorithm> ParseAlgorithm(std::string_view name);

struct CollectiveRequest {
  Collective op;
  std::vector<int> gpus;  // participating global GPU indices (>= 2 to cost anything);
                          // send/recv: exactly {src, dst}
  sim::Bytes bytes;       // nccl-tests "size" (see above)
  Algorithm algorithm = Algorithm::kAuto;
};

struct CollectiveEstimate {
  sim::Duration time;
  Algorithm algorithm;  // the algorithm used (never kAuto)
  double algbw_gbs;     // bytes / time, GB/s (1e9)
  double busbw_gbs;     // algbw x BusBandwidthFactor
};

// nccl-tests' busbw factor for `ranks` ranks. REQUIRES: ranks >= 1.
double BusBandwidthFactor(Collective c, int ranks);

}  // namespace clustersim::topology

#endif  // CLUSTERSIM_TOPOLOGY_COLLECTIVE_H_
