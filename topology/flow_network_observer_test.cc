// FlowNetwork's link-rate observer (SetLinkRateObserver): what trace
// link-utilisation counters are built on.
#include <map>
#include <numeric>
#include <vector>

#include "gtest/gtest.h"
#include "sim/check.h"
#include "sim/simulator.h"
#include "topology/cluster.h"
#include "topology/flow_network.h"

namespace clustersim::topology {
namespace {

Cluster TwoDgx() {
  absl::StatusOr<Cluster> c = BuildCluster({.node_preset = "dgx-h100", .num_nodes = 2});
  SIM_CHECK(c.ok()) << c.status();
  return *std::move(c);
}

std::vector<int> Range(int first, int n) {
  std::vector<int> v(n);
  std::iota(v.begin(), v.end(), first);
  return v;
}

struct Report {
  sim::Time now;
  std::vector<LinkRate> changed;
};

struct Recorded {
  std::vector<Report> reports;
  std::vector<LinkUsage> usage;  // every link, at the end
};

// Runs two overlapping all-reduces, one starting 1 ms after the other, and
// records every report and, at the end, what each link carried.
Recorded RunTwoAllReduces(const Cluster& c) {
  sim::Simulator sim;
  FlowNetwork net(c, sim);
  Recorded out;
  net.SetLinkRateObserver([&](sim::Time now, const std::vector<LinkRate>& changed) {
    out.reports.push_back({now, changed});
  });
  int done = 0;
  const CollectiveRequest a{Collective::kAllReduce, Range(0, 16), sim::MiB(256)};
  const CollectiveRequest b{Collective::kAllReduce, Range(0, 8), sim::MiB(128)};
  SIM_CHECK(net.StartCollective(a, [&] { ++done; }).ok());
  sim.ScheduleAfter(sim::Milliseconds(1),
                    [&] { SIM_CHECK(net.StartCollective(b, [&] { ++done; }).ok()); });
  sim.Run();
  EXPECT_EQ(done, 2);
  for (int e = 0; e < c.num_links(); ++e) out.usage.push_back(net.Usage(e));
  return out;
}

TEST(FlowNetworkObserverTest, RatesStayWithinCapacityAndEveryLinkEndsIdle) {
  const Cluster c = TwoDgx();
  sim::Simulator unused;
  const FlowNetwork capacities(c, unused);  // for Capacity()
  const std::vector<Report> reports = RunTwoAllReduces(c).reports;
  ASSERT_FALSE(reports.empty());
  std::map<int, double> last;  // link -> last reported rate
  sim::Time previous;
  int saturated = 0;
  for (const Report& r : reports) {
    EXPECT_GE(r.now, previous) << "reports go forward in time";
    previous = r.now;
    std::map<int, int> seen;
    for (const LinkRate& x : r.changed) {
      EXPECT_EQ(++seen[x.link], 1) << "link " << x.link << " reported twice in one re-solve";
      EXPECT_GE(x.bytes_per_second, 0.0);
      const double cap = capacities.Capacity(x.link);
      EXPECT_LE(x.bytes_per_second, cap * (1 + 1e-9)) << "link " << x.link;
      if (x.bytes_per_second >= cap * (1 - 1e-9)) ++saturated;
      const auto it = last.find(x.link);
      EXPECT_TRUE(it == last.end() || it->second != x.bytes_per_second)
          << "link " << x.link << " reported without a change";
      last[x.link] = x.bytes_per_second;
    }
  }
  EXPECT_GT(saturated, 0) << "a lone ring saturates its bottleneck links";
  for (const auto& [link, rate] : last) EXPECT_EQ(rate, 0.0) << "link " << link << " left busy";
  // The second all-reduce shares NVLink with the first: some links change
  // rate at 1 ms, not only at starts and ends of the first.
  bool at_one_ms = false;
  for (const Report& r : reports) at_one_ms |= r.now == sim::Time() + sim::Milliseconds(1);
  EXPECT_TRUE(at_one_ms);
}

TEST(FlowNetworkObserverTest, ReportedRatesIntegrateToTheBytesCarried) {
  const Cluster c = TwoDgx();
  const Recorded run = RunTwoAllReduces(c);
  // Integrate each link's piecewise-constant rate and compare with Usage().
  std::map<int, std::pair<sim::Time, double>> state;
  std::map<int, double> bytes;
  for (const Report& r : run.reports) {
    for (const LinkRate& x : r.changed) {
      auto& [since, rate] = state[x.link];
      bytes[x.link] += rate * (r.now - since).ToSeconds();
      since = r.now;
      rate = x.bytes_per_second;
    }
  }
  ASSERT_FALSE(bytes.empty());
  for (const auto& [link, b] : bytes) {
    const double carried = run.usage[link].bytes;
    EXPECT_NEAR(b, carried, 1e-6 * carried + 1.0) << "link " << link;
  }
}

}  // namespace
}  // namespace clustersim::topology
