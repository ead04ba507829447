#include "topology/collective_plan.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "sim/check.h"
#include "topology/collective_plan_builder.h"

namespace clustersim::topology {
namespace {

absl::Status Unsupported(Collective op, Algorithm a, size_t n, std::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(
      "algorithm=", std::string(AlgorithmName(a)), " cannot run ", std::string(CollectiveName(op)),
      " on ", n, " GPUs: ", std::string(why)));
}

// GPUs grouped by node, nodes and GPUs in ascending order.
std::map<int, std::vector<int>> ByNode(const Cluster& c, const std::vector<int>& gpus) {
  std::map<int, std::vector<int>> nodes;
  for (int g : gpus) nodes[c.NodeOf(g)].push_back(g);
  return nodes;
}

}  // namespace

double LinkCapacity(const Cluster& cluster, const CollectiveCalibration& cal, int link) {
  const Link& l = cluster.link(link);
  return l.bandwidth.BytesPerSecond() * cal.Efficiency(l.kind, l.technology);
}

absl::StatusOr<std::vector<int>> ValidateCollectiveRequest(const Cluster& cluster,
                                                           const CollectiveRequest& r) {
  std::vector<int> gpus = r.gpus;
  std::sort(gpus.begin(), gpus.end());
  for (size_t i = 0; i < gpus.size(); ++i) {
    if (gpus[i] < 0 || gpus[i] >= cluster.num_gpus()) {
      return absl::InvalidArgumentError(absl::StrCat("gpus: index ", gpus[i], " is outside 0..",
                                                     cluster.num_gpus() - 1));
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
    return r.gpus;  // keep the direction
  }
  return gpus;
}

CollectiveEstimate ZeroCostEstimate(const CollectiveRequest& r) {
  CollectiveEstimate est{sim::Duration::Zero(), r.algorithm, r.protocol, 0, 0};
  if (est.algorithm == Algorithm::kAuto) est.algorithm = Algorithm::kRing;
  if (est.protocol == Protocol::kAuto) est.protocol = Protocol::kSimple;
  return est;
}

absl::StatusOr<PlanChoice> ChoosePlan(const std::vector<CollectivePlan>& candidates,
                                      Protocol protocol, sim::Bytes bytes) {
  SIM_CHECK(!candidates.empty()) << "ChoosePlan needs at least one candidate";
  PlanChoice best;
  double best_seconds = 0;
  for (const CollectivePlan& p : candidates) {
    for (Protocol proto : kConcreteProtocols) {
      if (protocol != Protocol::kAuto && proto != protocol) continue;
      if (!p.Supports(proto)) continue;
      const double seconds = p.Seconds(bytes, proto);
      if (best.plan == nullptr || seconds < best_seconds) {
        best = {&p, proto};
        best_seconds = seconds;
      }
    }
  }
  if (best.plan == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "protocol=", std::string(ProtocolName(protocol)), " cannot run algorithm ",
        std::string(AlgorithmName(candidates.front().algorithm)),
        candidates.size() > 1 ? " (or any other candidate)" : "",
        " on this group: LL128 needs NVLink on every hop (as NCCL enables it) and NVLS runs "
        "Simple only; set network.collective_protocol (--protocol) to auto, ll or simple"));
  }
  return best;
}

CollectivePlanner::CollectivePlanner(const Cluster& cluster,
                                     const CollectiveCalibration& calibration)
    : cluster_(cluster), calibration_(calibration), ring_channels_(cluster.num_nodes(), 0) {
  std::vector<int> ring_nics(cluster_.num_nodes(), 0);
  for (int v = 0; v < cluster_.num_vertices(); ++v) {
    const Vertex& vx = cluster_.vertex(v);
    if (vx.kind == VertexKind::kNic && vx.node >= 0 && vx.node < cluster_.num_nodes()) {
      ++ring_channels_[vx.node];
    }
  }
  // A NIC's scale-out link (not its PCIe uplink) names its technology.
  for (int e = 0; e < cluster_.num_links(); ++e) {
    const Link& l = cluster_.link(e);
    const Vertex& from = cluster_.vertex(l.src);
    if (from.kind != VertexKind::kNic || from.node < 0 || l.kind == LinkKind::kPcie) continue;
    if (const NicCalibration* row = calibration_.ForNic(l.technology)) {
      ring_nics[from.node] = row->ring_nics;
    }
  }
  for (int node = 0; node < cluster_.num_nodes(); ++node) {
    if (ring_nics[node] > 0) {
      ring_channels_[node] = std::min(ring_channels_[node], ring_nics[node]);
    }
  }
}

std::vector<std::vector<int>> CollectivePlanner::Rings(const std::vector<int>& gpus) const {
  const std::map<int, std::vector<int>> nodes = ByNode(cluster_, gpus);
  int channels = 1;
  if (nodes.size() > 1) channels = std::max(1, ring_channels_[nodes.begin()->first]);
  std::vector<std::vector<int>> rings(channels);
  for (int c = 0; c < channels; ++c) {
    // Channel c enters the first node at local position o = c*k/C and walks the
    // node forward (o, o+1, ..., o-1); the next node is walked backward from o-1
    // to o, and so on, so consecutive nodes meet at the same local position: the
    // same rail in a rail-optimised fabric.
    std::vector<int>& ring = rings[c];
    ring.reserve(gpus.size());
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
  }
  return rings;
}

CollectivePlan CollectivePlanner::Ring(Collective op, const std::vector<int>& gpus) const {
  Builder b(cluster_, calibration_, Algorithm::kRing, gpus);
  const double n = static_cast<double>(gpus.size());
  if (op == Collective::kAllToAll || op == Collective::kSendRecv) {
    const int pairs = op == Collective::kSendRecv ? 1 : static_cast<int>(gpus.size());
    for (int a = 0; a < pairs; ++a) {
      for (int bb = 0; bb < static_cast<int>(gpus.size()); ++bb) {
        if (a == bb) continue;
        b.BeginFlow(op == Collective::kSendRecv ? 1.0 : 1.0 / n);
        b.AddHop(gpus[a], gpus[bb]);
        b.EndFlow();
      }
    }
    b.EndPhase(b.RingSteps(op == Collective::kSendRecv ? 1 : n - 1, /*base=*/true));
    return std::move(b).Finish();
  }
  const std::vector<std::vector<int>> rings = Rings(gpus);
  const double channels = static_cast<double>(rings.size());
  double volume = 0;  // per-rank bytes through a ring edge, per request byte
  double steps = 0;
  switch (op) {
    case Collective::kAllReduce:
      volume = 2 * (n - 1) / n;
      steps = 2 * (n - 1);
      break;
    case Collective::kReduceScatter:
    case Collective::kAllGather:
      volume = (n - 1) / n;
      steps = n - 1;
      break;
    default:  // broadcast: pipelined S
      volume = 1;
      steps = n - 1;
      break;
  }
  for (const std::vector<int>& ring : rings) {
    b.BeginFlow(volume / channels);
    for (size_t i = 0; i < ring.size(); ++i) b.AddHop(ring[i], ring[(i + 1) % ring.size()]);
    b.EndFlow();
  }
  b.EndPhase(b.RingSteps(steps, /*base=*/true));
  return std::move(b).Finish();
}

CollectivePlan CollectivePlanner::Tree(const std::vector<int>& gpus) const {
  Builder b(cluster_, calibration_, Algorithm::kTree, gpus);
  const auto nodes = ByNode(cluster_, gpus);
  int per_node = 0;
  for (const auto& [node, local] : nodes) {
    per_node = std::max(per_node, static_cast<int>(local.size()));
  }
  const std::vector<std::vector<int>> rings = Rings(gpus);
  for (const std::vector<int>& ring : rings) {
    b.BeginFlow(2.0 / calibration_.tree_efficiency / static_cast<double>(rings.size()));
    for (size_t i = 0; i < ring.size(); ++i) b.AddHop(ring[i], ring[(i + 1) % ring.size()]);
    b.EndFlow();
  }
  const double levels = std::ceil(std::log2(static_cast<double>(nodes.size())));
  b.EndPhase(b.TreeSteps(2.0 * (per_node - 1), 2.0 * levels));
  return std::move(b).Finish();
}

absl::StatusOr<CollectivePlan> CollectivePlanner::Nvls(const std::vector<int>& gpus) const {
  const auto fail = [&](std::string_view why) {
    return Unsupported(Collective::kAllReduce, Algorithm::kNvls, gpus.size(), why);
  };
  if (!cluster_.nvls_capable()) {
    return fail(absl::StrCat("node preset '", cluster_.node_preset(),
                             "' has no NVSwitch in-network reduction (NVLS needs "
                             "NVLink4 or later, H100 and later); use ring or tree"));
  }
  if (ByNode(cluster_, gpus).size() != 1) {
    return fail("NVLS is modelled within one node; use hierarchical or ring");
  }
  Builder b(cluster_, calibration_, Algorithm::kNvls, gpus);
  for (int g : gpus) {
    const std::optional<int> edge = cluster_.NvSwitchEdge(g);
    if (!edge) return fail(absl::StrCat("GPU ", g, " has no NVSwitch link"));
    const Link& l = cluster_.link(*edge);
    const NvlsCalibration* row = calibration_.ForNvlink(l.technology);
    if (row == nullptr) {
      return fail(absl::StrCat("no NVLS calibration for ", std::string(l.technology)));
    }
    // Alone, the flow runs at capacity / bytes_per_byte = bw x nvls_scale x efficiency(gen).
    b.BeginFlow(calibration_.ForLink(l.kind).efficiency /
                (calibration_.nvls_scale * row->efficiency));
    b.AddLink(*edge, 1.0);
    b.AddLink(l.reverse, 1.0);
    b.EndFlow();
  }
  Builder::Latency latency;
  latency.fixed_seconds = calibration_.nvls_latency.ToSeconds();
  b.EndPhase(latency);
  b.SimpleOnly();
  return std::move(b).Finish();
}

absl::StatusOr<CollectivePlan> CollectivePlanner::Hierarchical(
    const std::vector<int>& gpus) const {
  const auto fail = [&](std::string_view why) {
    return Unsupported(Collective::kAllReduce, Algorithm::kHierarchical, gpus.size(), why);
  };
  const auto nodes = ByNode(cluster_, gpus);
  if (nodes.size() < 2) return fail("hierarchical needs GPUs on >= 2 nodes");
  const int k = static_cast<int>(nodes.begin()->second.size());
  for (const auto& [node, local] : nodes) {
    if (static_cast<int>(local.size()) != k) {
      return fail("hierarchical needs the same number of GPUs on every node");
    }
  }
  Builder b(cluster_, calibration_, Algorithm::kHierarchical, gpus);
  const double kk = k;
  const double m = static_cast<double>(nodes.size());
  const auto intra_phase = [&](bool base) {
    for (const auto& [node, local] : nodes) {
      if (k < 2) break;
      b.BeginFlow((kk - 1) / kk);
      for (int i = 0; i < k; ++i) b.AddHop(local[i], local[(i + 1) % k]);
      b.EndFlow();
    }
    b.EndPhase(b.RingSteps(kk - 1, base));
  };
  intra_phase(true);  // reduce-scatter
  for (int j = 0; j < k; ++j) {
    b.BeginFlow(2 * (m - 1) / m / kk);
    for (auto it = nodes.begin(); it != nodes.end(); ++it) {
      auto next = std::next(it) == nodes.end() ? nodes.begin() : std::next(it);
      b.AddHop(it->second[j], next->second[j]);
    }
    b.EndFlow();
  }
  b.EndPhase(b.RingSteps(2 * (m - 1), /*base=*/false));
  intra_phase(false);  // all-gather
  return std::move(b).Finish();
}

absl::StatusOr<CollectivePlan> CollectivePlanner::Plan(Collective op, Algorithm algorithm,
                                                       const std::vector<int>& gpus) const {
  if ((op == Collective::kAllToAll || op == Collective::kSendRecv) &&
      algorithm != Algorithm::kRing) {
    return Unsupported(op, algorithm, gpus.size(),
                       "point-to-point operations use ring (NCCL p2p) or auto");
  }
  if (algorithm != Algorithm::kRing && op != Collective::kAllReduce) {
    return Unsupported(op, algorithm, gpus.size(),
                       algorithm == Algorithm::kTree
                           ? "NCCL's tree algorithm implements all_reduce only; use ring"
                           : absl::StrCat(std::string(AlgorithmName(algorithm)),
                                          " is modelled for all_reduce only; use ring"));
  }
  switch (algorithm) {
    case Algorithm::kRing:
      return Ring(op, gpus);
    case Algorithm::kTree:
      return Tree(gpus);
    case Algorithm::kNvls:
      return Nvls(gpus);
    case Algorithm::kHierarchical:
      return Hierarchical(gpus);
    case Algorithm::kAuto:
      break;
  }
  SIM_CHECK(false) << "Plan needs a concrete algorithm";
  return absl::InternalError("unreachable");
}

absl::StatusOr<std::vector<CollectivePlan>> CollectivePlanner::Candidates(
    Collective op, Algorithm algorithm, const std::vector<int>& gpus) const {
  SIM_CHECK(gpus.size() >= 2) << "plans need at least 2 GPUs";
  std::vector<CollectivePlan> out;
  if (algorithm != Algorithm::kAuto) {
    absl::StatusOr<CollectivePlan> p = Plan(op, algorithm, gpus);
    if (!p.ok()) return p.status();
    out.push_back(*std::move(p));
    return out;
  }
  out.push_back(Ring(op, gpus));
  if (op == Collective::kAllReduce) {
    if (ByNode(cluster_, gpus).size() > 1) out.push_back(Tree(gpus));
    absl::StatusOr<CollectivePlan> nvls = Nvls(gpus);
    if (nvls.ok()) out.push_back(*std::move(nvls));
  }
  return out;
}

}  // namespace clustersim::topology
