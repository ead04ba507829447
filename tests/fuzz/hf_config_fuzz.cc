// Fuzz target: a Hugging Face config.json, imported as model.model_config_file
// imports it. docs/reliability.md says how to run it.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "models/hf_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view json(reinterpret_cast<const char*>(data), size);
  (void)clustersim::models::ParseHfConfig(json, "fuzz.config.json");
  return 0;
}
