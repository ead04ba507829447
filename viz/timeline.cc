#include "viz/timeline.h"

#include <algorithm>
#include <utility>
#include <variant>

#include "sim/check.h"

namespace clustersim::viz {
namespace {

SpanPhase PhaseFromName(std::string_view name) {
  const std::string_view word = name.substr(0, name.find(' '));
  if (word == "fwd") return SpanPhase::kForward;
  if (word == "bwd") return SpanPhase::kBackward;
  if (word == "wgrad") return SpanPhase::kBackwardWeight;
  if (word == "step") return SpanPhase::kStep;
  return SpanPhase::kOther;
}

SpanKind KindFromCategory(std::string_view category) {
  if (category.substr(0, 7) == "compute") return SpanKind::kCompute;
  if (category == "comm,tp") return SpanKind::kCommTp;
  if (category == "comm,cp") return SpanKind::kCommCp;
  if (category == "comm,ep") return SpanKind::kCommEp;
  if (category == "comm,dp") return SpanKind::kCommDp;
  if (category == "comm,pp") return SpanKind::kCommPp;
  return SpanKind::kOther;
}

// Grows `last` to cover `next`, which continues its run.
void Extend(TimelineSpan* last, const TimelineSpan& next) {
  last->end_ps = std::max(last->end_ps, next.end_ps);
  if (last->layer != next.layer) last->layer = -1;
}

int32_t IntArg(const sim::SpanDescription& d, std::string_view key) {
  for (const auto& [name, value] : d.args) {
    if (name == key && std::holds_alternative<int64_t>(value)) {
      return static_cast<int32_t>(std::get<int64_t>(value));
    }
  }
  return -1;
}

}  // namespace

std::string_view SpanPhaseName(SpanPhase p) {
  switch (p) {
    case SpanPhase::kForward: return "fwd";
    case SpanPhase::kBackward: return "bwd";
    case SpanPhase::kBackwardWeight: return "wgrad";
    case SpanPhase::kStep: return "step";
    case SpanPhase::kOther: return "other";
  }
  return "other";
}

std::string_view SpanKindName(SpanKind k) {
  switch (k) {
    case SpanKind::kCompute: return "compute";
    case SpanKind::kCommTp: return "tp";
    case SpanKind::kCommCp: return "cp";
    case SpanKind::kCommEp: return "ep";
    case SpanKind::kCommDp: return "dp";
    case SpanKind::kCommPp: return "pp";
    case SpanKind::kHost: return "host";
    case SpanKind::kOther: return "other";
  }
  return "other";
}

std::string_view TimelineDetailName(TimelineDetail d) {
  switch (d) {
    case TimelineDetail::kOp: return "op";
    case TimelineDetail::kLayer: return "layer";
    case TimelineDetail::kMicrobatch: return "microbatch";
  }
  return "op";
}

int StageFromProcessName(std::string_view process_name) {
  const size_t at = process_name.find("pp ");
  if (at == std::string_view::npos) return 0;
  int stage = 0;
  bool any = false;
  for (size_t i = at + 3; i < process_name.size() && process_name[i] >= '0' &&
                          process_name[i] <= '9';
       ++i) {
    stage = stage * 10 + (process_name[i] - '0');
    any = true;
  }
  return any ? stage : 0;
}

size_t TimelineGroup::NumSpans() const {
  size_t n = 0;
  for (const auto& [lane, l] : lanes) n += l.spans.size();
  return n;
}

Timeline::Timeline(const sim::SpanDescriber& describer, Options options)
    : describer_(describer), options_(std::move(options)) {
  SIM_CHECK(options_.max_spans_per_group > 0) << "Timeline needs room for at least one span";
}

bool Timeline::SameRun(const TimelineSpan& last, const TimelineSpan& next,
                       TimelineDetail detail) {
  if (detail == TimelineDetail::kOp) return false;
  if (last.phase != next.phase || last.kind != next.kind || last.microbatch != next.microbatch) {
    return false;
  }
  return detail == TimelineDetail::kMicrobatch || last.layer == next.layer;
}

void Timeline::Coarsen(TimelineGroup* group, TimelineDetail detail) {
  group->detail = detail;
  for (auto& [lane_id, lane] : group->lanes) {
    std::vector<TimelineSpan>& spans = lane.spans;
    size_t out = 0;
    for (size_t i = 0; i < spans.size(); ++i) {
      if (out > 0 && SameRun(spans[out - 1], spans[i], detail)) {
        Extend(&spans[out - 1], spans[i]);
      } else {
        spans[out++] = spans[i];
      }
    }
    spans.resize(out);
  }
}

void Timeline::OnSpan(const sim::TaskGraph& g, const sim::Span& s) {
  SIM_CHECK(s.end >= s.start) << "span of task " << s.task << " ends before it starts";
  const sim::TaskGraph::Resource& res = g.resource(s.resource);
  auto [group_it, new_group] = groups_.try_emplace(res.group);
  TimelineGroup& group = group_it->second;
  if (new_group) {
    group.name = describer_.ProcessName(res.group);
    group.stage = options_.stage_of ? options_.stage_of(res.group)
                                    : StageFromProcessName(group.name);
  }
  auto [lane_it, new_lane] = group.lanes.try_emplace(res.lane);
  TimelineLane& lane = lane_it->second;
  if (new_lane) lane.name = describer_.ThreadName(g, s.resource);
  end_ps_ = std::max(end_ps_, s.end.picoseconds());

  description_.name.clear();
  description_.category.clear();
  description_.args.clear();
  describer_.Describe(g, s, &description_);
  TimelineSpan span;
  span.start_ps = s.start.picoseconds();
  span.end_ps = s.end.picoseconds();
  span.microbatch = IntArg(description_, "microbatch");
  span.layer = IntArg(description_, "layer");
  span.phase = PhaseFromName(description_.name);
  span.kind = lane.name.rfind("host", 0) == 0 ? SpanKind::kHost
                                              : KindFromCategory(description_.category);

  if (!lane.spans.empty() && SameRun(lane.spans.back(), span, group.detail)) {
    Extend(&lane.spans.back(), span);
    return;
  }
  const size_t cap = static_cast<size_t>(options_.max_spans_per_group);
  while (group.NumSpans() >= cap && group.detail != TimelineDetail::kMicrobatch) {
    Coarsen(&group, group.detail == TimelineDetail::kOp ? TimelineDetail::kLayer
                                                        : TimelineDetail::kMicrobatch);
    if (!lane.spans.empty() && SameRun(lane.spans.back(), span, group.detail)) {
      Extend(&lane.spans.back(), span);
      return;
    }
  }
  if (group.NumSpans() >= cap) {
    ++group.dropped;
    return;
  }
  lane.spans.push_back(span);
}

}  // namespace clustersim::viz
