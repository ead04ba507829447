#include "scenarios/goodput/run_timeline.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>

#include "scenarios/goodput/spare_pool.h"
#include "sim/check.h"
#include "sim/random.h"
#include "sim/simulator.h"
#include "sim/units.h"

namespace clustersim::scenarios {
namespace {

// A stretch of simulated time longer than this is split (the clock holds 106 days).
constexpr double kStretchCapS = 30 * 86400.0;
// The first trial keeps at most this many events: its interruptions, and
// about kMaxRecordedCheckpoints evenly spread checkpoints.
constexpr size_t kMaxRecorded = 1000;
constexpr size_t kMaxRecordedCheckpoints = 100;

// Uniform in [0, 1) from 53 random bits (the same on every standard library).
double Uniform(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }
double Exponential(std::mt19937_64& rng, double mean) { return -std::log1p(-Uniform(rng)) * mean; }

// SplitMix64 of (seed, trial): independent streams per trial.
uint64_t TrialSeed(uint64_t seed, uint64_t trial) {
  return sim::StableHash(seed + 0x9e3779b97f4a7c15ULL * trial);
}

// One trial. Each stretch between interruptions runs on its own Simulator;
// the state below carries across stretches.
class Trial : public sim::EventHandler {
 public:
  Trial(const TimelineInputs& in, uint64_t seed, double total_rate_per_s,
        std::vector<TimelineEvent>* record, size_t checkpoint_stride)
      : in_(in),
        rng_(seed),
        total_rate_per_s_(total_rate_per_s),
        record_(record),
        checkpoint_stride_(checkpoint_stride),
        interruptions_(in.causes.size(), 0),
        repair_rng_(sim::Mix(seed, 1)) {
    if (in.hot_spares && in.spare_nodes >= 0) pool_.emplace(in.spare_nodes, in.repair_s);
  }

  void Run();

  double wall_s = 0, stall_s = 0, lost_s = 0, restart_s = 0, repair_s = 0;
  double checkpoints = 0, spare_waits = 0;
  uint64_t events = 0;
  const std::vector<int>& interruptions() const { return interruptions_; }

 private:
  enum Kind : uint32_t { kTrainStop, kStallEnd, kRepairDone, kRestartDone, kInterrupt, kCap };
  enum class Phase { kTrain, kStall, kRepair, kRestart, kDone };

  void OnEvent(uint32_t arg) override;
  void Schedule(double after_s, Kind kind) {
    sim_->ScheduleEvent(sim_->Now() + sim::Duration::FromSecondsDouble(after_s), handler_,
                        kind | (generation_ << 3));
  }
  double NowS() const { return sim_->Now().ToSeconds(); }
  void Record(TimelineEvent::Kind kind, int cause, double duration_s) {
    if (record_ == nullptr || record_->size() >= kMaxRecorded + kMaxRecordedCheckpoints) return;
    record_->push_back({wall_s + NowS(), kind, cause, duration_s});
  }
  // Enters the current phase from its remaining time.
  void EnterPhase();
  void StartTraining();
  void StopTraining();  // accounts the work done since training (re)started
  // Adds the time since the current phase (re)started to its tally (training's
  // to the work done) and returns it.
  double TallyPhase();
  void Interrupt(int cause);
  void MaybeFinishUpload();
  // Ends the stretch now, keeping the phase's remaining time for the next one.
  void Carry();
  void End() {
    ended_ = true;
    stretch_end_s_ = NowS();
  }

  const TimelineInputs& in_;
  std::mt19937_64 rng_;
  const double total_rate_per_s_;
  std::vector<TimelineEvent>* record_;
  const size_t checkpoint_stride_;
  std::vector<int> interruptions_;
  sim::SplitMix64 repair_rng_;
  std::optional<SparePool> pool_;

  sim::Simulator* sim_ = nullptr;
  uint32_t handler_ = 0;
  uint32_t generation_ = 0;  // bumped to invalidate pending training stops
  // Carried across stretches.
  Phase phase_ = Phase::kRestart;
  double phase_left_s_ = 0;  // remaining stall, repair or restart
  double restart_after_repair_s_ = 0;
  double done_ = 0;             // work done, seconds (durable or not)
  double durable_ = 0;          // work saved by a finished checkpoint
  double next_checkpoint_ = 0;  // work at which the next checkpoint starts
  double upload_work_ = -1;     // work of the checkpoint being uploaded; -1: none
  double upload_left_s_ = 0;    // until that upload is durable
  // Within a stretch.
  double phase_start_s_ = 0;
  double upload_done_at_s_ = 0;
  bool ended_ = false;  // the stretch ended (interruption, cap or finish)
  double stretch_end_s_ = 0;
};

void Trial::MaybeFinishUpload() {
  if (upload_work_ >= 0 && NowS() >= upload_done_at_s_) {
    durable_ = upload_work_;
    upload_work_ = -1;
  }
}

void Trial::StartTraining() {
  phase_ = Phase::kTrain;
  phase_start_s_ = NowS();
  ++generation_;
  const double to_finish = in_.compute_s - done_;
  double to_checkpoint = next_checkpoint_ - done_;
  // A checkpoint waits for the previous upload.
  if (upload_work_ >= 0) to_checkpoint = std::max(to_checkpoint, upload_done_at_s_ - NowS());
  Schedule(std::max(0.0, std::min(to_finish, to_checkpoint)), kTrainStop);
}

void Trial::StopTraining() {
  done_ = std::min(in_.compute_s, done_ + (NowS() - phase_start_s_));
  phase_start_s_ = NowS();
}

double Trial::TallyPhase() {
  const double elapsed = NowS() - phase_start_s_;
  switch (phase_) {
    case Phase::kTrain:
      StopTraining();
      break;
    case Phase::kStall:
      stall_s += elapsed;
      break;
    case Phase::kRepair:
      repair_s += elapsed;
      break;
    case Phase::kRestart:
      restart_s += elapsed;
      break;
    case Phase::kDone:
      break;
  }
  return elapsed;
}

void Trial::EnterPhase() {
  phase_start_s_ = NowS();
  switch (phase_) {
    case Phase::kTrain:
      StartTraining();
      return;
    case Phase::kStall:
      Schedule(phase_left_s_, kStallEnd);
      return;
    case Phase::kRepair:
      Schedule(phase_left_s_, kRepairDone);
      return;
    case Phase::kRestart:
      Schedule(phase_left_s_, kRestartDone);
      return;
    case Phase::kDone:
      return;
  }
}

void Trial::Interrupt(int cause) {
  const CauseRate& c = in_.causes[cause];
  ++interruptions_[cause];
  if (phase_ == Phase::kDone) return;
  TallyPhase();
  MaybeFinishUpload();
  double down_s;
  if (c.planned) {
    // Saved before stopping: nothing is lost.
    durable_ = done_;
    down_s = in_.planned_down_s;
    Record(TimelineEvent::Kind::kPlanned, cause, down_s);
  } else {
    lost_s += done_ - durable_;
    done_ = durable_;
    down_s = in_.restart_s;
    Record(TimelineEvent::Kind::kFailure, cause, down_s);
  }
  upload_work_ = -1;
  next_checkpoint_ = done_ + in_.interval_s;
  double wait_s = 0;
  if (c.needs_node && !c.planned && !in_.hot_spares) {
    // The job needs its own nodes back: the slowest of their repairs.
    for (int i = 0; i < c.nodes; ++i) wait_s = std::max(wait_s, Exponential(rng_, in_.repair_s));
  } else if (c.needs_node && !c.planned && pool_) {
    wait_s = pool_->Replace(c.nodes, wall_s + NowS(), repair_rng_);
    if (wait_s > 0) spare_waits += 1;
  }
  if (wait_s > 0) {
    phase_ = Phase::kRepair;
    phase_left_s_ = wait_s;
    restart_after_repair_s_ = down_s;
  } else {
    phase_ = Phase::kRestart;
    phase_left_s_ = down_s;
  }
}

void Trial::OnEvent(uint32_t arg) {
  ++events;
  if (ended_) return;
  const Kind kind = static_cast<Kind>(arg & 7);
  if (kind == kTrainStop && (arg >> 3) != (generation_ & 0x1fffffffu)) return;  // superseded
  if (kind == kInterrupt && phase_ == Phase::kRepair) {
    // The job is not running while it waits for a repair: nothing to interrupt.
    Carry();
    return;
  }
  switch (kind) {
    case kTrainStop: {
      StopTraining();
      MaybeFinishUpload();
      if (done_ >= in_.compute_s) {
        phase_ = Phase::kDone;
        End();
        Record(TimelineEvent::Kind::kFinish, -1, 0);
        return;
      }
      phase_ = Phase::kStall;
      phase_left_s_ = in_.stall_s;
      EnterPhase();
      return;
    }
    case kStallEnd: {
      TallyPhase();
      checkpoints += 1;
      if (record_ != nullptr && static_cast<size_t>(checkpoints) % checkpoint_stride_ == 0) {
        Record(TimelineEvent::Kind::kCheckpoint, -1, in_.stall_s);
      }
      if (in_.upload_s > 0) {
        upload_work_ = done_;
        upload_done_at_s_ = NowS() + in_.upload_s;
      } else {
        durable_ = done_;
      }
      next_checkpoint_ = done_ + in_.interval_s;
      StartTraining();
      return;
    }
    case kRepairDone:
      TallyPhase();
      phase_ = Phase::kRestart;
      phase_left_s_ = restart_after_repair_s_;
      EnterPhase();
      return;
    case kRestartDone:
      TallyPhase();
      StartTraining();
      return;
    case kInterrupt: {
      // The cause, drawn in proportion to its rate.
      double u = Uniform(rng_) * total_rate_per_s_ * 3600.0;
      int cause = static_cast<int>(in_.causes.size()) - 1;
      for (size_t i = 0; i < in_.causes.size(); ++i) {
        if (u < in_.causes[i].per_hour) {
          cause = static_cast<int>(i);
          break;
        }
        u -= in_.causes[i].per_hour;
      }
      Interrupt(cause);
      End();
      return;
    }
    case kCap:
      Carry();
      return;
  }
}

void Trial::Carry() {
  const double elapsed = TallyPhase();
  if (phase_ != Phase::kTrain) phase_left_s_ = std::max(0.0, phase_left_s_ - elapsed);
  End();
}

void Trial::Run() {
  // The job starts as after a planned stop: init, nothing to load beyond that.
  phase_ = Phase::kRestart;
  phase_left_s_ = 0;
  next_checkpoint_ = in_.interval_s;
  while (phase_ != Phase::kDone) {
    sim::Simulator sim;
    sim_ = &sim;
    handler_ = sim.AddHandler(this);
    ended_ = false;
    const double next_s =
        total_rate_per_s_ > 0 ? Exponential(rng_, 1.0 / total_rate_per_s_) : kStretchCapS * 2;
    const double end_s = std::min(next_s, kStretchCapS);
    // Carry an upload across the stretch boundary.
    if (upload_work_ >= 0) upload_done_at_s_ = upload_left_s_;
    EnterPhase();
    sim.ScheduleEvent(sim::Time::Zero() + sim::Duration::FromSecondsDouble(end_s), handler_,
                      next_s < kStretchCapS ? kInterrupt : kCap);
    sim.RunUntil(sim::Time::Zero() + sim::Duration::FromSecondsDouble(end_s));
    SIM_CHECK(ended_) << "a stretch of the run ended without an interruption or finish";
    if (upload_work_ >= 0) upload_left_s_ = std::max(0.0, upload_done_at_s_ - stretch_end_s_);
    wall_s += stretch_end_s_;
    sim_ = nullptr;
  }
}

}  // namespace

TimelineStats SimulateRuns(const TimelineInputs& in, const TimelineOptions& options) {
  SIM_CHECK(in.compute_s > 0 && in.interval_s > 0 && options.trials >= 1)
      << "SimulateRuns needs compute_s > 0, interval_s > 0 and trials >= 1";
  double total_per_hour = 0;
  for (const CauseRate& c : in.causes) total_per_hour += c.per_hour;
  const double rate_per_s = total_per_hour / 3600.0;
  const size_t stride = std::max<size_t>(
      1, static_cast<size_t>(std::ceil(in.compute_s / in.interval_s / kMaxRecordedCheckpoints)));
  TimelineStats st;
  st.mean_interruptions.assign(in.causes.size(), 0);
  st.wall_s.reserve(options.trials);
  for (int t = 0; t < options.trials; ++t) {
    std::vector<TimelineEvent>* record =
        (options.record_first && t == 0) ? &st.first_trial : nullptr;
    Trial trial(in, TrialSeed(options.seed, t), rate_per_s, record, stride);
    trial.Run();
    st.wall_s.push_back(trial.wall_s);
    st.mean_stall_s += trial.stall_s;
    st.mean_lost_s += trial.lost_s;
    st.mean_restart_s += trial.restart_s;
    st.mean_repair_s += trial.repair_s;
    st.mean_spare_waits += trial.spare_waits;
    st.mean_checkpoints += trial.checkpoints;
    st.events += trial.events;
    for (size_t c = 0; c < in.causes.size(); ++c) {
      st.mean_interruptions[c] += trial.interruptions()[c];
    }
    if (t == 0) st.first_trial_wall_s = trial.wall_s;
  }
  const double n = options.trials;
  for (double w : st.wall_s) st.mean_wall_s += w / n;
  st.mean_stall_s /= n;
  st.mean_lost_s /= n;
  st.mean_restart_s /= n;
  st.mean_repair_s /= n;
  st.mean_spare_waits /= n;
  st.mean_checkpoints /= n;
  for (double& c : st.mean_interruptions) c /= n;
  std::sort(st.wall_s.begin(), st.wall_s.end());
  return st;
}

double YoungDalyInterval(double stall_s, double mttf_s) {
  if (!(stall_s < 2 * mttf_s)) return mttf_s;
  const double r = stall_s / (2 * mttf_s);
  return std::sqrt(2 * stall_s * mttf_s) * (1 + std::sqrt(r) / 3 + r / 9) - stall_s;
}

IntervalSweep SweepInterval(const TimelineInputs& in, const std::vector<double>& multipliers,
                            const TimelineOptions& options) {
  IntervalSweep sw;
  for (double m : multipliers) {
    TimelineInputs at = in;
    at.interval_s = in.interval_s * m;
    TimelineOptions o = options;
    o.record_first = false;
    sw.intervals_s.push_back(at.interval_s);
    sw.mean_wall_s.push_back(SimulateRuns(at, o).mean_wall_s);
  }
  const size_t best = static_cast<size_t>(
      std::min_element(sw.mean_wall_s.begin(), sw.mean_wall_s.end()) - sw.mean_wall_s.begin());
  sw.best_interval_s = sw.intervals_s[best];
  if (best == 0 || best + 1 == sw.intervals_s.size()) return sw;
  // Vertex of the parabola through the best point and its neighbours, in log(interval).
  const double x0 = std::log(sw.intervals_s[best - 1]), x1 = std::log(sw.intervals_s[best]),
               x2 = std::log(sw.intervals_s[best + 1]);
  const double y0 = sw.mean_wall_s[best - 1], y1 = sw.mean_wall_s[best],
               y2 = sw.mean_wall_s[best + 1];
  const double denom = (x0 - x1) * (x0 - x2) * (x1 - x2);
  const double a = (x2 * (y1 - y0) + x1 * (y0 - y2) + x0 * (y2 - y1)) / denom;
  const double b = (x2 * x2 * (y0 - y1) + x1 * x1 * (y2 - y0) + x0 * x0 * (y1 - y2)) / denom;
  if (a > 0) sw.best_interval_s = std::exp(-b / (2 * a));
  return sw;
}

}  // namespace clustersim::scenarios
