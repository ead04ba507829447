#include "scenarios/input/train_cost.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace clustersim::scenarios {
namespace {

using ::testing::HasSubstr;

const models::GpuSpec& Gpu(const char* name) {
  return **models::GpuCatalog::Default().Find(name);
}

TEST(ResolvePricingTest, DefaultsToTheGpusCatalogEntry) {
  absl::StatusOr<ResolvedPricing> p = ResolvePricing({}, Gpu("h100-sxm5-80gb"), 8);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->name, "aws-p5");
  EXPECT_DOUBLE_EQ(p->usd_per_gpu_hour, 12.29);
  EXPECT_THAT(p->source, HasSubstr("p5.48xlarge"));
}

TEST(ResolvePricingTest, PriceSourceSelectsAndChecksTheGpu) {
  config::PricingConfig c;
  c.set_price_source("lambda-h100");
  absl::StatusOr<ResolvedPricing> p = ResolvePricing(c, Gpu("h100-sxm5-80gb"), 8);
  ASSERT_TRUE(p.ok());
  EXPECT_DOUBLE_EQ(p->usd_per_gpu_hour, 2.49);
  c.set_price_source("aws-p4d");
  absl::StatusOr<ResolvedPricing> bad = ResolvePricing(c, Gpu("h100-sxm5-80gb"), 8);
  EXPECT_THAT(bad.status().message(), HasSubstr("prices a100-sxm4-40gb"));
  EXPECT_THAT(bad.status().message(), HasSubstr("aws-p5"));  // suggests the H100 entries
  c.set_price_source("nope");
  EXPECT_THAT(ResolvePricing(c, Gpu("h100-sxm5-80gb"), 8).status().message(),
              HasSubstr("pricing.price_source"));
}

TEST(ResolvePricingTest, GivenPriceWins) {
  config::PricingConfig c;
  c.set_price_source("aws-p5");
  c.set_usd_per_gpu_hour(3.0);
  absl::StatusOr<ResolvedPricing> p = ResolvePricing(c, Gpu("h100-sxm5-80gb"), 8);
  ASSERT_TRUE(p.ok());
  EXPECT_DOUBLE_EQ(p->usd_per_gpu_hour, 3.0);
  EXPECT_EQ(p->name, "scenario");
}

TEST(ResolvePricingTest, OwnedHardwareFromFields) {
  config::PricingConfig c;
  c.set_purchase_usd_per_gpu(30000);
  c.set_amortisation_years(4);
  c.set_utilisation(0.8);
  c.set_pue(1.3);
  c.set_usd_per_kwh(0.12);
  c.set_hosting_usd_per_node_month(2000);
  absl::StatusOr<ResolvedPricing> p = ResolvePricing(c, Gpu("h100-sxm5-80gb"), 8);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(p->owned);
  const double expected = 30000 / (4 * 8760.0) + 0.7 * 0.8 * 1.3 * 0.12 + 2000 / (730.0 * 8);
  EXPECT_NEAR(p->usd_per_gpu_hour, expected, 1e-12);
}

TEST(ResolvePricingTest, OwnedCatalogEntryCanBeOverridden) {
  config::PricingConfig c;
  c.set_usd_per_kwh(0.30);
  absl::StatusOr<ResolvedPricing> p = ResolvePricing(c, Gpu("rtx-4090"), 1);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->name, "owned-rtx-4090");
  // $1599 over 3 years + 450 W at $0.30/kWh (catalog utilisation and PUE 1).
  EXPECT_NEAR(p->usd_per_gpu_hour, 1599 / (3 * 8760.0) + 0.45 * 0.30, 1e-12);
}

TEST(ResolvePricingTest, RunLengthIsOneOfTokensOrSteps) {
  config::PricingConfig c;
  c.set_train_tokens(1e12);
  c.set_train_steps(10);
  EXPECT_THAT(ResolvePricing(c, Gpu("h100-sxm5-80gb"), 8).status().message(),
              HasSubstr("keep one"));
  c.clear_train_steps();
  c.set_train_tokens(-1);
  EXPECT_THAT(ResolvePricing(c, Gpu("h100-sxm5-80gb"), 8).status().message(),
              HasSubstr("pricing.train_tokens"));
}

TEST(FillCostTest, TimeDollarsAndEnergyOfARun) {
  config::PricingConfig c;
  c.set_usd_per_gpu_hour(2.0);
  c.set_train_tokens(1e9);
  c.set_pue(1.5);
  absl::StatusOr<ResolvedPricing> p = ResolvePricing(c, Gpu("h100-sxm5-80gb"), 8);
  ASSERT_TRUE(p.ok());
  config::Result r;
  // 1e9 tokens at 3e6 tokens per 2 s step: ceil(333.3) = 334 steps.
  FillCost(*p, {.step_time_s = 2.0, .tokens_per_step = 3e6, .num_gpus = 8, .tdp_w = 700}, &r);
  EXPECT_DOUBLE_EQ(r.train().train_steps(), 334);
  EXPECT_DOUBLE_EQ(r.train().time_to_train_s(), 668);
  EXPECT_NEAR(r.train().gpu_hours(), 8 * 668 / 3600.0, 1e-12);
  EXPECT_NEAR(r.train().total_usd(), 2.0 * 8 * 668 / 3600.0, 1e-12);
  EXPECT_NEAR(r.train().energy_kwh(), 8 * 668 / 3600.0 * 0.7 * 1.5, 1e-12);
  EXPECT_NEAR(r.cost().usd_per_million_tokens(), 2.0 * 8 * 2 / 3600.0 / 3.0, 1e-12);
  EXPECT_NEAR(r.train().usd_per_million_tokens(), r.train().total_usd() / 1e3, 1e-12);
}

TEST(FillCostTest, NoRunLengthNoTrainEstimate) {
  absl::StatusOr<ResolvedPricing> p = ResolvePricing({}, Gpu("h100-sxm5-80gb"), 8);
  ASSERT_TRUE(p.ok());
  config::Result r;
  FillCost(*p, {.step_time_s = 1, .tokens_per_step = 1e6, .num_gpus = 8, .tdp_w = 700}, &r);
  EXPECT_FALSE(r.has_train());
  EXPECT_NEAR(r.cost().usd_per_step(), 12.29 * 8 / 3600.0, 1e-12);
}

}  // namespace
}  // namespace clustersim::scenarios
