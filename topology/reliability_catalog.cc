#include "topology/reliability_catalog.h"

#include <cmath>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/text_format.h"
#include "sim/check.h"

namespace clustersim::embedded {
std::string_view ReliabilityCatalogData();
}  // namespace clustersim::embedded

namespace clustersim::topology {

namespace {

constexpr char kFile[] = "reliability.textproto";

absl::Status RowError(std::string_view kind, int index, std::string_view name,
                      std::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(kFile, ": ", std::string(kind), "[", index, "] '",
                                                 std::string(name), "': ", std::string(what)));
}

bool NonNegative(double v) { return std::isfinite(v) && v >= 0; }
bool Positive(double v) { return std::isfinite(v) && v > 0; }

absl::Status CheckProfile(int i, const config::FailureProfile& p) {
  if (p.source().empty() || p.derived_from().empty() || p.held_out().empty()) {
    return RowError("profile", i, p.name(), "source, derived_from and held_out are required");
  }
  std::set<std::string> names;
  for (int c = 0; c <= p.cause_size(); ++c) {
    const config::FailureCause& f = c < p.cause_size() ? p.cause(c) : p.planned();
    const std::string where = c < p.cause_size()
                                  ? absl::StrCat("cause[", c, "] '", f.name(), "': ")
                                  : absl::StrCat("planned '", f.name(), "': ");
    if (!names.insert(f.name()).second) {
      return RowError("profile", i, p.name(), where + "duplicate name");
    }
    if (f.per() != "gpu_hour" && f.per() != "node_hour" && f.per() != "job_hour") {
      return RowError("profile", i, p.name(),
                      where + "per must be gpu_hour, node_hour or job_hour");
    }
    if (!NonNegative(f.rate())) {
      return RowError("profile", i, p.name(), where + "rate must be a finite number >= 0");
    }
    if (f.derivation().empty()) return RowError("profile", i, p.name(), where + "no derivation");
  }
  return absl::OkStatus();
}

absl::Status CheckStorage(int i, const config::StoragePreset& s) {
  if (!Positive(s.write_gb_per_s_per_node()) || !Positive(s.write_gb_per_s_aggregate()) ||
      !Positive(s.read_gb_per_s_per_node()) || !Positive(s.read_gb_per_s_aggregate())) {
    return RowError("storage", i, s.name(), "every bandwidth must be > 0");
  }
  if (s.source().empty()) return RowError("storage", i, s.name(), "source is required");
  return absl::OkStatus();
}

template <typename Rows>
std::string Names(const Rows& rows) {
  std::vector<std::string> names;
  for (const auto& r : rows) names.push_back(r.name());
  return absl::StrJoin(names, ", ");
}

// The row called `name`, or NotFound listing the valid names.
template <typename Rows>
auto FindRow(const Rows& rows, std::string_view kind, std::string_view name)
    -> absl::StatusOr<decltype(&*rows.begin())> {
  for (const auto& r : rows) {
    if (r.name() == name) return &r;
  }
  return absl::NotFoundError(absl::StrCat(std::string(kind), " '", std::string(name),
                                          "' is not known; use one of ", Names(rows)));
}

}  // namespace

absl::StatusOr<ReliabilityCatalog> ReliabilityCatalog::Parse(std::string_view textproto) {
  ReliabilityCatalog c;
  if (!google::protobuf::TextFormat::ParseFromString(std::string(textproto), &c.file_)) {
    return absl::InvalidArgumentError(
        absl::StrCat(kFile, ": not a valid ReliabilityCatalogFile text proto"));
  }
  std::set<std::string> names;
  for (int i = 0; i < c.file_.profile_size(); ++i) {
    if (!names.insert(c.file_.profile(i).name()).second) {
      return RowError("profile", i, c.file_.profile(i).name(), "duplicate name");
    }
    if (absl::Status s = CheckProfile(i, c.file_.profile(i)); !s.ok()) return s;
  }
  names.clear();
  for (int i = 0; i < c.file_.storage_size(); ++i) {
    if (!names.insert(c.file_.storage(i).name()).second) {
      return RowError("storage", i, c.file_.storage(i).name(), "duplicate name");
    }
    if (absl::Status s = CheckStorage(i, c.file_.storage(i)); !s.ok()) return s;
  }
  const config::RestartCosts& r = c.file_.restart();
  if (!NonNegative(r.detection_s()) || !NonNegative(r.reschedule_s()) ||
      !NonNegative(r.init_s_per_gpu()) || !NonNegative(r.init_min_s()) || r.warmup_steps() < 0 ||
      !Positive(r.repair_hours()) ||
      !(r.snapshot_copy_efficiency() > 0 && r.snapshot_copy_efficiency() <= 1) ||
      r.source().empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(kFile,
                     ": restart: times must be >= 0, repair_hours > 0, snapshot_copy_efficiency in "
                     "(0, 1], and a source given"));
  }
  if (!c.FindProfile(c.file_.default_profile()).ok() ||
      !c.FindStorage(c.file_.default_storage()).ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(kFile, ": default_profile and default_storage must name rows"));
  }
  return c;
}

const ReliabilityCatalog& ReliabilityCatalog::Default() {
  static const ReliabilityCatalog* const kCatalog = [] {
    absl::StatusOr<ReliabilityCatalog> c = Parse(embedded::ReliabilityCatalogData());
    SIM_CHECK(c.ok()) << "embedded topology/data/reliability.textproto: " << c.status();
    return new ReliabilityCatalog(*std::move(c));
  }();
  return *kCatalog;
}

absl::StatusOr<const config::FailureProfile*> ReliabilityCatalog::FindProfile(
    std::string_view name) const {
  return FindRow(file_.profile(), "failure profile", name);
}

absl::StatusOr<const config::StoragePreset*> ReliabilityCatalog::FindStorage(
    std::string_view name) const {
  return FindRow(file_.storage(), "storage preset", name);
}

double CauseRatePerJobHour(const config::FailureCause& cause, int num_gpus, int gpus_per_node) {
  if (cause.per() == "gpu_hour") return cause.rate() * num_gpus;
  if (cause.per() == "node_hour") {
    const int nodes = (num_gpus + gpus_per_node - 1) / gpus_per_node;
    return cause.rate() * nodes;
  }
  return cause.rate();
}

}  // namespace clustersim::topology
