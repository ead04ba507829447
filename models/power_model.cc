#include "models/power_model.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/text_format.h"
#include "models/proto/power.pb.h"
#include "sim/check.h"

namespace clustersim::embedded {
std::string_view GpuPowerData();
}  // namespace clustersim::embedded

namespace clustersim::models {
namespace {

bool Positive(double v) { return std::isfinite(v) && v > 0; }

// A cap point with idle < cap < default and a ratio in (0, 1].
absl::StatusOr<CapPoint> ReadPoint(const config::PowerCapPoint& in, const std::string& where) {
  if (!Positive(in.idle_w()) || !(in.idle_w() < in.cap_w()) || !(in.cap_w() < in.default_w())) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": needs 0 < idle_w < cap_w < default_w, got idle_w=", in.idle_w(),
                     " cap_w=", in.cap_w(), " default_w=", in.default_w()));
  }
  if (!Positive(in.throughput_ratio()) || in.throughput_ratio() >= 1 ||
      (in.throughput_ratio_max() != 0 &&
       !(in.throughput_ratio_max() > in.throughput_ratio() && in.throughput_ratio_max() <= 1))) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": throughput_ratio=", in.throughput_ratio(), " must be in (0, 1) and ",
                     "throughput_ratio_max (if set) in (throughput_ratio, 1]"));
  }
  if (in.source().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": source is required"));
  }
  return CapPoint{in.gpu(),
                  in.cap_w(),
                  in.default_w(),
                  in.idle_w(),
                  in.throughput_ratio(),
                  in.throughput_ratio_max(),
                  in.source()};
}

}  // namespace

// The sustained-rate entry of `gpu` for input type `dtype` (none: 16-bit),
// or null.
const SustainedGemm* PowerModel::FindSustained(const std::string& gpu,
                                               std::optional<Dtype> dtype) const {
  for (const SustainedEntry& e : sustained_) {
    if (e.gpu == gpu && e.dtype == dtype) return &e.rate;
  }
  return nullptr;
}

absl::StatusOr<SustainedGemm> PowerModel::ScaledEntry(const config::SustainedRate& in,
                                                      std::optional<Dtype> dtype,
                                                      const std::string& where) const {
  if (!dtype.has_value() || !in.borrowed_from().empty() || in.sustained() != 0 ||
      in.burst() != 0 || !in.quantity().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": a scaled_from entry needs a dtype and takes no borrowed_from, sustained, "
               "burst or quantity"));
  }
  const SustainedGemm* own = FindSustained(in.gpu(), std::nullopt);
  const SustainedGemm* type = FindSustained(in.scaled_from(), dtype);
  const SustainedGemm* base = FindSustained(in.scaled_from(), std::nullopt);
  if (own == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": scaled_from needs a 16-bit entry (no dtype) of '", in.gpu(), "'"));
  }
  if (type == nullptr || !type->borrowed_from.empty() || !type->scaled_from.empty() ||
      base == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": scaled_from '", in.scaled_from(), "' must have an entry of dtype '", in.dtype(),
        "' measured on its own GPU and a 16-bit entry"));
  }
  SustainedGemm s;
  s.ratio = own->ratio * type->ratio / base->ratio;
  s.scaled_from = in.scaled_from();
  return s;
}

// The sustained-rate entries: measured ones first, then the borrowed ones,
// which take the numbers of the measured entry of the same input type they
// name, then the scaled ones (ScaledEntry). The fallback is the mean of the
// measured 16-bit entries.
absl::Status PowerModel::ReadSustained(const config::GpuPowerFile& file,
                                       const std::string& origin) {
  auto find = [this](const std::string& gpu, std::optional<Dtype> dtype) {
    return FindSustained(gpu, dtype);
  };
  double sum = 0;
  std::vector<std::string> measured;
  // Measured entries first, then those borrowed from them, then those scaled
  // from a measured type ratio (which need this GPU's 16-bit entry, measured or
  // borrowed).
  enum Pass { kMeasured, kBorrowed, kScaled };
  for (Pass pass : {kMeasured, kBorrowed, kScaled}) {
    for (int i = 0; i < file.sustained_size(); ++i) {
      const config::SustainedRate& in = file.sustained(i);
      const Pass kind = !in.scaled_from().empty()     ? kScaled
                        : !in.borrowed_from().empty() ? kBorrowed
                                                      : kMeasured;
      if (kind != pass) continue;
      const bool borrowed = kind == kBorrowed;
      const std::string where =
          absl::StrCat(origin, " sustained[", i, "] '", in.gpu(), "'",
                       in.dtype().empty() ? "" : absl::StrCat(" dtype '", in.dtype(), "'"));
      if (in.gpu().empty() || in.source().empty()) {
        return absl::InvalidArgumentError(absl::StrCat(where, ": gpu and source are required"));
      }
      std::optional<Dtype> dtype;
      if (!in.dtype().empty()) {
        absl::StatusOr<Dtype> d = ParseDtype(in.dtype());
        if (!d.ok()) {
          return absl::InvalidArgumentError(absl::StrCat(where, ": dtype: ", d.status().message(),
                                                         "; leave it empty for the 16-bit entry"));
        }
        dtype = *d;
      }
      if (find(in.gpu(), dtype) != nullptr) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": a second entry for the same GPU and dtype; keep one"));
      }
      SustainedGemm s;
      if (kind == kScaled) {
        absl::StatusOr<SustainedGemm> scaled = ScaledEntry(in, dtype, where);
        if (!scaled.ok()) return scaled.status();
        s = *std::move(scaled);
      } else if (borrowed) {
        const SustainedGemm* from = find(in.borrowed_from(), dtype);
        if (from == nullptr || !from->borrowed_from.empty()) {
          return absl::InvalidArgumentError(absl::StrCat(
              where, ": borrowed_from '", in.borrowed_from(),
              "' must name an entry of the same dtype measured on its own GPU (one without "
              "borrowed_from)"));
        }
        if (in.sustained() != 0 || in.burst() != 0 || !in.quantity().empty()) {
          return absl::InvalidArgumentError(
              absl::StrCat(where, ": a borrowed entry takes sustained, burst and quantity from '",
                           in.borrowed_from(), "'; remove them"));
        }
        s = *from;
        s.borrowed_from = in.borrowed_from();
      } else {
        if (!Positive(in.sustained()) || !Positive(in.burst()) || in.sustained() > in.burst() ||
            in.quantity().empty()) {
          return absl::InvalidArgumentError(absl::StrCat(
              where, ": needs 0 < sustained <= burst and a quantity, got sustained=",
              in.sustained(), " burst=", in.burst(), " quantity='", in.quantity(), "'"));
        }
        s.sustained = in.sustained();
        s.burst = in.burst();
        s.quantity = in.quantity();
        s.ratio = in.sustained() / in.burst();
        if (!dtype.has_value()) {
          sum += s.ratio;
          measured.push_back(absl::StrFormat("%s %.3f", in.gpu(), s.ratio));
        }
      }
      s.dtype = in.dtype();
      s.sourced = true;
      s.source = in.source();
      sustained_.push_back({in.gpu(), dtype, std::move(s)});
    }
  }
  if (measured.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(origin,
                     ": needs at least one 16-bit sustained entry (no dtype) measured on its own "
                     "GPU (the fallback of the GPUs without one is their mean)"));
  }
  sustained_fallback_ratio_ = sum / static_cast<double>(measured.size());
  sustained_fallback_source_ =
      absl::StrCat("inferred: the mean of the measured 16-bit sustained / burst ratios (",
                   absl::StrJoin(measured, ", "), ")");
  return absl::OkStatus();
}

double PowerModel::ClockRatio(double cap_w, double default_w, double idle_w, double exponent) {
  if (cap_w <= 0 || cap_w >= default_w) return 1.0;
  return std::pow((cap_w - idle_w) / (default_w - idle_w), 1.0 / exponent);
}

absl::StatusOr<PowerModel> PowerModel::Parse(std::string_view textproto,
                                             std::string_view origin_view) {
  const std::string origin(origin_view);
  config::GpuPowerFile file;
  if (!google::protobuf::TextFormat::ParseFromString(std::string(textproto), &file)) {
    return absl::InvalidArgumentError(
        absl::StrCat(origin, ": not a GpuPowerFile (models/proto/power.proto)"));
  }
  PowerModel m;
  absl::StatusOr<CapPoint> fit = ReadPoint(file.fit(), absl::StrCat(origin, " fit"));
  if (!fit.ok()) return fit.status();
  if (fit->throughput_ratio_max != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(origin, " fit: a band cannot be fitted; give one throughput_ratio"));
  }
  m.fit_ = *std::move(fit);
  // Fitted: load ratio = ratio^a.
  m.exponent_ = std::log((m.fit_.cap_w - m.fit_.idle_w) / (m.fit_.default_w - m.fit_.idle_w)) /
                std::log(m.fit_.throughput_ratio);
  for (int i = 0; i < file.held_out_size(); ++i) {
    absl::StatusOr<CapPoint> p =
        ReadPoint(file.held_out(i), absl::StrCat(origin, " held_out[", i, "]"));
    if (!p.ok()) return p.status();
    m.held_out_.push_back(*std::move(p));
  }
  m.held_out_tolerance_ = file.held_out_tolerance();
  const double fractions[] = {file.memory_bound_fraction(), file.fallback_idle_fraction(),
                              file.fallback_min_limit_fraction()};
  for (double f : fractions) {
    if (!Positive(f) || f >= 1) {
      return absl::InvalidArgumentError(
          absl::StrCat(origin, ": memory_bound_fraction, fallback_idle_fraction and ",
                       "fallback_min_limit_fraction must be in (0, 1)"));
    }
  }
  m.memory_bound_fraction_ = file.memory_bound_fraction();
  m.memory_bound_source_ = file.memory_bound_source();
  m.fallback_idle_fraction_ = file.fallback_idle_fraction();
  m.fallback_min_limit_fraction_ = file.fallback_min_limit_fraction();
  m.fallback_source_ = file.fallback_source();
  for (int i = 0; i < file.gpu_size(); ++i) {
    const config::GpuPower& g = file.gpu(i);
    const std::string where = absl::StrCat(origin, " gpu[", i, "] '", g.gpu(), "'");
    if (!Positive(g.idle_w()) || !(g.idle_w() < g.min_limit_w()) ||
        !(g.min_limit_w() < g.max_limit_w())) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": needs 0 < idle_w < min_limit_w < max_limit_w"));
    }
    if (g.source().empty()) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": source is required"));
    }
    BoardPower b;
    b.idle_w = g.idle_w();
    b.min_limit_w = g.min_limit_w();
    b.max_limit_w = g.max_limit_w();
    b.memory_bound_w = m.memory_bound_fraction_ * g.max_limit_w();
    b.sourced = true;
    b.source = absl::StrCat(g.source(), "; memory-bound draw: ", m.memory_bound_source_);
    m.entries_.push_back({g.gpu(), std::move(b)});
  }
  if (absl::Status s = m.ReadSustained(file, origin); !s.ok()) return s;
  return m;
}

const PowerModel& PowerModel::Default() {
  static const PowerModel kModel = [] {
    absl::StatusOr<PowerModel> parsed =
        Parse(embedded::GpuPowerData(), "models/data/gpu_power.textproto");
    SIM_CHECK(parsed.ok()) << "embedded " << parsed.status().message();
    return *std::move(parsed);
  }();
  return kModel;
}

BoardPower PowerModel::For(const GpuSpec& gpu) const {
  for (const Entry& e : entries_) {
    if (e.gpu == gpu.name) return e.power;
  }
  BoardPower b;
  b.idle_w = fallback_idle_fraction_ * gpu.tdp_w;
  b.min_limit_w = fallback_min_limit_fraction_ * gpu.tdp_w;
  b.max_limit_w = gpu.tdp_w;
  b.memory_bound_w = memory_bound_fraction_ * gpu.tdp_w;
  b.source = absl::StrCat(gpu.name, " fallback: ", fallback_source_,
                          "; memory-bound draw: ", memory_bound_source_);
  return b;
}

absl::Status PowerModel::CheckCap(const GpuSpec& gpu, double cap_w,
                                  std::string_view field_view) const {
  const std::string field(field_view);
  const BoardPower b = For(gpu);
  if (!(gpu.tdp_w > 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, "=", cap_w, ": ", gpu.name, " has no TDP in the GPU catalog; remove the cap"));
  }
  if (!std::isfinite(cap_w) || cap_w < b.min_limit_w || cap_w > b.max_limit_w) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, "=", cap_w, " W is outside ", gpu.name, "'s settable power limits [", b.min_limit_w,
        ", ", b.max_limit_w, "] W", b.sourced ? "" : " (inferred from its TDP)",
        "; give a value in that range, or leave it unset for the default limit"));
  }
  return absl::OkStatus();
}

double PowerModel::ClockRatio(const BoardPower& b, double cap_w) const {
  return ClockRatio(cap_w, b.max_limit_w, b.idle_w, exponent_);
}

SustainedGemm PowerModel::Sustained(const GpuSpec& gpu, Dtype dtype) const {
  for (std::optional<Dtype> d : {std::optional<Dtype>(dtype), std::optional<Dtype>()}) {
    for (const SustainedEntry& e : sustained_) {
      if (e.gpu == gpu.name && e.dtype == d) return e.rate;
    }
  }
  SustainedGemm s;
  s.ratio = sustained_fallback_ratio_;
  s.source = sustained_fallback_source_;
  return s;
}

void PowerModel::SetSustainedGemmRatios(const GpuSpec& gpu, KernelModelParams* params) const {
  for (Dtype d : kAllDtypes) params->sustained_gemm_ratio[DtypeIndex(d)] = Sustained(gpu, d).ratio;
}

KernelDraw PowerModel::Draw(const BoardPower& b, double cap_w) const {
  const double limit = cap_w > 0 ? std::min(cap_w, b.max_limit_w) : b.max_limit_w;
  return KernelDraw{limit, std::min(b.memory_bound_w, limit), b.idle_w};
}

}  // namespace clustersim::models
