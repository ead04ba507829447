// ValidateReliability (goodput.h): every field of the `reliability` section
// checked before anything is simulated, each error naming the field and a fix.
#include "scenarios/goodput/goodput.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "sim/status_macros.h"
#include "topology/reliability_catalog.h"

namespace clustersim::scenarios {
namespace {

constexpr int kMaxTrials = 100000;
constexpr int kMaxNodes = 100000;

absl::Status Bad(std::string_view field, double value, std::string_view rule) {
  return absl::InvalidArgumentError(
      absl::StrCat("reliability.", std::string(field), "=", value, " ", std::string(rule)));
}

absl::Status NonNegative(bool has, double v, std::string_view field) {
  if (has && !(std::isfinite(v) && v >= 0)) return Bad(field, v, "must be a finite number >= 0");
  return absl::OkStatus();
}

absl::Status Positive(bool has, double v, std::string_view field, std::string_view fix) {
  if (has && !(std::isfinite(v) && v > 0)) {
    return Bad(field, v, absl::StrCat("must be a finite number > 0; ", std::string(fix)));
  }
  return absl::OkStatus();
}

// The profile's cause named `name`, or an error naming `field` and the causes.
absl::StatusOr<const config::FailureCause*> FindCause(const config::FailureProfile& profile,
                                                     const std::string& name,
                                                     const std::string& field) {
  for (const config::FailureCause& f : profile.cause()) {
    if (f.name() == name) return &f;
  }
  std::vector<std::string> names;
  for (const config::FailureCause& f : profile.cause()) names.push_back(f.name());
  return absl::InvalidArgumentError(absl::StrCat("reliability.", field, "='", name,
                                                 "' is not a cause of ", profile.name(),
                                                 "; use one of ", absl::StrJoin(names, ", ")));
}

}  // namespace

absl::Status ValidateReliability(const config::Scenario& s) {
  if (!GoodputRequested(s)) return absl::OkStatus();
  const config::ReliabilityConfig& r = s.reliability();
  const topology::ReliabilityCatalog& cat = topology::ReliabilityCatalog::Default();
  if (!s.pricing().has_train_tokens() && !s.pricing().has_train_steps()) {
    return absl::InvalidArgumentError(
        "reliability needs a run length: set pricing.train_tokens (--train-tokens) or "
        "pricing.train_steps (--train-steps)");
  }
  const config::FailureProfile* profile = nullptr;
  if (r.has_failure_profile()) {
    absl::StatusOr<const config::FailureProfile*> p = cat.FindProfile(r.failure_profile());
    if (!p.ok())
      return absl::InvalidArgumentError(
          absl::StrCat("reliability.failure_profile: ", p.status().message()));
    profile = *p;
  } else {
    profile = *cat.FindProfile(cat.file().default_profile());
  }
  for (int i = 0; i < r.cause_rate_size(); ++i) {
    const config::CauseRate& c = r.cause_rate(i);
    absl::StatusOr<const config::FailureCause*> found =
        FindCause(*profile, c.cause(), absl::StrCat("cause_rate[", i, "].cause"));
    if (!found.ok()) return found.status();
    CLUSTERSIM_RETURN_IF_ERROR(
        NonNegative(true, c.rate(), absl::StrCat("cause_rate[", i, "].rate")));
  }
  for (int i = 0; i < r.cause_nodes_size(); ++i) {
    const config::CauseNodes& c = r.cause_nodes(i);
    const std::string field = absl::StrCat("cause_nodes[", i, "]");
    absl::StatusOr<const config::FailureCause*> found =
        FindCause(*profile, c.cause(), absl::StrCat(field, ".cause"));
    if (!found.ok()) return found.status();
    if (!(*found)->needs_node()) {
      return absl::InvalidArgumentError(
          absl::StrCat("reliability.", field, ".cause='", c.cause(),
                       "' restarts on the same nodes (it needs no replacement node); give a "
                       "hardware cause"));
    }
    if (c.nodes() < 1 || c.nodes() > kMaxNodes) {
      return absl::InvalidArgumentError(absl::StrCat("reliability.", field, ".nodes=", c.nodes(),
                                                     " must be in [1, ", kMaxNodes,
                                                     "]: the nodes one interruption takes down"));
    }
  }
  if (r.has_spare_nodes()) {
    if (r.spare_nodes() < 0 || r.spare_nodes() > kMaxNodes) {
      return absl::InvalidArgumentError(absl::StrCat("reliability.spare_nodes=", r.spare_nodes(),
                                                     " must be in [0, ", kMaxNodes,
                                                     "]; leave it unset for an unlimited supply"));
    }
    if (r.has_hot_spares() && !r.hot_spares()) {
      return absl::InvalidArgumentError(
          "reliability.spare_nodes is set but hot_spares is false (--no-hot-spares): keep one "
          "of them");
    }
  }
  CLUSTERSIM_RETURN_IF_ERROR(
      NonNegative(r.has_failure_rate_scale(), r.failure_rate_scale(), "failure_rate_scale"));
  CLUSTERSIM_RETURN_IF_ERROR(NonNegative(r.has_software_failures_per_job_day(),
                                         r.software_failures_per_job_day(),
                                         "software_failures_per_job_day"));
  CLUSTERSIM_RETURN_IF_ERROR(
      NonNegative(r.has_planned_per_day(), r.planned_per_day(), "planned_per_day"));
  if (r.has_storage()) {
    if (absl::Status found = cat.FindStorage(r.storage()).status(); !found.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("reliability.storage: ", found.message()));
    }
  }
  const struct {
    bool has;
    double value;
    const char* field;
  } bandwidths[] = {
      {r.has_storage_write_gb_per_s_per_node(), r.storage_write_gb_per_s_per_node(),
       "storage_write_gb_per_s_per_node"},
      {r.has_storage_write_gb_per_s_aggregate(), r.storage_write_gb_per_s_aggregate(),
       "storage_write_gb_per_s_aggregate"},
      {r.has_storage_read_gb_per_s_per_node(), r.storage_read_gb_per_s_per_node(),
       "storage_read_gb_per_s_per_node"},
      {r.has_storage_read_gb_per_s_aggregate(), r.storage_read_gb_per_s_aggregate(),
       "storage_read_gb_per_s_aggregate"},
  };
  for (const auto& b : bandwidths) {
    CLUSTERSIM_RETURN_IF_ERROR(Positive(
        b.has, b.value, b.field, "give the storage's bandwidth in GB/s, or a preset (storage)"));
  }
  CLUSTERSIM_RETURN_IF_ERROR(Positive(r.has_snapshot_gb_per_s_per_gpu(),
                                      r.snapshot_gb_per_s_per_gpu(), "snapshot_gb_per_s_per_gpu",
                                      "e.g. 25 for PCIe 4"));
  if (r.has_checkpoint_mode() && r.checkpoint_mode() != "async" &&
      r.checkpoint_mode() != "blocking") {
    return absl::InvalidArgumentError(absl::StrCat("reliability.checkpoint_mode='",
                                                   r.checkpoint_mode(),
                                                   "' is not known; use async or blocking"));
  }
  CLUSTERSIM_RETURN_IF_ERROR(Positive(r.has_checkpoint_interval_s(), r.checkpoint_interval_s(),
                                      "checkpoint_interval_s",
                                      "leave it unset for the Young/Daly interval"));
  CLUSTERSIM_RETURN_IF_ERROR(NonNegative(r.has_detection_s(), r.detection_s(), "detection_s"));
  CLUSTERSIM_RETURN_IF_ERROR(NonNegative(r.has_reschedule_s(), r.reschedule_s(), "reschedule_s"));
  CLUSTERSIM_RETURN_IF_ERROR(
      NonNegative(r.has_init_s_per_gpu(), r.init_s_per_gpu(), "init_s_per_gpu"));
  CLUSTERSIM_RETURN_IF_ERROR(NonNegative(r.has_warmup_steps(), r.warmup_steps(), "warmup_steps"));
  CLUSTERSIM_RETURN_IF_ERROR(
      Positive(r.has_repair_hours(), r.repair_hours(), "repair_hours", "e.g. 24"));
  if (r.has_trials() && (r.trials() < 1 || r.trials() > kMaxTrials)) {
    return absl::InvalidArgumentError(absl::StrCat("reliability.trials=", r.trials(),
                                                   " must be in [1, ", kMaxTrials, "]; e.g. 1000"));
  }
  return absl::OkStatus();
}

}  // namespace clustersim::scenarios
