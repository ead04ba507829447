// File: scenarios/input/train_cost.h
//
// Money and time for a scenario: resolves the `pricing` section against the
// price catalog (models/pricing.h) into one $/GPU-hour with its source, and
// turns a simulated step into the cost of a step, dollars per million tokens
// and, given pricing.train_tokens or pricing.train_steps, the whole run's
// time-to-train, GPU-hours, dollars and energy.
//
// Precedence: pricing.usd_per_gpu_hour > owned-hardware fields
// (purchase_usd_per_gpu, ...) > pricing.price_source > the GPU's default
// catalog entry. Energy = GPUs x TDP x utilisation x PUE x hours: the GPUs'
// board power only (CPUs, network and storage are not counted), at TDP unless
// pricing.utilisation says otherwise.
//
// Example:
//   absl::StatusOr<ResolvedPricing> p = ResolvePricing(scenario.pricing(), gpu, 8);
//   FillCost(*p, {.step_time_s = 4.9, .tokens_per_step = 4.2e6, .num_gpus = 1024,
//                 .tdp_w = 700}, &result);
#ifndef CLUSTERSIM_SCENARIOS_INPUT_TRAIN_COST_H_
#define CLUSTERSIM_SCENARIOS_INPUT_TRAIN_COST_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "models/gpu_catalog.h"
#include "models/pricing.h"
#include "scenarios/proto/result.pb.h"
#include "scenarios/proto/scenario.pb.h"

namespace clustersim::scenarios {

struct ResolvedPricing {
  double usd_per_gpu_hour = 0;
  std::string name;    // catalog entry, "scenario" (given price) or "owned" (given owned costs)
  std::string source;  // where the price comes from
  std::string date;
  bool owned = false;
  models::OwnedCosts owned_costs;      // when owned
  models::OwnedHourlyCost owned_hourly;  // when owned
  double utilisation = 1;  // for energy
  double pue = 1;          // for energy
  double train_tokens = 0;   // 0: not given
  int64_t train_steps = 0;   // 0: not given
};

// Errors name the pricing.* field and a fix.
absl::StatusOr<ResolvedPricing> ResolvePricing(const config::PricingConfig& p,
                                               const models::GpuSpec& gpu, int gpus_per_node);

// Writes every resolved value back (for the echoed scenario).
void EchoPricing(const ResolvedPricing& p, config::PricingConfig* out);

struct StepFigures {
  double step_time_s = 0;
  double tokens_per_step = 0;
  int num_gpus = 0;
  double tdp_w = 0;
};

// Fills result->cost and, when a run length is given, result->train.
void FillCost(const ResolvedPricing& p, const StepFigures& step, config::Result* result);

// Energy of `gpu_hours` GPU-hours at `tdp_w`: TDP x utilisation x PUE (above).
double EnergyKwh(const ResolvedPricing& p, double gpu_hours, double tdp_w);

// The money lines of `clustersim run`'s text output (price, $/Mtoken and, when
// present, the run estimate), aligned like viz::FormatSummary's.
std::string FormatCostText(const config::Result& r);

}  // namespace clustersim::scenarios

#endif  // CLUSTERSIM_SCENARIOS_INPUT_TRAIN_COST_H_
