// File: strategies/memory_timeline.h
//
// Memory in use on each simulated GPU over the step, following the simulated
// timeline: the memory model's static part for the GPU's pipeline stage
// (weights, gradients, optimizer states, fixed overheads: models/memory_model.h)
// plus the activations each micro-batch's forward allocates and its backward
// frees. It feeds the trace's "memory in use (GiB)" counter, the report's
// memory curves and the Result's simulated peak per stage.
//
// Accounting, from the compute stream of each GPU (StepPlan lane
// kComputeLane; spans of one stream arrive in time order):
//   - the first forward op of (micro-batch, layer) allocates that layer's
//     activations for the micro-batch at its start: ActivationSizes::per_layer
//     for a transformer layer, ::embedding for the embedding (layer -1, first
//     stage), ::head for the output head (layer num_layers, last stage);
//   - the end of the backward (or, split, the input-gradient half) of
//     (micro-batch, layer) frees them: when the next compute op of that GPU is
//     something else, at the last op's end. A deferred weight-gradient pass
//     (zero-bubble schedules) holds nothing, as PeakInFlight in
//     strategies/pipeline_schedule.h counts it;
//   - optimizer work allocates nothing (the model's static part covers it).
// So 1F1B keeps min(m, p - stage) micro-batches in flight, GPipe all m, and
// the interleaved schedule its warm-up depth in model chunks; the peak is read
// off the simulation, not off a formula. With the same micro-batch sizes the
// result equals the memory model's 1F1B accounting (EstimateMemory) for 1F1B,
// and its interleaving factor (1 + (p-1)/(p*v)) for the transformer layers of
// the interleaved schedule, whose embedding term the model scales the same
// way while the timeline holds it for chunk-0 micro-batches only.
// Not modelled (as in the memory model): transient buffers of one op
// (recomputed activations inside a backward, ZeRO-3's gathered parameters,
// communication buffers) and allocator fragmentation.
//
// Memory is bounded: per GPU, the bytes in use, its peak, the set of
// (micro-batch, layer) allocations alive (at most in-flight x layers) and, for
// Options::curve_groups only, the curve.
//
// Example:
//   MemoryTimeline memory(plan, stage_of, static_by_stage, ActivationSizesOf(in),
//                         model.num_layers, {.sink = trace.get()});
//   engine.AddObserver(&memory);
//   engine.Run();
//   memory.Finish();
//   double peak = memory.PeakBytes(0);
//
// Lifetime: `plan` and Options::sink must outlive the timeline.
// Thread-safety: none; call from the simulation thread.
#ifndef CLUSTERSIM_STRATEGIES_MEMORY_TIMELINE_H_
#define CLUSTERSIM_STRATEGIES_MEMORY_TIMELINE_H_

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "models/memory_model.h"
#include "sim/engine.h"
#include "sim/task_graph.h"
#include "strategies/parallel_config.h"
#include "strategies/step_plan.h"
#include "traces/trace_sink.h"

namespace clustersim::strategies {

// Activation bytes one micro-batch keeps on a stage until its backward.
struct ActivationSizes {
  int64_t per_layer = 0;  // one transformer layer
  int64_t embedding = 0;  // first stage: token ids and the embedding dropout mask
  int64_t head = 0;       // last stage: final norm input and fp32 logits
  // Full recompute by block, or uniform over groups of n > 1 layers: what
  // each layer keeps instead of per_layer (indexed by layer; empty: none).
  std::vector<int64_t> by_layer;
};

// The memory model's activation terms for one micro-batch, by differences of
// EstimateMemory on one micro-batch without interleaving: per_layer is what
// one more layer adds; embedding and head what stages 0 and L-1 of an
// L-stage pipeline (one layer each) hold beyond their layer. REQUIRES:
// ValidateMemoryInputs(in).ok().
ActivationSizes ActivationSizesOf(const models::MemoryInputs& in);
// The same, with ActivationSizes::by_layer set from the model chunks of `p`
// when full recompute's method keeps different bytes in the layers of a
// chunk: block, the input checkpoint in the first recompute_num_layers layers
// of each chunk and the whole layer (as without recompute) in the others;
// uniform, the checkpoint in the first layer of each group of
// recompute_num_layers and nothing in the others. The replayed group's
// activations during its backward are transient, not counted (see above).
// With activation offload of N > 1 layers (ParallelConfig::cpu_offload_layers)
// the first N - 1 layers hold nothing: at the peak, the start of the backward,
// they are on the host and layer N - 1 is being reloaded, as the memory model
// counts it (the copies' own timing is not followed).
ActivationSizes ActivationSizesOf(const models::MemoryInputs& in, const ParallelConfig& p);

// The static part of one stage's memory (bytes).
struct StaticMemory {
  int64_t weights = 0, gradients = 0, optimizer = 0, other = 0;
  int64_t Total() const { return weights + gradients + optimizer + other; }
};

class MemoryTimeline : public sim::SpanObserver {
 public:
  struct Options {
    traces::TraceSink* sink = nullptr;   // counter samples; none when null
    std::vector<uint32_t> curve_groups;  // GPUs whose curve is kept (Curve)
  };
  // One point of a curve: bytes in use from this time on.
  struct Point {
    int64_t t_ps;
    int64_t bytes;
  };

  // `stage_of` maps a GPU (Resource::group) to its pipeline stage, an index
  // into `static_by_stage`.
  MemoryTimeline(const strategies::StepPlan& plan, std::function<int(uint32_t group)> stage_of,
                 std::vector<StaticMemory> static_by_stage, ActivationSizes sizes, int num_layers,
                 Options options);
  MemoryTimeline(const MemoryTimeline&) = delete;
  MemoryTimeline& operator=(const MemoryTimeline&) = delete;

  void OnSpan(const sim::TaskGraph& g, const sim::Span& s) override;

  // Frees what the last backward of every GPU still holds. Call once after
  // Engine::Run, before the trace's Finish.
  void Finish();

  // The largest bytes in use (static + activations) on a simulated GPU of
  // `stage`, and the activations at that moment; 0 when no GPU of the stage
  // ran compute.
  int64_t PeakBytes(int stage) const;
  int64_t PeakActivationBytes(int stage) const;
  // The curve of `group`, in time order; empty unless it is in curve_groups.
  const std::vector<Point>& Curve(uint32_t group) const;

  // The trace counter's name.
  static constexpr std::string_view kCounterName = "memory in use (GiB)";

 private:
  struct GroupState {
    bool seen = false;  // ran compute (its first span initialises the rest)
    int stage = 0;
    int64_t activations = 0;
    int64_t peak = 0;              // static + activations
    int64_t peak_activations = 0;
    absl::flat_hash_set<uint64_t> live;  // (micro-batch, layer) allocations
    // The run of consecutive compute ops being watched.
    bool run_open = false;
    strategies::Phase run_phase = strategies::Phase::kForward;
    int32_t run_microbatch = -1, run_layer = -1;
    int64_t run_end_ps = 0;
    bool keeps_curve = false;
    std::vector<Point> curve;
  };
  GroupState& StateOf(uint32_t group);
  // Frees the activations of a finished backward run.
  void CloseRun(uint32_t group, GroupState& st);
  int64_t SizeOf(int32_t layer) const;
  void Sample(uint32_t group, GroupState& st, int64_t t_ps);

  const strategies::StepPlan& plan_;
  std::function<int(uint32_t)> stage_of_;
  std::vector<StaticMemory> static_by_stage_;
  ActivationSizes sizes_;
  int num_layers_;
  Options options_;
  std::vector<int> local_of_;       // global GPU -> index into groups_ (-1: not simulated)
  std::vector<GroupState> groups_;  // per simulated GPU, in GPU order
  traces::CounterSeries series_;  // reused between samples
};

}  // namespace clustersim::strategies

#endif  // CLUSTERSIM_STRATEGIES_MEMORY_TIMELINE_H_
