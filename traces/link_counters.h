// File: traces/link_counters.h
//
// Link-utilisation counters for a trace, from the flow network tier's rate
// reports (FlowNetwork::SetLinkRateObserver). Utilisation is the aggregate
// rate of a set of directed links over their summed capacity (the capacity the
// flow tier gives them: line rate x efficiency), so it lies in [0, 1].
//
// A bounded set of tracks, each one counter with one series "utilisation":
//   - "NVLink out utilisation" on each kept GPU's process: the GPU's NVLink
//     links towards its NVSwitch or peers, sending direction;
//   - "node<N> NIC out utilisation" on the "network" process, for each node
//     hosting a kept GPU: the node's NIC-to-fabric links, sending direction;
//   - "fabric <tier> utilisation" on the "network" process: all leaf-to-spine
//     links together, and all spine-to-core links (three-tier fabrics).
// "Kept" GPUs are those the caller keeps (simulated and inside --trace-ranks),
// so a 16,384-GPU run with folding writes a handful of tracks. Traffic is
// symmetric in NCCL rings and trees, so the sending direction stands for both.
//
// Samples are coalesced per simulated time: when time moves on, each track
// whose value changed writes one sample (track order), so the file holds one
// sample per track per change, at most. Every track starts with 0 at time 0.
// The analytic tier has no per-link rates; its runs carry no link counters.
//
// Example:
//   LinkCounters links(cluster, flow, [&](int gpu) { return kept(gpu); }, *trace);
//   flow.SetLinkRateObserver([&](sim::Time t, const auto& c) { links.OnRates(t, c); });
//   ... run ...
//   links.Finish();
//
// Lifetime: `sink` must outlive this object. Thread-safety: none.
#ifndef CLUSTERSIM_TRACES_LINK_COUNTERS_H_
#define CLUSTERSIM_TRACES_LINK_COUNTERS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sim/units.h"
#include "topology/cluster.h"
#include "topology/flow_network.h"
#include "traces/trace_sink.h"

namespace clustersim::traces {

class LinkCounters {
 public:
  LinkCounters(const topology::Cluster& cluster, const topology::FlowNetwork& network,
               const std::function<bool(int gpu)>& keep_gpu, traces::TraceSink& sink);
  LinkCounters(const LinkCounters&) = delete;
  LinkCounters& operator=(const LinkCounters&) = delete;

  // The links whose aggregate rate changed at `now` (non-decreasing).
  void OnRates(sim::Time now, const std::vector<topology::LinkRate>& changed);
  // Writes what is pending. Call once, after the run.
  void Finish();

  int num_tracks() const { return static_cast<int>(tracks_.size()); }

 private:
  struct Track {
    uint32_t pid;  // a GPU, or TraceSink::kNetworkPid
    std::string name;
    double capacity = 0;  // bytes per second, summed over its links
    double rate = 0;      // current aggregate
    double written = 0;   // last value written
    bool dirty = false;
  };
  // Writes every dirty track's value at pending_.
  void Flush();

  traces::TraceSink& sink_;
  std::vector<Track> tracks_;
  std::vector<int> track_of_link_;  // -1: not tracked
  std::vector<double> link_rate_;   // last reported, tracked links only
  std::vector<int> dirty_;          // track ids, in order of first change
  sim::Time pending_;
};

}  // namespace clustersim::traces

#endif  // CLUSTERSIM_TRACES_LINK_COUNTERS_H_
