// File: topology/memo_network.h
//
// A network tier that remembers every estimate of the tier it wraps, keyed by
// the whole request (operation, GPUs in order, bytes, algorithm, protocol).
// The wrapped tier's Estimate is a pure function of the request, so answers
// are identical to asking it directly; a search shares one per cluster so the
// thousands of candidates that cost the same gradient buckets, parameter
// gathers and ring neighbours plan each collective once.
//
// Example:
//   topology::AnalyticNetwork analytic(cluster);
//   MemoNetwork memo(analytic);
//   memo.Estimate(req);   // plans it
//   memo.Estimate(req);   // a lookup
//
// Thread-safety: Estimate may be called concurrently (a mutex guards the
// table; the wrapped tier runs outside it and must itself be thread-safe).
// Errors are not remembered.
#ifndef CLUSTERSIM_TOPOLOGY_MEMO_NETWORK_H_
#define CLUSTERSIM_TOPOLOGY_MEMO_NETWORK_H_

#include <cstdint>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#include "absl/status/statusor.h"
#include "topology/collective.h"
#include "topology/network_model.h"

namespace clustersim::topology {

class MemoNetwork : public topology::NetworkModel {
 public:
  // `inner` must outlive this object.
  explicit MemoNetwork(const topology::NetworkModel& inner) : inner_(inner) {}

  absl::StatusOr<topology::CollectiveEstimate> Estimate(
      const topology::CollectiveRequest& r) const override;

  size_t Size() const;

 private:
  using Key = std::tuple<topology::Collective, int64_t, topology::Algorithm, topology::Protocol,
                         std::vector<int>>;
  const topology::NetworkModel& inner_;
  mutable std::mutex mu_;
  mutable std::map<Key, topology::CollectiveEstimate> memo_;
};

}  // namespace clustersim::topology

#endif  // CLUSTERSIM_TOPOLOGY_MEMO_NETWORK_H_
