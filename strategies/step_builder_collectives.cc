// The builder's collectives: each collective's cost (once per op and group),
// its task (fixed-duration or external), and the copies on the data-,
// tensor- and context-parallel ranks the folds leave out. Under analytic
// timing a folded collective costs its slowest tensor-rank copy, and whether
// the data- and context-parallel copies cost the same decides whether those
// folds are exact; under external timing the copies that share links with
// the simulated traffic run beside it.
#include <algorithm>
#include <tuple>
#include <unordered_set>
#include <utility>
#include <vector>

#include "strategies/step_builder_internal.h"

namespace clustersim::strategies {
namespace step_builder_internal {

// Costs a collective over `gpus`, once per (op, group): every micro-batch
// and layer repeats the same few collectives.
absl::StatusOr<topology::CollectiveEstimate> Builder::Estimate(const models::Op& op,
                                                               topology::Collective kind,
                                                               const std::vector<int>& gpus) {
  const auto key = std::make_tuple(&op, gpus.front(), gpus.back());
  auto it = comm_costs_.find(key);
  if (it != comm_costs_.end()) return it->second;
  topology::CollectiveRequest req{kind, gpus, op.comm_bytes, in_.algorithm, in_.protocol};
  absl::StatusOr<topology::CollectiveEstimate> e = SlowestTensorCopy(req);
  if (e.ok()) comm_costs_.emplace(key, *e);
  if (e.ok() && plan_.folded_context_parallel && context_fold_exact_) {
    context_fold_exact_ = SameOnEveryContextRank(req, e->time);
  }
  if (e.ok() && plan_.folded_data_parallel && data_fold_exact_ &&
      in_.mode.collectives == CollectiveTiming::kAnalytic) {
    data_fold_exact_ = SameOnEveryReplica(req, e->time);
  }
  return e;
}

// `gpus` with each member's dp, tp and cp coordinates shifted by d, t and c.
std::vector<int> Builder::Shifted(const std::vector<int>& gpus, int d, int t, int c) const {
  std::vector<int> copy(gpus.size());
  for (size_t j = 0; j < gpus.size(); ++j) {
    RankCoords r = placement_.CoordsOf(gpus[j]);
    r.dp = (r.dp + d) % p_.data_parallel;
    r.tp = (r.tp + t) % p_.tensor_parallel;
    r.cp = (r.cp + c) % p_.context_parallel;
    copy[j] = placement_.GpuOf(r);
  }
  return copy;
}

// The copies of a group over `gpus` on the other data-parallel replicas and
// tensor-parallel ranks: its dp and tp coordinates shifted by every (d, t)
// below (dp_shifts, tp_shifts) other than (0, 0), in that order, that land on
// GPUs neither the group nor an earlier copy took. Groups of one kind
// partition their GPUs, so a shift that lands partly on taken GPUs maps the
// group onto itself or onto GPUs of two real groups: a sharded data-parallel
// group of ranks 0-7 shifted by 1 would span ranks 1-8, a collective nobody
// issues.
std::vector<Builder::ShiftedCopy> Builder::ShiftedCopies(const std::vector<int>& gpus,
                                                         int dp_shifts, int tp_shifts) const {
  std::unordered_set<int> taken(gpus.begin(), gpus.end());
  std::vector<ShiftedCopy> copies;
  for (int d = 0; d < dp_shifts; ++d) {
    for (int t = 0; t < tp_shifts; ++t) {
      if (d == 0 && t == 0) continue;
      std::vector<int> copy = Shifted(gpus, d, t, 0);
      if (std::any_of(copy.begin(), copy.end(), [&](int g) { return taken.count(g) > 0; })) {
        continue;
      }
      taken.insert(copy.begin(), copy.end());
      copies.push_back({std::move(copy), d});
    }
  }
  return copies;
}

// Whether each copy of `req` on the other context-parallel ranks (its GPUs'
// cp coordinates shifted by 1..cp-1) takes `time` too, each costed as
// SlowestTensorCopy costs the simulated one. A group that the
// shift maps onto itself (the data x context group) is one shared task; a
// ring's neighbour pair shifted by one overlaps the pair yet is another
// transfer, so every other shift is costed.
bool Builder::SameOnEveryContextRank(topology::CollectiveRequest req,
                                     sim::Duration time) const {
  std::vector<int> original = req.gpus;
  std::sort(original.begin(), original.end());
  const std::vector<int> gpus = req.gpus;
  for (int k = 1; k < p_.context_parallel; ++k) {
    req.gpus = Shifted(gpus, 0, 0, k);
    std::vector<int> shifted = req.gpus;
    std::sort(shifted.begin(), shifted.end());
    if (shifted == original) continue;
    absl::StatusOr<topology::CollectiveEstimate> e = SlowestTensorCopy(req);
    if (!e.ok() || e->time != time) return false;
  }
  return true;
}

// Whether each copy of `req` on the other data-parallel replicas
// (ShiftedCopies) takes `time` too, each costed as SlowestTensorCopy costs
// the simulated one: on a cluster whose servers do not divide
// the replicas evenly (128 GPUs on 72-GPU NVLink racks), some replicas' groups
// span two servers where the simulated one's do not. Each collective is
// checked once per kind, group and size: layers repeat the same few.
bool Builder::SameOnEveryReplica(topology::CollectiveRequest req, sim::Duration time) {
  const std::vector<int> gpus = req.gpus;
  if (!replica_checked_.emplace(static_cast<int>(req.op), gpus.front(), gpus.back(),
                                req.bytes.count())
           .second) {
    return true;
  }
  for (ShiftedCopy& c : ShiftedCopies(gpus, p_.data_parallel, 1)) {
    req.gpus = std::move(c.gpus);
    absl::StatusOr<topology::CollectiveEstimate> e = SlowestTensorCopy(req);
    if (!e.ok() || e->time != time) return false;
  }
  return true;
}

// The cost of a collective over `req.gpus` where the analytic tier's
// tensor-parallel fold simulates tensor rank 0 alone: the slowest of the
// group's copies on the other tensor ranks (ShiftedCopies; a group that spans
// the tensor ranks, such as the tensor group itself, has none). Ranks of a
// tensor group run the same ops and meet at every tensor-parallel collective,
// so the group waits for its slowest rank's copy: a pipeline send from a rank
// whose neighbour stage sits on another server, or an all-to-all that route
// hashing puts on a busier path. Exact where at most one collective whose
// copies differ falls between two tensor collectives; where two do, the
// slowest copies of each may belong to different ranks, and the sum of the
// maxima bounds the slowest rank's time from above.
absl::StatusOr<topology::CollectiveEstimate> Builder::SlowestTensorCopy(
    topology::CollectiveRequest req) const {
  absl::StatusOr<topology::CollectiveEstimate> slowest = in_.network->Estimate(req);
  if (!slowest.ok() || !plan_.folded_tensor_parallel ||
      in_.mode.collectives != CollectiveTiming::kAnalytic) {
    return slowest;
  }
  for (ShiftedCopy& c : ShiftedCopies(req.gpus, 1, p_.tensor_parallel)) {
    req.gpus = std::move(c.gpus);
    absl::StatusOr<topology::CollectiveEstimate> e = in_.network->Estimate(req);
    if (!e.ok()) return e;
    if (e->time > slowest->time) slowest = std::move(e);
  }
  return slowest;
}

// Adds a collective task over `lanes`: fixed-duration from the estimate, or
// external (CollectiveTiming::kExternal) with its request recorded.
sim::TaskId Builder::AddCollectiveTask(const std::vector<sim::ResourceId>& lanes,
                                       const topology::CollectiveEstimate& est, TaskInfo info,
                                       topology::Collective kind, const std::vector<int>& gpus,
                                       sim::Bytes bytes) {
  if (in_.mode.collectives == CollectiveTiming::kAnalytic) {
    return plan_.graph.AddTask(lanes, est.time, NewInfo(info));
  }
  info.request = static_cast<int32_t>(plan_.requests.size());
  auto [group, added] = request_group_index_.try_emplace(
      gpus, static_cast<int32_t>(plan_.request_groups.size()));
  if (added) plan_.request_groups.push_back(gpus);
  plan_.requests.push_back({kind, est.algorithm, est.protocol, group->second, bytes});
  plan_.request_copies.push_back(FoldCopiesOf(gpus));
  return plan_.graph.AddExternalTask(lanes, NewInfo(info));
}

// The copies of a collective over `gpus` on the data-parallel replicas and
// tensor-parallel ranks the folds left out that can share a link with the
// simulated traffic (StepPlan::fold_copies), built once per group: the
// ShiftedCopies of the folded coordinates, less those confined to one server
// that holds no simulated GPU (such a copy shares no link with anything
// simulated, and that server's own traffic is the simulated servers' over
// again). A kept copy on another data-parallel replica makes the data-parallel
// fold inexact (data_fold_exact). -1 when no copy is kept.
int32_t Builder::FoldCopiesOf(const std::vector<int>& gpus) {
  if (!plan_.folded_data_parallel && !plan_.folded_tensor_parallel) return -1;
  if (!data_fold_exact_) return -1;  // BuildStep builds the graph again without it
  auto [it, added] = fold_copy_index_.try_emplace(gpus, -1);
  if (!added) return it->second;
  std::vector<std::vector<int>> copies;
  const int dp_shifts = plan_.folded_data_parallel ? p_.data_parallel : 1;
  const int tp_shifts = plan_.folded_tensor_parallel ? p_.tensor_parallel : 1;
  for (ShiftedCopy& c : ShiftedCopies(gpus, dp_shifts, tp_shifts)) {
    if (!MayShareLinks(c.gpus)) continue;
    if (c.dp_shift != 0) data_fold_exact_ = false;
    copies.push_back(std::move(c.gpus));
  }
  if (copies.empty()) return -1;
  it->second = static_cast<int32_t>(plan_.fold_copies.size());
  plan_.fold_copies.push_back(std::move(copies));
  return it->second;
}

// Whether a folded-away copy of a collective over `gpus` can share a link with
// simulated traffic: it spans servers (and so the fabric), or one of its
// servers holds a simulated GPU. Without a cluster, every copy can.
bool Builder::MayShareLinks(const std::vector<int>& gpus) const {
  const topology::Cluster* cluster = in_.cluster;
  if (cluster == nullptr) return true;
  for (int g : gpus) {
    if (g >= cluster->num_gpus()) return true;  // the network reports it
    const int node = cluster->NodeOf(g);
    if (simulated_node_[node] || node != cluster->NodeOf(gpus.front())) return true;
  }
  return false;
}

}  // namespace step_builder_internal
}  // namespace clustersim::strategies
