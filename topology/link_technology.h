// File: topology/link_technology.h
//
// The link technologies a cluster is built from (NVLink generations, PCIe
// generations, InfiniBand HDR/NDR/XDR, Ethernet/RoCE speeds), as immutable
// data with a source per row: topology/data/links.textproto (schema
// topology/proto/network.proto), embedded in the binary and parsed once at first use.
// Bandwidth is per direction.
//
// Example:
//   absl::StatusOr<const LinkTechnology*> ndr = FindLinkTechnology("ib-ndr");
//   if (ndr.ok()) sim::Bandwidth bw = (*ndr)->bandwidth;   // 400 Gb/s
#ifndef CLUSTERSIM_TOPOLOGY_LINK_TECHNOLOGY_H_
#define CLUSTERSIM_TOPOLOGY_LINK_TECHNOLOGY_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/units.h"

namespace clustersim::topology {

// The family a link belongs to; calibration constants are kept per family.
enum class LinkKind { kNvlink, kPcie, kInfiniband, kEthernet };

std::string_view LinkKindName(LinkKind kind);

struct LinkTechnology {
  std::string_view name;     // "nvlink4", "pcie5-x16", "ib-ndr", "roce-400g", ...
  LinkKind kind;
  sim::Bandwidth bandwidth;  // per direction, line rate
  sim::Duration latency;     // one traversal of the link (wire + port), not software
  std::string_view source;   // document, table or URL the numbers come from
};

// All technologies in a fixed order (the order of links.textproto).
const std::vector<LinkTechnology>& LinkTechnologies();

// Returns the technology called `name`, or NotFound listing the valid names.
absl::StatusOr<const LinkTechnology*> FindLinkTechnology(std::string_view name);

}  // namespace clustersim::topology

#endif  // CLUSTERSIM_TOPOLOGY_LINK_TECHNOLOGY_H_
