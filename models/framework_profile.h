// File: models/framework_profile.h
//
// Training software stacks as inputs (training.framework): each profile, read
// from the embedded models/data/frameworks.textproto, carries what the stack
// changes about a step that the model, GPU and strategy do not: its kernels'
// sustained fraction of the GEMM and attention ceilings, host time per op and
// per pipeline send, its default attention kernel, and the parallel features
// it has. Every number records whether it is fitted on the stack's own rows,
// borrowed from another stack, or a prior (docs/accuracy.md).
//
// Example:
//   absl::StatusOr<const models::FrameworkProfile*> p =
//       models::FrameworkCatalog::Default().Find("pytorch-fsdp");
//   if (!p.ok()) return p.status();  // names the known profiles
//   double host_us = (*p)->host_us_per_op.value;
//   if (!(*p)->Supports("tensor_parallel")) { ... }
//
// Thread-safety: Default() parses on first use (thread-safe static) and
// returns an immutable catalog.
#ifndef CLUSTERSIM_MODELS_FRAMEWORK_PROFILE_H_
#define CLUSTERSIM_MODELS_FRAMEWORK_PROFILE_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "models/transformer_config.h"

namespace clustersim::models {

// A profile's number and where it comes from.
struct ProfileValue {
  double value = 0;
  std::string kind;  // "fitted" | "borrowed" | "prior"
  std::string training_split, fit_script, source;
};

struct FrameworkProfile {
  std::string name, display_name, description, source;
  AttentionBackend attention = AttentionBackend::kFlash;
  ElementwiseKernels elementwise = ElementwiseKernels::kFused;
  ProfileValue gemm_factor, attention_factor, host_us_per_op, pipeline_p2p_host_us;
  ProfileValue grad_reduce_bytes;  // ZeRO-3 gradient reduce-scatter: 2 (16-bit) or 4 (fp32)
  // Bytes per parameter per micro-batch to accumulate bf16 gradients into
  // fp32 (0: none); acts only on bf16 steps.
  ProfileValue bf16_grad_accumulate_bytes;
  // 1: FSDP1's FlatParameter gradient passes (models::FlatParameterGradBytes);
  // 0: none.
  ProfileValue flat_parameter;
  // 1: FSDP2's per-parameter copy passes (models::PerParameterGatherCopyBytes,
  // PerParameterGradCopyBytes); 0: none.
  ProfileValue per_parameter_sharding;
  // 1: ZeRO-3 runs Megatron-FSDP's schedule (StepInputs::megatron_fsdp);
  // 0: every piece gathered before each forward and backward.
  ProfileValue megatron_fsdp;
  // 1: DTensor tensor parallelism keeps each column-parallel GEMM's
  // all-gathered input for its weight gradient (models::Dims::
  // tp_input_kept); 0: the backward gathers it again, as Megatron-LM.
  ProfileValue tp_keeps_gathered_input;
  // 1: the attention factor is a ratio of burst kernel benchmarks, so training
  // attention also takes the GPU's sustained-clock ratio; 0: fitted on
  // training steps (see framework.proto).
  ProfileValue attention_at_sustained_clock;
  // 1: an amax all-reduce over the pipeline stage per model chunk, micro-batch
  // and pass on FP8 steps (Transformer Engine delayed scaling in
  // Megatron-Core); 0: none.
  ProfileValue fp8_amax_reduction;
  // Longest key sequence Megatron's fused scale-mask-softmax kernel takes
  // (TransformerConfig::fused_softmax_max_keys); 0: the kernel always applies.
  ProfileValue fused_softmax_max_keys;
  // 1: each micro-batch's data loading is a host sync
  // (TransformerConfig::data_broadcast_host_sync); 0: none.
  ProfileValue data_broadcast_host_sync;
  // The stack's attention kernel against FlashAttention-2 (1 when unset).
  ProfileValue attention_kernel_forward, attention_kernel_backward;
  std::vector<std::string> supports;  // feature names, see kFrameworkFeatures

  bool Supports(std::string_view feature) const;
};

// Every feature a profile may list in `supports`.
inline constexpr std::string_view kFrameworkFeatures[] = {"tensor_parallel",
                                                          "sequence_parallel",
                                                          "pipeline_parallel",
                                                          "context_parallel",
                                                          "expert_parallel",
                                                          "distributed_optimizer",
                                                          "zero",
                                                          "tp_comm_overlap",
                                                          "overlap_param_gather",
                                                          "moe_a2a_overlap",
                                                          "fp8"};

class FrameworkCatalog {
 public:
  // The profile a scenario runs with when it names none.
  static constexpr std::string_view kDefault = "megatron-core";

  // The shipped catalog. A malformed embedded file is a programming error.
  static const FrameworkCatalog& Default();
  // Parses and checks a FrameworkFile: unique names, the default present,
  // factors in (0, 1], host times in [0, 1e6) us, gradient reduction bytes 2
  // or 4, a known kind, attention and features, and provenance (training split
  // and fit script for fitted and borrowed values, a source for every value).
  // Errors name the origin, the profile and the field.
  static absl::StatusOr<FrameworkCatalog> Parse(std::string_view textproto,
                                                std::string_view origin);

  // InvalidArgument naming training.framework and the known profiles when
  // `name` is unknown.
  absl::StatusOr<const FrameworkProfile*> Find(std::string_view name) const;
  const std::vector<FrameworkProfile>& profiles() const { return profiles_; }  // name-sorted

 private:
  std::vector<FrameworkProfile> profiles_;
};

}  // namespace clustersim::models

#endif  // CLUSTERSIM_MODELS_FRAMEWORK_PROFILE_H_
