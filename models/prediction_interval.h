// File: models/prediction_interval.h
//
// The band a simulated step time carries: quantiles (10% and 90%) of measured
// / predicted step time of published runs out of source, in the most specific
// category a scenario falls into: its software stack, its GPU's generation and
// its scale (1-64, 65-512, 513+ GPUs), then stack x generation, stack alone,
// generation alone, every row. Bands are data
// (models/data/prediction_intervals.textproto), written by `clustersim fit
// --write-intervals` from the leave-one-source-out residuals; BuildBands makes
// them and Lookup reads them.
//
// Example:
//   models::StepInterval i = models::PredictionIntervals::Default().Lookup(
//       "megatron-core", "h100-sxm5-80gb", 512);
//   double lo = step_s * i.p10, hi = step_s * i.p90;
//   if (!i.validated) { ... }  // no out-of-source rows of this stack on this generation
#ifndef CLUSTERSIM_MODELS_PREDICTION_INTERVAL_H_
#define CLUSTERSIM_MODELS_PREDICTION_INTERVAL_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace clustersim::models {

// "ampere", "hopper", "blackwell", "ada", or "" for a device of no listed
// generation (Apple silicon, CPUs, Jetson), from the catalog name.
std::string GpuGeneration(std::string_view gpu);

// One measured run, predicted out of source.
struct IntervalResidual {
  std::string source, stack, generation;
  int num_gpus = 0;
  double ratio = 0;  // measured / predicted step time
};

struct IntervalBand {
  std::string stack, generation;  // "" = any
  int min_gpus = 0, max_gpus = 0;  // inclusive; max 0 = unbounded; 0/0 = any scale
  int rows = 0, sources = 0;
  double p10 = 1, p90 = 1;
};

// The bands of every category with at least `min_rows` residuals, most
// specific first (stack x generation x scale, stack x generation, stack,
// generation, all), each level sorted by key. Quantiles weigh every source
// alike (each row 1 / its source's rows in the category). Deterministic.
std::vector<IntervalBand> BuildBands(const std::vector<IntervalResidual>& residuals,
                                     int min_rows = 10);

// The band a scenario gets, and how it was chosen.
struct StepInterval {
  double p10 = 1, p90 = 1;
  std::string category;   // e.g. "megatron-core on hopper, 513+ GPUs"
  int rows = 0;
  bool validated = false;  // the category names the scenario's stack and generation
};

// The first band of `bands` (most specific first) whose category holds the
// scenario (its stack, GPU generation and GPU count); validated only when the
// band names both the stack and the generation. `bands` must hold an
// all-rows band.
StepInterval Lookup(const std::vector<IntervalBand>& bands, std::string_view stack,
                    std::string_view generation, int num_gpus);

class PredictionIntervals {
 public:
  // The shipped bands. A malformed embedded file is a programming error.
  static const PredictionIntervals& Default();
  // Parses a PredictionIntervalFile; needs an all-rows band, quantiles with
  // 0 < p10 <= p90, and scales in order. Errors name the origin and the band.
  static absl::StatusOr<PredictionIntervals> Parse(std::string_view textproto,
                                                   std::string_view origin);
  // Writes `bands` as a PredictionIntervalFile text.
  static std::string Format(const std::vector<IntervalBand>& bands, std::string_view source,
                            double coverage);

  StepInterval Lookup(std::string_view stack, std::string_view gpu, int num_gpus) const {
    return models::Lookup(bands_, stack, GpuGeneration(gpu), num_gpus);
  }
  const std::vector<IntervalBand>& bands() const { return bands_; }
  double coverage() const { return coverage_; }

 private:
  std::vector<IntervalBand> bands_;
  double coverage_ = 0;
};

}  // namespace clustersim::models

#endif  // CLUSTERSIM_MODELS_PREDICTION_INTERVAL_H_
