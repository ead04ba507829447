// The goodput model against published figures (docs/goodput.md, "Validation").
#include "scenarios/goodput/goodput.h"

#include <cmath>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scenarios/input/resolve.h"
#include "scenarios/run/runner.h"
#include "topology/reliability_catalog.h"

namespace clustersim::scenarios {
namespace {

using ::testing::HasSubstr;

// Job MTTF from the simulated runs: wall time over unplanned interruptions.
double SimulatedMttfHours(const std::string& profile, int gpus) {
  const config::FailureProfile& p = **topology::ReliabilityCatalog::Default().FindProfile(profile);
  TimelineInputs in;
  for (const config::FailureCause& c : p.cause()) {
    in.causes.push_back({c.name(), c.component(), topology::CauseRatePerJobHour(c, gpus, 8),
                         c.needs_node(), false});
  }
  in.compute_s = 2000 * 86400.0;
  in.interval_s = 86400;
  in.restart_s = 600;
  const TimelineStats st = SimulateRuns(in, {.trials = 20, .seed = 1});
  double n = 0;
  for (double c : st.mean_interruptions) n += c;
  return st.mean_wall_s / 3600.0 / n;
}

// Kokolis et al. 2024: 47.7 days at 8 GPUs (held out: the rates come from the
// 16,384-GPU projection and the 1,024-GPU point) and 7.9 hours at 1,024 GPUs.
TEST(GoodputValidationTest, JobMttfMatchesKokolis) {
  const double at8 = SimulatedMttfHours("meta-rsc-a100", 8) / 24.0;
  const double at1024 = SimulatedMttfHours("meta-rsc-a100", 1024);
  EXPECT_NEAR(at8, 47.7, 0.25 * 47.7);
  EXPECT_NEAR(at1024, 7.9, 0.25 * 7.9);
  RecordProperty("mttf_8_gpus_days", std::to_string(at8));
  RecordProperty("mttf_1024_gpus_hours", std::to_string(at1024));
}

// Young/Daly against the simulator's own brute-force sweep of intervals.
TEST(GoodputValidationTest, YoungDalyWithinTenPercentOfBruteForce) {
  TimelineInputs in;
  in.causes = {{"hw", "gpu", 0.5, true, false}};  // MTTF 2 h
  in.compute_s = 20 * 86400.0;
  in.stall_s = 120;  // blocking checkpoints
  in.restart_s = 600;
  const double yd = YoungDalyInterval(in.stall_s, 7200);
  in.interval_s = yd;
  const IntervalSweep sw = SweepInterval(in, {0.4, 0.55, 0.7, 0.85, 1.0, 1.2, 1.45, 1.8, 2.5},
                                         {.trials = 300, .seed = 11});
  EXPECT_NEAR(sw.best_interval_s / yd, 1.0, 0.10)
      << "Young/Daly " << yd << " s, simulated optimum " << sw.best_interval_s << " s";
  RecordProperty("young_daly_s", std::to_string(yd));
  RecordProperty("brute_force_s", std::to_string(sw.best_interval_s));
}

config::Scenario Llama7b(const std::string& mode) {
  config::Scenario s;
  s.mutable_model()->set_preset("llama2-7b");
  s.mutable_cluster()->set_gpu("h100-sxm5-80gb");
  s.mutable_cluster()->set_num_gpus(8);
  s.mutable_training()->set_global_batch_size(64);
  s.mutable_training()->set_micro_batch_size(1);
  s.mutable_parallelism()->set_use_distributed_optimizer(true);
  s.mutable_pricing()->set_train_tokens(1e9);
  s.mutable_reliability()->set_storage("nfs");
  s.mutable_reliability()->set_checkpoint_mode(mode);
  s.mutable_reliability()->set_trials(10);
  return s;
}

// PyTorch DCP blog (2024): a 7B model's checkpoint blocked training 148.8 s
// synchronously and 6.3 s asynchronously: minutes against seconds. Checked:
// the asynchronous stall within seconds (under 1.5 x 6.3 s), the blocking one
// within a factor 2.5 of 148.8 s (the blog's storage is not ours: one node
// writing to the nfs preset here).
TEST(GoodputValidationTest, AsyncCheckpointOf7bBlocksSecondsBlockingMinutes) {
  double stall[2];
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<ResolvedScenario> r = Resolve(Llama7b(i == 0 ? "async" : "blocking"));
    ASSERT_TRUE(r.ok()) << r.status();
    absl::StatusOr<config::Result> out = RunScenario(*r, {});
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_TRUE(out->has_goodput());
    stall[i] = out->goodput().checkpoint_stall_s();
    EXPECT_NEAR(out->goodput().checkpoint_gb(), 6.74e9 * 14 / 1e9, 5);
  }
  EXPECT_LT(stall[0], 1.5 * 6.3);
  EXPECT_GE(stall[1], 148.8 / 2.5);
  EXPECT_LE(stall[1], 148.8 * 2.5);
  RecordProperty("async_stall_s", std::to_string(stall[0]));
  RecordProperty("blocking_stall_s", std::to_string(stall[1]));
}

// The snapshot copies over the GPU's host link: 63 GB/s PCIe 5 on an H100
// node, 225 GB/s NVLink-C2C on a GB200 superchip (links.textproto), each at
// the catalog's copy efficiency.
TEST(GoodputTest, SnapshotCopiesOverTheHostLink) {
  double rate[2];
  const char* gpus[2] = {"h100-sxm5-80gb", "gb200-186gb"};
  for (int i = 0; i < 2; ++i) {
    config::Scenario s = Llama7b("async");
    s.mutable_cluster()->set_gpu(gpus[i]);
    absl::StatusOr<ResolvedScenario> r = Resolve(s);
    ASSERT_TRUE(r.ok()) << r.status();
    absl::StatusOr<config::Result> step = RunScenario(*r, {});
    ASSERT_TRUE(step.ok()) << step.status();
    absl::StatusOr<GoodputPlan> plan = PlanGoodput(*r, *step);
    ASSERT_TRUE(plan.ok()) << plan.status();
    rate[i] = plan->snapshot_gb_per_gpu / plan->stall_s;
  }
  const double efficiency = topology::ReliabilityCatalog::Default().file().restart()
                                .snapshot_copy_efficiency();
  EXPECT_NEAR(rate[0], 63 * efficiency, 0.01);
  EXPECT_NEAR(rate[1], 225 * efficiency, 0.01);
}

TEST(GoodputTest, SectionWithoutRunLengthIsRefused) {
  config::Scenario s = Llama7b("async");
  s.mutable_pricing()->clear_train_tokens();
  EXPECT_THAT(ValidateReliability(s).message(), HasSubstr("pricing.train_tokens"));
}

TEST(GoodputTest, BadFieldsAreNamed) {
  config::Scenario s = Llama7b("async");
  s.mutable_reliability()->set_checkpoint_interval_s(0);
  EXPECT_THAT(ValidateReliability(s).message(), HasSubstr("reliability.checkpoint_interval_s=0"));
  s = Llama7b("async");
  s.mutable_reliability()->add_cause_rate()->set_cause("nope");
  EXPECT_THAT(ValidateReliability(s).message(), HasSubstr("faulty-gpu"));
}

// Spare nodes are billed at the GPU price for the whole mean wall time, on top
// of the job's GPU-hours; a pool that never runs dry changes nothing else.
TEST(GoodputTest, SparesAreBilledForTheWholeRun) {
  config::Scenario s = Llama7b("async");
  absl::StatusOr<ResolvedScenario> r = Resolve(s);
  ASSERT_TRUE(r.ok()) << r.status();
  absl::StatusOr<config::Result> plain = RunScenario(*r, {});
  ASSERT_TRUE(plain.ok()) << plain.status();
  s.mutable_reliability()->set_spare_nodes(100);
  ASSERT_TRUE(ValidateReliability(s).ok());
  r = Resolve(s);
  ASSERT_TRUE(r.ok()) << r.status();
  absl::StatusOr<config::Result> spared = RunScenario(*r, {});
  ASSERT_TRUE(spared.ok()) << spared.status();
  const config::Goodput& a = plain->goodput();
  const config::Goodput& b = spared->goodput();
  const double price = r->pricing.usd_per_gpu_hour;
  EXPECT_EQ(b.time_to_train_days().mean(), a.time_to_train_days().mean());
  EXPECT_EQ(b.spare_nodes(), 100);
  EXPECT_EQ(b.spare_shortfalls(), 0);
  EXPECT_NEAR(b.spare_gpu_hours(), 100 * 8 * b.time_to_train_days().mean() * 24, 1e-6);
  EXPECT_NEAR(b.spare_usd(), b.spare_gpu_hours() * price, 1e-6);
  EXPECT_NEAR(b.total_usd(), a.total_usd() + b.spare_usd(), 1e-6 * b.total_usd());
  EXPECT_EQ(b.gpu_hours(), a.gpu_hours());
  EXPECT_THAT(FormatGoodputText(*spared), HasSubstr("spares"));
  EXPECT_THAT(FormatGoodputText(*plain), ::testing::Not(HasSubstr("spares")));
}

// Energy over the run comes from the simulated step: the step's draw while the
// job trains (redone work included), the idle draw during stalls, restarts and
// waits, times PUE; more failures cost more energy.
TEST(GoodputTest, RunEnergyFollowsTheSimulatedDraw) {
  config::Scenario s = Llama7b("blocking");
  s.mutable_pricing()->set_train_tokens(3e10);  // days: checkpoints and failures happen
  absl::StatusOr<ResolvedScenario> r = Resolve(s);
  ASSERT_TRUE(r.ok()) << r.status();
  absl::StatusOr<config::Result> out = RunScenario(*r, {});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_TRUE(out->has_energy());
  const config::Goodput& g = out->goodput();
  const config::StepEnergy& e = out->energy();
  const double gpus = r->num_gpus, pue = r->pricing.pue;
  const double wall_s = g.time_to_train_days().mean() * 86400;
  const double train_s = g.compute_days() * 86400 + g.lost_work_hours() * 3600;
  ASSERT_GT(wall_s, train_s);
  EXPECT_NEAR(g.energy_kwh(),
              gpus * pue *
                  (train_s * e.average_power_w_per_gpu() + (wall_s - train_s) * e.idle_draw_w()) /
                  3.6e6,
              1e-9 * g.energy_kwh());
  // Between idle and the step's draw over the whole wall time.
  EXPECT_GT(g.energy_kwh(), gpus * pue * wall_s * e.idle_draw_w() / 3.6e6);
  EXPECT_LT(g.energy_kwh(), gpus * pue * wall_s * e.average_power_w_per_gpu() / 3.6e6);

  s.mutable_reliability()->set_failure_rate_scale(20);
  r = Resolve(s);
  ASSERT_TRUE(r.ok()) << r.status();
  absl::StatusOr<config::Result> worse = RunScenario(*r, {});
  ASSERT_TRUE(worse.ok()) << worse.status();
  EXPECT_GT(worse->goodput().energy_kwh(), g.energy_kwh());
}

// A cluster so failure-prone that no checkpoint interval completes is refused,
// not simulated for ever.
TEST(GoodputTest, RunThatCannotFinishIsRefused) {
  config::Scenario s = Llama7b("blocking");
  s.mutable_reliability()->set_failure_rate_scale(1e6);
  ASSERT_TRUE(ValidateReliability(s).ok());
  absl::StatusOr<ResolvedScenario> r = Resolve(s);
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(RunScenario(*r, {}).status().message(), HasSubstr("almost never finish"));
}

}  // namespace
}  // namespace clustersim::scenarios
