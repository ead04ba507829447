// File: scenarios/studies/sweep_mpi.h
//
// `mpirun -np N clustersim sweep FILE --output PREFIX`: the sweep distributed
// over an Open MPI job. Rank 0 coordinates: it reads PREFIX (resume), hands
// the points still to do to the other ranks one at a time (the next point to
// whichever rank finishes first), and writes their lines through RunSweep
// (scenarios/studies/sweep.h), in point order, so the files are byte for byte those
// of a one-process run. Ranks 1..N-1 simulate; rank 0 waits in a sleeping
// poll, not a busy loop, so a job may oversubscribe one core with it
// (-np cores+1). A killed job resumes like a killed process: the points
// written are skipped; points finished out of order and still waiting in
// rank 0's memory for an earlier one are simulated again. Every rank loads
// the sweep itself (same file system on every node); only indices and result
// lines travel.
//
// Built with MPI only when CMake finds it (sweep_mpi.cc); otherwise
// (sweep_mpi_stub.cc) RunSweepOverMpi says how to get it, and `clustersim
// sweep` started by mpirun with more than one rank exits with that error.
//
// Example:
//   if (LaunchedMpiRanks() > 1) {
//     MpiSweepOutcome o = RunSweepOverMpi([&] { return LoadSweep(path); }, options);
//     if (!o.coordinator) return o.summary.ok() ? 0 : 1;  // workers print nothing
//   }
#ifndef CLUSTERSIM_SCENARIOS_STUDIES_SWEEP_MPI_H_
#define CLUSTERSIM_SCENARIOS_STUDIES_SWEEP_MPI_H_

#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "scenarios/studies/sweep.h"

namespace clustersim::scenarios {

// The number of ranks the MPI launcher started this job with, from its
// environment (Open MPI's OMPI_COMM_WORLD_SIZE, MPICH / Intel MPI's PMI_SIZE);
// 1 when the process was not started by mpirun / mpiexec.
int LaunchedMpiRanks();

struct MpiSweepOutcome {
  bool coordinator = true;  // rank 0: prints the summary, or the error
  absl::StatusOr<SweepSummary> summary;  // on other ranks: OK (empty) or why they stopped
};

// Initialises MPI, runs the sweep over MPI_COMM_WORLD and finalises MPI; call
// once per process. `load` runs on every rank; when it fails on any, every
// rank returns an error (rank 0's names the cause).
MpiSweepOutcome RunSweepOverMpi(
    const std::function<absl::StatusOr<std::vector<SweepPoint>>()>& load,
    const SweepOptions& options);

}  // namespace clustersim::scenarios

#endif  // CLUSTERSIM_SCENARIOS_STUDIES_SWEEP_MPI_H_
