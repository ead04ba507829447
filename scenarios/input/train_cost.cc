#include "scenarios/input/train_cost.h"

#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "sim/status_macros.h"

namespace clustersim::scenarios {
namespace {

bool HasOwnedFields(const config::PricingConfig& p) {
  return p.has_purchase_usd_per_gpu() || p.has_amortisation_years() || p.has_usd_per_kwh() ||
         p.has_hosting_usd_per_node_month();
}

std::string EntriesFor(const models::GpuSpec& gpu) {
  std::vector<std::string> names;
  for (const models::PriceEntry& e : models::PriceCatalog::Default().entries()) {
    if (e.gpu == gpu.name) names.push_back(e.name);
  }
  return names.empty() ? "none in the catalog" : absl::StrJoin(names, ", ");
}

}  // namespace

absl::StatusOr<ResolvedPricing> ResolvePricing(const config::PricingConfig& p,
                                               const models::GpuSpec& gpu, int gpus_per_node) {
  ResolvedPricing r;
  const models::PriceCatalog& catalog = models::PriceCatalog::Default();
  const models::PriceEntry* entry = nullptr;
  if (p.has_price_source()) {
    absl::StatusOr<const models::PriceEntry*> found = catalog.Find(p.price_source());
    if (!found.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("pricing.price_source: ", found.status().message()));
    }
    entry = *found;
    if (entry->gpu != gpu.name) {
      return absl::InvalidArgumentError(absl::StrCat(
          "pricing.price_source=\"", entry->name, "\" prices ", entry->gpu, ", not cluster.gpu=\"",
          gpu.name, "\"; use one of: ", EntriesFor(gpu), ", or set pricing.usd_per_gpu_hour"));
    }
  } else {
    entry = catalog.DefaultFor(gpu.name);
  }
  if (p.has_usd_per_gpu_hour() && HasOwnedFields(p)) {
    return absl::InvalidArgumentError(
        "pricing.usd_per_gpu_hour and the owned-hardware fields (purchase_usd_per_gpu, ...) "
        "both set a price; keep one");
  }

  if (entry != nullptr && entry->owned) r.owned_costs = entry->owned_costs;
  r.owned = (entry != nullptr && entry->owned && !p.has_usd_per_gpu_hour()) || HasOwnedFields(p);
  if (p.has_purchase_usd_per_gpu()) r.owned_costs.purchase_usd_per_gpu = p.purchase_usd_per_gpu();
  if (p.has_amortisation_years()) r.owned_costs.amortisation_years = p.amortisation_years();
  if (p.has_utilisation()) r.owned_costs.utilisation = p.utilisation();
  if (p.has_pue()) r.owned_costs.pue = p.pue();
  if (p.has_usd_per_kwh()) r.owned_costs.usd_per_kwh = p.usd_per_kwh();
  if (p.has_hosting_usd_per_node_month()) {
    r.owned_costs.hosting_usd_per_node_month = p.hosting_usd_per_node_month();
  }
  CLUSTERSIM_RETURN_IF_ERROR(models::ValidateOwnedCosts(r.owned_costs));
  r.utilisation = r.owned_costs.utilisation;
  r.pue = r.owned_costs.pue;

  if (p.has_usd_per_gpu_hour()) {
    if (!(p.usd_per_gpu_hour() >= 0)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "pricing.usd_per_gpu_hour=", p.usd_per_gpu_hour(), " must not be negative"));
    }
    r.usd_per_gpu_hour = p.usd_per_gpu_hour();
    r.name = "scenario";
    r.source = "scenario pricing.usd_per_gpu_hour";
  } else if (r.owned) {
    r.owned_hourly = models::OwnedUsdPerGpuHour(r.owned_costs, gpu.tdp_w, gpus_per_node);
    r.usd_per_gpu_hour = r.owned_hourly.Total();
    const bool from_entry = entry != nullptr && entry->owned;
    r.name = from_entry ? entry->name : "owned";
    r.date = from_entry ? entry->date : "";
    r.source = absl::StrCat(
        "owned: capital + TDP x utilisation x PUE x $/kWh + hosting",
        from_entry ? absl::StrCat("; ", entry->source) : std::string(),
        from_entry && !entry->assumptions.empty() ? absl::StrCat("; ", entry->assumptions)
                                                   : std::string(),
        HasOwnedFields(p) || p.has_utilisation() || p.has_pue() ? "; overridden by pricing.*"
                                                                : "");
  } else if (entry != nullptr) {
    r.usd_per_gpu_hour = entry->usd_per_gpu_hour;
    r.name = entry->name;
    r.date = entry->date;
    r.source = absl::StrCat(entry->provider, " ", entry->instance, " ", entry->kind, ", ",
                            entry->date, ": ", entry->source);
  } else {
    r.name = "none";
    r.source = absl::StrCat("no catalog price for ", gpu.name,
                            "; set pricing.usd_per_gpu_hour (--usd-per-gpu-hour)");
  }

  if (p.has_train_tokens() && p.has_train_steps()) {
    return absl::InvalidArgumentError(
        "pricing.train_tokens and pricing.train_steps both set the run length; keep one");
  }
  if (p.has_train_tokens()) {
    if (!(p.train_tokens() > 0 && p.train_tokens() < 1e18)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "pricing.train_tokens=", p.train_tokens(), " must be in (0, 1e18); e.g. 1e12"));
    }
    r.train_tokens = p.train_tokens();
  }
  if (p.has_train_steps()) {
    if (p.train_steps() <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("pricing.train_steps=", p.train_steps(), " must be > 0"));
    }
    r.train_steps = p.train_steps();
  }
  return r;
}

void EchoPricing(const ResolvedPricing& p, config::PricingConfig* out) {
  out->set_usd_per_gpu_hour(p.usd_per_gpu_hour);
  if (p.name != "scenario" && p.name != "owned" && p.name != "none") {
    out->set_price_source(p.name);
  }
  if (p.owned) {
    out->set_purchase_usd_per_gpu(p.owned_costs.purchase_usd_per_gpu);
    out->set_amortisation_years(p.owned_costs.amortisation_years);
    out->set_usd_per_kwh(p.owned_costs.usd_per_kwh);
    out->set_hosting_usd_per_node_month(p.owned_costs.hosting_usd_per_node_month);
  }
  out->set_utilisation(p.utilisation);
  out->set_pue(p.pue);
  if (p.train_tokens > 0) out->set_train_tokens(p.train_tokens);
  if (p.train_steps > 0) out->set_train_steps(p.train_steps);
}

void FillCost(const ResolvedPricing& p, const StepFigures& step, config::Result* result) {
  config::Cost* c = result->mutable_cost();
  const double usd_per_step = p.usd_per_gpu_hour * step.num_gpus * step.step_time_s / 3600.0;
  c->set_usd_per_gpu_hour(p.usd_per_gpu_hour);
  c->set_usd_per_step(usd_per_step);
  c->set_price_source(p.source);
  c->set_price_name(p.name);
  c->set_price_date(p.date);
  c->set_usd_per_million_tokens(step.tokens_per_step > 0 ? usd_per_step / step.tokens_per_step * 1e6
                                                         : 0);
  if (p.owned) {
    c->set_capital_usd_per_gpu_hour(p.owned_hourly.capital);
    c->set_power_usd_per_gpu_hour(p.owned_hourly.power);
    c->set_hosting_usd_per_gpu_hour(p.owned_hourly.hosting);
  }
  if (p.train_tokens <= 0 && p.train_steps <= 0) return;
  const double steps = p.train_steps > 0 ? static_cast<double>(p.train_steps)
                                         : std::ceil(p.train_tokens / step.tokens_per_step);
  config::TrainEstimate* t = result->mutable_train();
  const double seconds = steps * step.step_time_s;
  const double gpu_hours = step.num_gpus * seconds / 3600.0;
  t->set_train_steps(steps);
  t->set_train_tokens(p.train_steps > 0 ? steps * step.tokens_per_step : p.train_tokens);
  t->set_time_to_train_s(seconds);
  t->set_time_to_train_days(seconds / 86400.0);
  t->set_gpu_hours(gpu_hours);
  t->set_total_usd(gpu_hours * p.usd_per_gpu_hour);
  t->set_usd_per_million_tokens(t->total_usd() / t->train_tokens() * 1e6);
  t->set_energy_kwh(EnergyKwh(p, gpu_hours, step.tdp_w));
}

double EnergyKwh(const ResolvedPricing& p, double gpu_hours, double tdp_w) {
  return gpu_hours * tdp_w * p.utilisation * p.pue / 1000.0;
}

std::string FormatCostText(const config::Result& r) {
  std::string out;
  const auto line = [&out](std::string_view label, std::string_view value) {
    absl::StrAppendFormat(&out, "  %-26s %s\n", label, value);
  };
  const config::Cost& c = r.cost();
  line("price", absl::StrFormat("$%.3f per GPU-hour (%s%s%s)", c.usd_per_gpu_hour(), c.price_name(),
                                c.price_date().empty() ? "" : ", ", c.price_date()));
  if (c.capital_usd_per_gpu_hour() + c.power_usd_per_gpu_hour() + c.hosting_usd_per_gpu_hour() >
      0) {
    line("  owned", absl::StrFormat("capital $%.3f + power $%.3f + hosting $%.3f per GPU-hour",
                                    c.capital_usd_per_gpu_hour(), c.power_usd_per_gpu_hour(),
                                    c.hosting_usd_per_gpu_hour()));
  }
  line("cost per token", absl::StrFormat("$%.4f per million tokens", c.usd_per_million_tokens()));
  if (!r.has_train()) return out;
  const config::TrainEstimate& t = r.train();
  line("training run", absl::StrFormat("%.4g tokens in %.0f steps", t.train_tokens(),
                                       t.train_steps()));
  line("  time to train", absl::StrFormat("%.2f days (%.0f s)", t.time_to_train_days(),
                                          t.time_to_train_s()));
  line("  GPU-hours", absl::StrFormat("%.0f", t.gpu_hours()));
  line("  total cost", absl::StrFormat("$%.0f ($%.4f per million tokens)", t.total_usd(),
                                       t.usd_per_million_tokens()));
  if (r.has_energy()) {
    line("  energy", absl::StrFormat("%.0f kWh (simulated draw x PUE %.2f)", t.energy_kwh(),
                                     r.scenario().pricing().pue()));
  } else {
    line("  energy", absl::StrFormat("%.0f kWh (GPUs at TDP x %.2f utilisation x PUE %.2f)",
                                     t.energy_kwh(), r.scenario().pricing().utilisation(),
                                     r.scenario().pricing().pue()));
  }
  return out;
}

}  // namespace clustersim::scenarios
