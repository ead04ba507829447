#include "models/framework_profile.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/text_format.h"
#include "models/proto/framework.pb.h"
#include "sim/check.h"
#include "sim/status_macros.h"

namespace clustersim::embedded {
std::string_view FrameworksData();
}  // namespace clustersim::embedded

namespace clustersim::models {
namespace {

// Copies `in` into `*out` after checking it: value within [lo, hi] (lo
// excluded when `open_low`), a known kind, and the provenance that kind needs.
absl::Status ReadValue(const config::ProfileValue& in, std::string_view where, double lo, double hi,
                       bool open_low, ProfileValue* out) {
  const std::string at(where);
  const double v = in.value();
  if (!std::isfinite(v) || v < lo || (open_low && v == lo) || v > hi) {
    return absl::InvalidArgumentError(
        absl::StrCat(at, ".value=", v, " must be in ", open_low ? "(" : "[", lo, ", ", hi, "]"));
  }
  if (in.kind() != "fitted" && in.kind() != "borrowed" && in.kind() != "prior") {
    return absl::InvalidArgumentError(
        absl::StrCat(at, ".kind='", in.kind(), "' is not known; use fitted, borrowed or prior"));
  }
  if (in.kind() != "prior" && (in.training_split().empty() || in.fit_script().empty())) {
    return absl::InvalidArgumentError(
        absl::StrCat(at, ": a ", in.kind(), " value states its training_split and fit_script"));
  }
  if (in.source().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(at, ": every value states its source"));
  }
  *out = {v, in.kind(), in.training_split(), in.fit_script(), in.source()};
  return absl::OkStatus();
}

// A profile switch, 0 or 1: `off` and `on` say what each means in the error;
// unset, it is 0 with `unset_source`.
absl::Status ReadSwitch(bool has, const config::ProfileValue& in, const std::string& where,
                        std::string_view off, std::string_view on, std::string_view unset_source,
                        ProfileValue* out) {
  if (!has) {
    *out = {0, "prior", "", "", std::string(unset_source)};
    return absl::OkStatus();
  }
  CLUSTERSIM_RETURN_IF_ERROR(ReadValue(in, where, 0, 1, false, out));
  if (out->value != 0 && out->value != 1) {
    const std::string meanings =
        "0 (" + std::string(off) + ") or 1 (" + std::string(on) + ")";
    return absl::InvalidArgumentError(
        absl::StrCat(where, ".value=", out->value, " must be ", meanings));
  }
  return absl::OkStatus();
}

absl::StatusOr<FrameworkProfile> ReadProfile(const config::FrameworkProfile& in,
                                             const std::string& where) {
  FrameworkProfile p;
  p.name = in.name();
  p.display_name = in.display_name();
  p.description = in.description();
  p.source = in.source();
  if (p.display_name.empty() || p.source.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": every profile states its display_name and source"));
  }
  absl::StatusOr<AttentionBackend> attention = ParseAttentionBackend(in.attention());
  if (!attention.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(where, ".attention='", in.attention(),
                                                   "' is not known; use flash or unfused"));
  }
  p.attention = *attention;
  if (!in.elementwise().empty()) {
    absl::StatusOr<ElementwiseKernels> elementwise =
        ParseElementwiseKernels(in.elementwise(), where + ".elementwise");
    if (!elementwise.ok()) return elementwise.status();
    p.elementwise = *elementwise;
  }
  CLUSTERSIM_RETURN_IF_ERROR(
      ReadValue(in.gemm_factor(), where + ".gemm_factor", 0, 1, true, &p.gemm_factor));
  CLUSTERSIM_RETURN_IF_ERROR(ReadValue(in.attention_factor(), where + ".attention_factor", 0, 1,
                                       true, &p.attention_factor));
  CLUSTERSIM_RETURN_IF_ERROR(
      ReadValue(in.host_us_per_op(), where + ".host_us_per_op", 0, 1e6, false, &p.host_us_per_op));
  CLUSTERSIM_RETURN_IF_ERROR(ReadValue(in.pipeline_p2p_host_us(), where + ".pipeline_p2p_host_us",
                                       0, 1e6, false, &p.pipeline_p2p_host_us));
  CLUSTERSIM_RETURN_IF_ERROR(ReadValue(in.grad_reduce_bytes(), where + ".grad_reduce_bytes", 2, 4,
                                       false, &p.grad_reduce_bytes));
  if (p.grad_reduce_bytes.value != 2 && p.grad_reduce_bytes.value != 4) {
    return absl::InvalidArgumentError(absl::StrCat(where, ".grad_reduce_bytes.value=",
                                                   p.grad_reduce_bytes.value,
                                                   " must be 2 (16-bit) or 4 (fp32)"));
  }
  if (in.has_bf16_grad_accumulate_bytes()) {
    CLUSTERSIM_RETURN_IF_ERROR(ReadValue(in.bf16_grad_accumulate_bytes(),
                                         where + ".bf16_grad_accumulate_bytes", 0, 64, false,
                                         &p.bf16_grad_accumulate_bytes));
  } else {
    p.bf16_grad_accumulate_bytes = {0, "prior", "", "",
                                    "no separate pass: gradients accumulate in the weight-gradient "
                                    "GEMMs or in 16 bits"};
  }
  CLUSTERSIM_RETURN_IF_ERROR(ReadSwitch(in.has_flat_parameter(), in.flat_parameter(),
                                        where + ".flat_parameter", "none", "FSDP1",
                                        "no FlatParameter gradient passes", &p.flat_parameter));
  CLUSTERSIM_RETURN_IF_ERROR(ReadSwitch(in.has_per_parameter_sharding(),
                                        in.per_parameter_sharding(),
                                        where + ".per_parameter_sharding", "none", "FSDP2",
                                        "no per-parameter copy passes",
                                        &p.per_parameter_sharding));
  CLUSTERSIM_RETURN_IF_ERROR(
      ReadSwitch(in.has_megatron_fsdp(), in.megatron_fsdp(), where + ".megatron_fsdp", "none",
                 "Megatron-FSDP", "ZeRO-3 gathers every piece before each forward and backward",
                 &p.megatron_fsdp));
  CLUSTERSIM_RETURN_IF_ERROR(
      ReadSwitch(in.has_tp_keeps_gathered_input(), in.tp_keeps_gathered_input(),
                 where + ".tp_keeps_gathered_input", "re-gathered", "kept",
                 "the backward re-gathers each column-parallel GEMM's input",
                 &p.tp_keeps_gathered_input));
  CLUSTERSIM_RETURN_IF_ERROR(
      ReadSwitch(in.has_attention_at_sustained_clock(), in.attention_at_sustained_clock(),
                 where + ".attention_at_sustained_clock", "factor fitted on training steps",
                 "burst kernel benchmarks", "attention factor fitted on training steps",
                 &p.attention_at_sustained_clock));
  CLUSTERSIM_RETURN_IF_ERROR(
      ReadSwitch(in.has_fp8_amax_reduction(), in.fp8_amax_reduction(),
                 where + ".fp8_amax_reduction", "none",
                 "Megatron-Core's amax all-reduce per model chunk", "no FP8 amax reduction",
                 &p.fp8_amax_reduction));
  if (in.has_fused_softmax_max_keys()) {
    CLUSTERSIM_RETURN_IF_ERROR(ReadValue(in.fused_softmax_max_keys(),
                                         where + ".fused_softmax_max_keys", 0, 1 << 20, false,
                                         &p.fused_softmax_max_keys));
    if (p.fused_softmax_max_keys.value != std::floor(p.fused_softmax_max_keys.value)) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, ".fused_softmax_max_keys.value=", p.fused_softmax_max_keys.value,
          " must be a whole number of keys (0: the fused softmax always applies)"));
    }
  } else {
    p.fused_softmax_max_keys = {0, "prior", "", "", "the fused softmax kernel always applies"};
  }
  CLUSTERSIM_RETURN_IF_ERROR(
      ReadSwitch(in.has_data_broadcast_host_sync(), in.data_broadcast_host_sync(),
                 where + ".data_broadcast_host_sync", "no sync",
                 "a host sync per micro-batch's data loading",
                 "no host sync when a micro-batch's data is loaded", &p.data_broadcast_host_sync));
  // Unset: FlashAttention-2 (or a kernel attention_factor describes), ratio 1.
  const ProfileValue flash2{1, "prior", "", "",
                            "FlashAttention-2, or the kernel attention_factor describes"};
  p.attention_kernel_forward = flash2;
  p.attention_kernel_backward = flash2;
  if (in.has_attention_kernel_forward()) {
    CLUSTERSIM_RETURN_IF_ERROR(ReadValue(in.attention_kernel_forward(),
                                         where + ".attention_kernel_forward", 0, 1, true,
                                         &p.attention_kernel_forward));
  }
  if (in.has_attention_kernel_backward()) {
    CLUSTERSIM_RETURN_IF_ERROR(ReadValue(in.attention_kernel_backward(),
                                         where + ".attention_kernel_backward", 0, 1, true,
                                         &p.attention_kernel_backward));
  }
  for (const std::string& f : in.supports()) {
    if (std::find(std::begin(kFrameworkFeatures), std::end(kFrameworkFeatures), f) ==
        std::end(kFrameworkFeatures)) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ".supports: '", f, "' is not a feature; use ",
                       absl::StrJoin(std::vector<std::string>(std::begin(kFrameworkFeatures),
                                                              std::end(kFrameworkFeatures)),
                                     ", ")));
    }
    p.supports.push_back(f);
  }
  return p;
}

}  // namespace

bool FrameworkProfile::Supports(std::string_view feature) const {
  return std::find(supports.begin(), supports.end(), feature) != supports.end();
}

absl::StatusOr<FrameworkCatalog> FrameworkCatalog::Parse(std::string_view textproto,
                                                         std::string_view origin_view) {
  const std::string origin(origin_view);
  config::FrameworkFile file;
  if (!google::protobuf::TextFormat::ParseFromString(std::string(textproto), &file)) {
    return absl::InvalidArgumentError(
        absl::StrCat(origin, ": not a FrameworkFile (models/proto/framework.proto)"));
  }
  FrameworkCatalog catalog;
  for (int i = 0; i < file.framework_size(); ++i) {
    const config::FrameworkProfile& in = file.framework(i);
    const std::string where = absl::StrCat(origin, " framework[", i, "] '", in.name(), "'");
    if (in.name().empty()) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": the profile has no name"));
    }
    for (const FrameworkProfile& seen : catalog.profiles_) {
      if (seen.name == in.name()) {
        return absl::InvalidArgumentError(absl::StrCat(where, ": duplicate name"));
      }
    }
    absl::StatusOr<FrameworkProfile> p = ReadProfile(in, where);
    if (!p.ok()) return p.status();
    catalog.profiles_.push_back(*std::move(p));
  }
  std::sort(catalog.profiles_.begin(), catalog.profiles_.end(),
            [](const FrameworkProfile& a, const FrameworkProfile& b) { return a.name < b.name; });
  if (!catalog.Find(kDefault).ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        origin, ": no profile named '", std::string(kDefault), "', the default; add it"));
  }
  return catalog;
}

const FrameworkCatalog& FrameworkCatalog::Default() {
  static const FrameworkCatalog kCatalog = [] {
    absl::StatusOr<FrameworkCatalog> parsed =
        Parse(embedded::FrameworksData(), "models/data/frameworks.textproto");
    SIM_CHECK(parsed.ok()) << "embedded " << parsed.status().message();
    return *std::move(parsed);
  }();
  return kCatalog;
}

absl::StatusOr<const FrameworkProfile*> FrameworkCatalog::Find(std::string_view name) const {
  for (const FrameworkProfile& p : profiles_) {
    if (p.name == name) return &p;
  }
  std::vector<std::string> names;
  for (const FrameworkProfile& p : profiles_) names.push_back(p.name);
  return absl::InvalidArgumentError(
      absl::StrCat("training.framework='", std::string(name), "' is not known; use one of ",
                   absl::StrJoin(names, ", "), " (clustersim list frameworks)"));
}

}  // namespace clustersim::models
