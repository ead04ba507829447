#include "models/pricing.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/text_format.h"
#include "models/proto/prices.pb.h"
#include "sim/check.h"

namespace clustersim::embedded {
std::string_view PriceCatalogData();
}  // namespace clustersim::embedded

namespace clustersim::models {
namespace {

bool IsKnownKind(std::string_view k) {
  return k == "on-demand" || k == "reserved" || k == "capacity-block" || k == "monthly" ||
         k == "owned";
}

absl::StatusOr<PriceEntry> FromProto(const config::PriceEntry& p, int index) {
  const std::string where = absl::StrCat("price[", index, "] '", p.name(), "': ");
  PriceEntry e;
  e.name = p.name();
  e.provider = p.provider();
  e.instance = p.instance();
  e.gpu = p.gpu();
  e.gpus_per_instance = p.gpus_per_instance();
  e.kind = p.kind();
  e.usd_per_gpu_hour = p.usd_per_gpu_hour();
  e.date = p.date();
  e.source = p.source();
  e.confidence = p.confidence();
  e.default_for_gpu = p.default_for_gpu();
  e.owned = p.kind() == "owned";
  e.assumptions = p.assumptions();
  if (e.name.empty() || e.gpu.empty() || e.source.empty() || e.date.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, "name, gpu, date and source are required"));
  }
  if (!IsKnownKind(e.kind)) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, "kind \"", e.kind, "\" is not known; use on-demand, reserved, capacity-block, "
        "monthly or owned"));
  }
  if (e.gpus_per_instance < 1) {
    return absl::InvalidArgumentError(absl::StrCat(where, "gpus_per_instance must be >= 1"));
  }
  if (e.owned) {
    e.owned_costs = {p.purchase_usd_per_gpu(), p.amortisation_years(), p.utilisation(), p.pue(),
                     p.usd_per_kwh(), p.hosting_usd_per_node_month()};
    if (absl::Status s = ValidateOwnedCosts(e.owned_costs); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(where, s.message()));
    }
  } else if (!(e.usd_per_gpu_hour > 0)) {
    return absl::InvalidArgumentError(absl::StrCat(where, "usd_per_gpu_hour must be > 0"));
  }
  return e;
}

}  // namespace

absl::Status ValidateOwnedCosts(const OwnedCosts& c) {
  if (!(c.purchase_usd_per_gpu >= 0)) {
    return absl::InvalidArgumentError("pricing.purchase_usd_per_gpu must be >= 0");
  }
  if (c.purchase_usd_per_gpu > 0 && !(c.amortisation_years > 0)) {
    return absl::InvalidArgumentError(
        "pricing.amortisation_years must be > 0 to spread a purchase price; e.g. 3 or 4");
  }
  if (!(c.utilisation > 0 && c.utilisation <= 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("pricing.utilisation=", c.utilisation,
                     " must be in (0, 1]: average power draw over TDP"));
  }
  if (!(c.pue >= 1 && c.pue < 10)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "pricing.pue=", c.pue, " must be in [1, 10): facility power over IT power, e.g. 1.2"));
  }
  if (!(c.usd_per_kwh >= 0)) return absl::InvalidArgumentError("pricing.usd_per_kwh must be >= 0");
  if (!(c.hosting_usd_per_node_month >= 0)) {
    return absl::InvalidArgumentError("pricing.hosting_usd_per_node_month must be >= 0");
  }
  return absl::OkStatus();
}

OwnedHourlyCost OwnedUsdPerGpuHour(const OwnedCosts& c, double tdp_w, int gpus_per_node) {
  OwnedHourlyCost h;
  if (c.amortisation_years > 0) {
    h.capital = c.purchase_usd_per_gpu / (c.amortisation_years * kHoursPerYear);
  }
  h.power = tdp_w * c.utilisation * c.pue / 1000.0 * c.usd_per_kwh;
  h.hosting = c.hosting_usd_per_node_month / (kHoursPerMonth * std::max(1, gpus_per_node));
  return h;
}

absl::StatusOr<PriceCatalog> PriceCatalog::Parse(std::string_view textproto) {
  config::PriceCatalogFile file;
  if (!google::protobuf::TextFormat::ParseFromString(std::string(textproto), &file)) {
    return absl::InvalidArgumentError("price catalog: not a valid PriceCatalogFile text proto");
  }
  PriceCatalog catalog;
  for (int i = 0; i < file.price_size(); ++i) {
    absl::StatusOr<PriceEntry> e = FromProto(file.price(i), i);
    if (!e.ok()) return e.status();
    catalog.entries_.push_back(*std::move(e));
  }
  std::sort(catalog.entries_.begin(), catalog.entries_.end(),
            [](const PriceEntry& a, const PriceEntry& b) { return a.name < b.name; });
  for (size_t i = 0; i < catalog.entries_.size(); ++i) {
    const PriceEntry& e = catalog.entries_[i];
    if (i > 0 && e.name == catalog.entries_[i - 1].name) {
      return absl::InvalidArgumentError(absl::StrCat("price catalog: duplicate name '", e.name, "'"));
    }
    if (!e.default_for_gpu) continue;
    for (size_t j = 0; j < i; ++j) {
      if (catalog.entries_[j].default_for_gpu && catalog.entries_[j].gpu == e.gpu) {
        return absl::InvalidArgumentError(absl::StrCat("price catalog: '", e.name, "' and '",
                                                       catalog.entries_[j].name,
                                                       "' are both default_for_gpu ", e.gpu));
      }
    }
  }
  return catalog;
}

const PriceCatalog& PriceCatalog::Default() {
  static const PriceCatalog* const kCatalog = [] {
    absl::StatusOr<PriceCatalog> parsed = Parse(embedded::PriceCatalogData());
    SIM_CHECK(parsed.ok()) << "embedded models/data/prices.textproto: " << parsed.status();
    return new PriceCatalog(*std::move(parsed));
  }();
  return *kCatalog;
}

absl::StatusOr<const PriceEntry*> PriceCatalog::Find(std::string_view name) const {
  std::vector<std::string> names;
  for (const PriceEntry& e : entries_) {
    if (e.name == name) return &e;
    names.push_back(e.name);
  }
  return absl::NotFoundError(absl::StrCat("\"", std::string(name),
                                          "\" is not in the price catalog; valid: ",
                                          absl::StrJoin(names, ", "),
                                          " (clustersim list prices)"));
}

const PriceEntry* PriceCatalog::DefaultFor(std::string_view gpu) const {
  for (const PriceEntry& e : entries_) {
    if (e.default_for_gpu && e.gpu == gpu) return &e;
  }
  return nullptr;
}

}  // namespace clustersim::models
