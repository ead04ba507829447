// File: topology/collective_table.h
//
// An nccl-tests-style table for one collective over a size sweep, as printed by
// `clustersim collective`. Sizes go from min_bytes to max_bytes multiplying by
// `factor` (nccl-tests -b/-e/-f); count is size / 4 (float32, as nccl-tests'
// default type). busbw uses nccl-tests' definitions (collective.h).
//
// Example output:
//   # all_reduce, algorithm auto, protocol auto, 8 GPUs
//   #        size       count     time(us)  algbw(GB/s)  busbw(GB/s)  algorithm/protocol
//        1048576      262144        52.73        19.89        34.80  ring/ll
#ifndef CLUSTERSIM_TOPOLOGY_COLLECTIVE_TABLE_H_
#define CLUSTERSIM_TOPOLOGY_COLLECTIVE_TABLE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/units.h"
#include "topology/collective.h"
#include "topology/network_model.h"

namespace clustersim::topology {

// The last column is the (algorithm, protocol) the model chose for the row.
// Errors: min_bytes < 1, max_bytes < min_bytes, factor < 2, or the model's
// error for the first size it rejects.
absl::StatusOr<std::string> FormatCollectiveTable(const NetworkModel& model, Collective op,
                                                  Algorithm algorithm, Protocol protocol,
                                                  const std::vector<int>& gpus,
                                                  sim::Bytes min_bytes, sim::Bytes max_bytes,
                                                  int factor);

}  // namespace clustersim::topology

#endif  // CLUSTERSIM_TOPOLOGY_COLLECTIVE_TABLE_H_
