#include "scenarios/studies/search.h"

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scenarios/input/resolve.h"
#include "scenarios/run/runner.h"

namespace clustersim::scenarios {
namespace {

using ::testing::HasSubstr;

SearchRequest Small(int threads) {
  SearchRequest r;
  r.base.mutable_model()->set_preset("gpt3-1.3b");
  r.base.mutable_cluster()->set_gpu("a100-sxm4-80gb");
  r.base.mutable_training()->set_global_batch_size(8);
  r.gpu_counts = {4};
  r.top_k = 1000;
  r.threads = threads;
  return r;
}

// The first-ranked candidate of `r` in `precision` and the label and step
// time of the same layout in `other` (labels end in the precision); best is
// null when no candidate has that precision, other_step_s -1 when the layout
// was not ranked in `other`.
struct SameLayout {
  const StudyRow* best = nullptr;
  std::string other_label;
  double other_step_s = -1;
};
SameLayout BestAndSameLayout(const SearchReport& r, const std::string& precision,
                             const std::string& other) {
  std::map<std::string, double> step_by_label;
  SameLayout out;
  for (const StudyRow& row : r.top) {
    const std::string label = StrategyLabel(row.result.scenario(), true);
    step_by_label[label] = row.result.step_time_s();
    if (out.best == nullptr && label.ends_with(" " + precision)) out.best = &row;
  }
  if (out.best == nullptr) return out;
  out.other_label = StrategyLabel(out.best->result.scenario(), true);
  out.other_label.replace(out.other_label.size() - precision.size(), precision.size(), other);
  if (auto it = step_by_label.find(out.other_label); it != step_by_label.end()) {
    out.other_step_s = it->second;
  }
  return out;
}

TEST(SearchTest, RanksFeasibleStrategiesAndCountsRejections) {
  absl::StatusOr<SearchReport> r = RunSearch(Small(1));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_GT(r->simulated, 10u);
  ASSERT_EQ(r->top.size(), r->simulated);
  for (size_t i = 1; i < r->top.size(); ++i) {
    EXPECT_LE(r->top[i - 1].result.step_time_s(), r->top[i].result.step_time_s());
    EXPECT_TRUE(r->top[i].result.fits_in_memory());
  }
  size_t rejected = 0;
  for (const auto& [reason, count] : r->rejections) rejected += count;
  // Context parallelism is enumerated and simulated like every other dimension.
  EXPECT_THAT(*FormatSearchReport(*r, "csv"), HasSubstr(" cp2 "));
  EXPECT_EQ(rejected + r->simulated, r->enumerated);
}

TEST(SearchTest, PruneOnlyCountsWhatWouldBeSimulated) {
  absl::StatusOr<SearchReport> full = RunSearch(Small(2));
  SearchRequest req = Small(2);
  req.prune_only = true;
  absl::StatusOr<SearchReport> pruned = RunSearch(req);
  ASSERT_TRUE(full.ok() && pruned.ok());
  EXPECT_EQ(pruned->feasible, full->simulated);
  EXPECT_EQ(pruned->simulated, 0u);
  EXPECT_TRUE(pruned->top.empty());
  EXPECT_EQ(pruned->enumerated, full->enumerated);
}

TEST(SearchTest, ACountTheBatchDoesNotDivideIsRejectedNotAnError) {
  SearchRequest req = Small(2);  // global batch 8
  req.gpu_counts = {3, 4};
  absl::StatusOr<SearchReport> r = RunSearch(req);
  ASSERT_TRUE(r.ok()) << r.status();
  absl::StatusOr<SearchReport> four = RunSearch(Small(2));
  ASSERT_TRUE(four.ok());
  EXPECT_EQ(r->simulated, four->simulated);  // nothing on 3 GPUs divides 8 sequences
  EXPECT_GT(r->enumerated, four->enumerated);
  req.base.mutable_training()->set_global_batch_size(0);
  EXPECT_THAT(RunSearch(req).status().message(), HasSubstr("training.global_batch_size"));
}

TEST(SearchTest, OneAndTwoThreadsRankIdentically) {
  absl::StatusOr<SearchReport> one = RunSearch(Small(1));
  absl::StatusOr<SearchReport> two = RunSearch(Small(2));
  ASSERT_TRUE(one.ok() && two.ok());
  EXPECT_EQ(*FormatSearchReport(*one, "csv"), *FormatSearchReport(*two, "csv"));
  EXPECT_EQ(one->rejections, two->rejections);
}

// Checks each searched result against a standalone run of its scenario and
// returns how many of them the search simulated with under half the tasks.
// The search shares one cluster and one memoised network tier between its
// candidates; each result must be byte-identical to running that candidate's
// scenario on its own.
size_t ExpectEqualToStandaloneRuns(const SearchReport& r) {
  size_t halved = 0;
  for (const StudyRow& row : r.top) {
    absl::StatusOr<ResolvedScenario> s = Resolve(row.result.scenario());
    EXPECT_TRUE(s.ok()) << s.status();
    if (!s.ok()) continue;
    absl::StatusOr<config::Result> alone = RunScenario(*s, RunOptions{});
    EXPECT_TRUE(alone.ok()) << alone.status();
    if (!alone.ok()) continue;
    // Every simulated figure; the echo and the price lookup are resolved
    // twice (the echo's pricing section differs from the base scenario's).
    // The search merges runs of ops (RunOptions::merge_compute_chains), so it
    // counts fewer tasks and events for the same timeline, and follows no
    // memory timeline (RunOptions::memory_timeline) and keeps no task table
    // (BuildMode::record_task_infos).
    config::Result a = *alone, b = row.result;
    EXPECT_LE(b.simulated_tasks(), a.simulated_tasks()) << row.label;
    halved += 2 * b.simulated_tasks() < a.simulated_tasks();
    for (config::Result* x : {&a, &b}) {
      x->clear_scenario();
      x->clear_cost();
      x->clear_train();
      x->clear_simulated_tasks();
      x->clear_simulated_events();
      x->clear_energy();  // search's merged runs carry none
      for (config::StageMemoryGib& st : *x->mutable_memory_per_stage_gib()) {
        st.clear_simulated_peak_gib();
        st.clear_simulated_peak_activations_gib();
      }
    }
    EXPECT_GT(b.memory_per_stage_gib_size(), 0);
    if (b.memory_per_stage_gib_size() > 0) {
      EXPECT_EQ(row.result.memory_per_stage_gib(0).simulated_peak_gib(), 0) << row.label;
    }
    EXPECT_FALSE(row.result.has_energy()) << row.label;
    EXPECT_EQ(a.SerializeAsString(), b.SerializeAsString()) << row.label;
  }
  return halved;
}

TEST(SearchTest, ResultsEqualStandaloneRuns) {
  absl::StatusOr<SearchReport> r = RunSearch(Small(2));
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_GT(r->top.size(), 10u);
  ExpectEqualToStandaloneRuns(*r);
}

// Above 64 GPUs the tensor- and context-parallel ranks are folded, and the
// search's runs take in the folded groups' tensor-parallel collectives and
// whole context-parallel rings (StepPlan::merged_runs); ZeRO-3 runs merge
// too. Every figure must still be the standalone, op-by-op run's.
TEST(SearchTest, MergedCollectivesEqualStandaloneRuns) {
  SearchRequest req = Small(2);
  req.gpu_counts = {128};
  req.base.mutable_model()->set_num_layers(8);  // keeps it quick under the sanitizers
  req.base.mutable_training()->set_global_batch_size(32);
  req.top_k = 5000;
  absl::StatusOr<SearchReport> r = RunSearch(req);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->top.size(), r->simulated);
  size_t cp = 0, zero3 = 0, tp = 0;
  for (const StudyRow& row : r->top) {
    const config::ParallelismConfig& p = row.result.scenario().parallelism();
    cp += p.context_parallel_size() > 1;
    zero3 += p.zero_stage() == 3;
    tp += p.tensor_model_parallel_size() > 1;
  }
  EXPECT_GT(cp, 100u);
  EXPECT_GT(zero3, 100u);
  EXPECT_GT(tp, 100u);
  EXPECT_GT(ExpectEqualToStandaloneRuns(*r), 100u);
}

// GPT-3 1.3B at a 16,384-token context on one 40 GB A100: without recompute
// no micro-batch fits; recomputing half the layers (block) does, and is
// faster than recomputing all of them. Each strategy that does not fit
// without recompute brings its block variant, counted as enumerated.
TEST(SearchTest, BlockRecomputeIsSearchedAndCanBeTheFastest) {
  SearchRequest req = Small(2);
  req.base.mutable_cluster()->set_gpu("a100-sxm4-40gb");
  req.base.mutable_model()->set_seq_length(16384);
  req.gpu_counts = {1};
  absl::StatusOr<SearchReport> r = RunSearch(req);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_FALSE(r->top.empty());
  const config::TrainingConfig& best = r->top[0].result.scenario().training();
  EXPECT_EQ(best.recompute_granularity(), "full");
  EXPECT_EQ(best.recompute_method(), "block");
  EXPECT_GT(best.recompute_num_layers(), 0);
  EXPECT_LT(best.recompute_num_layers(), 24);
  const std::string label = StrategyLabel(r->top[0].result.scenario());
  EXPECT_THAT(label, HasSubstr(absl::StrCat(" rc-block", best.recompute_num_layers())));
  size_t full = 0;
  for (const StudyRow& row : r->top) {
    const config::TrainingConfig& t = row.result.scenario().training();
    if (t.recompute_granularity() != "full" || t.has_recompute_method()) continue;
    ++full;
    EXPECT_LT(r->top[0].result.step_time_s(), row.result.step_time_s());
  }
  EXPECT_GT(full, 0u);
  size_t rejected = 0;
  for (const auto& [reason, count] : r->rejections) rejected += count;
  EXPECT_EQ(rejected + r->simulated, r->enumerated);
  EXPECT_THAT(*FormatSearchReport(*r, "json"),
              HasSubstr(absl::StrCat("\"recompute_method\": \"block\", \"recompute_num_layers\": ",
                                     best.recompute_num_layers())));
  ExpectEqualToStandaloneRuns(*r);
  EXPECT_THAT(*ExplainStrategy(req, absl::StrCat("recompute=block:", best.recompute_num_layers())),
              HasSubstr("feasible, simulated"));
  EXPECT_THAT(*ExplainStrategy(req, "recompute=none"),
              HasSubstr("--recompute-method block --recompute-num-layers"));
}

TEST(SearchTest, CostRankingAndBudget) {
  SearchRequest req = Small(2);
  req.rank_by = "time-to-train";
  EXPECT_THAT(RunSearch(req).status().message(), HasSubstr("--train-tokens"));
  req.base.mutable_pricing()->set_train_tokens(1e9);
  absl::StatusOr<SearchReport> all = RunSearch(req);
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_GE(all->top.size(), 2u);
  // A budget between the cheapest and the dearest run keeps only the cheaper ones.
  double lo = 1e300, hi = 0;
  for (const StudyRow& row : all->top) {
    lo = std::min(lo, row.result.train().total_usd());
    hi = std::max(hi, row.result.train().total_usd());
  }
  req.budget_usd = (lo + hi) / 2;
  absl::StatusOr<SearchReport> capped = RunSearch(req);
  ASSERT_TRUE(capped.ok());
  EXPECT_LT(capped->top.size(), all->top.size());
  for (const StudyRow& row : capped->top) EXPECT_LE(row.result.train().total_usd(), req.budget_usd);
  req.rank_by = "cost";
  req.budget_usd = 0;
  absl::StatusOr<SearchReport> cost = RunSearch(req);
  ASSERT_TRUE(cost.ok());
  for (size_t i = 1; i < cost->top.size(); ++i) {
    EXPECT_LE(cost->top[i - 1].result.cost().usd_per_million_tokens(),
              cost->top[i].result.cost().usd_per_million_tokens());
  }
}

TEST(SearchTest, ExplainSaysWhyOrShowsTheResult) {
  const SearchRequest req = Small(1);
  EXPECT_THAT(*ExplainStrategy(req, "tp=2,cp=2"), HasSubstr("feasible, simulated"));
  EXPECT_THAT(*ExplainStrategy(req, "tp=3"), HasSubstr("rejected (invalid)"));
  EXPECT_THAT(*ExplainStrategy(req, "tp=1,mbs=64,gbs=256"), HasSubstr("rejected (memory: "));
  EXPECT_THAT(*ExplainStrategy(req, "tp=2,pp=2"), HasSubstr("feasible, simulated"));
  EXPECT_FALSE(ExplainStrategy(req, "tpp=2").ok());
}

// Ranking by the run with failures needs the goodput simulation; with it the
// order follows the mean time-to-train over trials.
TEST(SearchTest, GoodputRanking) {
  SearchRequest req = Small(2);
  req.rank_by = "goodput-time-to-train";
  req.base.mutable_pricing()->set_train_tokens(1e9);
  EXPECT_THAT(RunSearch(req).status().message(), HasSubstr("--goodput"));
  req.base.mutable_reliability()->set_trials(20);
  absl::StatusOr<SearchReport> r = RunSearch(req);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_GE(r->top.size(), 2u);
  for (size_t i = 1; i < r->top.size(); ++i) {
    ASSERT_TRUE(r->top[i].result.has_goodput());
    EXPECT_LE(r->top[i - 1].result.goodput().time_to_train_days().mean(),
              r->top[i].result.goodput().time_to_train_days().mean());
  }
}

// Precision as a search dimension: on a GPU with an FP8 peak, "auto" tries the
// scenario's precision and fp8; the fp8 layouts run the GEMMs at the FP8 peak.
TEST(SearchTest, AutoPrecisionsTryFp8WhereTheGpuHasIt) {
  SearchRequest req = Small(2);
  req.base.mutable_cluster()->set_gpu("h100-sxm5-80gb");
  absl::StatusOr<SearchReport> bf16 = RunSearch(req);
  req.precisions = {"auto"};
  absl::StatusOr<SearchReport> r = RunSearch(req);
  ASSERT_TRUE(r.ok() && bf16.ok()) << r.status() << bf16.status();
  EXPECT_EQ(r->precisions, (std::vector<std::string>{"bf16", "fp8"}));
  EXPECT_TRUE(r->notes.empty());
  EXPECT_EQ(r->enumerated, 2 * bf16->enumerated);
  // Every candidate names its precision; the best fp8 one beats its own
  // layout in bf16.
  for (const StudyRow& row : r->top) EXPECT_TRUE(row.show_precision);
  const SameLayout fp8 = BestAndSameLayout(*r, "fp8", "bf16");
  ASSERT_NE(fp8.best, nullptr);
  ASSERT_GE(fp8.other_step_s, 0) << fp8.other_label;
  EXPECT_LT(fp8.best->result.step_time_s(), fp8.other_step_s) << fp8.other_label;
  RecordProperty("best_fp8_step_s", std::to_string(fp8.best->result.step_time_s()));
  RecordProperty("same_layout_bf16_step_s", std::to_string(fp8.other_step_s));
  EXPECT_THAT(*FormatSearchReport(*r, "text"), HasSubstr("precisions searched: bf16, fp8"));
  EXPECT_THAT(*FormatSearchReport(*r, "json"), HasSubstr(" fp8\""));
}

TEST(SearchTest, NoFp8WhereTheGpuLacksIt) {
  SearchRequest req = Small(2);  // A100: no FP8 peak
  absl::StatusOr<SearchReport> plain = RunSearch(req);
  req.precisions = {"auto"};
  absl::StatusOr<SearchReport> r = RunSearch(req);
  ASSERT_TRUE(r.ok() && plain.ok()) << r.status() << plain.status();
  EXPECT_EQ(r->precisions, (std::vector<std::string>{"bf16"}));
  EXPECT_EQ(r->enumerated, plain->enumerated);
  EXPECT_EQ(*FormatSearchReport(*r, "text"), *FormatSearchReport(*plain, "text"));
  // Asked for by name, it is not tried either, and the report says why.
  req.precisions = {"bf16", "fp8"};
  r = RunSearch(req);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->precisions, (std::vector<std::string>{"bf16"}));
  EXPECT_EQ(r->enumerated, plain->enumerated);
  ASSERT_EQ(r->notes.size(), 1u);
  EXPECT_THAT(r->notes[0], HasSubstr("fp8 not searched"));
  for (const StudyRow& row : r->top) {
    EXPECT_NE(row.result.scenario().training().precision(), "fp8");
  }
}

// On a Blackwell GPU "auto" adds NVFP4 training (Transformer Engine's
// NVFP4BlockScaling recipe); at 6.7B its best layout beats the same layout
// in bf16 (at 1.3B its quantize passes cancel its faster GEMMs). Asked for on
// a GPU without FP4 tensor cores, it is dropped with a note.
TEST(SearchTest, AutoPrecisionsTryNvfp4OnBlackwell) {
  SearchRequest req = Small(2);
  req.base.mutable_model()->set_preset("gpt3-6.7b");
  req.base.mutable_cluster()->set_gpu("b200-sxm-180gb");
  req.precisions = {"auto"};
  absl::StatusOr<SearchReport> r = RunSearch(req);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->precisions, (std::vector<std::string>{"bf16", "fp8", "nvfp4"}));
  EXPECT_TRUE(r->notes.empty());
  const SameLayout fp4 = BestAndSameLayout(*r, "nvfp4", "bf16");
  ASSERT_NE(fp4.best, nullptr);
  ASSERT_GE(fp4.other_step_s, 0) << fp4.other_label;
  EXPECT_LT(fp4.best->result.step_time_s(), fp4.other_step_s) << fp4.other_label;
  EXPECT_THAT(*FormatSearchReport(*r, "text"), HasSubstr("precisions searched: bf16, fp8, nvfp4"));

  req.base.mutable_cluster()->set_gpu("h100-sxm5-80gb");
  req.precisions = {"bf16", "nvfp4"};
  r = RunSearch(req);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->precisions, (std::vector<std::string>{"bf16"}));
  ASSERT_EQ(r->notes.size(), 1u);
  EXPECT_THAT(r->notes[0], HasSubstr("nvfp4 not searched"));
  EXPECT_THAT(r->notes[0], HasSubstr("FP4 tensor cores"));
}

TEST(SearchTest, AnUnknownPrecisionNamesTheFlag) {
  SearchRequest req = Small(1);
  for (const auto& bad :
       std::vector<std::vector<std::string>>{{"bf16", "fp4"}, {""}, {"auto", "fp8"}}) {
    req.precisions = bad;
    const absl::Status s = RunSearch(req).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(s.message(), HasSubstr("--search-precisions"));
  }
}

}  // namespace
}  // namespace clustersim::scenarios
