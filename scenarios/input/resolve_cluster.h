// File: scenarios/input/resolve_cluster.h
//
// The cluster part of scenario resolution: the GPU (catalog), the number of
// GPUs and nodes, the node preset (defaulting to the GPU's usual server) and
// the fabric, as a topology::ClusterSpec; and its echo into the resolved
// scenario.
//
// Example:
//   absl::StatusOr<ResolvedCluster> c = ResolveCluster(scenario.cluster());
#ifndef CLUSTERSIM_SCENARIOS_INPUT_RESOLVE_CLUSTER_H_
#define CLUSTERSIM_SCENARIOS_INPUT_RESOLVE_CLUSTER_H_

#include <string>

#include "absl/status/statusor.h"
#include "models/gpu_catalog.h"
#include "scenarios/proto/scenario.pb.h"
#include "topology/cluster_spec.h"
#include "topology/link_technology.h"

namespace clustersim::scenarios {

struct ResolvedCluster {
  const models::GpuSpec* gpu = nullptr;  // points into the GPU catalog
  int num_gpus = 0;
  int gpus_per_node = 0;
  topology::ClusterSpec spec;
  double power_cap_w = 0;  // cluster.power_cap_w; 0: the default limit
  // The GPU's link to host memory: the node's host_link (NVLink-C2C on a
  // Grace superchip), else its PCIe link; null when the node preset is
  // unknown (BuildCluster reports that).
  const topology::LinkTechnology* host_link = nullptr;
};

// Errors name the field ("cluster.gpu is required; use one of: ...").
absl::StatusOr<ResolvedCluster> ResolveCluster(const config::ClusterConfig& c);

void EchoCluster(const ResolvedCluster& c, config::ClusterConfig* out);

// The topology node preset a GPU usually ships in ("dgx-a100" for A100 SXM).
absl::StatusOr<std::string> DefaultNodeFor(const models::GpuSpec& gpu);

}  // namespace clustersim::scenarios

#endif  // CLUSTERSIM_SCENARIOS_INPUT_RESOLVE_CLUSTER_H_
