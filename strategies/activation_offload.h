// File: strategies/activation_offload.h
//
// Activation offload to host memory as Megatron-Core runs it
// (cpu_offloading, cpu_offloading_num_layers = N, cpu_offloading_activations
// on, cpu_offloading_weights off, as Megatron-Bridge's performance scripts set
// them: scripts/performance/utils/helpers.py, tags v0.1.0rc4 and v0.2.0).
// Megatron-Core's TransformerBlock wraps each layer's forward in Transformer
// Engine's get_cpu_offload_context and calls its commit function after the
// layer (megatron/core/transformer/transformer_block.py and
// extensions/transformer_engine.py at NVIDIA/Megatron-LM 0d8e0714c; TE
// transformer_engine/pytorch/cpu_offload.py at v2.7,
// AsyncDoubleBufferGroupOffloadHandler, double buffering off):
// - the tensors the layer saves for its backward (the inputs of TE's linear
//   layers, the attention's Q, K, V, output and softmax statistics, the
//   SwiGLU input: every one marked activation_offloading) are copied
//   device-to-host on a D2H stream of their own, one layer (group) at a time;
// - layer i (i < N) has a window ending at layer w_i = (L / N)(i + 1) − 1
//   plus one per earlier remainder layer (TE's layer_window_map, L layers):
//   at the commit after layer w_i's forward the compute stream waits for
//   layer i's copy, frees its GPU tensors and starts layer i + 1's copy.
//   Layer 0's copy starts at the commit after its own forward;
// - in the backward the commit runs before layer j's backward: at j = w_i the
//   compute stream waits for the reload in flight, then starts layer i's
//   host-to-device copy on an H2D stream; before layer 0's backward it waits
//   for the last reload.
// So one copy per direction is in flight, each overlapped with about L / N
// layers of compute, and exposed only when the host link is slower than that
// compute. The link is the node's host link (topology NodePreset::host_link):
// NVLink-C2C on a Grace superchip, its PCIe link otherwise.
//
// Megatron-Core refuses offload with pipeline parallelism, with activation
// recompute and with N >= num_layers (TransformerConfig.__post_init__):
// ValidateCpuOffload does too.
//
// Example:
//   OffloadWindowEnds(80, 40)   // {1, 3, 5, ..., 79}
//   OffloadWindowEnds(126, 95)  // {1, 3, ..., 61, 62, 63, ..., 125}
#ifndef CLUSTERSIM_STRATEGIES_ACTIVATION_OFFLOAD_H_
#define CLUSTERSIM_STRATEGIES_ACTIVATION_OFFLOAD_H_

#include <vector>

#include "absl/status/status.h"
#include "models/transformer_config.h"
#include "strategies/parallel_config.h"

namespace clustersim::strategies {

// The layer after whose forward commit layer i's copy must be done, for each
// offloaded layer i in [0, offload_layers). REQUIRES: 0 < offload_layers <
// num_layers.
std::vector<int> OffloadWindowEnds(int num_layers, int offload_layers);

// InvalidArgument naming training.cpu_offload_layers when it is outside
// [0, num_layers), or set with pipeline parallelism or recompute (Megatron-Core
// refuses them), or with the expert-parallel overlap's merged passes (not
// modelled).
absl::Status ValidateCpuOffload(const models::TransformerConfig& model, const ParallelConfig& p);

}  // namespace clustersim::strategies

#endif  // CLUSTERSIM_STRATEGIES_ACTIVATION_OFFLOAD_H_
