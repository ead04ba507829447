// `clustersim list gpus|models|clusters|prices|frameworks`: the catalogs'
// canonical names (prices: the whole price catalog with dates and sources;
// frameworks: each stack profile's numbers and where they come from).
#include <iostream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cli/commands.h"
#include "models/framework_profile.h"
#include "models/gpu_catalog.h"
#include "models/pricing.h"
#include "models/transformer_config.h"
#include "topology/cluster.h"

namespace clustersim::cli {
namespace {

// One row per entry, name-sorted; owned hardware shows its cost inputs.
void PrintPrices(std::ostream& out) {
  out << absl::StrFormat("%-24s %-16s %-15s %-15s %9s  %s\n", "name", "gpu", "provider", "kind",
                         "$/GPU-h", "date; source");
  for (const models::PriceEntry& e : models::PriceCatalog::Default().entries()) {
    if (e.owned) {
      const models::OwnedCosts& c = e.owned_costs;
      out << absl::StrFormat(
          "%-24s %-16s %-15s %-15s %9s  $%.0f/GPU over %.0f y, util %.2f, PUE %.2f, $%.3f/kWh, "
          "hosting $%.0f/node-month; %s; %s; %s\n",
          e.name, e.gpu, e.provider, e.kind, "owned", c.purchase_usd_per_gpu,
          c.amortisation_years, c.utilisation, c.pue, c.usd_per_kwh, c.hosting_usd_per_node_month,
          e.date, e.source, e.assumptions);
    } else {
      out << absl::StrFormat("%-24s %-16s %-15s %-15s %9.3f  %s; %s\n", e.name, e.gpu,
                             e.provider, e.kind, e.usd_per_gpu_hour, e.date, e.source);
    }
  }
}

// One block per stack: its numbers with their kind (fitted, borrowed, prior)
// and training split, and the parallel features it has.
void PrintFrameworks(std::ostream& out) {
  for (const models::FrameworkProfile& p : models::FrameworkCatalog::Default().profiles()) {
    out << p.name << (p.name == models::FrameworkCatalog::kDefault ? "  (default)" : "") << "\n"
        << "  " << p.display_name << "\n"
        << "  attention kernel: " << models::AttentionBackendName(p.attention) << "\n"
        << "  elementwise kernels: " << models::ElementwiseKernelsName(p.elementwise) << "\n";
    const std::pair<const char*, const models::ProfileValue*> values[] = {
        {"gemm_factor", &p.gemm_factor},
        {"attention_factor", &p.attention_factor},
        {"host_us_per_op", &p.host_us_per_op},
        {"pipeline_p2p_host_us", &p.pipeline_p2p_host_us},
        {"grad_reduce_bytes", &p.grad_reduce_bytes},
        {"attention_kernel_fwd", &p.attention_kernel_forward},
        {"attention_kernel_bwd", &p.attention_kernel_backward},
        {"bf16_grad_acc_bytes", &p.bf16_grad_accumulate_bytes},
        {"flat_parameter", &p.flat_parameter},
        {"per_param_sharding", &p.per_parameter_sharding},
        {"megatron_fsdp", &p.megatron_fsdp},
        {"tp_keeps_gathered_input", &p.tp_keeps_gathered_input},
        {"fp8_amax_reduction", &p.fp8_amax_reduction},
        {"attention_sustained", &p.attention_at_sustained_clock},
        {"fused_softmax_keys", &p.fused_softmax_max_keys},
        {"data_broadcast_sync", &p.data_broadcast_host_sync}};
    for (const auto& [name, v] : values) {
      out << absl::StrFormat("  %-21s %8g  %-8s %s\n", name, v->value, v->kind,
                             v->kind == "prior" ? "(not fitted)" : v->training_split);
    }
    out << "  supports: " << absl::StrJoin(p.supports, ", ") << "\n";
  }
}

}  // namespace

absl::Status ListCommand(const Args& args, CommandIo& io) {
  const std::string what = args.empty() ? "" : args[0];
  std::vector<std::string> names;
  if (what == "gpus") {
    names = models::GpuCatalog::Default().Names();
  } else if (what == "models") {
    names = models::ModelCatalog::Default().Names();
  } else if (what == "clusters") {
    names = topology::NodePresetNames();
  } else if (what == "prices") {
    PrintPrices(*io.out);
    return absl::OkStatus();
  } else if (what == "frameworks") {
    PrintFrameworks(*io.out);
    return absl::OkStatus();
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "list: unknown catalog \"", what, "\"; use gpus, models, clusters, prices or frameworks"));
  }
  for (const std::string& n : names) *io.out << n << "\n";
  return absl::OkStatus();
}

int ListCommand(const Args& args) { return RunOnStdIo(ListCommand, args); }

}  // namespace clustersim::cli
