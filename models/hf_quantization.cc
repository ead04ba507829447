#include "models/hf_quantization.h"

#include <set>
#include <string>
#include <string_view>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/util/json_util.h"
#include "models/hf_config.h"
#include "sim/input_file.h"

namespace clustersim::models {
namespace {

using google::protobuf::Value;

// The layer modules a modules_to_not_convert list names: per layer index,
// whether its attention and its MLP appear.
struct Unconverted {
  std::set<int> attention, mlp;
  bool any_layer = false;
};

// "model.layers.<i>.<rest>" -> i and rest; false for other names.
bool SplitLayerName(std::string_view name, int* layer, std::string_view* rest) {
  constexpr std::string_view kPrefix = "model.layers.";
  if (!name.starts_with(kPrefix)) return false;
  name.remove_prefix(kPrefix.size());
  const size_t dot = name.find('.');
  if (dot == std::string_view::npos || !absl::SimpleAtoi(std::string(name.substr(0, dot)), layer)) {
    return false;
  }
  *rest = name.substr(dot + 1);
  return true;
}

bool ListsEveryLayer(const std::set<int>& layers, int n) {
  return static_cast<int>(layers.size()) == n && *layers.begin() == 0 && *layers.rbegin() == n - 1;
}

}  // namespace

absl::StatusOr<std::string> CheckpointWeightDtype(const Value& quantization_config,
                                                  const TransformerConfig& model) {
  if (quantization_config.kind_case() != Value::kStructValue) return std::string();
  const auto& fields = quantization_config.struct_value().fields();
  const auto method = fields.find("quant_method");
  if (method == fields.end() || method->second.string_value() != "fbgemm_fp8") {
    return std::string();
  }
  if (model.num_experts > 0 || model.hybrid()) return std::string();
  Unconverted u;
  const auto list = fields.find("modules_to_not_convert");
  if (list != fields.end() && list->second.kind_case() != Value::kNullValue) {
    if (list->second.kind_case() != Value::kListValue) {
      return absl::InvalidArgumentError(
          "\"quantization_config.modules_to_not_convert\" must be a list of module names; or set "
          "inference.weight_dtype and remove quantization_config");
    }
    for (const Value& v : list->second.list_value().values()) {
      if (v.kind_case() != Value::kStringValue) {
        return absl::InvalidArgumentError(
            "\"quantization_config.modules_to_not_convert\" entries must be strings; or set "
            "inference.weight_dtype and remove quantization_config");
      }
      int layer = 0;
      std::string_view rest;
      if (!SplitLayerName(v.string_value(), &layer, &rest)) continue;  // lm_head and the like
      u.any_layer = true;
      if (rest.starts_with("self_attn.")) u.attention.insert(layer);
      if (rest.starts_with("mlp.")) u.mlp.insert(layer);
    }
  }
  if (!u.any_layer) return std::string("fp8");
  const int n = model.num_layers;
  const std::set<int> ends = n > 1 ? std::set<int>{0, n - 1} : std::set<int>{0};
  if (ListsEveryLayer(u.attention, n) && u.mlp == ends) return std::string("fp8-mixed");
  return std::string();
}

absl::StatusOr<std::string> ParseHfCheckpointWeightDtype(std::string_view json,
                                                         std::string_view origin) {
  absl::StatusOr<TransformerConfig> model = ParseHfConfig(json, origin);
  if (!model.ok()) return model.status();
  google::protobuf::Struct root;
  if (!google::protobuf::util::JsonStringToMessage(
           google::protobuf::StringPiece(json.data(), json.size()), &root)
           .ok()) {
    return std::string();  // ParseHfConfig accepted it: unreachable
  }
  const auto q = root.fields().find("quantization_config");
  if (q == root.fields().end()) return std::string();
  absl::StatusOr<std::string> format = CheckpointWeightDtype(q->second, *model);
  if (!format.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(std::string(origin), ": ", format.status().message()));
  }
  return format;
}

absl::StatusOr<std::string> LoadHfCheckpointWeightDtype(const std::string& path) {
  absl::StatusOr<std::string> text = sim::ReadInputFile(path);
  if (text.status().code() == absl::StatusCode::kNotFound) {
    return absl::NotFoundError(absl::StrCat("cannot read Hugging Face config '", path, "'"));
  }
  if (!text.ok()) return text.status();
  return ParseHfCheckpointWeightDtype(*text, path);
}

}  // namespace clustersim::models
