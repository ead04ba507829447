#include "strategies/memory_timeline.h"

#include <algorithm>
#include <string>

#include "sim/check.h"

namespace clustersim::strategies {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

int64_t Activations(const models::MemoryInputs& in) {
  return models::EstimateMemory(in).activations.count();
}

uint64_t Key(int32_t microbatch, int32_t layer) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(microbatch)) << 32) |
         static_cast<uint32_t>(layer + 1);
}

}  // namespace

ActivationSizes ActivationSizesOf(const models::MemoryInputs& in) {
  models::MemoryInputs one = in;  // one micro-batch, one stage, no interleaving
  one.cpu_offload_layers = 0;      // every layer's activations allocated on the GPU
  one.num_microbatches = 1;
  one.virtual_pipeline = 1;
  one.pipeline_parallel = 1;
  one.pipeline_stage = 0;
  const int layers = in.model.num_layers;
  const int64_t all = Activations(one);  // layers x per_layer + embedding + head
  models::MemoryInputs more = one;
  ActivationSizes s;
  if (in.model.hybrid()) {
    // A hybrid pattern repeated twice keeps the mean over its layers.
    more.model.num_layers = 2 * layers;
    more.model.hybrid_pattern += in.model.hybrid_pattern;
    s.per_layer = (Activations(more) - all) / layers;
  } else if (const int dense = in.model.num_dense_layers();
             dense > 0 && in.model.num_experts > 0) {
    // Dense layers in an MoE model make the per-layer figure a mean over the
    // layers, which depends only on how many are dense: twice the layers with
    // twice the dense ones (dense-first) keep the mean, and the difference is
    // L layers of it.
    more.model.num_layers = 2 * layers;
    more.model.moe_first_dense_layers = 2 * dense;
    more.model.moe_layer_step = 0;
    s.per_layer = (Activations(more) - all) / layers;
  } else {
    more.model.num_layers = layers + 1;
    s.per_layer = Activations(more) - all;
  }
  const int64_t extras = all - layers * s.per_layer;
  if (layers < 2) {
    s.embedding = extras;  // one stage holds both; book them with the embedding
    return s;
  }
  models::MemoryInputs split = one;  // one layer per stage
  split.pipeline_parallel = layers;
  s.embedding = Activations(split) - s.per_layer;
  s.head = extras - s.embedding;
  return s;
}

ActivationSizes ActivationSizesOf(const models::MemoryInputs& in, const ParallelConfig& p) {
  const models::ShardSpec& s = in.shard;
  const int n = s.recompute_num_layers;
  const bool block = s.recompute_method == models::RecomputeMethod::kBlock;
  if (p.cpu_offload_layers > 1) {
    ActivationSizes sizes = ActivationSizesOf(in);
    sizes.by_layer.assign(in.model.num_layers, sizes.per_layer);
    std::fill(sizes.by_layer.begin(), sizes.by_layer.begin() + (p.cpu_offload_layers - 1), 0);
    return sizes;
  }
  if (s.recompute != models::Recompute::kFull || (!block && n == 1)) return ActivationSizesOf(in);
  models::MemoryInputs full = in;  // every layer keeps its input checkpoint
  full.shard.recompute_method = models::RecomputeMethod::kUniform;
  full.shard.recompute_num_layers = 1;
  ActivationSizes sizes = ActivationSizesOf(full);
  models::MemoryInputs none = in;
  none.shard.recompute = models::Recompute::kNone;
  const int64_t whole = ActivationSizesOf(none).per_layer;
  const int layers = in.model.num_layers;
  sizes.by_layer.assign(layers, 0);
  for (int pos = 0; pos < p.pipeline_parallel * p.virtual_pipeline; ++pos) {
    const auto [begin, end] = p.LayersOf(pos, layers);
    for (int l = begin; l < end; ++l) {
      const int i = l - begin;
      const bool checkpoint = block ? i < n : i % n == 0;
      sizes.by_layer[l] = checkpoint ? sizes.per_layer : (block ? whole : 0);
    }
  }
  return sizes;
}

MemoryTimeline::MemoryTimeline(const strategies::StepPlan& plan,
                               std::function<int(uint32_t group)> stage_of,
                               std::vector<StaticMemory> static_by_stage, ActivationSizes sizes,
                               int num_layers, Options options)
    : plan_(plan), stage_of_(std::move(stage_of)), static_by_stage_(std::move(static_by_stage)),
      sizes_(sizes), num_layers_(num_layers), options_(std::move(options)),
      local_of_(plan.world_size, -1), groups_(plan.simulated_gpus.size()) {
  for (size_t i = 0; i < plan.simulated_gpus.size(); ++i) {
    local_of_[plan.simulated_gpus[i]] = static_cast<int>(i);
  }
}

MemoryTimeline::GroupState& MemoryTimeline::StateOf(uint32_t group) {
  SIM_CHECK(group < local_of_.size() && local_of_[group] >= 0)
      << "GPU " << group << " is not simulated";
  GroupState& st = groups_[local_of_[group]];
  if (!st.seen) {
    st.seen = true;
    st.stage = stage_of_(group);
    SIM_CHECK(st.stage >= 0 && st.stage < static_cast<int>(static_by_stage_.size()))
        << "GPU " << group << " on stage " << st.stage << " of " << static_by_stage_.size();
    st.keeps_curve = std::find(options_.curve_groups.begin(), options_.curve_groups.end(),
                               group) != options_.curve_groups.end();
    Sample(group, st, 0);
  }
  return st;
}

int64_t MemoryTimeline::SizeOf(int32_t layer) const {
  if (layer < 0) return sizes_.embedding;
  if (layer >= num_layers_) return sizes_.head;
  if (!sizes_.by_layer.empty()) return sizes_.by_layer[layer];
  return sizes_.per_layer;
}

void MemoryTimeline::Sample(uint32_t group, GroupState& st, int64_t t_ps) {
  const StaticMemory& fixed = static_by_stage_[st.stage];
  const int64_t total = fixed.Total() + st.activations;
  if (total > st.peak) {
    st.peak = total;
    st.peak_activations = st.activations;
  }
  if (st.keeps_curve) st.curve.push_back({t_ps, total});
  if (options_.sink == nullptr) return;
  series_.clear();
  series_.emplace_back("weights", fixed.weights / kGiB);
  series_.emplace_back("gradients", fixed.gradients / kGiB);
  series_.emplace_back("optimizer", fixed.optimizer / kGiB);
  series_.emplace_back("other", fixed.other / kGiB);
  series_.emplace_back("activations", st.activations / kGiB);
  options_.sink->AddCounter(group, kCounterName, sim::Time() + sim::Picoseconds(t_ps), series_);
}

void MemoryTimeline::CloseRun(uint32_t group, GroupState& st) {
  if (!st.run_open) return;
  st.run_open = false;
  if (st.run_phase != strategies::Phase::kBackward) return;
  if (st.live.erase(Key(st.run_microbatch, st.run_layer)) == 0) return;
  st.activations -= SizeOf(st.run_layer);
  SIM_CHECK(st.activations >= 0) << "GPU " << group << " freed more activations than it held";
  Sample(group, st, st.run_end_ps);
}

void MemoryTimeline::OnSpan(const sim::TaskGraph& g, const sim::Span& s) {
  if (g.LaneOf(s.resource) != strategies::kComputeLane) return;
  const uint32_t group = g.GroupOf(s.resource);
  const strategies::TaskInfo& info = plan_.infos[s.tag];
  GroupState& st = StateOf(group);
  const bool pass = info.microbatch >= 0 && info.phase != strategies::Phase::kOptimizer;
  if (pass && st.run_open && st.run_phase == info.phase &&
      st.run_microbatch == info.microbatch && st.run_layer == info.layer) {
    st.run_end_ps = s.end.picoseconds();
    return;
  }
  CloseRun(group, st);
  if (!pass) return;
  st.run_open = true;
  st.run_phase = info.phase;
  st.run_microbatch = info.microbatch;
  st.run_layer = info.layer;
  st.run_end_ps = s.end.picoseconds();
  if (info.phase == strategies::Phase::kForward &&
      st.live.insert(Key(info.microbatch, info.layer)).second) {
    st.activations += SizeOf(info.layer);
    Sample(group, st, s.start.picoseconds());
  }
}

void MemoryTimeline::Finish() {
  for (size_t i = 0; i < groups_.size(); ++i) {
    if (groups_[i].seen) CloseRun(static_cast<uint32_t>(plan_.simulated_gpus[i]), groups_[i]);
  }
}

int64_t MemoryTimeline::PeakBytes(int stage) const {
  int64_t peak = 0;
  for (const GroupState& st : groups_) {
    if (st.seen && st.stage == stage) peak = std::max(peak, st.peak);
  }
  return peak;
}

int64_t MemoryTimeline::PeakActivationBytes(int stage) const {
  int64_t peak = 0, at = 0;
  for (const GroupState& st : groups_) {
    if (st.seen && st.stage == stage && st.peak > peak) {
      peak = st.peak;
      at = st.peak_activations;
    }
  }
  return at;
}

const std::vector<MemoryTimeline::Point>& MemoryTimeline::Curve(uint32_t group) const {
  static const std::vector<Point> kNone;
  if (group >= local_of_.size() || local_of_[group] < 0) return kNone;
  return groups_[local_of_[group]].curve;
}

}  // namespace clustersim::strategies
