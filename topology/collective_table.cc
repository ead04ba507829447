#include "topology/collective_table.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace clustersim::topology {

absl::StatusOr<std::string> FormatCollectiveTable(const NetworkModel& model, Collective op,
                                                  Algorithm algorithm, Protocol protocol,
                                                  const std::vector<int>& gpus,
                                                  sim::Bytes min_bytes, sim::Bytes max_bytes,
                                                  int factor) {
  if (min_bytes.count() < 1) {
    return absl::InvalidArgumentError("min_bytes must be >= 1 (e.g. 8)");
  }
  if (max_bytes < min_bytes) {
    return absl::InvalidArgumentError(absl::StrCat("max_bytes=", max_bytes.count(),
                                                   " is below min_bytes=", min_bytes.count()));
  }
  if (factor < 2) {
    return absl::InvalidArgumentError(absl::StrCat("factor=", factor, " must be >= 2"));
  }
  std::string out = absl::StrFormat(
      "# %s, algorithm %s, protocol %s, %d GPUs\n", std::string(CollectiveName(op)),
      std::string(AlgorithmName(algorithm)), std::string(ProtocolName(protocol)), gpus.size());
  absl::StrAppendFormat(&out, "# %12s %12s %12s %12s %12s  %s\n", "size", "count", "time(us)",
                        "algbw(GB/s)", "busbw(GB/s)", "algorithm/protocol");
  for (int64_t size = min_bytes.count(); size <= max_bytes.count();) {
    absl::StatusOr<CollectiveEstimate> e =
        model.Estimate(CollectiveRequest{op, gpus, sim::Bytes(size), algorithm, protocol});
    if (!e.ok()) return e.status();
    absl::StrAppendFormat(&out, "  %12d %12d %12.2f %12.2f %12.2f  %s/%s\n", size, size / 4,
                          e->time.ToMicroseconds(), e->algbw_gbs, e->busbw_gbs,
                          std::string(AlgorithmName(e->algorithm)),
                          std::string(ProtocolName(e->protocol)));
    if (size > max_bytes.count() / factor) break;
    size *= factor;
  }
  return out;
}

}  // namespace clustersim::topology
