// File: viz/timeline.h
//
// A compact record of a simulated step for pictures (the HTML report's
// pipeline diagram and breakdowns): a sim::SpanObserver that keeps, per GPU
// (Resource::group) and per stream (Resource::lane), small spans
// {start, end, phase, micro-batch, layer, kind}. Meaning comes from a
// sim::SpanDescriber, read as follows (the contract of
// strategies/step_describer.cc):
//   phase      the first word of the span's name: "fwd", "bwd", "wgrad",
//              "step" (optimizer and gradient sync); anything else is kOther
//   microbatch the int arg "microbatch" (-1 when absent)
//   layer      the int arg "layer" (-1 when absent)
//   kind       the category: "compute,..." is kCompute, "comm,tp" kCommTp
//              (likewise cp, ep, dp, pp); a lane whose thread name starts
//              with "host" holds kHost work whatever its category
//   stage      Options::stage_of(group), by default the number after "pp " in
//              the process name ("node0/gpu3 (tp 3, cp 0, pp 1, dp 0)" -> 1),
//              0 when there is none
//
// Memory is bounded: at most Options::max_spans_per_group spans per GPU. When
// a GPU would exceed it, its spans are coarsened in place: first to one span
// per (lane, phase, micro-batch, layer) run of consecutive ops (kLayer), then
// to one per (lane, phase, micro-batch) run (kMicrobatch); a coarse span
// covers its first op's start to its last op's end, gaps between them
// included. If even that overflows, later spans of that GPU are counted in
// `dropped` and not kept.
//
// Example:
//   viz::Timeline timeline(describer, {});
//   engine.AddObserver(&timeline);
//   if (absl::Status s = engine.Run(); !s.ok()) return s;
//   absl::Status w = viz::WriteHtmlReport("report.html", result, timeline);
//
// Lifetime: `describer` must outlive the timeline. Output is deterministic:
// groups and lanes are kept in ordered maps, spans in arrival order per lane
// (which is time order, a lane being a serial stream).
// Thread-safety: none; call from the simulation thread.
#ifndef CLUSTERSIM_VIZ_TIMELINE_H_
#define CLUSTERSIM_VIZ_TIMELINE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "sim/engine.h"
#include "sim/span_describer.h"
#include "sim/task_graph.h"

namespace clustersim::viz {

enum class SpanPhase : uint8_t { kForward, kBackward, kBackwardWeight, kStep, kOther };
enum class SpanKind : uint8_t { kCompute, kCommTp, kCommCp, kCommEp, kCommDp, kCommPp, kHost, kOther };
// How finely a group's spans are kept (see the file comment).
enum class TimelineDetail : uint8_t { kOp, kLayer, kMicrobatch };

std::string_view SpanPhaseName(SpanPhase p);  // "fwd", "bwd", "wgrad", "step", "other"
std::string_view SpanKindName(SpanKind k);    // "compute", "tp", "cp", "ep", "dp", "pp", "host", "other"
std::string_view TimelineDetailName(TimelineDetail d);  // "op", "layer", "microbatch"

struct TimelineSpan {
  int64_t start_ps = 0;
  int64_t end_ps = 0;
  int32_t microbatch = -1;
  int32_t layer = -1;  // -1 also when a kMicrobatch span covers several layers
  SpanPhase phase = SpanPhase::kOther;
  SpanKind kind = SpanKind::kOther;
};

struct TimelineLane {
  std::string name;  // the describer's thread name, e.g. "compute", "comm: tp"
  std::vector<TimelineSpan> spans;
};

struct TimelineGroup {
  std::string name;  // the describer's process name
  int stage = 0;
  TimelineDetail detail = TimelineDetail::kOp;
  int64_t dropped = 0;  // spans not kept (see the file comment)
  std::map<uint32_t, TimelineLane> lanes;  // by Resource::lane
  size_t NumSpans() const;
};

class Timeline : public sim::SpanObserver {
 public:
  struct Options {
    int64_t max_spans_per_group = 8192;
    // The pipeline stage of a group; empty: parsed from the process name.
    std::function<int(uint32_t group)> stage_of;
  };

  Timeline(const sim::SpanDescriber& describer, Options options);
  Timeline(const Timeline&) = delete;
  Timeline& operator=(const Timeline&) = delete;

  void OnSpan(const sim::TaskGraph& g, const sim::Span& s) override;

  const std::map<uint32_t, TimelineGroup>& groups() const { return groups_; }
  // The latest span end seen (zero before any span).
  int64_t end_ps() const { return end_ps_; }

 private:
  // Merges runs of spans per lane whose keys agree at `detail`.
  static void Coarsen(TimelineGroup* group, TimelineDetail detail);
  // Whether `next` extends `last` at `detail`.
  static bool SameRun(const TimelineSpan& last, const TimelineSpan& next, TimelineDetail detail);

  const sim::SpanDescriber& describer_;
  Options options_;
  std::map<uint32_t, TimelineGroup> groups_;
  sim::SpanDescription description_;  // reused between spans
  int64_t end_ps_ = 0;
};

// The number after "pp " in `process_name`, or 0.
int StageFromProcessName(std::string_view process_name);

}  // namespace clustersim::viz

#endif  // CLUSTERSIM_VIZ_TIMELINE_H_
