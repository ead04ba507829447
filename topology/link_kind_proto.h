// File: topology/link_kind_proto.h
//
// Converts the link kind of a network data file row (topology/proto/network.proto)
// to topology::LinkKind; shared by the readers of links.textproto and
// collective_calibration.textproto.
//
// Example:
//   absl::StatusOr<LinkKind> k = LinkKindFromProto(config::LINK_KIND_NVLINK);  // kNvlink
#ifndef CLUSTERSIM_TOPOLOGY_LINK_KIND_PROTO_H_
#define CLUSTERSIM_TOPOLOGY_LINK_KIND_PROTO_H_

#include "absl/status/statusor.h"
#include "topology/link_technology.h"
#include "topology/proto/network.pb.h"

namespace clustersim::topology {

// InvalidArgument naming the valid values for LINK_KIND_UNSPECIFIED.
absl::StatusOr<LinkKind> LinkKindFromProto(config::LinkKindProto kind);

}  // namespace clustersim::topology

#endif  // CLUSTERSIM_TOPOLOGY_LINK_KIND_PROTO_H_
