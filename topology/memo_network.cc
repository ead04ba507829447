#include "topology/memo_network.h"

namespace clustersim::topology {

absl::StatusOr<topology::CollectiveEstimate> MemoNetwork::Estimate(
    const topology::CollectiveRequest& r) const {
  Key key{r.op, r.bytes.count(), r.algorithm, r.protocol, r.gpus};
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = memo_.find(key);
    if (it != memo_.end()) return it->second;
  }
  absl::StatusOr<topology::CollectiveEstimate> e = inner_.Estimate(r);
  if (e.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    memo_.emplace(std::move(key), *e);
  }
  return e;
}

size_t MemoNetwork::Size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return memo_.size();
}

}  // namespace clustersim::topology
