// The performance target of the run timeline: 1,000 trials of Llama 3 405B's
// 54-day run on 16,384 H100 (about 466 interruptions per run) on one core.
// Inputs rounded from what `clustersim run
// scenarios/examples/llama3-405b-goodput.textproto` resolves (stall 0.14 s,
// upload 2.8 s, restart 770 s): the Llama 3 failure profile, asynchronous
// checkpoints to the Tectonic preset at the Young/Daly interval.
#include "benchmark/benchmark.h"
#include "scenarios/goodput/run_timeline.h"
#include "topology/reliability_catalog.h"

namespace clustersim::scenarios {
namespace {

TimelineInputs Llama3Run() {
  TimelineInputs in;
  const config::FailureProfile& p =
      **topology::ReliabilityCatalog::Default().FindProfile("llama3-h100");
  double per_hour = 0;
  for (const config::FailureCause& c : p.cause()) {
    in.causes.push_back({c.name(), c.component(), topology::CauseRatePerJobHour(c, 16384, 8),
                         c.needs_node(), false});
    per_hour += in.causes.back().per_hour;
  }
  in.causes.push_back(
      {"planned", "planned", topology::CauseRatePerJobHour(p.planned(), 16384, 8), false, true});
  in.compute_s = 49 * 86400.0;
  in.stall_s = 0.2;
  in.upload_s = 3;
  in.interval_s = YoungDalyInterval(in.stall_s, 3600 / per_hour);
  in.restart_s = 700;
  in.planned_down_s = 400;
  return in;
}

void BM_Llama3Run1000Trials(benchmark::State& state) {
  const TimelineInputs in = Llama3Run();
  uint64_t events = 0;
  for (auto _ : state) {
    const TimelineStats st = SimulateRuns(in, {.trials = 1000, .seed = 1});
    events = st.events;
    benchmark::DoNotOptimize(st.mean_wall_s);
  }
  state.counters["events"] = static_cast<double>(events);
  state.counters["interval_s"] = in.interval_s;
}
BENCHMARK(BM_Llama3Run1000Trials)->Unit(benchmark::kSecond)->Iterations(1);

}  // namespace
}  // namespace clustersim::scenarios
