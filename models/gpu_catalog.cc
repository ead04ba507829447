#include "models/gpu_catalog.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/text_format.h"
#include "models/proto/catalog.pb.h"
#include "sim/check.h"

namespace clustersim::embedded {
std::string_view GpuCatalogData();
}  // namespace clustersim::embedded

namespace clustersim::models {
namespace {

absl::Status EntryError(int index, const std::string& name, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("gpu[", index, "] '", name, "': ", what));
}

absl::StatusOr<DeviceKind> ParseDeviceKind(const std::string& name) {
  if (name.empty() || name == "gpu") return DeviceKind::kGpu;
  if (name == "soc-gpu") return DeviceKind::kSocGpu;
  if (name == "cpu") return DeviceKind::kCpu;
  return absl::InvalidArgumentError(
      absl::StrCat("device_kind \"", name, "\" is not known; use gpu, soc-gpu or cpu"));
}

absl::StatusOr<GpuSpec> FromProto(const config::GpuCatalogEntry& e, int index) {
  GpuSpec g;
  g.name = e.name();
  if (g.name.empty()) return EntryError(index, g.name, "name must be set");
  g.display_name = e.display_name().empty() ? e.name() : e.display_name();
  for (const config::DtypePeak& p : e.peak()) {
    absl::StatusOr<Dtype> d = ParseDtype(p.dtype());
    if (!d.ok()) return EntryError(index, g.name, absl::StrCat("peak: ", d.status().message()));
    if (!(p.dense_tflops() > 0)) {
      return EntryError(index, g.name,
                        absl::StrCat("peak ", p.dtype(), ": dense_tflops must be > 0 "
                                     "(omit the entry for an unsupported dtype)"));
    }
    g.dense_peak_flops[DtypeIndex(*d)] = p.dense_tflops() * 1e12;
  }
  // Apple GPUs have FP16 but no native BF16 matrix rate; every device has one of the two.
  if (!g.Supports(Dtype::kBf16) && !g.Supports(Dtype::kFp16)) {
    return EntryError(index, g.name, "needs a bf16 or fp16 peak");
  }
  absl::StatusOr<DeviceKind> kind = ParseDeviceKind(e.device_kind());
  if (!kind.ok()) return EntryError(index, g.name, kind.status().message());
  g.kind = *kind;
  g.unified_memory = e.unified_memory();
  if (!e.compute_unit().empty()) g.compute_unit = e.compute_unit();
  if (!(e.memory_gib() > 0)) return EntryError(index, g.name, "memory_gib must be > 0");
  if (!(e.memory_bandwidth_gbs() > 0)) {
    return EntryError(index, g.name, "memory_bandwidth_gbs must be > 0");
  }
  if (e.sm_count() <= 0) return EntryError(index, g.name, "sm_count must be > 0");
  if (e.l2_cache_mib() < 0 || e.tdp_w() < 0 || e.list_price_usd() < 0 ||
      e.boost_clock_mhz() < 0) {
    return EntryError(index, g.name,
                      "l2_cache_mib, tdp_w, list_price_usd and boost_clock_mhz must be >= 0");
  }
  if (e.source().empty()) return EntryError(index, g.name, "source must name where the numbers come from");
  g.memory = sim::Bytes(std::llround(e.memory_gib() * 1024.0 * 1024.0 * 1024.0));
  g.cuda_total_memory = g.memory;
  if (e.cuda_total_memory_bytes() != 0) {
    if (e.cuda_total_memory_bytes() < 0 || e.cuda_total_memory_bytes() > g.memory.count()) {
      return EntryError(index, g.name,
                        absl::StrCat("cuda_total_memory_bytes ", e.cuda_total_memory_bytes(),
                                     " must be in (0, memory_gib] (the driver reserves part of "
                                     "the framebuffer; use the total cudaMemGetInfo reports, or "
                                     "omit it to use memory_gib)"));
    }
    if (e.cuda_total_memory_source().empty()) {
      return EntryError(index, g.name,
                        "cuda_total_memory_source must name where cuda_total_memory_bytes "
                        "comes from (a deviceQuery, torch or engine log line)");
    }
    g.cuda_total_memory = sim::Bytes(e.cuda_total_memory_bytes());
    g.cuda_total_memory_source = e.cuda_total_memory_source();
  } else if (!e.cuda_total_memory_source().empty()) {
    return EntryError(index, g.name,
                      "cuda_total_memory_source is set without cuda_total_memory_bytes");
  }
  g.memory_bandwidth_gbs = e.memory_bandwidth_gbs();
  g.sm_count = e.sm_count();
  g.boost_clock_mhz = e.boost_clock_mhz();
  g.l2_cache = sim::Bytes(std::llround(e.l2_cache_mib() * 1024.0 * 1024.0));
  g.tdp_w = e.tdp_w();
  g.list_price_usd = e.list_price_usd();
  g.source = e.source();
  for (const config::GemmCeiling& c : e.gemm_ceiling()) {
    absl::StatusOr<Dtype> d = ParseDtype(c.dtype());
    if (!d.ok()) {
      return EntryError(index, g.name, absl::StrCat("gemm_ceiling: ", d.status().message()));
    }
    if (!(c.fraction() > 0 && c.fraction() <= 1)) {
      return EntryError(index, g.name, "gemm_ceiling.fraction must be in (0, 1]");
    }
    if (c.source().empty()) return EntryError(index, g.name, "gemm_ceiling.source must be set");
    g.gemm_ceiling_by_dtype[DtypeIndex(*d)] = c.fraction();
  }
  if (e.has_attention_tiles()) {
    const config::AttentionTiles& t = e.attention_tiles();
    auto ratio = [](double v, double low) { return v > low && v <= 1; };
    if (!(t.fwd_query_tile_overhead() > 0 && t.bwd_query_tile_overhead() > 0) ||
        !ratio(t.fwd_head_dim64_tile(), 0.5) || !ratio(t.bwd_head_dim64_tile(), 0.5) ||
        !ratio(t.fwd_head_dim64_query_tile(), 0) || !ratio(t.bwd_head_dim64_query_tile(), 0)) {
      return EntryError(index, g.name,
                        "attention_tiles: query-tile overheads must be > 0, head_dim64 tile "
                        "ratios in (0.5, 1] and query-tile ratios in (0, 1]");
    }
    if (t.source().empty()) return EntryError(index, g.name, "attention_tiles.source must be set");
    g.attention_tiles = {.fwd_query_tile_overhead = t.fwd_query_tile_overhead(),
                         .bwd_query_tile_overhead = t.bwd_query_tile_overhead(),
                         .fwd_head_dim64_tile = t.fwd_head_dim64_tile(),
                         .fwd_head_dim64_query_tile = t.fwd_head_dim64_query_tile(),
                         .bwd_head_dim64_tile = t.bwd_head_dim64_tile(),
                         .bwd_head_dim64_query_tile = t.bwd_head_dim64_query_tile(),
                         .source = t.source()};
  }
  // The default ceiling: BF16's, or FP16's on a device without BF16.
  const Dtype base = g.Supports(Dtype::kBf16) ? Dtype::kBf16 : Dtype::kFp16;
  g.gemm_ceiling_fraction = g.gemm_ceiling_by_dtype[DtypeIndex(base)];
  for (const config::GemmCeiling& c : e.gemm_ceiling()) {
    if (c.dtype() == DtypeName(base)) g.gemm_ceiling_source = c.source();
  }
  if (g.gemm_ceiling_fraction == 0) {
    return EntryError(index, g.name,
                      absl::StrCat("needs a ", std::string(DtypeName(base)),
                                   " gemm_ceiling (measured or a documented default)"));
  }
  return g;
}

std::string SupportedList(const GpuSpec& gpu) {
  std::vector<std::string> names;
  for (Dtype d : kAllDtypes) {
    if (gpu.Supports(d)) names.emplace_back(DtypeName(d));
  }
  return absl::StrJoin(names, ", ");
}

}  // namespace

std::string_view DeviceKindName(DeviceKind k) {
  switch (k) {
    case DeviceKind::kGpu: return "gpu";
    case DeviceKind::kSocGpu: return "soc-gpu";
    case DeviceKind::kCpu: return "cpu";
  }
  return "unknown";
}

absl::Status CheckDtypeSupported(const GpuSpec& gpu, Dtype d) {
  if (gpu.Supports(d)) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("dtype ", std::string(DtypeName(d)), " is not supported by ", gpu.name, " (",
                   gpu.display_name, "); supported: ", SupportedList(gpu)));
}

absl::StatusOr<GpuCatalog> GpuCatalog::Parse(std::string_view textproto) {
  config::GpuCatalogFile file;
  if (!google::protobuf::TextFormat::ParseFromString(std::string(textproto), &file)) {
    return absl::InvalidArgumentError("GPU catalog: not a valid GpuCatalogFile text proto");
  }
  GpuCatalog catalog;
  for (int i = 0; i < file.gpu_size(); ++i) {
    absl::StatusOr<GpuSpec> spec = FromProto(file.gpu(i), i);
    if (!spec.ok()) return spec.status();
    catalog.gpus_.push_back(*std::move(spec));
  }
  std::sort(catalog.gpus_.begin(), catalog.gpus_.end(),
            [](const GpuSpec& a, const GpuSpec& b) { return a.name < b.name; });
  for (size_t i = 1; i < catalog.gpus_.size(); ++i) {
    if (catalog.gpus_[i].name == catalog.gpus_[i - 1].name) {
      return absl::InvalidArgumentError(
          absl::StrCat("GPU catalog: duplicate name '", catalog.gpus_[i].name, "'"));
    }
  }
  return catalog;
}

const GpuCatalog& GpuCatalog::Default() {
  static const GpuCatalog* const kCatalog = [] {
    absl::StatusOr<GpuCatalog> parsed = Parse(embedded::GpuCatalogData());
    SIM_CHECK(parsed.ok()) << "embedded models/data/gpus.textproto: " << parsed.status();
    return new GpuCatalog(*std::move(parsed));
  }();
  return *kCatalog;
}

absl::StatusOr<const GpuSpec*> GpuCatalog::Find(std::string_view name) const {
  auto it = std::lower_bound(gpus_.begin(), gpus_.end(), name,
                             [](const GpuSpec& g, std::string_view n) { return g.name < n; });
  if (it != gpus_.end() && it->name == name) return &*it;
  return absl::NotFoundError(absl::StrCat("unknown GPU '", std::string(name), "'; valid names: ",
                                          absl::StrJoin(Names(), ", ")));
}

std::vector<std::string> GpuCatalog::Names() const {
  std::vector<std::string> names;
  names.reserve(gpus_.size());
  for (const GpuSpec& g : gpus_) names.push_back(g.name);
  return names;
}

}  // namespace clustersim::models
