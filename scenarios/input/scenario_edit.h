// File: scenarios/input/scenario_edit.h
//
// Edits a Scenario from `field=value` assignments, as `clustersim compare
// --set/--variant` and `clustersim search --explain` take them. A field is a
// dotted path into scenario.proto ("parallelism.tensor_model_parallel_size")
// or a short alias (tp, pp, vp, cp, ep, dp, mbs, gbs, recompute, zero,
// distopt, sp, schedule, gpu, num_gpus, model, precision, fp8_recipe, offload
// (training.cpu_offload_layers), tier, price,
// price_source, train_tokens, train_steps). Values are parsed by the field's
// type: numbers, true/false, strings as typed. `recompute` also takes full
// recompute by a method, "block:N" or "uniform:N" (training.recompute_method
// and recompute_num_layers), and a granularity other than full clears those.
//
// Example:
//   config::Scenario s = ...;
//   absl::Status st = ApplyAssignments("tp=2,pp=4,recompute=selective", &s);
//   // INVALID_ARGUMENT "parallelism.tensor_model_parallel_sise: no field ...; valid: ..."
#ifndef CLUSTERSIM_SCENARIOS_INPUT_SCENARIO_EDIT_H_
#define CLUSTERSIM_SCENARIOS_INPUT_SCENARIO_EDIT_H_

#include <string_view>

#include "absl/status/status.h"
#include "scenarios/proto/scenario.pb.h"

namespace clustersim::scenarios {

// One `field=value`.
absl::Status SetScenarioField(std::string_view assignment, config::Scenario* scenario);

// A comma-separated list of `field=value` (empty items are ignored).
absl::Status ApplyAssignments(std::string_view assignments, config::Scenario* scenario);

}  // namespace clustersim::scenarios

#endif  // CLUSTERSIM_SCENARIOS_INPUT_SCENARIO_EDIT_H_
