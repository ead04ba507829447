#include "topology/flow_network.h"

#include <numeric>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/check.h"
#include "sim/simulator.h"
#include "topology/analytic_network.h"
#include "topology/cluster.h"
#include "topology/collective_plan.h"

namespace clustersim::topology {
namespace {

using ::testing::HasSubstr;

Cluster Build(ClusterSpec spec) {
  absl::StatusOr<Cluster> c = BuildCluster(spec);
  SIM_CHECK(c.ok()) << c.status();
  return *std::move(c);
}

ClusterSpec Spec(std::string preset, int nodes, int nics = 0) {
  ClusterSpec spec;
  spec.node_preset = std::move(preset);
  spec.num_nodes = nodes;
  spec.nics_per_node = nics;
  return spec;
}

std::vector<int> Range(int first, int n) {
  std::vector<int> v(n);
  std::iota(v.begin(), v.end(), first);
  return v;
}

// Starts every request at time `starts[i]` on one FlowNetwork and returns the
// completion times, in request order.
std::vector<sim::Time> RunTogether(const Cluster& cluster, const std::vector<CollectiveRequest>& rs,
                                   const std::vector<sim::Duration>& starts,
                                   FlowNetworkOptions options = {},
                                   std::vector<LinkUsage>* usage = nullptr) {
  sim::Simulator sim;
  FlowNetwork net(cluster, sim, DefaultCollectiveCalibration(), options);
  std::vector<sim::Time> done(rs.size(), sim::Time::Infinite());
  for (size_t i = 0; i < rs.size(); ++i) {
    sim.ScheduleAfter(starts[i], [&, i] {
      absl::Status s = net.StartCollective(rs[i], [&, i] { done[i] = sim.Now(); });
      SIM_CHECK(s.ok()) << s;
    });
  }
  sim.Run();
  EXPECT_EQ(net.active_flows(), 0);
  EXPECT_EQ(net.active_collectives(), 0);
  if (usage != nullptr) {
    usage->clear();
    for (int e = 0; e < cluster.num_links(); ++e) usage->push_back(net.Usage(e));
  }
  return done;
}

sim::Duration Alone(const Cluster& cluster, const CollectiveRequest& r) {
  return RunTogether(cluster, {r}, {sim::Duration::Zero()})[0].SinceStart();
}

TEST(FlowNetworkTest, AloneItCostsWhatTheAnalyticTierSays) {
  const Cluster c = Build(Spec("dgx-h100", 4));
  const AnalyticNetwork analytic(c);
  for (const CollectiveRequest& r :
       {CollectiveRequest{Collective::kAllReduce, Range(0, 32), sim::GiB(1)},
        CollectiveRequest{Collective::kAllReduce, Range(0, 32), sim::KiB(64)},
        CollectiveRequest{Collective::kAllReduce, Range(0, 8), sim::GiB(1)},
        CollectiveRequest{Collective::kAllGather, Range(4, 16), sim::MiB(256)},
        CollectiveRequest{Collective::kAllReduce, Range(0, 32), sim::MiB(64),
                          Algorithm::kHierarchical},
        // Every protocol, forced and chosen (LL at 1 MiB, LL128 on one node's NVLink).
        CollectiveRequest{Collective::kAllReduce, Range(0, 8), sim::MiB(1)},
        CollectiveRequest{Collective::kAllReduce, Range(0, 8), sim::MiB(16), Algorithm::kRing,
                          Protocol::kLl128},
        CollectiveRequest{Collective::kAllReduce, Range(0, 32), sim::MiB(4), Algorithm::kRing,
                          Protocol::kLl},
        CollectiveRequest{Collective::kAllGather, Range(0, 16), sim::MiB(8), Algorithm::kAuto,
                          Protocol::kSimple}}) {
    const sim::Duration flow = Alone(c, r);
    const sim::Duration expected = analytic.Estimate(r)->time;
    EXPECT_NEAR(flow.ToSeconds(), expected.ToSeconds(), 1e-9 * expected.ToSeconds() + 1e-11)
        << CollectiveName(r.op) << " " << r.bytes.count();
  }
}

// Two 2-GPU all-reduces on two DGX H100 nodes with one NIC each: both rings
// cross both NICs, so each gets about half of what it gets alone.
TEST(FlowNetworkTest, TwoAllReducesSharingANicGetHalfEach) {
  const Cluster c = Build(Spec("dgx-h100", 2, /*nics=*/1));
  const CollectiveRequest a{Collective::kAllReduce, {0, 8}, sim::GiB(4), Algorithm::kRing};
  const CollectiveRequest b{Collective::kAllReduce, {1, 9}, sim::GiB(4), Algorithm::kRing};
  const double alone = Alone(c, a).ToSeconds();
  // Alone, the ring runs at the NIC's capacity: NDR 50 GB/s x 0.95 efficiency.
  const double alone_algbw = 4.0 * (1 << 30) / alone * 1e-9;
  EXPECT_NEAR(alone_algbw, 47.5, 0.5);
  const std::vector<sim::Time> both =
      RunTogether(c, {a, b}, {sim::Duration::Zero(), sim::Duration::Zero()});
  for (sim::Time t : both) EXPECT_NEAR(t.ToSeconds() / alone, 2.0, 0.02);
}

// One rail of 2-node leaves; cross-leaf traffic goes over the spines (and, at
// 3 tiers, the cores between pods of 2 leaves). Non-blocking: 2 uplinks per
// leaf; 2:1 oversubscribed: 1.
Cluster Leaves(double oversubscription, int tiers, int nodes) {
  ClusterSpec spec = Spec("dgx-h100", nodes, /*nics=*/1);
  spec.fabric.leaf_radix = 4;
  spec.fabric.tiers = tiers;
  spec.fabric.oversubscription = oversubscription;
  return Build(spec);
}

int SpineOf(const Cluster& c, int src, int dst) {
  for (int e : c.Route(src, dst)) {
    if (c.vertex(c.link(e).dst).kind == VertexKind::kSpine) return c.link(e).dst;
  }
  return -1;
}

// Two send/recvs from the first leaf to GPUs from `dst_node` on: the ratio of
// their times on the 2:1 and the non-blocking fabric.
void ExpectOversubscriptionHalvesThroughput(int tiers, int nodes, int dst_node) {
  const Cluster full = Leaves(1.0, tiers, nodes);
  const Cluster half = Leaves(2.0, tiers, nodes);
  // Node 0 -> dst_node and node 1 -> dst_node + 1 both leave leaf 0. Pick GPUs
  // whose ECMP routes take different spines in the non-blocking fabric.
  const int a_src = 0, a_dst = 8 * dst_node;
  int b_src = -1, b_dst = -1;
  for (int s = 8; s < 16 && b_src < 0; ++s) {
    for (int d = a_dst + 8; d < a_dst + 16 && b_src < 0; ++d) {
      if (SpineOf(full, s, d) != SpineOf(full, a_src, a_dst)) b_src = s, b_dst = d;
    }
  }
  ASSERT_GE(b_src, 0) << "ECMP put every pair on one spine";
  ASSERT_NE(SpineOf(half, a_src, a_dst), -1);
  const std::vector<CollectiveRequest> rs = {
      {Collective::kSendRecv, {a_src, a_dst}, sim::GiB(4)},
      {Collective::kSendRecv, {b_src, b_dst}, sim::GiB(4)}};
  const std::vector<sim::Duration> zero(2, sim::Duration::Zero());
  const std::vector<sim::Time> fast = RunTogether(full, rs, zero);
  const std::vector<sim::Time> slow = RunTogether(half, rs, zero);
  for (int i = 0; i < 2; ++i) EXPECT_NEAR(slow[i].ToSeconds() / fast[i].ToSeconds(), 2.0, 0.02);
}

TEST(FlowNetworkTest, TwoToOneOversubscribedSpineHalvesCrossSpineThroughput) {
  ExpectOversubscriptionHalvesThroughput(/*tiers=*/2, /*nodes=*/4, /*dst_node=*/2);
}

// Three tiers: 8 nodes, 4 leaves, 2 pods; node 0 -> node 4 crosses the cores.
TEST(FlowNetworkTest, TwoToOneOversubscribedLeafHalvesCrossPodThroughputAtThreeTiers) {
  const Cluster c = Leaves(1.0, 3, 8);
  bool via_core = false;
  for (int e : c.Route(0, 32)) via_core |= c.vertex(c.link(e).dst).kind == VertexKind::kCore;
  EXPECT_TRUE(via_core);
  ExpectOversubscriptionHalvesThroughput(/*tiers=*/3, /*nodes=*/8, /*dst_node=*/4);
}

TEST(FlowNetworkTest, ConservesBytesAndNeverExceedsCapacity) {
  const Cluster c = Build(Spec("dgx-h100", 2));
  const std::vector<CollectiveRequest> rs = {
      {Collective::kAllReduce, Range(0, 16), sim::MiB(512)},
      {Collective::kAllToAll, Range(4, 8), sim::MiB(64)},
      {Collective::kAllReduce, Range(8, 8), sim::MiB(300)},  // NVLS
      {Collective::kAllReduce, Range(0, 16), sim::MiB(100), Algorithm::kHierarchical},
      {Collective::kSendRecv, {3, 12}, sim::MiB(77)},
      {Collective::kAllReduce, Range(0, 8), sim::MiB(2), Algorithm::kRing, Protocol::kLl},
      {Collective::kAllReduce, Range(8, 8), sim::MiB(20), Algorithm::kRing, Protocol::kLl128}};
  const std::vector<sim::Duration> starts = {sim::Duration::Zero(), sim::Microseconds(100),
                                             sim::Microseconds(150), sim::Microseconds(900),
                                             sim::Microseconds(901), sim::Microseconds(120),
                                             sim::Microseconds(130)};
  std::vector<LinkUsage> usage;
  RunTogether(c, rs, starts, {}, &usage);
  // Bytes each link must carry: the chosen plans' crossings x bytes.
  const CollectivePlanner planner(c, DefaultCollectiveCalibration());
  std::vector<double> expected(c.num_links(), 0.0);
  for (const CollectiveRequest& r : rs) {
    const auto gpus = ValidateCollectiveRequest(c, r);
    ASSERT_TRUE(gpus.ok());
    const auto candidates = planner.Candidates(r.op, r.algorithm, *gpus);
    ASSERT_TRUE(candidates.ok());
    const absl::StatusOr<PlanChoice> choice = ChoosePlan(*candidates, r.protocol, r.bytes);
    ASSERT_TRUE(choice.ok());
    const CollectivePlan& plan = *choice->plan;
    for (const PlanFlow& f : plan.flows) {
      for (int u = f.first_use; u < f.first_use + f.num_uses; ++u) {
        expected[plan.uses[u].link] += plan.uses[u].weight * f.bytes_per_byte *
                                       plan.ByteScale(choice->protocol) *
                                       static_cast<double>(r.bytes.count());
      }
    }
  }
  double total = 0;
  sim::Simulator unused;
  FlowNetwork caps(c, unused);
  for (int e = 0; e < c.num_links(); ++e) {
    EXPECT_NEAR(usage[e].bytes, expected[e], 1e-9 * expected[e]) << "link " << e;
    EXPECT_LE(usage[e].bytes, caps.Capacity(e) * usage[e].busy.ToSeconds() * (1 + 1e-9) + 1)
        << "link " << e;
    EXPECT_EQ(usage[e].bytes == 0, usage[e].busy == sim::Duration::Zero()) << "link " << e;
    total += usage[e].bytes;
  }
  EXPECT_GT(total, 0);
}

TEST(FlowNetworkTest, DeterministicAndIncrementalEqualsFullRecompute) {
  const Cluster c = Build(Spec("dgx-a100", 2));
  const std::vector<CollectiveRequest> rs = {
      {Collective::kAllReduce, Range(0, 16), sim::MiB(256)},
      {Collective::kReduceScatter, Range(0, 4), sim::MiB(128)},
      {Collective::kAllReduce, Range(4, 4), sim::MiB(128)},
      {Collective::kAllGather, Range(8, 8), sim::MiB(200)},
      {Collective::kSendRecv, {2, 10}, sim::MiB(50)}};
  const std::vector<sim::Duration> starts = {sim::Duration::Zero(), sim::Microseconds(10),
                                             sim::Microseconds(10), sim::Microseconds(500),
                                             sim::Milliseconds(1)};
  const std::vector<sim::Time> first = RunTogether(c, rs, starts);
  EXPECT_EQ(first, RunTogether(c, rs, starts));
  const std::vector<sim::Time> full = RunTogether(c, rs, starts, {.full_recompute = true});
  for (size_t i = 0; i < rs.size(); ++i) {
    EXPECT_NEAR(full[i].ToSeconds(), first[i].ToSeconds(), 1e-12 * first[i].ToSeconds() + 1e-11);
  }
}

TEST(FlowNetworkTest, ResolvesOnlyTheFlowsWhoseLinksChanged) {
  // Two single-node collectives on disjoint GPUs share no link.
  const Cluster c = Build(Spec("dgx-a100", 1));
  for (bool full : {false, true}) {
    sim::Simulator sim;
    FlowNetwork net(c, sim, DefaultCollectiveCalibration(), {.full_recompute = full});
    ASSERT_TRUE(net.StartCollective({Collective::kAllReduce, {0, 1, 2, 3}, sim::GiB(1)}, [] {}).ok());
    sim.RunUntil(sim::Time());  // the end of instant 0: its re-solve
    const int64_t before = net.flows_resolved();
    ASSERT_TRUE(net.StartCollective({Collective::kSendRecv, {4, 5}, sim::MiB(1)}, [] {}).ok());
    sim.RunUntil(sim::Time());
    EXPECT_EQ(net.flows_resolved() - before, full ? 2 : 1);
    sim.Run();
  }
}

TEST(FlowNetworkTest, OneResolvePerInstantGivesTheTimesOfOneResolvePerChange) {
  // Rings over four servers' NICs and sends between them, started in groups
  // at the same instants (as symmetric replicas start them) and ending
  // together: re-solving once per instant must give every completion time
  // to the picosecond, with fewer flows re-solved.
  const Cluster c = Build(Spec("dgx-h100", 4));
  std::vector<CollectiveRequest> rs;
  std::vector<sim::Duration> starts;
  for (int rail = 0; rail < 8; ++rail) {
    rs.push_back({Collective::kAllReduce, {rail, 8 + rail, 16 + rail, 24 + rail},
                  sim::MiB(rail < 4 ? 64 : 96)});
    starts.push_back(rail < 6 ? sim::Duration::Zero() : sim::Microseconds(300));
    rs.push_back({Collective::kSendRecv, {rail, 31 - rail}, sim::MiB(32)});
    starts.push_back(sim::Microseconds(rail % 2 == 0 ? 300 : 700));
  }
  rs.push_back({Collective::kAllGather, Range(0, 32), sim::MiB(128)});
  starts.push_back(sim::Microseconds(700));
  std::vector<LinkUsage> batched_usage, each_usage;
  const std::vector<sim::Time> batched = RunTogether(c, rs, starts, {}, &batched_usage);
  const std::vector<sim::Time> each =
      RunTogether(c, rs, starts, {.resolve_each_change = true}, &each_usage);
  EXPECT_EQ(batched, each);
  for (int e = 0; e < c.num_links(); ++e) {
    EXPECT_NEAR(batched_usage[e].bytes, each_usage[e].bytes, 1e-9 * each_usage[e].bytes);
    EXPECT_EQ(batched_usage[e].busy, each_usage[e].busy);
  }
  const auto resolved = [&](FlowNetworkOptions options) {
    sim::Simulator sim;
    FlowNetwork net(c, sim, DefaultCollectiveCalibration(), options);
    for (size_t i = 0; i < rs.size(); ++i) {
      sim.ScheduleAfter(starts[i], [&, i] { SIM_CHECK(net.StartCollective(rs[i], [] {}).ok()); });
    }
    sim.Run();
    return net.flows_resolved();
  };
  EXPECT_LT(resolved({}), resolved({.resolve_each_change = true}));
}

TEST(FlowNetworkTest, RecordsPerLinkBytesAndBusyTime) {
  const Cluster c = Build(Spec("dgx-h100", 2));
  const CollectiveRequest r{Collective::kSendRecv, {0, 8}, sim::GiB(1)};
  sim::Simulator sim;
  FlowNetwork net(c, sim);
  sim::Time done;
  ASSERT_TRUE(net.StartCollective(r, [&] { done = sim.Now(); }).ok());
  const std::vector<int> route = c.Route(0, 8);
  // Mid-flight, the NIC uplink has carried 1 ms at its capacity.
  LinkUsage mid;
  sim.ScheduleAfter(sim::Microseconds(1000), [&] { mid = net.Usage(route[2]); });
  sim.Run();
  EXPECT_EQ(mid.busy, sim::Microseconds(1000));
  EXPECT_NEAR(mid.bytes, 1e-3 * 47.5e9, 0.01 * 47.5e6);
  const double latency = AnalyticNetwork(c).Estimate(r)->time.ToSeconds() -
                         static_cast<double>(r.bytes.count()) / 47.5e9;
  for (int e : route) {
    EXPECT_NEAR(net.Usage(e).bytes, static_cast<double>(r.bytes.count()), 1.0);
    EXPECT_NEAR(net.Usage(e).busy.ToSeconds(), done.ToSeconds() - latency, 1e-9);
  }
  EXPECT_EQ(net.Usage(c.link(route[0]).reverse).bytes, 0.0);
}

TEST(FlowNetworkTest, CallbacksMayStartTheNextCollective) {
  const Cluster c = Build(Spec("dgx-h100", 1));
  const CollectiveRequest r{Collective::kAllReduce, Range(0, 8), sim::MiB(64)};
  const sim::Duration one = Alone(c, r);
  sim::Simulator sim;
  FlowNetwork net(c, sim);
  sim::Time done;
  ASSERT_TRUE(net.StartCollective(r, [&] {
                   ASSERT_TRUE(net.StartCollective(r, [&] { done = sim.Now(); }).ok());
                 }).ok());
  sim.Run();
  EXPECT_EQ(done.SinceStart(), one * 2);
}

TEST(FlowNetworkTest, TrivialAndBadRequests) {
  const Cluster c = Build(Spec("dgx-a100", 1));
  sim::Simulator sim;
  FlowNetwork net(c, sim);
  int calls = 0;
  EXPECT_TRUE(net.StartCollective({Collective::kAllReduce, {3}, sim::MiB(8)}, [&] { ++calls; }).ok());
  EXPECT_TRUE(
      net.StartCollective({Collective::kAllReduce, {0, 1}, sim::Bytes(0)}, [&] { ++calls; }).ok());
  const absl::Status nvls = net.StartCollective(
      {Collective::kAllReduce, Range(0, 8), sim::MiB(1), Algorithm::kNvls}, [&] { ++calls; });
  EXPECT_THAT(nvls.message(), HasSubstr("no NVSwitch in-network reduction"));
  EXPECT_THAT(net.StartCollective({Collective::kAllReduce, {0, 9}, sim::MiB(1)}, [] {}).message(),
              HasSubstr("outside"));
  sim.Run();
  EXPECT_EQ(calls, 2);
  EXPECT_GT(sim.Now(), sim::Time::Zero());  // the zero-byte all-reduce still pays latency
}

}  // namespace
}  // namespace clustersim::topology

namespace clustersim::topology {
namespace {

// Bytes far beyond any real message (2^62) over one node's NVLink would end
// after ~100 days of simulated time: the flow never ends and the network says
// why, instead of wrapping the clock into the past.
TEST(FlowNetworkClockTest, AFlowEndingPastTheClockIsAnErrorNotAWrapAround) {
  const Cluster c = Build(Spec("dgx-h100", 1));
  sim::Simulator sim;
  FlowNetwork net(c, sim);
  bool small_done = false, huge_done = false;
  ASSERT_TRUE(net.StartCollective({Collective::kAllReduce, Range(0, 8), sim::MiB(1)},
                                  [&] { small_done = true; })
                  .ok());
  ASSERT_TRUE(net.StartCollective({Collective::kAllReduce, Range(0, 8), sim::Bytes(int64_t{1} << 62)},
                                  [&] { huge_done = true; })
                  .ok());
  sim.Run();  // ends: nothing is scheduled past the clock
  EXPECT_TRUE(small_done);
  EXPECT_FALSE(huge_done);
  EXPECT_EQ(net.clock_status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(std::string(net.clock_status().message()),
              HasSubstr("overflows the picosecond clock"));
  EXPECT_GE(sim.Now(), sim::Time::Zero());
}

TEST(FlowNetworkTest, PreparedCollectivesRunAsTheirRequestsDo) {
  const Cluster c = Build(Spec("dgx-h100", 4));
  const CollectiveRequest r{Collective::kAllReduce, Range(0, 32), sim::MiB(64)};
  const sim::Time want = RunTogether(c, {r}, {sim::Duration::Zero()})[0];
  sim::Simulator sim;
  FlowNetwork net(c, sim);
  absl::StatusOr<int> prepared = net.Prepare(r.op, r.algorithm, r.gpus);
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  // The same group again (in another order) shares the handle.
  std::vector<int> reversed(r.gpus.rbegin(), r.gpus.rend());
  EXPECT_EQ(net.Prepare(r.op, r.algorithm, reversed).value(), *prepared);
  sim::Time done = sim::Time::Infinite();
  ASSERT_TRUE(net.StartPrepared(*prepared, r.protocol, r.bytes, [&] { done = sim.Now(); }).ok());
  sim.Run();
  EXPECT_EQ(done, want);
  // One GPU: nothing to move, it ends at once.
  absl::StatusOr<int> alone = net.Prepare(r.op, r.algorithm, {5});
  ASSERT_TRUE(alone.ok());
  bool ended = false;
  ASSERT_TRUE(net.StartPrepared(*alone, r.protocol, r.bytes, [&] { ended = true; }).ok());
  sim.Run();
  EXPECT_TRUE(ended);
  // Errors: a GPU outside the cluster, negative bytes.
  EXPECT_THAT(net.Prepare(r.op, r.algorithm, {0, 99}).status().message(),
              HasSubstr("outside"));
  EXPECT_THAT(net.StartPrepared(*prepared, r.protocol, sim::Bytes(-1), [] {}).message(),
              HasSubstr("bytes=-1"));
}

}  // namespace
}  // namespace clustersim::topology
