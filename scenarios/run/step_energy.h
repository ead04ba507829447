// File: scenarios/run/step_energy.h
//
// Energy of one simulated step. Each simulated GPU's timeline splits into
// compute-bound kernels (GEMM and attention whose tensor-core term decides
// their time, by the kernel model), memory-bound kernels, communication that no
// compute hides, and the rest (waiting); each part draws its power of
// models::PowerModel::Draw under the scenario's cap:
//     E_gpu = compute_w·t_compute_bound + memory_w·(t_memory_bound + t_comm_only)
//             + idle_w·(step - t_compute - t_comm_only)
// Folded replicas draw as the one simulated, so the job's energy is the mean
// over simulated GPUs times the GPU count.
//
// Example:
//   KernelKindTime kinds(plan, kernels);   // observe the engine with it
//   engine.AddObserver(&kinds);
//   engine.Run();
//   FillEnergy(scenario, stats.PerGpu(), kinds, step_time, &result);
#ifndef CLUSTERSIM_SCENARIOS_RUN_STEP_ENERGY_H_
#define CLUSTERSIM_SCENARIOS_RUN_STEP_ENERGY_H_

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "models/kernel_model.h"
#include "scenarios/input/resolve.h"
#include "scenarios/proto/result.pb.h"
#include "sim/engine.h"
#include "strategies/step_plan.h"
#include "strategies/step_stats.h"

namespace clustersim::scenarios {

// Compute-lane time of compute-bound kernels per simulated GPU. Needs the
// plan's task details (BuildMode::record_task_infos); without them it records
// nothing and has_details() is false.
class KernelKindTime : public sim::SpanObserver {
 public:
  // Lifetime: `plan` and `kernels` must outlive this observer.
  KernelKindTime(const strategies::StepPlan& plan, const models::KernelModel& kernels);
  void OnSpan(const sim::TaskGraph& g, const sim::Span& s) override;

  bool has_details() const { return !plan_.infos.empty(); }
  // Picoseconds of compute-bound kernels on global GPU `gpu`.
  int64_t ComputeBoundPs(int gpu) const;

 private:
  bool ComputeBound(const models::Op* op);

  const strategies::StepPlan& plan_;
  const models::KernelModel& kernels_;
  std::unordered_map<const models::Op*, bool> verdict_;  // the kernel model's, per op
  // Per task tag: 1 when its task is a compute-bound kernel, 0 when not, -1
  // not yet asked (every compute span reads it: no hashing per span).
  std::vector<int8_t> bound_by_tag_;
  std::vector<int64_t> compute_bound_ps_;  // per global GPU, ps
};

// Sets result->energy from the simulated GPUs' busy times and the step time,
// and energy_to_train_kwh from result->train() when the run length is given.
void FillEnergy(const ResolvedScenario& s, const std::vector<strategies::StepStats::GpuBusy>& busy,
                const KernelKindTime& kinds, double step_time_s, config::Result* result);

// The text report's energy lines ("" without result.energy).
std::string FormatEnergyText(const config::Result& r);

}  // namespace clustersim::scenarios

#endif  // CLUSTERSIM_SCENARIOS_RUN_STEP_ENERGY_H_
