// Raw event throughput of the simulator loop: schedule + pop + run of
// callbacks that capture one pointer, at a steady queue depth.
#include <cstdint>

#include "benchmark/benchmark.h"
#include "sim/engine.h"
#include "sim/simulator.h"

namespace clustersim::sim {
namespace {

void BM_SimulatorEvents(benchmark::State& state) {
  const int64_t depth = state.range(0);
  for (auto _ : state) {
    Simulator sim;
    int64_t remaining = 1000000;
    struct Ctx {
      Simulator* sim;
      int64_t* remaining;
      uint64_t x;
    } ctx{&sim, &remaining, 88172645463325252ull};
    struct Step {
      static void Run(Ctx* c) {
        if (--*c->remaining <= 0) return;
        c->x ^= c->x << 13;
        c->x ^= c->x >> 7;
        c->x ^= c->x << 17;
        c->sim->ScheduleAfter(Picoseconds(static_cast<int64_t>(c->x % 1000000)),
                              [c] { Run(c); });
      }
    };
    for (int64_t i = 0; i < depth; ++i) sim.ScheduleAfter(Picoseconds(i), [&ctx] { Step::Run(&ctx); });
    sim.Run();
    state.counters["events"] = static_cast<double>(sim.ExecutedEvents());
    state.SetItemsProcessed(state.items_processed() + static_cast<int64_t>(sim.ExecutedEvents()));
  }
}
BENCHMARK(BM_SimulatorEvents)->Arg(16)->Arg(1024)->Arg(65536)->Unit(benchmark::kMillisecond);

void BM_EngineChain(benchmark::State& state) {
  // A task graph of 8 streams x N tasks with a cross-stream dependency per task.
  const int n = static_cast<int>(state.range(0));
  TaskGraph g;
  ResourceId rs[8];
  for (uint32_t i = 0; i < 8; ++i) rs[i] = g.AddResource("r", i);
  TaskId prev = 0;
  for (int i = 0; i < n; ++i) {
    const TaskId t = g.AddTask(rs[i % 8], Nanoseconds(10), 0);
    if (i > 0) g.AddDependency(prev, t);
    prev = t;
  }
  for (auto _ : state) {
    Simulator sim;
    Engine e(g, sim);
    benchmark::DoNotOptimize(e.Run());
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_EngineChain)->Arg(100000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace clustersim::sim
