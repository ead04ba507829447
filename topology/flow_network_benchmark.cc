// Flow-tier cost at scale: a data-parallel all-reduce over every GPU of a
// cluster of DGX H100 nodes on a rail-optimised fat-tree (8 rails, radix-64
// leaves; 2 tiers at 1,024 GPUs, 3 tiers at 16,384 GPUs, where one spine layer
// would need 512 ports), plus the cost of building the cluster and routing
// every rank to its ring successor. Peak memory is the process's ru_maxrss.
//
//   build-topology/topology/flow_network_benchmark
#include <sys/resource.h>

#include <numeric>
#include <vector>

#include "benchmark/benchmark.h"
#include "sim/check.h"
#include "sim/simulator.h"
#include "topology/cluster.h"
#include "topology/flow_network.h"

namespace clustersim::topology {
namespace {

ClusterSpec Spec(int gpus) {
  ClusterSpec spec;
  spec.node_preset = "dgx-h100";
  spec.num_nodes = gpus / 8;
  spec.fabric.kind = "fat-tree";
  spec.fabric.leaf_radix = 64;
  spec.fabric.tiers = gpus > 2048 ? 3 : 2;
  return spec;
}

Cluster Build(int gpus) {
  absl::StatusOr<Cluster> c = BuildCluster(Spec(gpus));
  SIM_CHECK(c.ok()) << c.status();
  return *std::move(c);
}

void ReportPeakMemory(benchmark::State& state) {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  state.counters["peak_rss_MiB"] = static_cast<double>(usage.ru_maxrss) / 1024.0;
}

void BM_BuildCluster(benchmark::State& state) {
  const int gpus = static_cast<int>(state.range(0));
  for (auto _ : state) {
    absl::StatusOr<Cluster> c = BuildCluster(Spec(gpus));
    benchmark::DoNotOptimize(c);
  }
  ReportPeakMemory(state);
}

void BM_RouteEveryRankToItsSuccessor(benchmark::State& state) {
  const Cluster c = Build(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    size_t hops = 0;
    for (int g = 0; g < c.num_gpus(); ++g) hops += c.Route(g, (g + 1) % c.num_gpus()).size();
    benchmark::DoNotOptimize(hops);
  }
  state.counters["routes"] = c.num_gpus();
  ReportPeakMemory(state);
}

// One all-reduce of 1 GiB over every GPU, from an empty FlowNetwork: plan
// (routes of all 8 NCCL channels' rings), rate solves, events.
void BM_FlowAllReduceEveryGpu(benchmark::State& state) {
  const Cluster c = Build(static_cast<int>(state.range(0)));
  std::vector<int> gpus(c.num_gpus());
  std::iota(gpus.begin(), gpus.end(), 0);
  double simulated = 0;
  for (auto _ : state) {
    sim::Simulator sim;
    FlowNetwork net(c, sim);
    SIM_CHECK(net.StartCollective({Collective::kAllReduce, gpus, sim::GiB(1), Algorithm::kRing},
                                  [] {})
                  .ok());
    sim.Run();
    simulated = sim.Now().ToSeconds();
  }
  state.counters["simulated_ms"] = simulated * 1e3;
  ReportPeakMemory(state);
}

// The same all-reduce repeated 10 times on one FlowNetwork (a run's gradient
// buckets): after the first, the plan is cached.
void BM_FlowAllReduceRepeated(benchmark::State& state) {
  const Cluster c = Build(static_cast<int>(state.range(0)));
  std::vector<int> gpus(c.num_gpus());
  std::iota(gpus.begin(), gpus.end(), 0);
  sim::Simulator sim;
  FlowNetwork net(c, sim);
  const CollectiveRequest r{Collective::kAllReduce, gpus, sim::MiB(100), Algorithm::kRing};
  SIM_CHECK(net.StartCollective(r, [] {}).ok());
  sim.Run();
  for (auto _ : state) {
    for (int i = 0; i < 10; ++i) SIM_CHECK(net.StartCollective(r, [] {}).ok());
    sim.Run();
  }
  ReportPeakMemory(state);
}

BENCHMARK(BM_BuildCluster)->Arg(1024)->Arg(16384)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RouteEveryRankToItsSuccessor)->Arg(1024)->Arg(16384)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FlowAllReduceEveryGpu)->Arg(1024)->Arg(16384)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FlowAllReduceRepeated)->Arg(1024)->Arg(16384)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace clustersim::topology
