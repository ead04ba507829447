// `clustersim validate --network-tier flow`: every training row runs on the
// flow tier (its written scenario says so and reruns to the same prediction),
// multi-node rows then differ from the analytic tier's, and a tier that is
// neither analytic nor flow exits 2 naming the flag.
#include <cmath>
#include <filesystem>
#include <map>
#include <regex>
#include <string>

#include "gtest/gtest.h"
#include "tests/cli_testing.h"
#include "tests/slurp.h"

namespace clustersim {
namespace {

class ValidateNetworkTierTest : public CliTest {
 protected:
  // id -> predicted step time of the rows of `out` (validate --format json).
  static std::map<std::string, double> Predictions(const std::string& out) {
    const std::regex row(
        R"re("id": "([^"]+)", "source": "[^"]*", "metric": "iteration_time_s", "measured": [^,]+, "predicted": ([0-9.eE+-]+))re");
    std::map<std::string, double> p;
    for (std::sregex_iterator it(out.begin(), out.end(), row), end; it != end; ++it) {
      p[(*it)[1]] = std::stod((*it)[2]);
    }
    return p;
  }
  // Every 4th row of the multi-node vTrain table: 64-512 A100s, so their
  // data-parallel and pipeline traffic crosses the fabric.
  std::string Table() const {
    return src_ + "/tests/validation/vtrain/ground_truth_multi.csv --stride 4 --format json";
  }
};

TEST_F(ValidateNetworkTierTest, FlowRowsRerunOnTheFlowTierAndDifferFromAnalytic) {
  const std::filesystem::path rows = dir_ / "rows";
  Outcome flow =
      Run("validate " + Table() + " --network-tier flow --write-scenarios " + rows.string());
  ASSERT_EQ(flow.code, 0) << flow.err;
  Outcome analytic = Run("validate " + Table());
  ASSERT_EQ(analytic.code, 0) << analytic.err;
  const std::map<std::string, double> f = Predictions(flow.out), a = Predictions(analytic.out);
  ASSERT_GE(f.size(), 10u) << flow.out;
  ASSERT_EQ(f.size(), a.size());
  int differ = 0;
  for (const auto& [id, predicted] : f) {
    const std::filesystem::path file = rows / (id + ".textproto");
    ASSERT_TRUE(std::filesystem::exists(file)) << id;
    EXPECT_NE(Slurp(file).find("tier: \"flow\""), std::string::npos) << id;
    if (std::abs(predicted - a.at(id)) > 1e-6 * predicted) ++differ;
  }
  EXPECT_GE(differ, 1) << "no row's step time moved on the flow tier";
  // One written row, run as it is, reproduces its flow-tier prediction.
  const auto& [id, predicted] = *f.begin();
  Outcome r = Run("run " + (rows / (id + ".textproto")).string() + " --format json");
  ASSERT_EQ(r.code, 0) << id << ": " << r.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex(R"("step_time_s": ([0-9.eE+-]+))")));
  EXPECT_NEAR(std::stod(m[1]), predicted, 1e-9 * predicted) << id;
}

TEST_F(ValidateNetworkTierTest, UnknownTierExitsTwoNamingTheFlag) {
  for (const char* extra : {"", " --leave-one-source-out"}) {
    Outcome o = Run("validate " + src_ + "/tests/validation/published-runs.csv --network-tier mesh" +
                    extra);
    EXPECT_EQ(o.code, 2) << o.err;
    EXPECT_NE(o.err.find("--network-tier=mesh"), std::string::npos) << o.err;
    EXPECT_NE(o.err.find("analytic or flow"), std::string::npos) << o.err;
    EXPECT_TRUE(o.out.empty()) << o.out;
  }
}

}  // namespace
}  // namespace clustersim
