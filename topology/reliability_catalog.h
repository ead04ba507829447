// File: topology/reliability_catalog.h
//
// The reliability catalog: failure-rate profiles of clusters cause by cause
// (per GPU-hour, node-hour or job-hour, each with its derivation from a
// published table), checkpoint storage presets (per-node and aggregate
// bandwidth) and the parts of a restart. Parsed once from
// topology/data/reliability.textproto (schema topology/proto/reliability.proto),
// embedded in the binary; immutable and thread-safe.
//
// Example:
//   const topology::ReliabilityCatalog& c = topology::ReliabilityCatalog::Default();
//   absl::StatusOr<const config::FailureProfile*> p = c.FindProfile("llama3-h100");
//   double per_hour = topology::CauseRatePerJobHour(p.value()->cause(0), 16384, 8);
#ifndef CLUSTERSIM_TOPOLOGY_RELIABILITY_CATALOG_H_
#define CLUSTERSIM_TOPOLOGY_RELIABILITY_CATALOG_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "topology/proto/reliability.pb.h"

namespace clustersim::topology {

class ReliabilityCatalog {
 public:
  // The shipped catalog; aborts if the embedded file is invalid (a build bug,
  // caught by the unit tests).
  static const ReliabilityCatalog& Default();
  // Parses and validates: every rate and bandwidth finite and >= 0 (bandwidths
  // > 0), `per` one of gpu_hour/node_hour/job_hour, sources present, unique
  // names, defaults that exist. Errors name the row and the field.
  static absl::StatusOr<ReliabilityCatalog> Parse(std::string_view textproto);

  // NotFound listing the valid names.
  absl::StatusOr<const config::FailureProfile*> FindProfile(std::string_view name) const;
  absl::StatusOr<const config::StoragePreset*> FindStorage(std::string_view name) const;
  const config::ReliabilityCatalogFile& file() const { return file_; }

 private:
  config::ReliabilityCatalogFile file_;
};

// A cause's interruptions per hour of a job of `num_gpus` GPUs on nodes of
// `gpus_per_node` (partial nodes count as whole).
double CauseRatePerJobHour(const config::FailureCause& cause, int num_gpus, int gpus_per_node);

}  // namespace clustersim::topology

#endif  // CLUSTERSIM_TOPOLOGY_RELIABILITY_CATALOG_H_
