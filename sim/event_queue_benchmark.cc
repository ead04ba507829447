// Raw event throughput of the simulator loop: schedule + pop + run of
// callbacks that capture one pointer, at a steady queue depth.
#include <cstdint>
#include <vector>

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

void BM_EngineManyGpus(benchmark::State& state) {
  // An unfolded step in miniature: G GPUs, each a compute and a comm stream,
  // running 64 rounds of compute then a two-GPU collective with its
  // neighbour; task ids are interleaved across GPUs as the step builder adds
  // them (one op on every GPU in turn). Many streams progress at once, so the
  // time per task is the engine's memory traffic, as in a huge step.
  const int gpus = static_cast<int>(state.range(0));
  TaskGraph g;
  std::vector<ResourceId> compute(gpus), comm(gpus);
  for (int i = 0; i < gpus; ++i) {
    compute[i] = g.AddResource("c", i, 0);
    comm[i] = g.AddResource("n", i, 1);
  }
  std::vector<TaskId> last(gpus);
  for (int round = 0; round < 64; ++round) {
    for (int i = 0; i < gpus; ++i) {
      const TaskId t = g.AddTask(compute[i], Nanoseconds(100 + (i * 7 + round) % 13), 0);
      if (round > 0) g.AddDependency(last[i], t);
      last[i] = t;
    }
    for (int i = 0; i + 1 < gpus; i += 2) {
      const TaskId c = g.AddTask({comm[i], comm[i + 1]}, Nanoseconds(50), 0);
      g.AddDependency(last[i], c);
      g.AddDependency(last[i + 1], c);
      last[i] = last[i + 1] = c;
    }
  }
  for (auto _ : state) {
    Simulator sim;
    Engine e(g, sim);
    benchmark::DoNotOptimize(e.Run());
  }
  state.SetItemsProcessed(state.iterations() * g.NumTasks());
}
BENCHMARK(BM_EngineManyGpus)->Arg(1024)->Arg(16384)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace clustersim::sim
