#include "topology/node_preset.h"

#include <memory>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/text_format.h"
#include "sim/check.h"
#include "topology/data_rows.h"
#include "topology/link_technology.h"
#include "topology/proto/network.pb.h"

namespace clustersim::embedded {
std::string_view NodePresetsData();
}  // namespace clustersim::embedded

namespace clustersim::topology {
namespace {

// The parsed file owns the strings that the NodePreset views point into.
struct PresetTable {
  config::NodePresetFile file;
  std::vector<NodePreset> presets;
};

absl::Status RowError(int index, const std::string& name, absl::string_view what) {
  return DataRowError("nodes.textproto", "node", index, name, std::string(what));
}

// A link technology field must name a row of links.textproto ("" allowed where optional).
absl::Status CheckLink(int index, const std::string& preset, absl::string_view field,
                       const std::string& value, bool optional) {
  if (optional && value.empty()) return absl::OkStatus();
  absl::StatusOr<const LinkTechnology*> tech = FindLinkTechnology(value);
  if (tech.ok()) return absl::OkStatus();
  return RowError(index, preset, absl::StrCat(std::string(field), ": ", std::string(tech.status().message())));
}

absl::StatusOr<NodePreset> FromProto(const config::NodePresetEntry& e, int index) {
  if (e.name().empty()) return RowError(index, e.name(), "name must be set");
  if (e.gpu().empty()) return RowError(index, e.name(), "gpu must name a GPU catalog entry");
  if (e.gpus_per_node() <= 0) return RowError(index, e.name(), "gpus_per_node must be > 0");
  if (e.pcie_switches() <= 0) return RowError(index, e.name(), "pcie_switches must be > 0");
  if (e.nics() <= 0) return RowError(index, e.name(), "nics must be > 0");
  for (absl::Status s : {CheckLink(index, e.name(), "gpu_link", e.gpu_link(), true),
                         CheckLink(index, e.name(), "pcie", e.pcie(), false),
                         CheckLink(index, e.name(), "nic_link", e.nic_link(), false),
                         CheckLink(index, e.name(), "host_link", e.host_link(), true)}) {
    if (!s.ok()) return s;
  }
  if (e.nvls() && e.gpu_link().empty()) {
    return RowError(index, e.name(), "nvls needs an NVSwitch: set gpu_link or nvls: false");
  }
  if (e.source().empty()) {
    return RowError(index, e.name(), "source must name where the numbers come from");
  }
  return NodePreset{e.name(), e.gpu(),     e.gpus_per_node(), e.gpu_link(),
                    e.nvls(), e.pcie(),    e.pcie_switches(), e.nics(),
                    e.nic_link(), e.host_link(), e.description(), e.source()};
}

absl::StatusOr<std::unique_ptr<PresetTable>> Parse(std::string_view textproto) {
  auto table = std::make_unique<PresetTable>();
  if (!google::protobuf::TextFormat::ParseFromString(std::string(textproto), &table->file)) {
    return absl::InvalidArgumentError("nodes.textproto: not a valid NodePresetFile text proto");
  }
  if (absl::Status s = ConvertNamedRows("nodes.textproto", "node", table->file.node(), FromProto,
                                        &table->presets);
      !s.ok()) {
    return s;
  }
  return table;
}

}  // namespace

const std::vector<NodePreset>& NodePresets() {
  static const PresetTable* const kTable = [] {
    absl::StatusOr<std::unique_ptr<PresetTable>> parsed = Parse(embedded::NodePresetsData());
    SIM_CHECK(parsed.ok()) << "embedded topology/data/nodes.textproto: " << parsed.status();
    return parsed->release();
  }();
  return kTable->presets;
}

std::vector<std::string> NodePresetNames() {
  std::vector<std::string> names;
  for (const NodePreset& p : NodePresets()) names.emplace_back(p.name);
  return names;
}

absl::StatusOr<const NodePreset*> FindNodePreset(std::string_view name) {
  for (const NodePreset& p : NodePresets()) {
    if (p.name == name) return &p;
  }
  return absl::NotFoundError(absl::StrCat("unknown node_preset '", std::string(name),
                                          "'; valid: ", absl::StrJoin(NodePresetNames(), ", ")));
}

}  // namespace clustersim::topology
