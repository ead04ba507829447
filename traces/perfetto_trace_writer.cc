#include "traces/perfetto_trace_writer.h"

#include <cstring>
#include <variant>

#include "absl/strings/str_cat.h"
#include "sim/check.h"

namespace clustersim::traces {
namespace {

// Field numbers (perfetto/protos/perfetto/trace/...; see
// traces/testdata/perfetto_subset.proto).
constexpr int kTracePacket = 1;              // Trace.packet
constexpr int kTimestamp = 8;                // TracePacket
constexpr int kSequenceId = 10;              // TracePacket.trusted_packet_sequence_id
constexpr int kTrackEvent = 11;              // TracePacket
constexpr int kSequenceFlags = 13;           // TracePacket
constexpr int kTrackDescriptor = 60;         // TracePacket
constexpr int kTdUuid = 1;                   // TrackDescriptor
constexpr int kTdName = 2;
constexpr int kTdProcess = 3;
constexpr int kTdThread = 4;
constexpr int kTdParentUuid = 5;
constexpr int kTdCounter = 8;
constexpr int kPdPid = 1;                    // ProcessDescriptor
constexpr int kPdProcessName = 6;
constexpr int kThdPid = 1;                   // ThreadDescriptor
constexpr int kThdTid = 2;
constexpr int kThdThreadName = 5;
constexpr int kTeDebugAnnotations = 4;       // TrackEvent
constexpr int kTeType = 9;
constexpr int kTeTrackUuid = 11;
constexpr int kTeCategories = 22;
constexpr int kTeName = 23;
constexpr int kTeDoubleCounterValue = 44;
constexpr int kTeFlowIds = 47;
constexpr int kTeTerminatingFlowIds = 48;
constexpr int kDaIntValue = 4;               // DebugAnnotation
constexpr int kDaDoubleValue = 5;
constexpr int kDaStringValue = 6;
constexpr int kDaName = 10;
constexpr uint64_t kSliceBegin = 1;          // TrackEvent.Type
constexpr uint64_t kSliceEnd = 2;
constexpr uint64_t kInstant = 3;
constexpr uint64_t kCounter = 4;
constexpr uint64_t kIncrementalStateCleared = 1;  // TracePacket.SequenceFlags
constexpr uint32_t kLanesPerGroup = 32;

void Varint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

void VarintField(std::string* out, int field, uint64_t v) {
  Varint(out, static_cast<uint64_t>(field) << 3);
  Varint(out, v);
}

void Fixed64Field(std::string* out, int field, uint64_t v) {
  Varint(out, (static_cast<uint64_t>(field) << 3) | 1);
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

void DoubleField(std::string* out, int field, double d) {
  uint64_t bits;
  std::memcpy(&bits, &d, sizeof(bits));
  Fixed64Field(out, field, bits);
}

void BytesField(std::string* out, int field, std::string_view bytes) {
  Varint(out, (static_cast<uint64_t>(field) << 3) | 2);
  Varint(out, bytes.size());
  out->append(bytes.data(), bytes.size());
}

uint64_t ProcessUuid(uint32_t group) { return uint64_t{group} * kLanesPerGroup + 1; }
uint64_t ThreadUuid(uint32_t group, uint32_t lane) {
  return uint64_t{group} * kLanesPerGroup + 2 + lane;
}

// Picoseconds to whole nanoseconds, floored (never negative in a simulation).
uint64_t Nanoseconds(int64_t ps) { return static_cast<uint64_t>(ps / 1000); }

}  // namespace

absl::StatusOr<std::unique_ptr<PerfettoTraceWriter>> PerfettoTraceWriter::Open(
    const std::string& path, const sim::SpanDescriber& describer, Options options) {
  absl::StatusOr<std::unique_ptr<sim::AtomicFile>> file = sim::AtomicFile::Create(path);
  if (!file.ok()) return file.status();
  return std::unique_ptr<PerfettoTraceWriter>(
      new PerfettoTraceWriter(*std::move(file), describer, std::move(options)));
}

PerfettoTraceWriter::PerfettoTraceWriter(std::unique_ptr<sim::AtomicFile> file,
                                         const sim::SpanDescriber& describer, Options options)
    : file_(std::move(file)), describer_(describer), options_(std::move(options)) {
  std::string body;
  VarintField(&body, kSequenceFlags, kIncrementalStateCleared);
  EmitPacket(0, false, body);
}

void PerfettoTraceWriter::EmitPacket(int64_t timestamp_ps, bool has_timestamp,
                                     const std::string& body) {
  SIM_CHECK(!finished_) << "Perfetto packet added after Finish (" << file_->path() << ")";
  std::string head;
  if (has_timestamp) VarintField(&head, kTimestamp, Nanoseconds(timestamp_ps));
  VarintField(&head, kSequenceId, 1);
  packet_.clear();
  Varint(&packet_, (uint64_t{kTracePacket} << 3) | 2);
  Varint(&packet_, head.size() + body.size());
  packet_ += head;
  packet_ += body;
  file_->Write(packet_);
  ++packets_written_;
}

uint64_t PerfettoTraceWriter::ProcessTrack(uint32_t group) {
  auto [it, added] = process_tracks_.try_emplace(group, ProcessUuid(group));
  if (added) {
    std::string process;
    VarintField(&process, kPdPid, group);
    BytesField(&process, kPdProcessName,
               group == kNetworkPid ? std::string("network") : describer_.ProcessName(group));
    std::string td;
    VarintField(&td, kTdUuid, it->second);
    BytesField(&td, kTdProcess, process);
    std::string body;
    BytesField(&body, kTrackDescriptor, td);
    EmitPacket(0, false, body);
  }
  return it->second;
}

uint64_t PerfettoTraceWriter::ThreadTrack(const sim::TaskGraph& g, sim::ResourceId r) {
  const sim::TaskGraph::Resource& res = g.resource(r);
  SIM_CHECK(res.lane + 2 < kLanesPerGroup) << "lane " << res.lane << " of " << res.name
                                           << " exceeds the Perfetto writer's track numbering";
  const uint64_t uuid = ThreadUuid(res.group, res.lane);
  if (thread_tracks_.insert(uuid).second) {
    const uint64_t parent = ProcessTrack(res.group);
    std::string thread;
    VarintField(&thread, kThdPid, res.group);
    VarintField(&thread, kThdTid, uint64_t{res.group} * kLanesPerGroup + res.lane + 1);
    BytesField(&thread, kThdThreadName, describer_.ThreadName(g, r));
    std::string td;
    VarintField(&td, kTdUuid, uuid);
    VarintField(&td, kTdParentUuid, parent);
    BytesField(&td, kTdThread, thread);
    std::string body;
    BytesField(&body, kTrackDescriptor, td);
    EmitPacket(0, false, body);
  }
  return uuid;
}

void PerfettoTraceWriter::OnSpan(const sim::TaskGraph& g, const sim::Span& s) {
  SIM_CHECK(s.end >= s.start) << "span of task " << s.task << " ends before it starts";
  const sim::TaskGraph::Resource& res = g.resource(s.resource);
  if (!KeepsGroup(res.group)) return;
  const uint64_t track = ThreadTrack(g, s.resource);
  description_.name.clear();
  description_.category.clear();
  description_.args.clear();
  describer_.Describe(g, s, &description_);

  std::string event;
  VarintField(&event, kTeType, kSliceBegin);
  VarintField(&event, kTeTrackUuid, track);
  BytesField(&event, kTeName, description_.name);
  if (!description_.category.empty()) BytesField(&event, kTeCategories, description_.category);
  std::string annotation;
  for (const auto& [key, value] : description_.args) {
    annotation.clear();
    BytesField(&annotation, kDaName, key);
    if (const int64_t* i = std::get_if<int64_t>(&value)) {
      VarintField(&annotation, kDaIntValue, static_cast<uint64_t>(*i));
    } else if (const double* d = std::get_if<double>(&value)) {
      DoubleField(&annotation, kDaDoubleValue, *d);
    } else {
      BytesField(&annotation, kDaStringValue, std::get<std::string>(value));
    }
    BytesField(&event, kTeDebugAnnotations, annotation);
  }
  std::string body;
  BytesField(&body, kTrackEvent, event);
  EmitPacket(s.start.picoseconds(), true, body);

  event.clear();
  VarintField(&event, kTeType, kSliceEnd);
  VarintField(&event, kTeTrackUuid, track);
  body.clear();
  BytesField(&body, kTrackEvent, event);
  EmitPacket(s.end.picoseconds(), true, body);
}

void PerfettoTraceWriter::AddFlow(std::string_view name, uint32_t from_group, uint32_t from_lane,
                                  sim::Time from_time, uint32_t to_group, uint32_t to_lane,
                                  sim::Time to_time) {
  if (!KeepsGroup(from_group) || !KeepsGroup(to_group)) return;
  const uint64_t from = ThreadUuid(from_group, from_lane);
  const uint64_t to = ThreadUuid(to_group, to_lane);
  SIM_CHECK(thread_tracks_.contains(from) && thread_tracks_.contains(to))
      << "flow \"" << name << "\" on a track that has no span yet";
  const uint64_t id = next_flow_id_++;
  for (const bool start : {true, false}) {
    std::string event;
    VarintField(&event, kTeType, kInstant);
    VarintField(&event, kTeTrackUuid, start ? from : to);
    BytesField(&event, kTeName, name);
    Fixed64Field(&event, start ? kTeFlowIds : kTeTerminatingFlowIds, id);
    std::string body;
    BytesField(&body, kTrackEvent, event);
    EmitPacket((start ? from_time : to_time).picoseconds(), true, body);
  }
}

void PerfettoTraceWriter::AddCounter(uint32_t group, std::string_view name, sim::Time t,
                                     const CounterSeries& series) {
  if (KeepsGroup(group)) EmitCounter(group, name, t, series);
}

void PerfettoTraceWriter::AddNetworkCounter(std::string_view name, sim::Time t,
                                            const CounterSeries& series) {
  EmitCounter(kNetworkPid, name, t, series);
}

void PerfettoTraceWriter::EmitCounter(uint32_t group, std::string_view name, sim::Time t,
                                      const CounterSeries& series) {
  SIM_CHECK(!series.empty()) << "counter \"" << name << "\" has no series";
  const uint64_t parent = ProcessTrack(group);
  for (const auto& [series_name, value] : series) {
    const std::string track_name = absl::StrCat(std::string(name), " ", series_name);
    auto [it, added] =
        counter_tracks_.try_emplace(absl::StrCat(group, "/", track_name), next_counter_uuid_);
    if (added) {
      ++next_counter_uuid_;
      std::string td;
      VarintField(&td, kTdUuid, it->second);
      VarintField(&td, kTdParentUuid, parent);
      BytesField(&td, kTdName, track_name);
      BytesField(&td, kTdCounter, "");
      std::string body;
      BytesField(&body, kTrackDescriptor, td);
      EmitPacket(0, false, body);
    }
    std::string event;
    VarintField(&event, kTeType, kCounter);
    VarintField(&event, kTeTrackUuid, it->second);
    DoubleField(&event, kTeDoubleCounterValue, value);
    std::string body;
    BytesField(&body, kTrackEvent, event);
    EmitPacket(t.picoseconds(), true, body);
  }
}

absl::Status PerfettoTraceWriter::Finish() {
  SIM_CHECK(!finished_) << "PerfettoTraceWriter::Finish called twice (" << file_->path() << ")";
  finished_ = true;
  return file_->Commit();
}

}  // namespace clustersim::traces
