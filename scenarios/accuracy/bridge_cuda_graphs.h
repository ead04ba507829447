// File: scenarios/accuracy/bridge_cuda_graphs.h
//
// The CUDA graphs (training.cuda_graph_scope) and MoE token drop
// (parallelism.moe_pad_expert_input_to_capacity) of Megatron-Bridge's
// performance presets, by release, model, GPU and precision, read from the
// scripts at the tags cited in the .cc. The simulator launches each captured
// run of a layer's ops as one graph (models/cuda_graph.h).
//
// Example:
//   BridgeGraphs g = BridgeCudaGraphs("25.09", "qwen3-30b-a3b", "b200-sxm-180gb", "fp8",
//                                     "current", "none");
//   // g.scopes == {"full"}, g.pad_to_capacity
#ifndef CLUSTERSIM_SCENARIOS_ACCURACY_BRIDGE_CUDA_GRAPHS_H_
#define CLUSTERSIM_SCENARIOS_ACCURACY_BRIDGE_CUDA_GRAPHS_H_

#include <string>
#include <vector>

namespace clustersim::scenarios {

struct BridgeGraphs {
  std::vector<std::string> scopes;  // training.cuda_graph_scope; empty: none
  bool pad_to_capacity = false;     // MoE token drop padded to capacity
  std::string text;                 // the assumption, for the row's report; "" if none
};

// `release` as BridgeRelease gives it ("25.09", "25.11", ...); `precision`
// and `fp8_recipe` as the row's training config holds them ("fp8",
// "current" | "mxfp8" | "delayed"); `recompute` its recompute granularity.
// Releases other than 25.09 and 25.11 are not pinned here: no graphs, no
// token drop.
BridgeGraphs BridgeCudaGraphs(const std::string& release, const std::string& preset,
                              const std::string& gpu, const std::string& precision,
                              const std::string& fp8_recipe, const std::string& recompute);

}  // namespace clustersim::scenarios

#endif  // CLUSTERSIM_SCENARIOS_ACCURACY_BRIDGE_CUDA_GRAPHS_H_
