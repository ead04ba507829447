// Activation offload (ParallelConfig::cpu_offload_layers; the schedule of
// Transformer Engine's offload handler under Megatron-Core, described in
// strategies/activation_offload.h): each offloaded layer's saved activations
// cross the host link device-to-host after its forward and host-to-device
// before its backward, on copy streams of their own, and the compute waits for
// a copy only at the end of its window.
#include <string>
#include <utility>

#include "models/activation_memory.h"
#include "models/memory_model.h"
#include "strategies/activation_offload.h"
#include "strategies/memory_inputs.h"
#include "strategies/step_builder_internal.h"

namespace clustersim::strategies::step_builder_internal {

// GPU i's two copy streams, and (once) the window ends of the offloaded layers.
void Builder::AddOffloadLanes(int i, const std::string& name) {
  gpu_[i].lane.d2h = plan_.graph.AddResource(name + "/host:d2h", plan_.simulated_gpus[i],
                                             kHostCopyLane);
  gpu_[i].lane.h2d = plan_.graph.AddResource(name + "/host:h2d", plan_.simulated_gpus[i],
                                             kHostCopyLane);
  if (offload_windows_.empty()) {
    offload_windows_ = OffloadWindowEnds(in_.model->num_layers, p_.cpu_offload_layers);
  }
}

// The copy of one layer's saved activations of one micro-batch (the memory
// model's per-layer bytes, models::MeanLayerActivationBytes), to the host or
// back, owned by step_ops.
const models::Op& Builder::HostCopyOp(bool to_host) {
  const models::Op*& slot = to_host ? offload_op_ : reload_op_;
  if (slot == nullptr) {
    const models::MemoryInputs m = MemoryInputsFor(*in_.model, p_, in_.finetune);
    models::Op op;
    op.name = to_host ? "offload_d2h" : "reload_h2d";
    op.kind = models::OpKind::kMemoryBound;
    op.bytes = sim::Bytes(
        static_cast<int64_t>(models::MeanLayerActivationBytes(m.model, m.shard) + 0.5));
    slot = &AddStepOp(std::move(op));
  }
  return *slot;
}

// The commit after `layer`'s forward: layer 0 starts its copy; at the end of
// the window of the oldest layer in flight the compute waits for its copy and
// the next offloaded layer's copy starts.
void Builder::OffloadAfterForward(const Ctx& ctx, int layer) {
  const int n = p_.cpu_offload_layers;
  if (n == 0) return;
  const models::Op& op = HostCopyOp(/*to_host=*/true);
  const sim::Duration d = sim::TransferTime(op.bytes, in_.host_link);
  auto copy = [&](int i, int of_layer) {
    GpuState& g = gpu_[i];
    TaskInfo info{.op = &op, .phase = Phase::kForward, .microbatch = ctx.microbatch,
                  .layer = of_layer, .stage = ctx.stage, .chunk = ctx.chunk};
    const sim::TaskId t = plan_.graph.AddTask(g.lane.d2h, d, NewInfo(info));
    After(g.last, t);
    After(g.last_d2h, t);
    g.last_d2h = t;
  };
  for (int i : *ctx.gpus) {
    GpuState& g = gpu_[i];
    if (layer == 0) copy(i, 0);
    if (g.offloaded < n && offload_windows_[g.offloaded] == layer) {
      g.waits.push_back(g.last_d2h);
      if (g.offloaded + 1 < n) copy(i, g.offloaded + 1);
      ++g.offloaded;
    }
  }
}

// The commit before `layer`'s backward: at the end of the window of the
// latest offloaded layer still on the host, the compute waits for the reload
// in flight and that layer's reload starts; layer 0's backward waits for the
// last reload.
void Builder::ReloadBeforeBackward(const Ctx& ctx, int layer) {
  if (p_.cpu_offload_layers == 0) return;
  const models::Op& op = HostCopyOp(/*to_host=*/false);
  const sim::Duration d = sim::TransferTime(op.bytes, in_.host_link);
  for (int i : *ctx.gpus) {
    GpuState& g = gpu_[i];
    const int k = g.offloaded;
    if (k >= 1 && offload_windows_[k - 1] == layer) {
      if (g.last_h2d != kNone) g.waits.push_back(g.last_h2d);
      TaskInfo info{.op = &op, .phase = Phase::kBackward, .microbatch = ctx.microbatch,
                    .layer = k - 1, .stage = ctx.stage, .chunk = ctx.chunk};
      const sim::TaskId t = plan_.graph.AddTask(g.lane.h2d, d, NewInfo(info));
      After(g.last, t);
      After(g.last_h2d, t);
      g.last_h2d = t;
      if (k > 1) --g.offloaded;
    }
    if (layer == 0) {
      if (g.last_h2d != kNone) g.waits.push_back(g.last_h2d);
      g.offloaded = 0;
      g.last_d2h = kNone;
      g.last_h2d = kNone;
    }
  }
}

}  // namespace clustersim::strategies::step_builder_internal
