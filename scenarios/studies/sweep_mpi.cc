// RunSweepOverMpi with MPI (see sweep_mpi.h). Messages, all on MPI_COMM_WORLD:
//   rank 0 -> worker  kTagWork: the point's index (one int64)
//   rank 0 -> worker  kTagStop: nothing; the worker returns
//   worker -> rank 0  kTagLine: 'F' or 'K' (failed or not), the JSON line, '\0',
//                     the CSV row
#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "scenarios/studies/sweep_mpi.h"
#include "sim/check.h"

namespace clustersim::scenarios {
namespace {

constexpr int kTagWork = 1;
constexpr int kTagStop = 2;
constexpr int kTagLine = 3;

std::string Pack(const SweepLine& line) {
  SIM_CHECK(line.json.find('\0') == std::string::npos) << "a sweep line holds a NUL byte";
  return absl::StrCat(line.failed ? "F" : "K", line.json, std::string(1, '\0'), line.csv);
}

SweepLine Unpack(const std::string& bytes) {
  const size_t nul = bytes.find('\0');
  SIM_CHECK(!bytes.empty() && nul != std::string::npos) << "malformed sweep line message";
  return {bytes.substr(1, nul - 1), bytes.substr(nul + 1), bytes[0] == 'F'};
}

// Rank 0's side: hands out points, collects lines. Stops every worker before
// it is destroyed, also when the sweep ends early on an error.
class Coordinator {
 public:
  explicit Coordinator(int ranks) : busy_(ranks, -1), stopped_(ranks, false) {}
  ~Coordinator() { StopAll(); }

  absl::Status Run(const std::vector<const SweepPoint*>& todo, const SweepEmit& emit) {
    size_t next = 0;
    for (int w = 1; w < Ranks(); ++w) Assign(w, todo, &next);
    absl::Status status;
    while (Outstanding() > 0) {
      auto [worker, line] = ReceiveLine();
      const int64_t position = busy_[worker];
      busy_[worker] = -1;
      if (status.ok()) status = emit(static_cast<size_t>(position), std::move(line));
      if (status.ok()) {
        Assign(worker, todo, &next);
      } else {
        Stop(worker);  // drain the others' points, write nothing more
      }
    }
    return status;
  }

  void StopAll() {
    for (int w = 1; w < Ranks(); ++w) {
      if (!stopped_[w]) {
        SIM_CHECK(busy_[w] < 0) << "stopping rank " << w << " with a point in flight";
        Stop(w);
      }
    }
  }

 private:
  int Ranks() const { return static_cast<int>(busy_.size()); }
  int Outstanding() const {
    int n = 0;
    for (int64_t b : busy_) n += b >= 0 ? 1 : 0;
    return n;
  }

  void Assign(int worker, const std::vector<const SweepPoint*>& todo, size_t* next) {
    if (*next == todo.size()) {
      Stop(worker);
      return;
    }
    const int64_t index = static_cast<int64_t>(todo[*next]->index);
    MPI_Send(&index, 1, MPI_INT64_T, worker, kTagWork, MPI_COMM_WORLD);
    busy_[worker] = static_cast<int64_t>((*next)++);
  }

  void Stop(int worker) {
    MPI_Send(nullptr, 0, MPI_CHAR, worker, kTagStop, MPI_COMM_WORLD);
    stopped_[worker] = true;
  }

  // Waits for the next line from any worker, sleeping between polls (MPI's
  // blocking receive spins, which would take a core from the workers).
  std::pair<int, SweepLine> ReceiveLine() {
    MPI_Status st;
    int arrived = 0;
    for (;;) {
      MPI_Iprobe(MPI_ANY_SOURCE, kTagLine, MPI_COMM_WORLD, &arrived, &st);
      if (arrived) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    int size = 0;
    MPI_Get_count(&st, MPI_CHAR, &size);
    std::string bytes(static_cast<size_t>(size), '\0');
    MPI_Recv(bytes.data(), size, MPI_CHAR, st.MPI_SOURCE, kTagLine, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
    return {st.MPI_SOURCE, Unpack(bytes)};
  }

  std::vector<int64_t> busy_;  // per rank: position in todo being simulated, or -1
  std::vector<bool> stopped_;
};

// A worker's side: simulate what rank 0 sends until it says stop.
void Serve(const std::vector<SweepPoint>& points) {
  for (;;) {
    int64_t index = 0;
    MPI_Status st;
    MPI_Recv(&index, 1, MPI_INT64_T, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
    if (st.MPI_TAG == kTagStop) return;
    SIM_CHECK(index >= 0 && static_cast<size_t>(index) < points.size())
        << "rank 0 sent point " << index << " of a " << points.size() << "-point sweep";
    const std::string bytes = Pack(SimulateSweepPoint(points[static_cast<size_t>(index)]));
    MPI_Send(bytes.data(), static_cast<int>(bytes.size()), MPI_CHAR, 0, kTagLine, MPI_COMM_WORLD);
  }
}

MpiSweepOutcome RunOnRank(int rank, int ranks,
                          const std::function<absl::StatusOr<std::vector<SweepPoint>>()>& load,
                          const SweepOptions& options) {
  absl::StatusOr<std::vector<SweepPoint>> points = load();
  // Every rank must have the same grid: agree on whether all loaded it.
  int loaded = points.ok() ? 1 : 0, all_loaded = 0;
  MPI_Allreduce(&loaded, &all_loaded, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!all_loaded) {
    return {rank == 0, !points.ok() ? points.status()
                                    : absl::FailedPreconditionError(
                                          "another MPI rank could not load the sweep file; every "
                                          "node needs the same files at the same paths")};
  }
  if (ranks == 1) return {true, RunSweep(*points, options)};
  if (rank != 0) {
    Serve(*points);
    return {false, SweepSummary{}};
  }
  Coordinator coordinator(ranks);
  absl::StatusOr<SweepSummary> summary =
      RunSweep(*points, options, [&](const std::vector<const SweepPoint*>& todo,
                                     const SweepEmit& emit) { return coordinator.Run(todo, emit); });
  coordinator.StopAll();  // also when RunSweep failed before handing anything out
  return {true, std::move(summary)};
}

}  // namespace

MpiSweepOutcome RunSweepOverMpi(
    const std::function<absl::StatusOr<std::vector<SweepPoint>>()>& load,
    const SweepOptions& options) {
  MPI_Init(nullptr, nullptr);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  MpiSweepOutcome outcome = RunOnRank(rank, ranks, load, options);
  MPI_Finalize();
  return outcome;
}

}  // namespace clustersim::scenarios
