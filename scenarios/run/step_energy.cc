#include "scenarios/run/step_energy.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "models/power_model.h"

namespace clustersim::scenarios {

KernelKindTime::KernelKindTime(const strategies::StepPlan& plan, const models::KernelModel& kernels)
    : plan_(plan),
      kernels_(kernels),
      bound_by_tag_(plan.infos.size(), -1),
      compute_bound_ps_(plan.world_size, 0) {}

bool KernelKindTime::ComputeBound(const models::Op* op) {
  if (op == nullptr) return false;
  auto [it, inserted] = verdict_.try_emplace(op, false);
  if (inserted) it->second = kernels_.IsComputeBound(*op);
  return it->second;
}

void KernelKindTime::OnSpan(const sim::TaskGraph& g, const sim::Span& s) {
  if (!has_details() || s.tag >= plan_.infos.size()) return;
  if (g.LaneOf(s.resource) != strategies::kComputeLane) return;
  int8_t& bound = bound_by_tag_[s.tag];
  if (bound < 0) {
    const strategies::TaskInfo& info = plan_.infos[s.tag];
    bound = !info.is_collective && ComputeBound(info.op) ? 1 : 0;
  }
  if (bound == 0) return;
  compute_bound_ps_[g.GroupOf(s.resource)] += (s.end - s.start).picoseconds();
}

int64_t KernelKindTime::ComputeBoundPs(int gpu) const {
  return gpu >= 0 && gpu < static_cast<int>(compute_bound_ps_.size()) ? compute_bound_ps_[gpu] : 0;
}

void FillEnergy(const ResolvedScenario& s, const std::vector<strategies::StepStats::GpuBusy>& busy,
                const KernelKindTime& kinds, double step_time_s, config::Result* result) {
  if (!kinds.has_details() || busy.empty() || step_time_s <= 0) return;
  const models::PowerModel& pm = models::PowerModel::Default();
  const models::BoardPower board = pm.For(*s.gpu);
  const models::KernelDraw draw = pm.Draw(board, s.power_cap_w);
  double compute_j = 0, memory_j = 0, comm_j = 0, idle_j = 0;
  for (const strategies::StepStats::GpuBusy& b : busy) {
    const double compute_s = b.compute.ToSeconds();
    const double bound_s =
        std::min(compute_s, 1e-12 * static_cast<double>(kinds.ComputeBoundPs(b.gpu)));
    const double comm_s = b.exposed_comm.ToSeconds();
    const double wait_s = std::max(0.0, step_time_s - compute_s - comm_s);
    compute_j += draw.compute_w * bound_s;
    memory_j += draw.memory_w * (compute_s - bound_s);
    comm_j += draw.memory_w * comm_s;
    idle_j += draw.idle_w * wait_s;
  }
  const double n = static_cast<double>(busy.size());
  config::StepEnergy* e = result->mutable_energy();
  e->set_compute_j_per_gpu(compute_j / n);
  e->set_memory_j_per_gpu(memory_j / n);
  e->set_communication_j_per_gpu(comm_j / n);
  e->set_idle_j_per_gpu(idle_j / n);
  const double per_gpu = (compute_j + memory_j + comm_j + idle_j) / n;
  e->set_energy_per_gpu_j(per_gpu);
  e->set_energy_per_step_j(per_gpu * s.num_gpus);
  e->set_average_power_w_per_gpu(per_gpu / step_time_s);
  e->set_power_cap_w(s.power_cap_w > 0 ? s.power_cap_w : board.max_limit_w);
  e->set_capped(s.power_cap_w > 0 && s.power_cap_w < board.max_limit_w);
  e->set_compute_clock_ratio(pm.ClockRatio(board, s.power_cap_w));
  e->set_compute_draw_w(draw.compute_w);
  e->set_memory_draw_w(draw.memory_w);
  e->set_idle_draw_w(draw.idle_w);
  if (result->has_train()) {
    e->set_energy_to_train_kwh(result->train().train_steps() * per_gpu * s.num_gpus / 3.6e6);
    // The run's energy at the facility: the simulated draw times PUE, in place
    // of the TDP x utilisation estimate FillCost starts from.
    result->mutable_train()->set_energy_kwh(e->energy_to_train_kwh() * s.pricing.pue);
  }
  e->set_source(
      absl::StrFormat("models/power_model.h: compute-bound kernels at the limit, clock ratio "
                      "((cap - idle) / (TDP - idle))^(1/%.3f) fitted to a published cap point; %s",
                      pm.exponent(), board.source));
}

std::string FormatEnergyText(const config::Result& r) {
  if (!r.has_energy()) return "";
  const config::StepEnergy& e = r.energy();
  std::string out = absl::StrFormat(
      "  %-26s %.4g kJ per step (%.4g kJ per GPU, average %.0f W per GPU)\n", "energy",
      e.energy_per_step_j() / 1000, e.energy_per_gpu_j() / 1000, e.average_power_w_per_gpu());
  absl::StrAppendFormat(&out,
                        "  %-26s compute %.4g J at %.0f W, memory %.4g J + communication %.4g J "
                        "at %.0f W, idle %.4g J at %.0f W\n",
                        "  per GPU", e.compute_j_per_gpu(), e.compute_draw_w(),
                        e.memory_j_per_gpu(), e.communication_j_per_gpu(), e.memory_draw_w(),
                        e.idle_j_per_gpu(), e.idle_draw_w());
  if (e.capped()) {
    absl::StrAppendFormat(&out, "  %-26s %.0f W per GPU: compute-bound kernels at %.1f%% clock\n",
                          "  power cap", e.power_cap_w(), 100 * e.compute_clock_ratio());
  }
  if (e.energy_to_train_kwh() > 0) {
    absl::StrAppendFormat(&out, "  %-26s %.0f kWh (GPU boards, simulated draw, no PUE)\n",
                          "  energy to train", e.energy_to_train_kwh());
  }
  return out;
}

}  // namespace clustersim::scenarios
