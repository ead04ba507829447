// File: scenarios/input/resolve_model.h
//
// The model part of scenario resolution: a preset (model.preset) or a
// Hugging Face config.json (model.model_config_file, models/hf_config.h;
// relative paths resolve against the current working directory) with field
// overrides, or a model described field by field, validated; and its echo
// into the resolved scenario.
//
// Example:
//   models::TransformerConfig m;
//   absl::Status s = ResolveModel(scenario.model(), &m);
#ifndef CLUSTERSIM_SCENARIOS_INPUT_RESOLVE_MODEL_H_
#define CLUSTERSIM_SCENARIOS_INPUT_RESOLVE_MODEL_H_

#include "absl/status/status.h"
#include "models/transformer_config.h"
#include "scenarios/proto/scenario.pb.h"

namespace clustersim::scenarios {

// Errors name the field ("model.num_attention_heads is required ...").
absl::Status ResolveModel(const config::ModelConfig& in, models::TransformerConfig* out);

// Writes every resolved architecture field into `out` (the preset name is
// left to the caller).
void EchoModel(const models::TransformerConfig& m, config::ModelConfig* out);

}  // namespace clustersim::scenarios

#endif  // CLUSTERSIM_SCENARIOS_INPUT_RESOLVE_MODEL_H_
