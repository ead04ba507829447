// File: traces/perfetto_trace_writer.h
//
// A sim::SpanObserver that streams the simulation as a Perfetto protobuf trace
// (`--trace-format perfetto`; open in ui.perfetto.dev), for runs too large
// for JSON. Written without the Perfetto SDK: the file is the `Trace` message,
// i.e. a sequence of length-delimited field-1 `TracePacket` records, encoded
// by hand from the field numbers of Perfetto's public .proto files (listed in
// traces/testdata/perfetto_subset.proto, which decodes the output with
// `protoc --decode=perfetto.protos.Trace`).
//
// Layout, as in the Chrome JSON writer: one process track per GPU
// (Resource::group; pid = group, named by the describer), one thread track
// per stream (tid = group * 32 + lane + 1, so tids are unique in the trace),
// described by a TrackDescriptor packet before first use. Each span becomes a
// TYPE_SLICE_BEGIN / TYPE_SLICE_END pair carrying name, category and the
// describer's args as debug annotations. Timestamps are integer nanoseconds
// (picoseconds floored; floor keeps abutting spans abutting). Flows are
// instants with flow_ids at the sending end and terminating_flow_ids at the
// receiving end; counters are counter tracks under their GPU's process, or
// under a "network" process (pid kNetworkPid) for fabric-wide ones.
// All packets share trusted_packet_sequence_id 1. No interning: names are
// written in full.
//
// Memory is bounded: packets go to an sim::AtomicFile as they are made; the writer
// remembers only which tracks it has described. Options::ranks filters GPUs
// as in ChromeTraceWriter.
//
// Example:
//   absl::StatusOr<std::unique_ptr<PerfettoTraceWriter>> w =
//       PerfettoTraceWriter::Open("step.pftrace", describer, {});
//   if (!w.ok()) return w.status();
//   engine.AddObserver(w->get());
//   if (absl::Status run = engine.Run(); !run.ok()) return run;
//   absl::Status s = (*w)->Finish();
//
// Lifetime: `describer` must outlive the writer.
// Thread-safety: none; call from the simulation thread.
#ifndef CLUSTERSIM_TRACES_PERFETTO_TRACE_WRITER_H_
#define CLUSTERSIM_TRACES_PERFETTO_TRACE_WRITER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "sim/atomic_file.h"
#include "sim/engine.h"
#include "sim/span_describer.h"
#include "sim/task_graph.h"
#include "sim/units.h"
#include "traces/id_ranges.h"
#include "traces/trace_sink.h"

namespace clustersim::traces {

class PerfettoTraceWriter : public TraceSink {
 public:
  struct Options {
    std::optional<IdRanges> ranks;  // GPUs to keep; unset: all
  };

  // Creates the output (through a temp file); error names the path.
  static absl::StatusOr<std::unique_ptr<PerfettoTraceWriter>> Open(
      const std::string& path, const sim::SpanDescriber& describer, Options options);

  PerfettoTraceWriter(const PerfettoTraceWriter&) = delete;
  PerfettoTraceWriter& operator=(const PerfettoTraceWriter&) = delete;

  // REQUIRES: Finish has not been called; s.end >= s.start.
  void OnSpan(const sim::TaskGraph& g, const sim::Span& s) override;

  // A flow arrow from (from_group, from_lane) at from_time to (to_group,
  // to_lane) at to_time. REQUIRES: both tracks already carry a span (their
  // descriptors were written); Finish not called.
  void AddFlow(std::string_view name, uint32_t from_group, uint32_t from_lane, sim::Time from_time,
               uint32_t to_group, uint32_t to_lane, sim::Time to_time) override;

  // One sample per series, each on counter track "<name> <series>" of
  // `group`. REQUIRES: series non-empty; Finish not called.
  void AddCounter(uint32_t group, std::string_view name, sim::Time t,
                  const CounterSeries& series) override;

  // As AddCounter, on the process "network" (pid kNetworkPid), kept by every
  // ranks filter.
  void AddNetworkCounter(std::string_view name, sim::Time t, const CounterSeries& series) override;

  // Commits the file. REQUIRES: called once.
  absl::Status Finish() override;

  int64_t packets_written() const { return packets_written_; }
  int64_t bytes_written() const { return file_->bytes_written(); }

 private:
  PerfettoTraceWriter(std::unique_ptr<sim::AtomicFile> file, const sim::SpanDescriber& describer,
                      Options options);
  bool KeepsGroup(uint32_t group) const {
    return !options_.ranks.has_value() || options_.ranks->Contains(group);
  }
  // Writes the process descriptor of `group` on first use ("network" for
  // kNetworkPid, else the describer's name); returns its uuid.
  uint64_t ProcessTrack(uint32_t group);
  // Writes the thread descriptor on first use; returns its uuid.
  uint64_t ThreadTrack(const sim::TaskGraph& g, sim::ResourceId r);
  // Writes one TracePacket with `body` (already-encoded TracePacket fields).
  void EmitPacket(int64_t timestamp_ps, bool has_timestamp, const std::string& body);
  // AddCounter without the ranks filter.
  void EmitCounter(uint32_t group, std::string_view name, sim::Time t, const CounterSeries& series);

  std::unique_ptr<sim::AtomicFile> file_;
  const sim::SpanDescriber& describer_;
  Options options_;
  std::map<uint32_t, uint64_t> process_tracks_;            // group -> uuid
  std::set<uint64_t> thread_tracks_;                       // described thread uuids
  std::map<std::string, uint64_t> counter_tracks_;         // "group/name/series" -> uuid
  uint64_t next_counter_uuid_ = uint64_t{1} << 40;
  uint64_t next_flow_id_ = 1;
  sim::SpanDescription description_;  // reused between spans
  std::string packet_;           // reused between packets
  int64_t packets_written_ = 0;
  bool finished_ = false;
};

}  // namespace clustersim::traces

#endif  // CLUSTERSIM_TRACES_PERFETTO_TRACE_WRITER_H_
