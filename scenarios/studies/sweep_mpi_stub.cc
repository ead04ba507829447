// RunSweepOverMpi for builds without MPI (CMake did not find it).
#include "absl/strings/str_cat.h"
#include "scenarios/studies/sweep_mpi.h"

namespace clustersim::scenarios {

MpiSweepOutcome RunSweepOverMpi(
    const std::function<absl::StatusOr<std::vector<SweepPoint>>()>& /*load*/,
    const SweepOptions& /*options*/) {
  return {true, absl::FailedPreconditionError(absl::StrCat(
                    "this clustersim was built without MPI, so `sweep` cannot run as one of ",
                    LaunchedMpiRanks(),
                    " mpirun ranks; install libopenmpi-dev (bash .ci/setup) and rebuild, or run "
                    "one process without mpirun, or split the grid with --shard i/N"))};
}

}  // namespace clustersim::scenarios
