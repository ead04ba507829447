#include "scenarios/run/measure.h"

#include "models/finetune_ops.h"
#include "models/flops.h"
#include "models/memory_verdict.h"
#include "models/prediction_interval.h"

namespace clustersim::scenarios {
namespace {

void SetGib(const models::MemoryBreakdown& m, config::MemoryBreakdownGib* b) {
  b->set_weights(m.weights.count() / kGiB);
  b->set_gradients(m.gradients.count() / kGiB);
  b->set_optimizer(m.optimizer.count() / kGiB);
  b->set_activations(m.activations.count() / kGiB);
  b->set_other(m.other.count() / kGiB);
}

// Full recompute's replay of the layers block recompute does not replay
// (strategies::ParallelConfig::ReplaysLayer), to take off the hardware FLOPs.
double UnreplayedFlops(const ResolvedScenario& s) {
  const strategies::ParallelConfig& p = s.parallel;
  if (p.recompute != models::Recompute::kFull ||
      p.recompute_method != models::RecomputeMethod::kBlock) {
    return 0;
  }
  double flops = 0;
  for (int l = 0; l < s.model.num_layers; ++l) {
    if (!p.ReplaysLayer(l, s.model.num_layers)) {
      flops += models::LayerReplayFlops(s.model, p.global_batch_size, l);
    }
  }
  return flops;
}

}  // namespace

void FillStepFigures(const ResolvedScenario& s, const strategies::StepStats::Summary& sum,
                     config::Result* r) {
  const double step_s = sum.step_time.ToSeconds();
  const double tokens =
      static_cast<double>(s.parallel.global_batch_size) * static_cast<double>(s.model.seq_length);
  const double gpus = s.num_gpus;
  r->set_step_time_s(step_s);
  const models::StepInterval band = models::PredictionIntervals::Default().Lookup(
      s.framework->name, s.gpu->name, s.num_gpus);
  config::StepTimeInterval* interval = r->mutable_step_time_interval_s();
  interval->set_p10(step_s * band.p10);
  interval->set_p90(step_s * band.p90);
  interval->set_category(band.category);
  interval->set_rows(band.rows);
  interval->set_validated(band.validated);
  r->set_tokens_per_s(tokens / step_s);
  r->set_tokens_per_s_per_gpu(tokens / step_s / gpus);
  // Fine-tuning counts only the work it does (models/finetune_ops.h); for full
  // training these are Megatron's counts.
  const double model_flops =
      models::FinetuneModelFlops(s.model, s.finetune, s.parallel.global_batch_size);
  const double hw_flops =
      models::FinetuneHardwareFlops(s.model, s.finetune, s.parallel.global_batch_size,
                                    s.parallel.recompute) +
      (s.parallel.recompute_mlp_up
           ? models::MlpUpForwardFlops(s.model, s.parallel.global_batch_size)
           : 0.0) +
      (s.parallel.recompute_op_sac
           ? models::OpSacForwardFlops(s.model, s.parallel.global_batch_size,
                                       s.parallel.precision == models::Dtype::kFp8)
           : 0.0) +
      models::RecomputeModulesExtraFlops(s.model, s.parallel.global_batch_size,
                                         s.parallel.recompute, s.parallel.recompute_modules) -
      UnreplayedFlops(s);
  const bool finetune = s.finetune.method != models::FinetuneMethod::kFull;
  const double peak = s.gpu->PeakFlops(s.parallel.precision);
  r->set_model_tflops_per_gpu(model_flops / step_s / gpus / 1e12);
  r->set_hardware_tflops_per_gpu(hw_flops / step_s / gpus / 1e12);
  r->set_mfu(model_flops / step_s / gpus / peak);
  const double six_n = models::SixNAttentionFlops(s.model, s.parallel.global_batch_size).Total();
  r->set_model_flops_per_step_megatron(
      models::MegatronModelFlops(s.model, s.parallel.global_batch_size));
  r->set_model_flops_per_step_6n_attention(six_n);
  r->set_hfu(hw_flops / step_s / gpus / peak);
  if (finetune) {
    // 6·N·T is full training's count; the fine-tuning step does not run it.
    r->set_model_flops_per_step_finetune(model_flops);
    r->set_flops_convention(
        "LoRA/QLoRA fine-tuning: Megatron-LM num_floating_point_operations less the frozen "
        "base's weight-gradient GEMMs (layers and LM head; ~4·N·T instead of 6·N·T) plus the "
        "adapters' forward, dgrad and wgrad (models/finetune_ops.h); attention unmasked, no "
        "recompute, QLoRA dequantisation 0 FLOPs; mfu = these FLOP/s per GPU / dense peak. "
        "model_flops_per_step_megatron and _6n_attention are full training's counts, "
        "mfu_6n_attention is not set");
  } else {
    r->set_mfu_6n_attention(six_n / step_s / gpus / peak);
    r->set_flops_convention(
        "Megatron-LM num_floating_point_operations (model FLOPs, attention unmasked, no "
        "recompute); mfu = model FLOP/s per GPU / dense peak of the training precision");
  }
  r->set_bubble_ratio(sum.bubble.ToSeconds() / step_s);
  r->set_exposed_comm_s(sum.exposed_comm.ToSeconds());
  r->mutable_exposed_comm_breakdown_s()->set_tp_s(sum.exposed_tp.ToSeconds());
  r->mutable_exposed_comm_breakdown_s()->set_dp_s(sum.exposed_dp.ToSeconds());
  r->mutable_exposed_comm_breakdown_s()->set_pp_s(sum.exposed_pp.ToSeconds());
  r->mutable_exposed_comm_breakdown_s()->set_ep_s(sum.exposed_ep.ToSeconds());
  r->mutable_exposed_comm_breakdown_s()->set_cp_s(sum.exposed_cp.ToSeconds());
  r->set_compute_s(sum.compute.ToSeconds());
}

std::vector<models::MemoryBreakdown> MemoryByStage(const models::MemoryInputs& in) {
  std::vector<models::MemoryBreakdown> out;
  for (int stage = 0; stage < in.pipeline_parallel; ++stage) {
    models::MemoryInputs at = in;
    at.pipeline_stage = stage;
    out.push_back(models::EstimateMemory(at));
  }
  return out;
}

void FillMemory(const ResolvedScenario& s, const models::MemoryInputs& in,
                const std::vector<models::MemoryBreakdown>& by_stage,
                const strategies::MemoryTimeline& timeline, config::Result* out) {
  const models::MemoryBreakdown& m = by_stage[0];
  SetGib(m, out->mutable_memory_breakdown_gib());
  out->set_peak_memory_gib(m.Total().count() / kGiB);
  const double capacity = s.gpu->memory.count() / kGiB;
  out->set_memory_capacity_gib(capacity);
  const models::MemoryVerdict verdict = models::JudgeMemory(
      in, m, s.gpu->memory, {.block_recompute = s.parallel.AllowsBlockRecompute()});
  out->set_fits_in_memory(verdict.fits);
  out->mutable_memory_verdict()->set_biggest_term(verdict.biggest_term);
  out->mutable_memory_verdict()->set_remedy(verdict.remedy);
  for (int stage = 0; stage < static_cast<int>(by_stage.size()); ++stage) {
    config::StageMemoryGib* st = out->add_memory_per_stage_gib();
    st->set_stage(stage);
    SetGib(by_stage[stage], st->mutable_breakdown());
    st->set_total_gib(by_stage[stage].Total().count() / kGiB);
    st->set_fits(by_stage[stage].Total() <= s.gpu->memory);
    st->set_simulated_peak_gib(timeline.PeakBytes(stage) / kGiB);
    st->set_simulated_peak_activations_gib(timeline.PeakActivationBytes(stage) / kGiB);
  }
}

}  // namespace clustersim::scenarios
