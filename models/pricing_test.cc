#include "models/pricing.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/gpu_catalog.h"

namespace clustersim::models {
namespace {

using ::testing::HasSubstr;

TEST(PriceCatalogTest, ShippedCatalogHasDatedSourcedEntriesForKnownGpus) {
  const PriceCatalog& c = PriceCatalog::Default();
  ASSERT_GE(c.entries().size(), 10u);
  for (const PriceEntry& e : c.entries()) {
    EXPECT_FALSE(e.date.empty()) << e.name;
    EXPECT_FALSE(e.source.empty()) << e.name;
    EXPECT_TRUE(GpuCatalog::Default().Find(e.gpu).ok()) << e.name << " prices unknown " << e.gpu;
  }
  for (const char* name : {"aws-p4d", "aws-p5", "aws-p5e-capacity-block", "azure-nd-h100-v5",
                           "gcp-a3-highgpu-8g", "lambda-h100", "owned-rtx-4090"}) {
    EXPECT_TRUE(c.Find(name).ok()) << name;
  }
}

TEST(PriceCatalogTest, InstancePricesDivideByGpus) {
  // AWS p5.48xlarge: $98.32 per instance-hour for 8 H100 (reference §5).
  absl::StatusOr<const PriceEntry*> p5 = PriceCatalog::Default().Find("aws-p5");
  ASSERT_TRUE(p5.ok());
  EXPECT_NEAR((*p5)->usd_per_gpu_hour * (*p5)->gpus_per_instance, 98.32, 0.01);
  EXPECT_EQ(PriceCatalog::Default().DefaultFor("h100-sxm5-80gb"), *p5);
}

TEST(PriceCatalogTest, UnknownNameListsValidOnes) {
  absl::StatusOr<const PriceEntry*> p = PriceCatalog::Default().Find("aws-p6");
  ASSERT_EQ(p.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(p.status().message(), HasSubstr("aws-p5"));
}

TEST(PriceCatalogTest, ParseRejectsBadEntries) {
  EXPECT_THAT(PriceCatalog::Parse(R"(price { name: "x" gpu: "rtx-4090" kind: "on-demand"
      gpus_per_instance: 1 date: "2024" source: "s" })").status().message(),
              HasSubstr("usd_per_gpu_hour must be > 0"));
  EXPECT_THAT(PriceCatalog::Parse(R"(price { name: "x" gpu: "rtx-4090" kind: "spot"
      gpus_per_instance: 1 usd_per_gpu_hour: 1 date: "2024" source: "s" })").status().message(),
              HasSubstr("kind \"spot\""));
  EXPECT_THAT(PriceCatalog::Parse(R"(
      price { name: "a" gpu: "g" kind: "on-demand" gpus_per_instance: 1 usd_per_gpu_hour: 1
              date: "d" source: "s" default_for_gpu: true }
      price { name: "b" gpu: "g" kind: "on-demand" gpus_per_instance: 1 usd_per_gpu_hour: 2
              date: "d" source: "s" default_for_gpu: true })").status().message(),
              HasSubstr("both default_for_gpu"));
}

TEST(OwnedCostTest, CapitalPowerAndHostingAddUp) {
  OwnedCosts c{.purchase_usd_per_gpu = 8760 * 3,
               .amortisation_years = 3,
               .utilisation = 0.5,
               .pue = 1.2,
               .usd_per_kwh = 0.10,
               .hosting_usd_per_node_month = 730 * 8};
  const OwnedHourlyCost h = OwnedUsdPerGpuHour(c, /*tdp_w=*/700, /*gpus_per_node=*/8);
  EXPECT_DOUBLE_EQ(h.capital, 1.0);                       // $26,280 over 26,280 h
  EXPECT_NEAR(h.power, 0.7 * 0.5 * 1.2 * 0.10, 1e-12);    // kW x util x PUE x $/kWh
  EXPECT_DOUBLE_EQ(h.hosting, 1.0);                       // $5840/month over 730 h x 8 GPUs
  EXPECT_NEAR(h.Total(), 2.042, 1e-12);
}

TEST(OwnedCostTest, ValidationNamesTheField) {
  EXPECT_THAT(ValidateOwnedCosts({.utilisation = 0}).message(), HasSubstr("pricing.utilisation"));
  EXPECT_THAT(ValidateOwnedCosts({.pue = 0.9}).message(), HasSubstr("pricing.pue"));
  EXPECT_THAT(ValidateOwnedCosts({.purchase_usd_per_gpu = 1000}).message(),
              HasSubstr("pricing.amortisation_years"));
}

}  // namespace
}  // namespace clustersim::models
