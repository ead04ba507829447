#include "models/prediction_interval.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/text_format.h"
#include "models/proto/prediction_interval.pb.h"
#include "sim/check.h"

namespace clustersim::embedded {
std::string_view PredictionIntervalsData();
}  // namespace clustersim::embedded

namespace clustersim::models {
namespace {

struct Scale {
  int min_gpus, max_gpus;  // max 0: unbounded
};
constexpr Scale kScales[] = {{1, 64}, {65, 512}, {513, 0}};

bool InScale(int min_gpus, int max_gpus, int gpus) {
  if (min_gpus == 0 && max_gpus == 0) return true;
  return gpus >= min_gpus && (max_gpus == 0 || gpus <= max_gpus);
}

// The q-quantile of `v` (value, weight), sorted by value, non-empty: each
// point stands at the middle of its weight on the cumulative scale, and the
// quantile interpolates linearly between neighbours.
double WeightedQuantile(const std::vector<std::pair<double, double>>& v, double q) {
  double total = 0;
  for (const auto& [x, w] : v) total += w;
  double below = 0;
  double prev_at = 0, prev_x = v.front().first;
  for (size_t i = 0; i < v.size(); ++i) {
    const double at = (below + v[i].second / 2) / total;
    if (q <= at) {
      if (i == 0) return v[0].first;
      return prev_x + (q - prev_at) / (at - prev_at) * (v[i].first - prev_x);
    }
    below += v[i].second;
    prev_at = at;
    prev_x = v[i].first;
  }
  return v.back().first;
}

std::string Category(const IntervalBand& b) {
  const std::string who = b.stack.empty() ? "every stack" : b.stack;
  const std::string on = b.generation.empty() ? (b.stack.empty() ? "" : ", every GPU")
                                              : absl::StrCat(" on ", b.generation);
  std::string scale;
  if (b.min_gpus != 0 || b.max_gpus != 0) {
    scale = b.max_gpus == 0 ? absl::StrCat(", ", b.min_gpus, "+ GPUs")
                            : absl::StrCat(", ", b.min_gpus, "-", b.max_gpus, " GPUs");
  }
  if (b.stack.empty() && b.generation.empty()) return "every run";
  return absl::StrCat(who, on, scale);
}

}  // namespace

std::string GpuGeneration(std::string_view gpu) {
  struct Prefix {
    std::string_view prefix, generation;
  };
  static constexpr Prefix kPrefixes[] = {
      {"a100", "ampere"},    {"a10", "ampere"},    {"rtx-3090", "ampere"}, {"rtx-a6000", "ampere"},
      {"h100", "hopper"},    {"h200", "hopper"},   {"b200", "blackwell"},  {"gb200", "blackwell"},
      {"l40s", "ada"},       {"rtx-4090", "ada"},
  };
  for (const Prefix& p : kPrefixes) {
    if (gpu.substr(0, p.prefix.size()) == p.prefix) return std::string(p.generation);
  }
  return "";
}

std::vector<IntervalBand> BuildBands(const std::vector<IntervalResidual>& residuals,
                                     int min_rows) {
  // Key: stack, generation, scale index (-1: any); "" stack or generation: any.
  using Key = std::tuple<std::string, std::string, int>;
  struct Group {
    std::vector<std::pair<double, std::string>> ratios;  // ratio, source
    std::map<std::string, int> sources;                  // rows per source
  };
  // Levels, most specific first: which parts of the key a level keeps.
  const bool kLevels[][3] = {{true, true, true},
                             {true, true, false},
                             {true, false, false},
                             {false, true, false},
                             {false, false, false}};
  std::vector<IntervalBand> bands;
  for (const auto& keep : kLevels) {
    std::map<Key, Group> groups;
    for (const IntervalResidual& r : residuals) {
      if (keep[1] && r.generation.empty()) continue;
      int scale = -1;
      if (keep[2]) {
        for (int i = 0; i < static_cast<int>(std::size(kScales)); ++i) {
          if (InScale(kScales[i].min_gpus, kScales[i].max_gpus, r.num_gpus)) scale = i;
        }
      }
      Group& g = groups[{keep[0] ? r.stack : "", keep[1] ? r.generation : "", scale}];
      g.ratios.push_back({r.ratio, r.source});
      ++g.sources[r.source];
    }
    const bool all_rows = !keep[0] && !keep[1];
    if (all_rows && groups.empty()) groups[{"", "", -1}];
    for (auto& [key, g] : groups) {
      if (!all_rows && static_cast<int>(g.ratios.size()) < min_rows) continue;
      IntervalBand b;
      b.stack = std::get<0>(key);
      b.generation = std::get<1>(key);
      if (const int s = std::get<2>(key); s >= 0) {
        b.min_gpus = kScales[s].min_gpus;
        b.max_gpus = kScales[s].max_gpus;
      }
      b.rows = static_cast<int>(g.ratios.size());
      b.sources = static_cast<int>(g.sources.size());
      // Every source weighs alike: a new scenario is judged like a source the
      // fits have not seen, and one large table must not set the band alone.
      std::vector<std::pair<double, double>> weighted;
      for (const auto& [ratio, source] : g.ratios) {
        weighted.push_back({ratio, 1.0 / g.sources[source]});
      }
      std::sort(weighted.begin(), weighted.end());
      if (!weighted.empty()) {
        b.p10 = WeightedQuantile(weighted, 0.1);
        b.p90 = WeightedQuantile(weighted, 0.9);
      }
      bands.push_back(b);
    }
  }
  return bands;
}

StepInterval Lookup(const std::vector<IntervalBand>& bands, std::string_view stack,
                    std::string_view generation, int num_gpus) {
  for (const IntervalBand& b : bands) {
    const bool stack_ok = b.stack.empty() || b.stack == stack;
    const bool generation_ok = b.generation.empty() || b.generation == generation;
    if (!stack_ok || !generation_ok || !InScale(b.min_gpus, b.max_gpus, num_gpus)) continue;
    StepInterval i;
    i.p10 = b.p10;
    i.p90 = b.p90;
    i.rows = b.rows;
    i.validated = !b.stack.empty() && !b.generation.empty();
    i.category = Category(b);
    return i;
  }
  SIM_CHECK(false) << "prediction interval bands without an all-rows band";
  return {};
}

absl::StatusOr<PredictionIntervals> PredictionIntervals::Parse(std::string_view textproto,
                                                               std::string_view origin_view) {
  const std::string origin(origin_view);
  config::PredictionIntervalFile file;
  if (!google::protobuf::TextFormat::ParseFromString(std::string(textproto), &file)) {
    return absl::InvalidArgumentError(absl::StrCat(
        origin, ": not a PredictionIntervalFile (models/proto/prediction_interval.proto)"));
  }
  PredictionIntervals out;
  out.coverage_ = file.coverage();
  bool all_rows = false;
  for (int i = 0; i < file.band_size(); ++i) {
    const config::IntervalBand& in = file.band(i);
    const std::string where = absl::StrCat(origin, " band[", i, "]");
    if (!(in.p10() > 0 && in.p10() <= in.p90() && std::isfinite(in.p90()))) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, ": p10=", in.p10(), " and p90=", in.p90(), " must satisfy 0 < p10 <= p90"));
    }
    if (in.min_gpus() < 0 || in.max_gpus() < 0 ||
        (in.max_gpus() != 0 && in.max_gpus() < in.min_gpus())) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": min_gpus=", in.min_gpus(), " and max_gpus=", in.max_gpus(),
                       " are not a scale (max 0: unbounded)"));
    }
    IntervalBand b{in.stack(), in.generation(), in.min_gpus(), in.max_gpus(),
                   in.rows(),  in.sources(),    in.p10(),      in.p90()};
    all_rows = all_rows || (b.stack.empty() && b.generation.empty() && b.min_gpus == 0 &&
                            b.max_gpus == 0);
    out.bands_.push_back(b);
  }
  if (!all_rows) {
    return absl::InvalidArgumentError(
        absl::StrCat(origin, ": no all-rows band (stack, generation and scale empty); add it"));
  }
  return out;
}

std::string PredictionIntervals::Format(const std::vector<IntervalBand>& bands,
                                        std::string_view source, double coverage) {
  config::PredictionIntervalFile file;
  file.set_source(std::string(source));
  file.set_coverage(coverage);
  for (const IntervalBand& b : bands) {
    config::IntervalBand* out = file.add_band();
    out->set_stack(b.stack);
    out->set_generation(b.generation);
    out->set_min_gpus(b.min_gpus);
    out->set_max_gpus(b.max_gpus);
    out->set_rows(b.rows);
    out->set_sources(b.sources);
    out->set_p10(b.p10);
    out->set_p90(b.p90);
  }
  std::string text;
  google::protobuf::TextFormat::PrintToString(file, &text);
  return absl::StrCat(
      "# 80% bands of measured / predicted step time, out of source (schema:\n"
      "# models/proto/prediction_interval.proto). Written by `clustersim fit\n"
      "# --write-intervals`; rerun tests/validation/fit_intervals.sh to remake it.\n"
      "# proto-file: models/proto/prediction_interval.proto\n"
      "# proto-message: clustersim.config.PredictionIntervalFile\n\n",
      text);
}

const PredictionIntervals& PredictionIntervals::Default() {
  static const PredictionIntervals kIntervals = [] {
    absl::StatusOr<PredictionIntervals> parsed = Parse(
        embedded::PredictionIntervalsData(), "models/data/prediction_intervals.textproto");
    SIM_CHECK(parsed.ok()) << "embedded " << parsed.status().message();
    return *std::move(parsed);
  }();
  return kIntervals;
}

}  // namespace clustersim::models
