#include "topology/link_technology.h"

#include <memory>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/text_format.h"
#include "sim/check.h"
#include "topology/data_rows.h"
#include "topology/link_kind_proto.h"
#include "topology/proto/network.pb.h"

namespace clustersim::embedded {
std::string_view LinkTechnologiesData();
}  // namespace clustersim::embedded

namespace clustersim::topology {
namespace {

// The parsed file owns the strings that the LinkTechnology views point into.
struct LinkTable {
  config::LinkTechnologyFile file;
  std::vector<LinkTechnology> links;
};

absl::Status RowError(int index, const std::string& name, absl::string_view what) {
  return DataRowError("links.textproto", "link", index, name, std::string(what));
}

absl::StatusOr<LinkTechnology> FromProto(const config::LinkTechnologyEntry& e, int index) {
  if (e.name().empty()) return RowError(index, e.name(), "name must be set");
  absl::StatusOr<LinkKind> kind = LinkKindFromProto(e.kind());
  if (!kind.ok()) return RowError(index, e.name(), kind.status().message());
  sim::Bandwidth bandwidth;
  switch (e.bandwidth_case()) {
    case config::LinkTechnologyEntry::kGigabytesPerSecond:
      bandwidth = sim::Bandwidth::GigabytesPerSecond(e.gigabytes_per_second());
      break;
    case config::LinkTechnologyEntry::kGigabitsPerSecond:
      bandwidth = sim::Bandwidth::Gbps(e.gigabits_per_second());
      break;
    case config::LinkTechnologyEntry::BANDWIDTH_NOT_SET:
      break;
  }
  if (bandwidth.bits_per_second() <= 0) {
    return RowError(index, e.name(),
                    "set gigabytes_per_second or gigabits_per_second to a value > 0");
  }
  if (e.latency_ns() < 0) return RowError(index, e.name(), "latency_ns must be >= 0");
  if (e.source().empty()) {
    return RowError(index, e.name(), "source must name where the numbers come from");
  }
  return LinkTechnology{e.name(), *kind, bandwidth, sim::Nanoseconds(e.latency_ns()),
                        e.source()};
}

absl::StatusOr<std::unique_ptr<LinkTable>> Parse(std::string_view textproto) {
  auto table = std::make_unique<LinkTable>();
  if (!google::protobuf::TextFormat::ParseFromString(std::string(textproto), &table->file)) {
    return absl::InvalidArgumentError("links.textproto: not a valid LinkTechnologyFile text proto");
  }
  if (absl::Status s = ConvertNamedRows("links.textproto", "link", table->file.link(), FromProto,
                                        &table->links);
      !s.ok()) {
    return s;
  }
  return table;
}

}  // namespace

std::string_view LinkKindName(LinkKind kind) {
  switch (kind) {
    case LinkKind::kNvlink:
      return "nvlink";
    case LinkKind::kPcie:
      return "pcie";
    case LinkKind::kInfiniband:
      return "infiniband";
    case LinkKind::kEthernet:
      return "ethernet";
  }
  return "unknown";
}

const std::vector<LinkTechnology>& LinkTechnologies() {
  static const LinkTable* const kTable = [] {
    absl::StatusOr<std::unique_ptr<LinkTable>> parsed = Parse(embedded::LinkTechnologiesData());
    SIM_CHECK(parsed.ok()) << "embedded topology/data/links.textproto: " << parsed.status();
    return parsed->release();
  }();
  return kTable->links;
}

absl::StatusOr<const LinkTechnology*> FindLinkTechnology(std::string_view name) {
  std::vector<std::string> names;
  for (const LinkTechnology& tech : LinkTechnologies()) {
    if (tech.name == name) return &tech;
    names.emplace_back(tech.name);
  }
  return absl::NotFoundError(absl::StrCat("unknown link technology '", std::string(name),
                                          "'; valid: ", absl::StrJoin(names, ", ")));
}

}  // namespace clustersim::topology
