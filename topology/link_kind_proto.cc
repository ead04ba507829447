#include "topology/link_kind_proto.h"

#include "absl/status/status.h"

namespace clustersim::topology {

absl::StatusOr<LinkKind> LinkKindFromProto(config::LinkKindProto kind) {
  switch (kind) {
    case config::LINK_KIND_NVLINK:
      return LinkKind::kNvlink;
    case config::LINK_KIND_PCIE:
      return LinkKind::kPcie;
    case config::LINK_KIND_INFINIBAND:
      return LinkKind::kInfiniband;
    case config::LINK_KIND_ETHERNET:
      return LinkKind::kEthernet;
    default:
      break;
  }
  return absl::InvalidArgumentError(
      "kind must be one of LINK_KIND_NVLINK, LINK_KIND_PCIE, LINK_KIND_INFINIBAND, "
      "LINK_KIND_ETHERNET");
}

}  // namespace clustersim::topology
