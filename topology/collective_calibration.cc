#include "topology/collective_calibration.h"

#include <memory>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/text_format.h"
#include "sim/check.h"
#include "sim/status_macros.h"
#include "topology/link_kind_proto.h"
#include "topology/proto/network.pb.h"

namespace clustersim::embedded {
std::string_view CollectiveCalibrationData();
}  // namespace clustersim::embedded

namespace clustersim::topology {
namespace {

using sim::Nanoseconds;

// The parsed file owns the strings that the calibration's views point into.
struct CalibrationTable {
  config::CollectiveCalibrationFile file;
  CollectiveCalibration calibration;
};

absl::Status FileError(absl::string_view where, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("collective_calibration.textproto ",
                                                 std::string(where), ": ", std::string(what)));
}

// NCCL's NVLink / PCI / NET rows in our LinkKind order (InfiniBand and Ethernet
// are both NET).
HopLatencies Hops(const config::HopLatenciesNs& h) {
  return {Nanoseconds(h.nvlink_ns()), Nanoseconds(h.pcie_ns()), Nanoseconds(h.net_ns()),
          Nanoseconds(h.net_ns())};
}

absl::Status CheckSource(absl::string_view where, const std::string& source) {
  if (!source.empty()) return absl::OkStatus();
  return FileError(where, "source must name where the number comes from");
}

absl::Status ParseLinks(const config::CollectiveCalibrationFile& f, CollectiveCalibration* c) {
  for (int i = 0; i < f.link_size(); ++i) {
    const config::LinkCalibrationEntry& e = f.link(i);
    const std::string where = absl::StrCat("link[", i, "]");
    absl::StatusOr<LinkKind> kind = LinkKindFromProto(e.kind());
    if (!kind.ok()) return FileError(where, kind.status().message());
    if (!(e.efficiency() > 0 && e.efficiency() <= 1)) {
      return FileError(where, "efficiency must be in (0, 1]");
    }
    CLUSTERSIM_RETURN_IF_ERROR(CheckSource(where, e.source()));
    c->links.push_back({*kind, e.efficiency(), e.source()});
  }
  for (LinkKind kind : {LinkKind::kNvlink, LinkKind::kPcie, LinkKind::kInfiniband,
                        LinkKind::kEthernet}) {
    int rows = 0;
    for (const LinkCalibration& row : c->links) rows += row.kind == kind ? 1 : 0;
    if (rows != 1) {
      return FileError("link", absl::StrCat("needs exactly one row for link kind ",
                                            std::string(LinkKindName(kind)), ", has ", rows));
    }
  }
  return absl::OkStatus();
}

absl::Status ParseProtocols(const config::CollectiveCalibrationFile& f,
                            CollectiveCalibration* c) {
  if (f.protocol_size() != static_cast<int>(kConcreteProtocols.size())) {
    return FileError("protocol", "needs one row each for ll, ll128 and simple, in that order");
  }
  for (int i = 0; i < f.protocol_size(); ++i) {
    const config::ProtocolCalibrationEntry& e = f.protocol(i);
    const std::string where = absl::StrCat("protocol[", i, "] '", e.protocol(), "'");
    absl::StatusOr<Protocol> p = ParseProtocol(e.protocol());
    if (!p.ok() || *p != kConcreteProtocols[i]) {
      return FileError(where, absl::StrCat("expected '",
                                           std::string(ProtocolName(kConcreteProtocols[i])),
                                           "' (rows are ll, ll128, simple, in that order)"));
    }
    if (!(e.bandwidth_fraction() > 0 && e.bandwidth_fraction() <= 1)) {
      return FileError(where, "bandwidth_fraction must be in (0, 1]");
    }
    if (!e.has_ring_hop() || !e.has_tree_hop()) {
      return FileError(where, "ring_hop and tree_hop must be set");
    }
    CLUSTERSIM_RETURN_IF_ERROR(CheckSource(where, e.source()));
    c->protocols.push_back({*p, e.bandwidth_fraction(), e.nvlink_only(),
                            Nanoseconds(e.ring_base_ns()), Nanoseconds(e.tree_base_ns()),
                            Hops(e.ring_hop()), Hops(e.tree_hop()), e.source()});
  }
  return absl::OkStatus();
}

absl::Status ParseScalars(const config::CollectiveCalibrationFile& f, CollectiveCalibration* c) {
  for (auto [where, source] : {std::pair{"call_overhead_source", &f.call_overhead_source()},
                               std::pair{"tree_efficiency_source", &f.tree_efficiency_source()},
                               std::pair{"nvls_latency_source", &f.nvls_latency_source()},
                               std::pair{"nvls_scale_source", &f.nvls_scale_source()},
                               std::pair{"shm_efficiency_source", &f.shm_efficiency_source()}}) {
    CLUSTERSIM_RETURN_IF_ERROR(CheckSource(where, *source));
  }
  if (f.call_overhead_ns() < 0 || f.nvls_latency_ns() < 0) {
    return FileError("call_overhead_ns / nvls_latency_ns", "must be >= 0");
  }
  if (!(f.tree_efficiency() > 0 && f.tree_efficiency() <= 1)) {
    return FileError("tree_efficiency", "must be in (0, 1]");
  }
  if (!(f.nvls_scale() > 0)) return FileError("nvls_scale", "must be > 0");
  if (!(f.shm_efficiency() > 0 && f.shm_efficiency() <= 1)) {
    return FileError("shm_efficiency", "must be in (0, 1]");
  }
  c->call_overhead = Nanoseconds(f.call_overhead_ns());
  c->tree_efficiency = f.tree_efficiency();
  c->nvls_latency = Nanoseconds(f.nvls_latency_ns());
  c->nvls_scale = f.nvls_scale();
  c->call_overhead_source = f.call_overhead_source();
  c->tree_efficiency_source = f.tree_efficiency_source();
  c->nvls_latency_source = f.nvls_latency_source();
  c->nvls_scale_source = f.nvls_scale_source();
  c->shm_efficiency = f.shm_efficiency();
  c->shm_efficiency_source = f.shm_efficiency_source();
  for (int i = 0; i < f.nvls_size(); ++i) {
    const config::NvlsCalibrationEntry& e = f.nvls(i);
    const std::string where = absl::StrCat("nvls[", i, "] '", e.nvlink(), "'");
    absl::StatusOr<const LinkTechnology*> tech = FindLinkTechnology(e.nvlink());
    if (!tech.ok() || (*tech)->kind != LinkKind::kNvlink) {
      return FileError(where, "nvlink must name an NVLink technology of links.textproto");
    }
    if (!(e.efficiency() > 0 && e.efficiency() <= 1)) {
      return FileError(where, "efficiency must be in (0, 1]");
    }
    CLUSTERSIM_RETURN_IF_ERROR(CheckSource(where, e.source()));
    c->nvls.push_back({e.nvlink(), e.efficiency(), e.source()});
  }
  return absl::OkStatus();
}

absl::Status ParseNics(const config::CollectiveCalibrationFile& f, CollectiveCalibration* c) {
  for (int i = 0; i < f.nic_size(); ++i) {
    const config::NicCalibrationEntry& e = f.nic(i);
    const std::string where = absl::StrCat("nic[", i, "] '", e.nic_link(), "'");
    absl::StatusOr<const LinkTechnology*> tech = FindLinkTechnology(e.nic_link());
    if (!tech.ok() || ((*tech)->kind != LinkKind::kInfiniband &&
                       (*tech)->kind != LinkKind::kEthernet)) {
      return FileError(where, "nic_link must name an InfiniBand or Ethernet technology of "
                              "links.textproto");
    }
    if (!(e.efficiency() > 0 && e.efficiency() <= 1)) {
      return FileError(where, "efficiency must be in (0, 1]");
    }
    if (e.ring_nics() < 0) return FileError(where, "ring_nics must be >= 0 (0: every NIC)");
    for (const NicCalibration& row : c->nics) {
      if (row.nic_link == e.nic_link()) return FileError(where, "nic_link is listed twice");
    }
    CLUSTERSIM_RETURN_IF_ERROR(CheckSource(where, e.source()));
    c->nics.push_back({e.nic_link(), e.efficiency(), e.ring_nics(), e.source()});
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<CalibrationTable>> Parse(std::string_view textproto) {
  auto table = std::make_unique<CalibrationTable>();
  if (!google::protobuf::TextFormat::ParseFromString(std::string(textproto), &table->file)) {
    return absl::InvalidArgumentError(
        "collective_calibration.textproto: not a valid CollectiveCalibrationFile text proto");
  }
  for (absl::Status s : {ParseLinks(table->file, &table->calibration),
                         ParseProtocols(table->file, &table->calibration),
                         ParseScalars(table->file, &table->calibration),
                         ParseNics(table->file, &table->calibration)}) {
    if (!s.ok()) return s;
  }
  return table;
}

}  // namespace

const LinkCalibration& CollectiveCalibration::ForLink(LinkKind kind) const {
  for (const LinkCalibration& row : links) {
    if (row.kind == kind) return row;
  }
  SIM_CHECK(false) << "no calibration row for link kind " << LinkKindName(kind);
  return links.front();
}

const ProtocolCalibration& CollectiveCalibration::ForProtocol(Protocol p) const {
  for (const ProtocolCalibration& row : protocols) {
    if (row.protocol == p) return row;
  }
  SIM_CHECK(false) << "no calibration row for protocol " << ProtocolName(p);
  return protocols.front();
}

const NvlsCalibration* CollectiveCalibration::ForNvlink(std::string_view nvlink) const {
  for (const NvlsCalibration& row : nvls) {
    if (row.nvlink == nvlink) return &row;
  }
  return nullptr;
}

const NicCalibration* CollectiveCalibration::ForNic(std::string_view nic_link) const {
  for (const NicCalibration& row : nics) {
    if (row.nic_link == nic_link) return &row;
  }
  return nullptr;
}

double CollectiveCalibration::Efficiency(LinkKind kind, std::string_view technology) const {
  if (kind == LinkKind::kInfiniband || kind == LinkKind::kEthernet) {
    if (const NicCalibration* row = ForNic(technology)) return row->efficiency;
  }
  return ForLink(kind).efficiency;
}

const CollectiveCalibration& DefaultCollectiveCalibration() {
  static const CalibrationTable* const kTable = [] {
    absl::StatusOr<std::unique_ptr<CalibrationTable>> parsed =
        Parse(embedded::CollectiveCalibrationData());
    SIM_CHECK(parsed.ok()) << "embedded topology/data/collective_calibration.textproto: "
                           << parsed.status();
    return parsed->release();
  }();
  return kTable->calibration;
}

}  // namespace clustersim::topology
