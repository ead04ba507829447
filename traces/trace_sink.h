// File: traces/trace_sink.h
//
// What the run wiring (scenarios/run/runner.cc) hands a trace, whatever its format
// (ChromeTraceWriter for JSON, PerfettoTraceWriter for protobuf): spans as a
// sim::SpanObserver, flow arrows between slices, counter samples on a GPU's
// process (memory in use, NVLink utilisation) or on the fabric-wide "network"
// process (NIC and switch utilisation), and Finish, which commits the file.
//
// Counter samples of one (process, counter name) must come in non-decreasing
// time order; series are plotted as stacked values (Chrome) or one counter
// track each (Perfetto). Filters (--trace-ranks) drop samples of GPUs not
// kept; network counters are always kept.
//
// Example:
//   std::unique_ptr<TraceSink> sink = ...;  // a Chrome or Perfetto writer
//   engine.AddObserver(sink.get());
//   sink->AddCounter(3, "memory (GiB)", t, {{"weights", 10.2}, {"activations", 4.1}});
//   sink->AddNetworkCounter("node0 NIC out utilisation", t, {{"utilisation", 0.8}});
//   absl::Status s = sink->Finish();
#ifndef CLUSTERSIM_TRACES_TRACE_SINK_H_
#define CLUSTERSIM_TRACES_TRACE_SINK_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "sim/engine.h"
#include "sim/units.h"

namespace clustersim::traces {

// Named values of one counter sample, written in this order.
using CounterSeries = std::vector<std::pair<std::string, double>>;

class TraceSink : public sim::SpanObserver {
 public:
  // The pid of the fabric-wide "network" process, placed after every GPU.
  static constexpr uint32_t kNetworkPid = 0x7fffffff;

  // An arrow from (from_group, from_lane) at from_time to (to_group, to_lane)
  // at to_time; both times lie inside the slices they bind to.
  virtual void AddFlow(std::string_view name, uint32_t from_group, uint32_t from_lane,
                       sim::Time from_time, uint32_t to_group, uint32_t to_lane,
                       sim::Time to_time) = 0;
  // A counter sample on GPU `group`'s process. REQUIRES: series non-empty, finite.
  virtual void AddCounter(uint32_t group, std::string_view name, sim::Time t,
                          const CounterSeries& series) = 0;
  // A counter sample on the "network" process. REQUIRES: as AddCounter.
  virtual void AddNetworkCounter(std::string_view name, sim::Time t,
                                 const CounterSeries& series) = 0;
  // Commits the file. REQUIRES: called once; nothing is added afterwards.
  virtual absl::Status Finish() = 0;
};

}  // namespace clustersim::traces

#endif  // CLUSTERSIM_TRACES_TRACE_SINK_H_
