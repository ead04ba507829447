// File: traces/trace_checker.h
//
// A structural checker for Chrome trace JSON, used by every test that writes a
// trace (CI cannot load traces into Perfetto). It verifies what Perfetto and
// chrome://tracing rely on:
//   - the text is a JSON object with a "traceEvents" array;
//   - every event is an object with a known "ph", and the fields its phase
//     requires: X: name, pid, tid, ts, dur >= 0; M: name, pid, args object
//     (process_name/thread_name: args.name string; *_sort_index: args.sort_index
//     number; thread_*: tid); C: name, pid, ts, args of numbers (at least one);
//     s/t/f: id, pid, tid, ts;
//   - counters: each (pid, name) is a counter track whose samples have
//     non-decreasing ts in file order (viewers draw a step function from one
//     sample to the next), whose pid is named by process_name metadata, and
//     whose series are numbers (JSON has no NaN or infinity);
//   - flows are paired: each id has exactly one "s" and one "f", and the "f" is
//     not earlier than the "s";
//   - per (pid, tid), "X" events never partially overlap: any two are disjoint
//     (touching ends allowed) or one contains the other;
//   - every pid and (pid, tid) used by an "X" event is named by process_name /
//     thread_name metadata.
// Errors name the event (its index in traceEvents, phase and name) and why.
//
// Parsing is protobuf's JSON parser (google::protobuf::Struct), which rejects
// truncated text, mismatched brackets, trailing garbage and non-object roots
// but tolerates a few non-standard forms (a trailing comma in an object, an
// unknown escape such as \q); the trace writer never produces those.
//
// Times are compared in integer picoseconds (ts and dur rounded from
// microseconds separately, then added), so spans that abut exactly, as the
// writer prints them, never count as overlapping. Exact for |ts| up to 2^53 ps
// (about 2.5 hours of simulated time), which covers a training step.
//
// Example:
//   absl::StatusOr<TraceStats> stats = CheckChromeTrace(json_text);
//   ASSERT_TRUE(stats.ok()) << stats.status();
//   EXPECT_EQ(stats->complete_events, 12);
#ifndef CLUSTERSIM_TRACES_TRACE_CHECKER_H_
#define CLUSTERSIM_TRACES_TRACE_CHECKER_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace clustersim::traces {

struct TraceStats {
  int64_t complete_events = 0;  // "X" events
  int64_t processes = 0;        // distinct pids of "X" events
  int64_t threads = 0;          // distinct (pid, tid) of "X" events
  int64_t flows = 0;            // paired flow ids
  int64_t counter_events = 0;   // "C" events
  int64_t counter_tracks = 0;   // distinct (pid, name) of "C" events
};

// Checks `json` as above. INVALID_ARGUMENT with the first problem found.
absl::StatusOr<TraceStats> CheckChromeTrace(std::string_view json);

// Reads the file at `path` and checks it. NOT_FOUND when it cannot be read.
absl::StatusOr<TraceStats> CheckChromeTraceFile(const std::string& path);

}  // namespace clustersim::traces

#endif  // CLUSTERSIM_TRACES_TRACE_CHECKER_H_
