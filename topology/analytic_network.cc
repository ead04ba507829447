#include "topology/analytic_network.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "sim/check.h"

namespace clustersim::topology {
namespace {

absl::Status Unsupported(const CollectiveRequest& r, std::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(
      "algorithm=", std::string(AlgorithmName(r.algorithm)), " cannot run ",
      std::string(CollectiveName(r.op)), " on ", r.gpus.size(), " GPUs: ", std::string(why)));
}

// GPUs grouped by node, nodes and GPUs in ascending order.
std::map<int, std::vector<int>> ByNode(const Cluster& c, const std::vector<int>& gpus) {
  std::map<int, std::vector<int>> nodes;
  for (int g : gpus) nodes[c.NodeOf(g)].push_back(g);
  return nodes;
}

}  // namespace

AnalyticNetwork::AnalyticNetwork(const Cluster& cluster, const CollectiveCalibration& calibration)
    : cluster_(cluster), calibration_(calibration), nics_per_node_(cluster.num_nodes(), 0) {
  for (int v = 0; v < cluster_.num_vertices(); ++v) {
    const Vertex& vx = cluster_.vertex(v);
    if (vx.kind == VertexKind::kNic && vx.node >= 0 && vx.node < cluster_.num_nodes()) {
      ++nics_per_node_[vx.node];
    }
  }
}

AnalyticNetwork::Phase AnalyticNetwork::Analyze(const std::vector<Flow>& flows) const {
  Phase p;
  if (flows.empty()) return p;
  std::vector<double> load(cluster_.num_links(), 0.0);
  std::vector<int> touched;
  double alpha_sum = 0;
  for (const Flow& f : flows) {
    LinkKind slowest = LinkKind::kNvlink;  // rank: nvlink < pcie < network
    auto rank = [](LinkKind k) {
      return k == LinkKind::kNvlink ? 0 : k == LinkKind::kPcie ? 1 : 2;
    };
    for (int e : cluster_.Route(f.src, f.dst)) {
      if (load[e] == 0.0) touched.push_back(e);
      load[e] += f.weight;
      const LinkKind k = cluster_.link(e).kind;
      if (rank(k) > rank(slowest)) slowest = k;
    }
    const double alpha = calibration_.ForLink(slowest).step_latency.ToSeconds();
    alpha_sum += alpha;
    if (cluster_.NodeOf(f.src) == cluster_.NodeOf(f.dst)) {
      p.intra_alpha = std::max(p.intra_alpha, alpha);
    } else {
      p.inter_alpha = std::max(p.inter_alpha, alpha);
    }
  }
  for (int e : touched) {
    const Link& l = cluster_.link(e);
    const double bytes_per_s =
        l.bandwidth.BytesPerSecond() * calibration_.ForLink(l.kind).efficiency;
    p.seconds_per_byte = std::max(p.seconds_per_byte, load[e] / bytes_per_s);
  }
  p.mean_alpha = alpha_sum / static_cast<double>(flows.size());
  return p;
}

std::vector<AnalyticNetwork::Flow> AnalyticNetwork::RingFlows(const std::vector<int>& gpus) const {
  const std::map<int, std::vector<int>> nodes = ByNode(cluster_, gpus);
  int channels = 1;
  if (nodes.size() > 1) channels = std::max(1, nics_per_node_[nodes.begin()->first]);
  std::vector<Flow> flows;
  for (int c = 0; c < channels; ++c) {
    // Channel c enters the first node at local position o = c*k/C and walks the
    // node forward (o, o+1, ..., o-1); the next node is walked backward from o-1
    // to o, and so on, so consecutive nodes meet at the same local position: the
    // same rail in a rail-optimised fabric.
    std::vector<int> ring;
    int parity = 0;
    for (const auto& [node, local] : nodes) {
      const int k = static_cast<int>(local.size());
      const int offset = (c * k / channels) % k;
      for (int i = 0; i < k; ++i) {
        const int pos = parity == 0 ? offset + i : offset - 1 - i + k;
        ring.push_back(local[pos % k]);
      }
      parity ^= 1;
    }
    const int n = static_cast<int>(ring.size());
    for (int i = 0; i < n; ++i) {
      flows.push_back({ring[i], ring[(i + 1) % n], 1.0 / channels});
    }
  }
  return flows;
}

absl::StatusOr<double> AnalyticNetwork::Ring(const CollectiveRequest& r,
                                             const std::vector<int>& gpus) const {
  const double n = static_cast<double>(gpus.size());
  const double s = static_cast<double>(r.bytes.count());
  const double base = calibration_.base_latency.ToSeconds();
  switch (r.op) {
    case Collective::kAllReduce: {
      const Phase p = Analyze(RingFlows(gpus));
      return base + 2 * (n - 1) * (p.mean_alpha + s / n * p.seconds_per_byte);
    }
    case Collective::kReduceScatter:
    case Collective::kAllGather: {
      const Phase p = Analyze(RingFlows(gpus));
      return base + (n - 1) * (p.mean_alpha + s / n * p.seconds_per_byte);
    }
    case Collective::kBroadcast: {
      const Phase p = Analyze(RingFlows(gpus));
      return base + (n - 1) * p.mean_alpha + s * p.seconds_per_byte;
    }
    case Collective::kAllToAll: {
      std::vector<Flow> flows;
      for (int a : gpus) {
        for (int b : gpus) {
          if (a != b) flows.push_back({a, b, 1.0});
        }
      }
      const Phase p = Analyze(flows);
      return base + (n - 1) * p.mean_alpha + s / n * p.seconds_per_byte;
    }
    case Collective::kSendRecv: {
      const Phase p = Analyze({{gpus[0], gpus[1], 1.0}});
      return base + p.mean_alpha + s * p.seconds_per_byte;
    }
  }
  return Unsupported(r, "unknown collective");
}

absl::StatusOr<double> AnalyticNetwork::Tree(const CollectiveRequest& r,
                                             const std::vector<int>& gpus) const {
  if (r.op != Collective::kAllReduce) {
    return Unsupported(r, "NCCL's tree algorithm implements all_reduce only; use ring");
  }
  const auto nodes = ByNode(cluster_, gpus);
  int per_node = 0;
  for (const auto& [node, local] : nodes) {
    per_node = std::max(per_node, static_cast<int>(local.size()));
  }
  const Phase p = Analyze(RingFlows(gpus));
  const double levels = std::ceil(std::log2(static_cast<double>(nodes.size())));
  const double latency = calibration_.base_latency.ToSeconds() +
                         2 * ((per_node - 1) * p.intra_alpha + levels * p.inter_alpha);
  const double s = static_cast<double>(r.bytes.count());
  return latency + 2 * s * p.seconds_per_byte / calibration_.tree_efficiency;
}

absl::StatusOr<double> AnalyticNetwork::Nvls(const CollectiveRequest& r,
                                             const std::vector<int>& gpus) const {
  if (r.op != Collective::kAllReduce) {
    return Unsupported(r, "NVLS is modelled for all_reduce only; use ring");
  }
  if (!cluster_.nvls_capable()) {
    return Unsupported(r, absl::StrCat("node preset '", cluster_.node_preset(),
                                       "' has no NVSwitch in-network reduction (NVLS needs "
                                       "NVLink4 or later, H100 and later); use ring or tree"));
  }
  if (ByNode(cluster_, gpus).size() != 1) {
    return Unsupported(r, "NVLS is modelled within one node; use hierarchical or ring");
  }
  double bytes_per_s = 0;
  for (int g : gpus) {
    const std::optional<int> edge = cluster_.NvSwitchEdge(g);
    if (!edge) return Unsupported(r, absl::StrCat("GPU ", g, " has no NVSwitch link"));
    const Link& l = cluster_.link(*edge);
    const NvlsCalibration* row = calibration_.ForNvlink(l.technology);
    if (row == nullptr) {
      return Unsupported(r, absl::StrCat("no NVLS calibration for ", std::string(l.technology)));
    }
    const double bw = l.bandwidth.BytesPerSecond() * calibration_.nvls_scale * row->efficiency;
    bytes_per_s = bytes_per_s == 0 ? bw : std::min(bytes_per_s, bw);
  }
  return calibration_.nvls_latency.ToSeconds() +
         static_cast<double>(r.bytes.count()) / bytes_per_s;
}

absl::StatusOr<double> AnalyticNetwork::Hierarchical(const CollectiveRequest& r,
                                                     const std::vector<int>& gpus) const {
  if (r.op != Collective::kAllReduce) {
    return Unsupported(r, "hierarchical is modelled for all_reduce only; use ring");
  }
  const auto nodes = ByNode(cluster_, gpus);
  if (nodes.size() < 2) return Unsupported(r, "hierarchical needs GPUs on >= 2 nodes");
  const int k = static_cast<int>(nodes.begin()->second.size());
  for (const auto& [node, local] : nodes) {
    if (static_cast<int>(local.size()) != k) {
      return Unsupported(r, "hierarchical needs the same number of GPUs on every node");
    }
  }
  std::vector<Flow> intra;
  std::vector<Flow> inter;
  for (const auto& [node, local] : nodes) {
    for (int i = 0; i < k && k > 1; ++i) intra.push_back({local[i], local[(i + 1) % k], 1.0});
  }
  std::vector<const std::vector<int>*> order;
  for (const auto& [node, local] : nodes) order.push_back(&local);
  const int num_nodes = static_cast<int>(order.size());
  for (int j = 0; j < k; ++j) {
    for (int i = 0; i < num_nodes; ++i) {
      inter.push_back({(*order[i])[j], (*order[(i + 1) % num_nodes])[j], 1.0});
    }
  }
  const Phase pi = Analyze(intra);
  const Phase pn = Analyze(inter);
  const double s = static_cast<double>(r.bytes.count());
  const double kk = k;
  const double nn = num_nodes;
  return calibration_.base_latency.ToSeconds() +
         2 * (kk - 1) * (pi.mean_alpha + s / kk * pi.seconds_per_byte) +
         2 * (nn - 1) * (pn.mean_alpha + s / kk / nn * pn.seconds_per_byte);
}

absl::StatusOr<CollectiveEstimate> AnalyticNetwork::Estimate(const CollectiveRequest& r) const {
  std::vector<int> gpus = r.gpus;
  std::sort(gpus.begin(), gpus.end());
  for (size_t i = 0; i < gpus.size(); ++i) {
    if (gpus[i] < 0 || gpus[i] >= cluster_.num_gpus()) {
      return absl::InvalidArgumentError(absl::StrCat("gpus: index ", gpus[i],
                                                     " is outside 0..", cluster_.num_gpus() - 1));
    }
    if (i > 0 && gpus[i] == gpus[i - 1]) {
      return absl::InvalidArgumentError(absl::StrCat("gpus: GPU ", gpus[i], " is listed twice"));
    }
  }
  if (r.bytes.count() < 0) {
    return absl::InvalidArgumentError(absl::StrCat("bytes=", r.bytes.count(), " must be >= 0"));
  }
  if (r.op == Collective::kSendRecv) {
    if (r.gpus.size() != 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("send_recv takes exactly 2 gpus {src, dst}, got ", r.gpus.size()));
    }
    gpus = r.gpus;  // keep the direction
  }
  CollectiveEstimate est{sim::Duration::Zero(), r.algorithm, 0, 0};
  if (est.algorithm == Algorithm::kAuto) est.algorithm = Algorithm::kRing;
  if (gpus.size() < 2) return est;

  const bool pairwise = r.op == Collective::kAllToAll || r.op == Collective::kSendRecv;
  double seconds = 0;
  if (r.algorithm == Algorithm::kAuto) {
    absl::StatusOr<double> best = Ring(r, gpus);
    if (!best.ok()) return best.status();
    seconds = *best;
    if (r.op == Collective::kAllReduce) {
      CollectiveRequest probe = r;
      if (ByNode(cluster_, gpus).size() > 1) {
        probe.algorithm = Algorithm::kTree;
        absl::StatusOr<double> tree = Tree(probe, gpus);
        if (tree.ok() && *tree < seconds) {
          seconds = *tree;
          est.algorithm = Algorithm::kTree;
        }
      }
      probe.algorithm = Algorithm::kNvls;
      absl::StatusOr<double> nvls = Nvls(probe, gpus);
      if (nvls.ok() && *nvls < seconds) {
        seconds = *nvls;
        est.algorithm = Algorithm::kNvls;
      }
    }
  } else {
    if (pairwise && r.algorithm != Algorithm::kRing) {
      return Unsupported(r, "point-to-point operations use ring (NCCL p2p) or auto");
    }
    absl::StatusOr<double> t = r.algorithm == Algorithm::kRing   ? Ring(r, gpus)
                               : r.algorithm == Algorithm::kTree ? Tree(r, gpus)
                               : r.algorithm == Algorithm::kNvls ? Nvls(r, gpus)
                                                                 : Hierarchical(r, gpus);
    if (!t.ok()) return t.status();
    seconds = *t;
  }
  SIM_CHECK(seconds > 0) << "non-positive collective time";
  est.time = sim::Duration::FromSecondsDouble(seconds);
  est.algbw_gbs = static_cast<double>(r.bytes.count()) / seconds * 1e-9;
  est.busbw_gbs = est.algbw_gbs * BusBandwidthFactor(r.op, static_cast<int>(gpus.size()));
  return est;
}

}  // namespace clustersim::topology
