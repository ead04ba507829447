// The deployment search (deployment_space.h, deployment_search.h): the shapes
// it enumerates, the input it refuses, its ranking and Pareto front, its
// determinism, and checks that could fail: a looser target never costs more,
// a larger model needs at least as many GPUs, and the chosen deployment,
// served alone, meets the targets it was chosen for.
#include "scenarios/serve/deployment_search.h"

#include <set>
#include <string>

#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "scenarios/serve/deployment_space.h"
#include "scenarios/serve/serve_resolve.h"
#include "scenarios/serve/serve_runner.h"

namespace clustersim::scenarios {
namespace {

using ::testing::HasSubstr;

config::Scenario Parse(const std::string& text) {
  config::Scenario s;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &s)) << text;
  return s;
}

// llama3-8b at `rate` with the targets, a small space: H100 only, at most 4
// GPUs, batch 256, 60 requests per replica.
config::Scenario Small(double rate, double ttft_ms, double tpot_ms,
                       const std::string& model = "llama3-8b") {
  return Parse(absl::StrCat(
      "model { preset: \"", model, "\" } inference { target_time_to_first_token_ms: ", ttft_ms,
      " target_time_per_output_token_ms: ", tpot_ms, " workload { request_rate_per_s: ", rate,
      " prompt_length { value: 512 } output_length { value: 64 } } "
      "deployment_search { gpus: \"h100-sxm5-80gb\" max_gpus: 4 max_batch_sizes: 256 "
      "requests_per_replica: 60 } }"));
}

TEST(DeploymentSpaceTest, EnumeratesOnlyWhatEachGpuAndTheModelTake) {
  config::Scenario s = Small(4, 1000, 100);
  s.mutable_inference()->mutable_deployment_search()->clear_gpus();
  s.mutable_inference()->mutable_deployment_search()->add_gpus("a100-sxm4-80gb");
  s.mutable_inference()->mutable_deployment_search()->add_gpus("h100-sxm5-80gb");
  s.mutable_inference()->mutable_deployment_search()->set_max_gpus(16);
  absl::StatusOr<SearchSpace> space = ResolveSearchSpace(s);
  ASSERT_TRUE(space.ok()) << space.status();
  const std::vector<Shape> shapes = EnumerateShapes(*space);
  // A100 (no fp8): bf16/bf16 only; 4 tp x 2 pp aggregated + 4 x 4 disaggregated.
  // H100: 2 weight x 2 KV formats of the same.
  EXPECT_EQ(shapes.size(), (8u + 16u) * (1 + 4));
  std::set<std::string> names;
  for (const Shape& sh : shapes) {
    names.insert(ShapeName(*space, sh));
    EXPECT_EQ(sh.ep, 1);  // a dense model
    if (space->gpus[sh.gpu].spec->name == "a100-sxm4-80gb") {
      EXPECT_EQ(sh.weight_dtype, "bf16");
      EXPECT_EQ(sh.kv_cache_dtype, "bf16");
    }
    EXPECT_LE(sh.MinGpus(), 16);
  }
  EXPECT_EQ(names.size(), shapes.size());  // names are unique
  // Only tp within a node and dividing the heads.
  s.mutable_inference()->mutable_deployment_search()->add_tensor_parallel(3);
  s.mutable_inference()->mutable_deployment_search()->add_tensor_parallel(16);
  space = ResolveSearchSpace(s);
  ASSERT_TRUE(space.ok()) << space.status();
  EXPECT_TRUE(EnumerateShapes(*space).empty());
}

TEST(DeploymentSpaceTest, MoeModelsAddExpertParallelEqualToTp) {
  config::Scenario s = Small(4, 1000, 100, "mixtral-8x7b");
  s.mutable_inference()->mutable_deployment_search()->set_max_gpus(8);
  absl::StatusOr<SearchSpace> space = ResolveSearchSpace(s);
  ASSERT_TRUE(space.ok()) << space.status();
  int with_ep = 0;
  for (const Shape& sh : EnumerateShapes(*space)) {
    if (sh.ep > 1) {
      ++with_ep;
      EXPECT_EQ(sh.ep, sh.tp);
    }
  }
  EXPECT_GT(with_ep, 0);
}

TEST(DeploymentSpaceTest, BadInputNamesTheFieldAndAFix) {
  config::Scenario s = Small(4, 1000, 100);
  s.mutable_inference()->mutable_deployment_search()->add_gpus("h900");
  absl::Status st = ResolveSearchSpace(s).status();
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(st.message(), HasSubstr("--search-gpus"));
  EXPECT_THAT(st.message(), HasSubstr("h100-sxm5-80gb"));

  s = Small(4, 1000, 100);
  s.mutable_inference()->clear_target_time_to_first_token_ms();
  s.mutable_inference()->clear_target_time_per_output_token_ms();
  EXPECT_THAT(ResolveSearchSpace(s).status().message(), HasSubstr("--target-ttft-ms"));

  s = Small(4, 1000, 100);
  s.mutable_inference()->mutable_workload()->clear_request_rate_per_s();
  EXPECT_THAT(ResolveSearchSpace(s).status().message(), HasSubstr("--request-rate"));

  s = Small(0, 1000, 100);
  EXPECT_THAT(ResolveSearchSpace(s).status().message(),
              HasSubstr("inference.workload.request_rate_per_s"));

  s = Small(4, 1000, 100);
  s.mutable_inference()->mutable_deployment_search()->set_max_gpus(0);
  EXPECT_THAT(ResolveSearchSpace(s).status().message(), HasSubstr("--search-max-gpus"));

  s = Small(4, 1000, 100);
  s.mutable_inference()->mutable_deployment_search()->clear_gpus();
  s.mutable_inference()->mutable_deployment_search()->add_gpus("l40s");  // no catalog price
  EXPECT_THAT(ResolveSearchSpace(s).status().message(), HasSubstr("no catalog price"));
}

TEST(DeploymentSpaceTest, GpuPricesReplaceTheCatalogAndAddUnpricedGpus) {
  config::Scenario s = Small(4, 1000, 100);
  config::DeploymentSearchConfig* ds = s.mutable_inference()->mutable_deployment_search();
  ds->clear_gpus();
  ds->add_gpus("h100-sxm5-80gb");
  ds->add_gpus("l40s");  // no catalog price, priced here
  (*ds->mutable_gpu_prices())["h100-sxm5-80gb"] = 1.25;
  (*ds->mutable_gpu_prices())["l40s"] = 0.75;
  absl::StatusOr<SearchSpace> space = ResolveSearchSpace(s);
  ASSERT_TRUE(space.ok()) << space.status();
  ASSERT_EQ(space->gpus.size(), 2u);
  for (const SearchGpu& g : space->gpus) {
    EXPECT_DOUBLE_EQ(g.usd_per_gpu_hour, g.spec->name == "l40s" ? 0.75 : 1.25) << g.spec->name;
  }

  // With no GPU list, a priced GPU joins the catalog-priced ones.
  ds->clear_gpus();
  ds->mutable_gpu_prices()->erase("h100-sxm5-80gb");
  space = ResolveSearchSpace(s);
  ASSERT_TRUE(space.ok()) << space.status();
  bool has_l40s = false;
  for (const SearchGpu& g : space->gpus) has_l40s |= g.spec->name == "l40s";
  EXPECT_TRUE(has_l40s);
  EXPECT_GT(space->gpus.size(), 2u);
}

TEST(DeploymentSearchTest, AGpuPriceChangesTheRanking) {
  // The same H100 deployment at half the price costs half per token.
  config::Scenario s = Small(4, 1000, 100);
  absl::StatusOr<config::DeploymentSearchResult> base = SearchDeployments(s, nullptr);
  ASSERT_TRUE(base.ok()) << base.status();
  (*s.mutable_inference()->mutable_deployment_search()->mutable_gpu_prices())["h100-sxm5-80gb"] =
      base->candidate(0).usd_per_gpu_hour() / 2;
  absl::StatusOr<config::DeploymentSearchResult> cheap = SearchDeployments(s, nullptr);
  ASSERT_TRUE(cheap.ok()) << cheap.status();
  EXPECT_NEAR(cheap->candidate(0).usd_per_million_output_tokens(),
              base->candidate(0).usd_per_million_output_tokens() / 2,
              1e-9 * base->candidate(0).usd_per_million_output_tokens());
}

TEST(DeploymentSpaceTest, BadGpuPricesNameTheField) {
  config::Scenario s = Small(4, 1000, 100);
  auto* prices = s.mutable_inference()->mutable_deployment_search()->mutable_gpu_prices();
  (*prices)["h100-sxm5-80gb"] = 0;
  EXPECT_THAT(ResolveSearchSpace(s).status().message(),
              HasSubstr("gpu_prices[h100-sxm5-80gb] (--search-gpu-prices)=0"));
  (*prices)["h100-sxm5-80gb"] = 2;
  (*prices)["a100-sxm4-80gb"] = 2;  // not in the searched list
  EXPECT_THAT(ResolveSearchSpace(s).status().message(), HasSubstr("add it to gpus"));
  prices->erase("a100-sxm4-80gb");
  (*prices)["h900"] = 2;
  s.mutable_inference()->mutable_deployment_search()->clear_gpus();
  EXPECT_THAT(ResolveSearchSpace(s).status().message(), HasSubstr("not a catalog GPU"));
  prices->erase("h900");
  s.mutable_pricing()->set_usd_per_gpu_hour(3);
  EXPECT_THAT(ResolveSearchSpace(s).status().message(), HasSubstr("keep one"));
}

TEST(DeploymentSearchTest, ModelTooBigForEveryCandidateIsAnError) {
  config::Scenario s = Small(1, 5000, 500, "llama3-405b");
  s.mutable_inference()->mutable_deployment_search()->set_max_gpus(2);
  absl::Status st = SearchDeployments(s, nullptr).status();
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(st.message(), HasSubstr("does not fit any candidate"));
  EXPECT_THAT(st.message(), HasSubstr("--search-max-gpus"));
}

config::DeploymentCandidate Made(const std::string& name, bool meets, double cost, double tpot,
                                 int gpus = 1) {
  config::DeploymentCandidate c;
  c.set_name(name);
  c.set_simulated(true);
  c.set_meets_slo(meets);
  c.set_usd_per_million_output_tokens(cost);
  c.set_tpot_p99_ms(tpot);
  c.set_ttft_p99_ms(100);
  c.set_num_gpus(gpus);
  return c;
}

TEST(DeploymentSearchTest, RanksMeetingFirstByCostAndMarksTheFront) {
  config::DeploymentSearchResult r;
  r.set_target_tpot_ms(50);
  *r.add_candidate() = Made("miss-far", false, 0.5, 200);
  *r.add_candidate() = Made("c", true, 3, 10);
  *r.add_candidate() = Made("a", true, 1, 40);
  *r.add_candidate() = Made("b-dominated", true, 2, 45);  // a is cheaper and faster
  *r.add_candidate() = Made("miss-near", false, 0.4, 60);
  *r.add_candidate() = Made("a-tie-more-gpus", true, 1, 40, 2);
  config::DeploymentCandidate pruned;
  pruned.set_name("pruned");
  *r.add_candidate() = pruned;
  RankCandidates(&r);
  MarkParetoFront(&r);
  std::vector<std::string> order;
  for (const auto& c : r.candidate()) order.push_back(c.name());
  EXPECT_THAT(order, ::testing::ElementsAre("a", "a-tie-more-gpus", "b-dominated", "c", "miss-near",
                                            "miss-far", "pruned"));
  for (int i = 0; i < r.candidate_size(); ++i) EXPECT_EQ(r.candidate(i).rank(), i + 1);
  EXPECT_TRUE(r.candidate(0).pareto());
  EXPECT_FALSE(r.candidate(1).pareto());  // same point as "a": not strictly better
  EXPECT_FALSE(r.candidate(2).pareto());
  EXPECT_TRUE(r.candidate(3).pareto());
  EXPECT_FALSE(r.candidate(4).pareto());  // misses: off the front even though cheaper
}

TEST(DeploymentSearchTest, DeterministicAndTheChosenOneMeetsItsTargetsAlone) {
  const config::Scenario s = Small(20, 300, 30);
  absl::StatusOr<config::DeploymentSearchResult> a = SearchDeployments(s, nullptr);
  ASSERT_TRUE(a.ok()) << a.status();
  absl::StatusOr<config::DeploymentSearchResult> b = SearchDeployments(s, nullptr);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(a->SerializeAsString(), b->SerializeAsString());
  EXPECT_EQ(a->candidates(), a->simulated() + a->pruned_memory() + a->pruned_capacity() +
                                 a->pruned_dominated() + a->pruned_invalid());
  ASSERT_GT(a->meeting_slo(), 0);
  const config::DeploymentCandidate& best = a->candidate(0);
  ASSERT_TRUE(best.meets_slo());
  ASSERT_EQ(best.mode(), "aggregated");
  EXPECT_TRUE(best.pareto());
  // Served alone, as `clustersim serve` runs it.
  absl::StatusOr<SearchSpace> space = ResolveSearchSpace(s);
  ASSERT_TRUE(space.ok());
  Shape shape{.gpu = 0,
              .tp = best.tensor_parallel(),
              .pp = best.pipeline_parallel(),
              .ep = best.expert_parallel(),
              .weight_dtype = best.weight_dtype(),
              .kv_cache_dtype = best.kv_cache_dtype(),
              .max_batch_size = best.max_batch_size()};
  absl::StatusOr<ResolvedServe> alone =
      ResolveServe(AggregatedScenario(*space, shape, best.replicas()));
  ASSERT_TRUE(alone.ok()) << alone.status();
  absl::StatusOr<config::ServeResult> served = RunServe(*alone, {.curve = false});
  ASSERT_TRUE(served.ok()) << served.status();
  EXPECT_EQ(served->num_gpus(), best.num_gpus());
  EXPECT_FALSE(served->saturated());
  EXPECT_LE(served->ttft_ms().p99(), 300);
  EXPECT_LE(served->tpot_ms().p99(), 30);
  EXPECT_DOUBLE_EQ(served->tpot_ms().p99(), best.tpot_p99_ms());
  // Every candidate before it in cost meets nothing: no cheaper row meets.
  for (const auto& c : a->candidate()) {
    if (c.meets_slo()) {
      EXPECT_GE(c.usd_per_million_output_tokens(), best.usd_per_million_output_tokens());
    }
  }
}

double CheapestCost(const config::Scenario& s, int* gpus = nullptr) {
  absl::StatusOr<config::DeploymentSearchResult> r = SearchDeployments(s, nullptr);
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok() || r->candidate_size() == 0 || !r->candidate(0).meets_slo()) return 1e30;
  if (gpus != nullptr) *gpus = r->candidate(0).num_gpus();
  return r->candidate(0).usd_per_million_output_tokens();
}

// At 30 req/s one H100 (fp8) gives a p99 TPOT near 8 ms: a 6 ms target
// needs a second GPU.
TEST(DeploymentSearchTest, TighterTargetsCostMore) {
  int loose_gpus = 0, tight_gpus = 0;
  const double loose = CheapestCost(Small(30, 2000, 100), &loose_gpus);
  const double tight = CheapestCost(Small(30, 150, 6), &tight_gpus);
  EXPECT_LT(loose, 1e30);
  EXPECT_LT(loose, tight);
  EXPECT_LT(loose_gpus, tight_gpus);
  EXPECT_LE(loose, CheapestCost(Small(30, 300, 30)));
  EXPECT_LE(CheapestCost(Small(30, 300, 30)), tight);
}

// In bf16 Llama 3 70B (141 GB) needs two 80 GB GPUs; Llama 3 8B fits one.
TEST(DeploymentSearchTest, ALargerModelNeedsMoreGpus) {
  int small = 0, large = 0;
  config::Scenario s = Small(2, 3000, 100, "llama3-8b");
  s.mutable_inference()->mutable_deployment_search()->add_weight_dtypes("bf16");
  CheapestCost(s, &small);
  config::Scenario big = Small(2, 3000, 100, "llama3-70b");
  big.mutable_inference()->mutable_deployment_search()->set_max_gpus(8);
  big.mutable_inference()->mutable_deployment_search()->add_weight_dtypes("bf16");
  CheapestCost(big, &large);
  EXPECT_GT(small, 0);
  EXPECT_GT(large, small);
}

}  // namespace
}  // namespace clustersim::scenarios
