// File: scenarios/goodput/run_timeline.h
//
// A whole training run as events: a seeded Monte Carlo over trials, each a
// discrete-event timeline on sim::Simulator of training segments,
// checkpoints (a stall, then for asynchronous checkpoints an upload beside
// training), interruptions (unplanned failures by cause, planned
// maintenance), repairs and restarts, until the failure-free compute time
// `compute_s` has been done.
//
// Semantics:
//  - Interruptions arrive as independent Poisson processes (one per cause) in
//    wall time, in every phase (training, checkpoint stall, restart, repair).
//  - Work is durable once a checkpoint's stall has ended (blocking) or its
//    upload has finished (asynchronous). A failure rolls the run back to the
//    last durable checkpoint: the difference is lost work. A checkpoint that
//    falls due while the previous upload runs waits for it (training goes on).
//  - A failure costs the restart (detection, reschedule, process-group init,
//    checkpoint load, warm-up). When the cause needs nodes (`nodes` of them:
//    more than one for a failure that takes down a switch's nodes), they are
//    replaced from hot spares: an unlimited supply by default, or a pool of
//    `spare_nodes` (spare_pool.h) that failed nodes rejoin once repaired, the
//    job waiting for repairs when it runs dry; without hot spares the job
//    waits for all its failed nodes' repairs (exponential, mean repair_s each).
//    A planned interruption saves first (no work lost) and skips detection.
//  - Time inside the simulator is integer picoseconds; each stretch between
//    interruptions runs on a fresh Simulator (the Poisson arrivals are
//    memoryless, so the next arrival is drawn anew), and a stretch longer than
//    30 days is split, so runs of any length stay inside the picosecond clock.
// Deterministic: trial t uses a std::mt19937_64 seeded from (seed, t), with
// this file's own uniform and exponential draws; a finite spare pool draws its
// repair times from a second stream of (seed, t), so the failures of a trial
// do not depend on the pool's size.
//
// Example:
//   TimelineInputs in{.compute_s = 4.6e6, .causes = {{"gpu", "gpu", 0.1, true}},
//                     .interval_s = 600, .stall_s = 1, .upload_s = 20, .restart_s = 900};
//   TimelineStats st = SimulateRuns(in, {.trials = 1000, .seed = 1});
//   st.wall_s[st.wall_s.size() / 2];   // the median time-to-train
#ifndef CLUSTERSIM_SCENARIOS_GOODPUT_RUN_TIMELINE_H_
#define CLUSTERSIM_SCENARIOS_GOODPUT_RUN_TIMELINE_H_

#include <cstdint>
#include <string>
#include <vector>

namespace clustersim::scenarios {

struct CauseRate {
  std::string name;
  std::string component;
  double per_hour = 0;      // interruptions per hour of this job
  bool needs_node = false;  // repair wait when there is no hot spare
  bool planned = false;     // save first; no lost work, no detection
  int nodes = 1;            // nodes one interruption takes down (when needs_node)
};

struct TimelineInputs {
  double compute_s = 0;  // failure-free time of all steps
  std::vector<CauseRate> causes;
  double interval_s = 0;      // training seconds between checkpoints; > 0
  double stall_s = 0;         // GPUs stopped per checkpoint
  double upload_s = 0;        // after the stall, until durable (0 when blocking)
  double restart_s = 0;       // after a failure: detection + reschedule + init + load + warm-up
  double planned_down_s = 0;  // a planned stop: save + reschedule + init + load + warm-up
  bool hot_spares = true;
  int spare_nodes = -1;  // hot spare nodes kept (with hot_spares); -1: never short of one
  double repair_s = 0;   // mean time to repair a node
};

struct TimelineOptions {
  int trials = 1000;
  uint64_t seed = 1;
  bool record_first = false;  // keep trial 0's events
};

struct TimelineEvent {
  double t_s = 0;
  enum class Kind { kFailure, kPlanned, kCheckpoint, kFinish } kind;
  int cause = -1;         // index into TimelineInputs::causes
  double duration_s = 0;  // the restart (interruptions) or the stall (checkpoints)
};

struct TimelineStats {
  std::vector<double> wall_s;  // per trial, sorted ascending
  double mean_wall_s = 0;
  double mean_stall_s = 0;                 // checkpoint stalls (incl. planned saves)
  double mean_lost_s = 0;                  // work redone
  double mean_restart_s = 0;               // restarts (incl. interrupted ones)
  double mean_repair_s = 0;                // waits for repairs
  double mean_spare_waits = 0;             // failures that found the spare pool short
  std::vector<double> mean_interruptions;  // per cause
  double mean_checkpoints = 0;
  std::vector<TimelineEvent> first_trial;  // with record_first: interruptions, ~100 checkpoints
  double first_trial_wall_s = 0;
  uint64_t events = 0;  // simulator events over all trials
};

// REQUIRES: compute_s > 0, interval_s > 0, every rate and time >= 0, trials >= 1.
TimelineStats SimulateRuns(const TimelineInputs& in, const TimelineOptions& options);

// Young's interval with Daly's correction (Daly 2006, eq. 37):
// sqrt(2 d M) [1 + sqrt(d / 2M) / 3 + d / 18M] - d for d < 2M, else M;
// d = stall per checkpoint, M = mean time between unplanned failures.
double YoungDalyInterval(double stall_s, double mttf_s);

// The brute-force check: mean time-to-train at `interval_s` x each multiplier
// (the same random numbers for every interval), and the interval minimising a
// parabola fitted through the best point and its neighbours in log(interval).
struct IntervalSweep {
  std::vector<double> intervals_s;
  std::vector<double> mean_wall_s;
  double best_interval_s = 0;
};
IntervalSweep SweepInterval(const TimelineInputs& in, const std::vector<double>& multipliers,
                            const TimelineOptions& options);

}  // namespace clustersim::scenarios

#endif  // CLUSTERSIM_SCENARIOS_GOODPUT_RUN_TIMELINE_H_
