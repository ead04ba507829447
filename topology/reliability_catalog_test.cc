#include "topology/reliability_catalog.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace clustersim::topology {
namespace {

using ::testing::HasSubstr;

TEST(ReliabilityCatalogTest, ShippedCatalogParsesWithDefaults) {
  const ReliabilityCatalog& c = ReliabilityCatalog::Default();
  ASSERT_TRUE(c.FindProfile("llama3-h100").ok());
  ASSERT_TRUE(c.FindProfile("meta-rsc-a100").ok());
  for (const char* s : {"nfs", "lustre", "object-store", "meta-tectonic"}) {
    EXPECT_TRUE(c.FindStorage(s).ok()) << s;
  }
  EXPECT_THAT(c.FindStorage("tape").status().message(), HasSubstr("lustre"));
}

// The Llama 3 profile's rates, summed over the snapshot's exposure, give back
// Table 5's 419 unexpected interruptions (the rows' arithmetic is right).
TEST(ReliabilityCatalogTest, Llama3RatesSumToTable5Count) {
  const config::FailureProfile* p = *ReliabilityCatalog::Default().FindProfile("llama3-h100");
  double per_hour = 0;
  for (const config::FailureCause& c : p->cause()) per_hour += CauseRatePerJobHour(c, 16384, 8);
  EXPECT_NEAR(per_hour * 54 * 24, 419, 1.0);
  EXPECT_NEAR(CauseRatePerJobHour(p->planned(), 16384, 8) * 54 * 24, 47, 0.1);
}

TEST(ReliabilityCatalogTest, RatesScalePerUnit) {
  config::FailureCause c;
  c.set_rate(2);
  c.set_per("gpu_hour");
  EXPECT_EQ(CauseRatePerJobHour(c, 12, 8), 24);
  c.set_per("node_hour");
  EXPECT_EQ(CauseRatePerJobHour(c, 12, 8), 4);  // 12 GPUs occupy 2 nodes
  c.set_per("job_hour");
  EXPECT_EQ(CauseRatePerJobHour(c, 12, 8), 2);
}

TEST(ReliabilityCatalogTest, RejectsNegativeRateAndZeroBandwidth) {
  const std::string restart =
      "restart { repair_hours: 1 snapshot_copy_efficiency: 1 source: \"x\" } "
      "default_profile: \"p\" default_storage: \"s\" ";
  const std::string storage =
      "storage { name: \"s\" write_gb_per_s_per_node: 1 write_gb_per_s_aggregate: 1 "
      "read_gb_per_s_per_node: 1 read_gb_per_s_aggregate: 1 source: \"x\" } ";
  const std::string ok_profile =
      "profile { name: \"p\" source: \"x\" derived_from: \"x\" held_out: \"x\" "
      "cause { name: \"c\" per: \"gpu_hour\" rate: 1 derivation: \"x\" } "
      "planned { name: \"m\" per: \"job_hour\" rate: 0 derivation: \"x\" } } ";
  EXPECT_TRUE(ReliabilityCatalog::Parse(ok_profile + storage + restart).ok());
  std::string bad = ok_profile;
  bad.replace(bad.find("rate: 1"), 7, "rate: -1");
  EXPECT_THAT(ReliabilityCatalog::Parse(bad + storage + restart).status().message(),
              HasSubstr("cause[0] 'c': rate must be"));
  std::string zero = storage;
  zero.replace(zero.find("write_gb_per_s_aggregate: 1"), 27, "write_gb_per_s_aggregate: 0");
  EXPECT_THAT(ReliabilityCatalog::Parse(ok_profile + zero + restart).status().message(),
              HasSubstr("storage[0] 's'"));
}

}  // namespace
}  // namespace clustersim::topology
