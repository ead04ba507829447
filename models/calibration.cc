#include "models/calibration.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"
#include "sim/check.h"
#include "sim/status_macros.h"

namespace clustersim::embedded {
std::string_view CalibrationA100Sxm480gbData();
std::string_view CalibrationB200Sxm180gbData();
std::string_view CalibrationGb200186gbData();
std::string_view CalibrationH100Sxm580gbData();
std::string_view CalibrationH200Sxm141gbData();
}  // namespace clustersim::embedded

namespace clustersim::models {
namespace {

// Collects protobuf text-format parse errors instead of logging them.
class ErrorCollector : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, int column, const std::string& message) override {
    if (first_.empty()) first_ = absl::StrCat("line ", line + 1, ":", column + 1, ": ", message);
  }
  const std::string& first() const { return first_; }

 private:
  std::string first_;
};

template <typename Proto>
absl::Status ParseText(std::string_view text, std::string_view origin, Proto* out) {
  google::protobuf::TextFormat::Parser parser;
  ErrorCollector errors;
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(std::string(text), out)) {
    return absl::InvalidArgumentError(absl::StrCat(std::string(origin), ": ", errors.first()));
  }
  return absl::OkStatus();
}

std::string KindName(config::KernelKind k) {
  switch (k) {
    case config::KERNEL_GEMM: return "gemm";
    case config::KERNEL_ATTENTION_FWD: return "attention_fwd";
    case config::KERNEL_ATTENTION_BWD: return "attention_bwd";
    case config::KERNEL_MEMORY_BOUND: return "memory_bound";
    case config::KERNEL_LAUNCH: return "launch";
    default: return "unspecified";
  }
}

std::string Label(const config::KernelMeasurement& m) {
  switch (m.kind()) {
    case config::KERNEL_GEMM:
      return absl::StrCat("gemm ", m.dtype(), " ", m.batch() > 1 ? absl::StrCat("b", m.batch(), " ") : "",
                          m.m(), "x", m.n(), "x", m.k());
    case config::KERNEL_ATTENTION_FWD:
    case config::KERNEL_ATTENTION_BWD:
      return absl::StrCat(KindName(m.kind()), " ", m.dtype(), " b", std::max<int64_t>(m.batch(), 1),
                          " h", m.heads(), " s", m.seq_q(), "/", m.seq_kv(), " d", m.head_dim(),
                          m.causal() ? " causal" : "");
    case config::KERNEL_MEMORY_BOUND:
      return absl::StrCat(m.op(), " ", m.bytes(), " B");
    default: return absl::StrCat(KindName(m.kind()), " ", m.op());
  }
}

// A kernel's tensors above 2^50 elements (a petabyte at 1 byte each) are not a
// real measurement; the int64 byte counts of GemmOp/AttentionOp stay far from
// overflow below it.
constexpr double kMaxElements = 1125899906842624.0;  // 2^50

std::string TooLarge(double elements) {
  return absl::StrCat("the shape is too large: ", elements,
                      " tensor elements; a real kernel's are below 2^50 (check m, n, k, batch, "
                      "heads, seq_q, seq_kv and head_dim)");
}

absl::Status CheckMeasurement(const config::KernelMeasurement& m) {
  auto bad = [&](std::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat("(", Label(m), "): ", std::string(what)));
  };
  if (m.kind() == config::KERNEL_KIND_UNSPECIFIED || !config::KernelKind_IsValid(m.kind())) {
    return bad("kind must be KERNEL_GEMM, KERNEL_ATTENTION_FWD, KERNEL_ATTENTION_BWD, "
               "KERNEL_MEMORY_BOUND or KERNEL_LAUNCH");
  }
  if (!(m.median_us() > 0)) return bad("median_us must be > 0");
  if ((m.p10_us() != 0 || m.p90_us() != 0) &&
      !(m.p10_us() > 0 && m.p10_us() <= m.median_us() && m.median_us() <= m.p90_us())) {
    return bad("p10_us <= median_us <= p90_us must hold (set both to 0 when not published)");
  }
  if (m.batch() < 0) return bad("batch must be >= 0 (0 reads as 1)");
  const bool needs_dtype = m.kind() == config::KERNEL_GEMM ||
                           m.kind() == config::KERNEL_ATTENTION_FWD ||
                           m.kind() == config::KERNEL_ATTENTION_BWD;
  if (needs_dtype || !m.dtype().empty()) {
    if (absl::StatusOr<Dtype> d = ParseDtype(m.dtype()); !d.ok()) return bad(std::string(d.status().message()));
  }
  switch (m.kind()) {
    case config::KERNEL_GEMM:
      if (m.m() <= 0 || m.n() <= 0 || m.k() <= 0) return bad("m, n and k must be > 0");
      if (double b = std::max<double>(m.batch(), 1),
          e = b * (double(m.m()) * m.k() + double(m.k()) * m.n() + double(m.m()) * m.n());
          e > kMaxElements) {
        return bad(TooLarge(e));
      }
      break;
    case config::KERNEL_ATTENTION_FWD:
    case config::KERNEL_ATTENTION_BWD:
      if (m.seq_q() <= 0 || m.seq_kv() <= 0 || m.heads() <= 0 || m.head_dim() <= 0) {
        return bad("seq_q, seq_kv, heads and head_dim must be > 0");
      }
      if (double e = std::max<double>(m.batch(), 1) * double(m.heads()) *
                     (double(m.seq_q()) + double(m.seq_kv())) * double(m.head_dim());
          e > kMaxElements) {
        return bad(TooLarge(e));
      }
      break;
    case config::KERNEL_MEMORY_BOUND:
      if (m.bytes() <= 0) return bad("bytes must be > 0");
      if (m.op().empty()) return bad("op must name the kernel (copy, rmsnorm, adam, ...)");
      break;
    default: break;
  }
  return absl::OkStatus();
}

Op GemmOp(const config::KernelMeasurement& m, Dtype d) {
  Op op;
  op.name = m.op().empty() ? "gemm" : m.op();
  op.kind = OpKind::kGemm;
  op.dtype = d;
  op.m = m.m();
  op.n = m.n();
  op.k = m.k();
  op.batch = std::max<int64_t>(m.batch(), 1);
  const int64_t in = BytesPerElement(d);
  const int64_t out = in == 1 ? 2 : in;  // fp8/int8 GEMMs write 16-bit outputs
  op.flops = sim::Flops(2.0 * op.batch * op.m * op.n * op.k);
  op.bytes = sim::Bytes(op.batch * ((op.m * op.k + op.k * op.n) * in + op.m * op.n * out));
  return op;
}

// workload.h conventions: forward 4·B·sq·skv·d FLOPs, reads Q, K, V and writes O;
// backward 2.5x the FLOPs and 2x the bytes.
Op AttentionOp(const config::KernelMeasurement& m, Dtype d) {
  Op op;
  op.kind = OpKind::kAttention;
  op.dtype = d;
  op.batch = std::max<int64_t>(m.batch(), 1) * m.heads();
  op.m = m.seq_q();
  op.n = m.seq_kv();
  op.k = m.head_dim();
  op.causal = m.causal();
  const int64_t q = op.batch * op.m * op.k;
  const int64_t kv = op.batch * op.n * op.k;
  op.flops = sim::Flops(4.0 * op.batch * op.m * op.n * op.k);
  op.bytes = sim::Bytes((2 * q + 2 * kv) * BytesPerElement(d));
  op.name = "attention_fwd";
  if (m.kind() == config::KERNEL_ATTENTION_BWD) {
    op.name = "attention_bwd";
    op.flops = op.flops * 2.5;
    op.bytes = op.bytes * 2;
  }
  return op;
}

}  // namespace

bool IsAttentionBackward(const Op& op) {
  return op.kind == OpKind::kAttention && op.name.starts_with("attention_bwd");
}

absl::StatusOr<config::MeasurementFile> ParseMeasurementFile(std::string_view text,
                                                             std::string_view origin) {
  config::MeasurementFile file;
  CLUSTERSIM_RETURN_IF_ERROR(ParseText(text, origin, &file));
  if (file.gpu().name().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        std::string(origin), ": gpu.name must be the GPU catalog name, e.g. \"h100-sxm5-80gb\""));
  }
  if (file.provenance().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        std::string(origin), ": provenance must say where the numbers come from"));
  }
  for (const auto& [field, names] : {std::pair{"method_parameters", &file.method_parameters()},
                                     std::pair{"fixed_parameters", &file.fixed_parameters()}}) {
    for (int i = 0; i < names->size(); ++i) {
      const std::string& name = names->Get(i);
      if (name != "kernel_overhead_us" && name != "gemm_bandwidth_fraction" &&
          name != "memory_bandwidth_fraction") {
        return absl::InvalidArgumentError(absl::StrCat(
            std::string(origin), ": ", field, "[", i, "] is \"", name,
            "\"; it must name a per-GPU parameter: kernel_overhead_us, gemm_bandwidth_fraction "
            "or memory_bandwidth_fraction"));
      }
    }
  }
  for (int i = 0; i < file.measurement_size(); ++i) {
    if (absl::Status s = CheckMeasurement(file.measurement(i)); !s.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(std::string(origin), ": measurement[", i, "] ", s.message()));
    }
  }
  return file;
}

absl::StatusOr<Op> MeasurementToOp(const config::KernelMeasurement& m) {
  CLUSTERSIM_RETURN_IF_ERROR(CheckMeasurement(m));
  const Dtype d = m.dtype().empty() ? Dtype::kBf16 : *ParseDtype(m.dtype());
  switch (m.kind()) {
    case config::KERNEL_GEMM: return GemmOp(m, d);
    case config::KERNEL_ATTENTION_FWD:
    case config::KERNEL_ATTENTION_BWD: return AttentionOp(m, d);
    default: break;
  }
  Op op;
  op.name = m.kind() == config::KERNEL_LAUNCH ? "launch" : m.op();
  op.kind = OpKind::kMemoryBound;
  op.dtype = d;
  op.bytes = sim::Bytes(m.kind() == config::KERNEL_LAUNCH ? 0 : m.bytes());
  return op;
}

absl::StatusOr<std::vector<Measurement>> SelectMeasurements(const config::MeasurementFile& file) {
  std::vector<Measurement> out;
  std::map<std::string, size_t> index;  // shape label + op name -> position in `out`
  for (const config::KernelMeasurement& m : file.measurement()) {
    absl::StatusOr<Op> op = MeasurementToOp(m);
    if (!op.ok()) return op.status();
    Measurement point{*op, sim::Duration::FromSecondsDouble(m.median_us() * 1e-6), m.cold_l2(),
                      Label(m)};
    const std::string key = absl::StrCat(point.label, "|", op->name);
    auto [it, inserted] = index.emplace(key, out.size());
    if (inserted) {
      out.push_back(std::move(point));
    } else if (point.cold_l2 && !out[it->second].cold_l2) {
      out[it->second] = std::move(point);
    }
  }
  return out;
}

Calibration::Calibration(std::string gpu, CalibrationParams params,
                         const std::vector<Measurement>& measured, std::string provenance)
    : gpu_(std::move(gpu)), params_(params), provenance_(std::move(provenance)) {
  for (const Measurement& m : measured) {
    if (std::optional<ShapeKey> key = KeyOf(m.op)) measured_.emplace(*key, m.median);
  }
}

std::optional<Calibration::ShapeKey> Calibration::KeyOf(const Op& op) {
  if (op.kind != OpKind::kGemm && op.kind != OpKind::kAttention) return std::nullopt;
  return ShapeKey{static_cast<int>(op.kind), IsAttentionBackward(op), DtypeIndex(op.dtype), op.m,
                  op.n, op.k, op.batch, op.causal};
}

std::optional<sim::Duration> Calibration::Measured(const Op& op) const {
  const std::optional<ShapeKey> key = KeyOf(op);
  if (!key) return std::nullopt;
  auto it = measured_.find(*key);
  if (it == measured_.end()) return std::nullopt;
  return it->second;
}

absl::StatusOr<Calibration> Calibration::Parse(std::string_view textproto,
                                               std::string_view origin) {
  config::CalibrationFile file;
  CLUSTERSIM_RETURN_IF_ERROR(ParseText(textproto, origin, &file));
  return FromProto(file, origin);
}

absl::StatusOr<Calibration> Calibration::FromProto(const config::CalibrationFile& file,
                                                   std::string_view origin) {
  const std::string where(origin);
  auto bad = [&](std::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": ", std::string(what)));
  };
  if (file.gpu().empty()) return bad("gpu must be the GPU catalog name");
  if (file.provenance().empty()) return bad("provenance must say where the numbers come from");
  auto fraction = [](const std::optional<double>& v) { return !v || (*v > 0 && *v <= 1); };
  auto opt = [](bool has, double v) { return has ? std::optional<double>(v) : std::nullopt; };
  CalibrationParams p;
  p.gemm_bandwidth_fraction =
      opt(file.has_gemm_bandwidth_fraction(), file.gemm_bandwidth_fraction());
  p.memory_bandwidth_fraction =
      opt(file.has_memory_bandwidth_fraction(), file.memory_bandwidth_fraction());
  if (!fraction(p.gemm_bandwidth_fraction) || !fraction(p.memory_bandwidth_fraction)) {
    return bad("gemm_bandwidth_fraction and memory_bandwidth_fraction must be in (0, 1]");
  }
  if (file.has_kernel_overhead_us()) {
    if (!(file.kernel_overhead_us() >= 0)) return bad("kernel_overhead_us must be >= 0");
    p.kernel_overhead = sim::Duration::FromSecondsDouble(file.kernel_overhead_us() * 1e-6);
  }
  for (int i = 0; i < file.dtype_size(); ++i) {
    const config::DtypeParameters& e = file.dtype(i);
    absl::StatusOr<Dtype> d = ParseDtype(e.dtype());
    if (!d.ok()) return bad(absl::StrCat("dtype[", i, "]: ", d.status().message()));
    DtypeFit& f = p.dtype[DtypeIndex(*d)];
    f.gemm_ceiling = opt(e.has_gemm_ceiling(), e.gemm_ceiling());
    f.small_tile_efficiency = opt(e.has_small_tile_efficiency(), e.small_tile_efficiency());
    f.unaligned_efficiency = opt(e.has_unaligned_efficiency(), e.unaligned_efficiency());
    f.attention_fwd_efficiency =
        opt(e.has_attention_fwd_efficiency(), e.attention_fwd_efficiency());
    f.attention_bwd_efficiency =
        opt(e.has_attention_bwd_efficiency(), e.attention_bwd_efficiency());
    for (const auto& [curve, name, out] :
         {std::tuple{&e.attention_fwd_curve(), "attention_fwd_curve", &f.attention_fwd_curve},
          std::tuple{&e.attention_bwd_curve(), "attention_bwd_curve", &f.attention_bwd_curve}}) {
      for (const config::SeqEfficiency& point : *curve) {
        out->push_back({point.seq(), point.efficiency()});
      }
      CLUSTERSIM_RETURN_IF_ERROR(CheckEfficiencyCurve(
          *out, absl::StrCat(where, ": dtype[", i, "] (", e.dtype(), ").", name)));
    }
    for (const std::optional<double>& v : {f.gemm_ceiling, f.small_tile_efficiency,
                                           f.unaligned_efficiency, f.attention_fwd_efficiency,
                                           f.attention_bwd_efficiency}) {
      if (!fraction(v)) {
        return bad(absl::StrCat("dtype[", i, "] (", e.dtype(), "): every fraction must be in (0, 1]"));
      }
    }
  }
  config::MeasurementFile table;
  *table.mutable_measurement() = file.measured();
  for (int i = 0; i < file.measured_size(); ++i) {
    if (absl::Status s = CheckMeasurement(file.measured(i)); !s.ok()) {
      return bad(absl::StrCat("measured[", i, "] ", s.message()));
    }
  }
  absl::StatusOr<std::vector<Measurement>> measured = SelectMeasurements(table);
  if (!measured.ok()) return measured.status();
  return Calibration(file.gpu(), p, *measured, file.provenance());
}

const std::vector<Calibration>& Calibration::ShippedAll() {
  static const std::vector<Calibration>* const kShipped = [] {
    auto* all = new std::vector<Calibration>();
    for (auto [name, data] :
         {std::pair{"a100-sxm4-80gb.calibration.textproto", embedded::CalibrationA100Sxm480gbData()},
          std::pair{"b200-sxm-180gb.calibration.textproto",
                    embedded::CalibrationB200Sxm180gbData()},
          std::pair{"gb200-186gb.calibration.textproto", embedded::CalibrationGb200186gbData()},
          std::pair{"h100-sxm5-80gb.calibration.textproto", embedded::CalibrationH100Sxm580gbData()},
          std::pair{"h200-sxm-141gb.calibration.textproto",
                    embedded::CalibrationH200Sxm141gbData()}}) {
      absl::StatusOr<Calibration> c =
          Parse(data, absl::StrCat("models/data/calibration/", name));
      SIM_CHECK(c.ok()) << "embedded calibration is invalid: " << c.status();
      all->push_back(*std::move(c));
    }
    std::sort(all->begin(), all->end(),
              [](const Calibration& a, const Calibration& b) { return a.gpu() < b.gpu(); });
    return all;
  }();
  return *kShipped;
}

const Calibration* Calibration::Shipped(std::string_view gpu_name) {
  for (const Calibration& c : ShippedAll()) {
    if (c.gpu() == gpu_name) return &c;
  }
  return nullptr;
}

std::vector<std::string> Calibration::ShippedGpus() {
  std::vector<std::string> names;
  for (const Calibration& c : ShippedAll()) names.push_back(c.gpu());
  return names;
}

}  // namespace clustersim::models
