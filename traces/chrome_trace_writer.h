// File: traces/chrome_trace_writer.h
//
// A sim::SpanObserver that streams the simulation as a Chrome trace (JSON
// "Trace Event Format", opened by ui.perfetto.dev and chrome://tracing).
//
// Layout: one process per Resource::group (a GPU), pid = group; one thread per
// stream, tid = lane + 1. Each span becomes an "X" (complete) event whose name,
// category and args come from a sim::SpanDescriber. ts and dur are microseconds
// printed exactly from integer picoseconds with six decimals ("12.345678"), by
// integer arithmetic, so the same simulation gives byte-identical files.
//
// Memory is bounded: events are formatted and handed to an sim::AtomicFile (which
// buffers a fixed amount) as they arrive; spans are not kept. Only one name per
// process and per thread is remembered. Finish() appends "M" metadata
// (process_name, process_sort_index (Options::process_sort_index, by default
// the group), thread_name, thread_sort_index = lane) for every process and thread that appeared, sorted by (group, lane), then
// "displayTimeUnit" and "otherData", closes the JSON and commits the file. A
// writer destroyed without Finish leaves no file (see atomic_file.h).
//
// Example:
//   absl::StatusOr<std::unique_ptr<ChromeTraceWriter>> w = ChromeTraceWriter::Open(
//       "step.trace.json", describer, {.other_data = {{"simulator", "clustersim"}}});
//   if (!w.ok()) return w.status();
//   engine.AddObserver(w->get());
//   if (absl::Status run = engine.Run(); !run.ok()) return run;
//   (*w)->AddFlow("pp send", 0, 2, send_end, 1, 3, recv_start);
//   absl::Status s = (*w)->Finish();
//
// Filters keep huge runs usable (Options): `ranks` keeps only the listed GPUs
// (Resource::group; spans, flows with either end outside, counters); `steps`
// keeps only spans of the listed training steps (BeginStep marks where each
// step starts; a run that never calls it is all step 0); `detail` kLayer
// writes one "X" event per run of consecutive spans on a track whose names
// agree but for their last word ("fwd mb0 L3 qkv_gemm" ... "fwd mb0 L3 fc2"
// become "fwd mb0 L3"), covering the first start to the last end, with args
// ops (count), flops and bytes (sums of those args), microbatch and layer; at
// most one such run per track is pending, so memory stays bounded.
// Tracks sort top to bottom by Options::process_sort_index (e.g. pipeline
// stage first, so stages read in order), threads by lane. Link utilisation
// and other fabric-wide series go to a "network" process placed after every
// GPU (AddNetworkCounter).
//
// Spans arrive as tasks finish, not in start order; Chrome "X" events may appear
// in any order, so nothing is sorted. Events on one (pid, tid) must nest or be
// disjoint to render well (one resource = one serial stream guarantees it).
//
// Lifetime: `describer` must outlive the writer. The graph passed to OnSpan is
// only used during the call.
// Thread-safety: none; call from the simulation thread.
#ifndef CLUSTERSIM_TRACES_CHROME_TRACE_WRITER_H_
#define CLUSTERSIM_TRACES_CHROME_TRACE_WRITER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
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

// How finely spans are written: every op, or one event per layer per
// micro-batch per pass (see the file comment). `--trace-detail op|layer`.
enum class TraceDetail : uint8_t { kOp, kLayer };

// "op" or "layer"; error names `flag` and the choices.
absl::StatusOr<TraceDetail> ParseTraceDetail(std::string_view text, std::string_view flag);

class ChromeTraceWriter : public TraceSink {
 public:
  struct Options {
    // Written in this order into the top-level "otherData" object (shown as
    // trace metadata): simulator version, config hash, calibration file, ...
    std::vector<std::pair<std::string, std::string>> other_data;
    std::optional<IdRanges> ranks;  // GPUs (Resource::group) to keep; unset: all
    std::optional<IdRanges> steps;  // steps to keep; unset: all
    TraceDetail detail = TraceDetail::kOp;
    // The process_sort_index of a GPU; empty: the group itself.
    std::function<int64_t(uint32_t group)> process_sort_index;
  };
  // Creates the output (through a temp file). Error names the path when it
  // cannot be created.
  static absl::StatusOr<std::unique_ptr<ChromeTraceWriter>> Open(const std::string& path,
                                                                 const sim::SpanDescriber& describer,
                                                                 Options options);

  ChromeTraceWriter(const ChromeTraceWriter&) = delete;
  ChromeTraceWriter& operator=(const ChromeTraceWriter&) = delete;

  // Writes one "X" event. REQUIRES: Finish has not been called; s.end >= s.start.
  void OnSpan(const sim::TaskGraph& g, const sim::Span& s) override;

  // A flow arrow between two slices (pipeline send -> recv): an "s" event at
  // (from_group, from_lane, from_time) and an "f" event with "bp":"e" at
  // (to_group, to_lane, to_time), sharing an id assigned here (1, 2, ...).
  // Viewers bind each end to the slice enclosing its time on that thread, so
  // pass times that lie within the two spans (e.g. the send's end and the
  // receive's start). REQUIRES: Finish has not been called.
  void AddFlow(std::string_view name, uint32_t from_group, uint32_t from_lane, sim::Time from_time,
               uint32_t to_group, uint32_t to_lane, sim::Time to_time) override;

  // A counter sample ("C" event) on process `group`: each series is one stacked
  // value (e.g. {"weights", 3.4e9}, {"activations", 1.2e9}) at time t.
  // REQUIRES: Finish has not been called; series non-empty; values finite.
  void AddCounter(uint32_t group, std::string_view name, sim::Time t,
                  const CounterSeries& series) override;

  // A counter sample on the "network" process (kNetworkPid), e.g. link
  // utilisation {"leaf0-spine1 up", 0.82}: series the caller computes.
  // REQUIRES: as AddCounter.
  void AddNetworkCounter(std::string_view name, sim::Time t,
                         const CounterSeries& series) override;

  // Spans reported from now on belong to training step `step` (Options::steps).
  // Pending layer-level events are written first.
  void BeginStep(int64_t step);

  // Appends metadata and otherData, closes the JSON and commits the file.
  // REQUIRES: called once.
  absl::Status Finish() override;

  // Events written so far ("X", "s"/"f" pairs count as two, "C"), for logs.
  int64_t events_written() const { return events_written_; }
  int64_t bytes_written() const { return file_->bytes_written(); }

 private:
  ChromeTraceWriter(std::unique_ptr<sim::AtomicFile> file, const sim::SpanDescriber& describer,
                    Options options);

  // Starts a new element of the traceEvents array in line_ (comma handling).
  void BeginEvent();
  // Writes line_ to the file.
  void EmitLine();
  // Remembers the process name of `group` on first sight.
  void NoteProcess(uint32_t group);
  // Appends `"pid":G,"tid":L+1,"ts":T` to line_.
  void AppendPlace(uint32_t group, uint32_t lane, sim::Time t);
  void AppendMetadata(std::string_view name, uint32_t pid, const int64_t* tid,
                      std::string_view arg_key, const sim::ArgValue& arg_value);
  bool KeepsGroup(uint32_t group) const {
    return !options_.ranks.has_value() || options_.ranks->Contains(group);
  }
  // Writes one "X" event.
  void EmitComplete(uint32_t group, uint32_t lane, sim::Time start, sim::Time end,
                    const sim::SpanDescription& d);
  // Layer detail: folds the described span into its track's pending run,
  // writing the run it ends.
  void Aggregate(uint32_t group, uint32_t lane, const sim::Span& s);
  // Writes every pending run, in track order.
  void FlushPending();

  // A run of spans being folded into one layer-level event.
  struct Pending {
    uint32_t group = 0;
    uint32_t lane = 0;
    sim::Time start;
    sim::Time end;
    sim::SpanDescription description;  // name (last word dropped), category, args
    int64_t ops = 0;
    double flops = 0;
    double bytes = 0;
  };
  void EmitPending(Pending& p);

  std::unique_ptr<sim::AtomicFile> file_;
  const sim::SpanDescriber& describer_;
  Options options_;
  // Names by group and by (group << 32 | lane); sorted before they are written.
  absl::flat_hash_map<uint32_t, std::string> process_names_;
  absl::flat_hash_map<uint64_t, std::string> thread_names_;
  absl::flat_hash_map<uint64_t, Pending> pending_;  // by track, layer detail only
  int64_t step_ = 0;
  sim::SpanDescription description_;  // reused between spans
  std::string line_;             // reused between events
  int64_t events_written_ = 0;
  int64_t next_flow_id_ = 1;
  bool first_event_ = true;
  bool finished_ = false;
};

}  // namespace clustersim::traces

#endif  // CLUSTERSIM_TRACES_CHROME_TRACE_WRITER_H_
