#include "traces/link_counters.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"

namespace clustersim::traces {
namespace {

bool IsFabricSwitch(topology::VertexKind k) {
  return k == topology::VertexKind::kLeaf || k == topology::VertexKind::kSpine ||
         k == topology::VertexKind::kCore;
}

}  // namespace

LinkCounters::LinkCounters(const topology::Cluster& cluster, const topology::FlowNetwork& network,
                           const std::function<bool(int gpu)>& keep_gpu, traces::TraceSink& sink)
    : sink_(sink), track_of_link_(cluster.num_links(), -1), link_rate_(cluster.num_links(), 0) {
  using topology::VertexKind;
  // Track ids by key, so that the order of tracks follows the key order:
  // GPUs, then nodes, then fabric tiers.
  std::map<std::pair<int, int>, int> ids;
  std::vector<bool> node_kept(cluster.num_nodes(), false);
  for (int gpu = 0; gpu < cluster.num_gpus(); ++gpu) {
    if (keep_gpu(gpu)) node_kept[cluster.NodeOf(gpu)] = true;
  }
  std::vector<int> gpu_of_vertex(cluster.num_vertices(), -1);
  for (int gpu = 0; gpu < cluster.num_gpus(); ++gpu) gpu_of_vertex[cluster.GpuVertex(gpu)] = gpu;
  std::vector<std::pair<std::pair<int, int>, int>> assigned;  // (key, link)
  for (int e = 0; e < cluster.num_links(); ++e) {
    const topology::Link& l = cluster.link(e);
    const topology::Vertex& src = cluster.vertex(l.src);
    const topology::Vertex& dst = cluster.vertex(l.dst);
    std::pair<int, int> key;
    if (src.kind == VertexKind::kGpu && l.kind == topology::LinkKind::kNvlink) {
      const int gpu = gpu_of_vertex[l.src];
      if (gpu < 0 || !keep_gpu(gpu)) continue;
      key = {0, gpu};
    } else if (src.kind == VertexKind::kNic && IsFabricSwitch(dst.kind)) {
      if (src.node < 0 || !node_kept[src.node]) continue;
      key = {1, src.node};
    } else if (src.kind == VertexKind::kLeaf && dst.kind == VertexKind::kSpine) {
      key = {2, 0};
    } else if (src.kind == VertexKind::kSpine && dst.kind == VertexKind::kCore) {
      key = {2, 1};
    } else {
      continue;
    }
    assigned.push_back({key, e});
    ids.try_emplace(key, 0);
  }
  int next = 0;
  for (auto& [key, id] : ids) {
    id = next++;
    Track t;
    switch (key.first) {
      case 0:
        t.pid = static_cast<uint32_t>(key.second);
        t.name = "NVLink out utilisation";
        break;
      case 1:
        t.pid = traces::TraceSink::kNetworkPid;
        t.name = absl::StrCat("node", key.second, " NIC out utilisation");
        break;
      default:
        t.pid = traces::TraceSink::kNetworkPid;
        t.name = key.second == 0 ? "fabric leaf->spine utilisation"
                                 : "fabric spine->core utilisation";
    }
    tracks_.push_back(std::move(t));
  }
  for (const auto& [key, e] : assigned) {
    const int id = ids.at(key);
    track_of_link_[e] = id;
    tracks_[id].capacity += network.Capacity(e);
  }
  for (int id = 0; id < num_tracks(); ++id) {
    tracks_[id].dirty = true;
    dirty_.push_back(id);
  }
  Flush();  // every track starts at 0 at time 0
}

void LinkCounters::OnRates(sim::Time now, const std::vector<topology::LinkRate>& changed) {
  if (now > pending_) Flush();
  pending_ = now;
  for (const topology::LinkRate& x : changed) {
    const int id = track_of_link_[x.link];
    if (id < 0) continue;
    Track& t = tracks_[id];
    t.rate += x.bytes_per_second - link_rate_[x.link];
    link_rate_[x.link] = x.bytes_per_second;
    if (!t.dirty) {
      t.dirty = true;
      dirty_.push_back(id);
    }
  }
}

void LinkCounters::Flush() {
  std::sort(dirty_.begin(), dirty_.end());
  for (const int id : dirty_) {
    Track& t = tracks_[id];
    t.dirty = false;
    // Sums of deltas leave rounding residue; a track is idle below 1e-9 of it.
    double u = t.rate <= 1e-9 * t.capacity ? 0.0 : t.rate / t.capacity;
    u = std::clamp(u, 0.0, 1.0);  // max-min filling is exact up to rounding
    if (u == t.written && pending_ > sim::Time()) continue;
    t.written = u;
    const traces::CounterSeries series = {{"utilisation", u}};
    if (t.pid == traces::TraceSink::kNetworkPid) {
      sink_.AddNetworkCounter(t.name, pending_, series);
    } else {
      sink_.AddCounter(t.pid, t.name, pending_, series);
    }
  }
  dirty_.clear();
}

void LinkCounters::Finish() { Flush(); }

}  // namespace clustersim::traces
