#include <cstdlib>

#include "absl/strings/numbers.h"
#include "scenarios/studies/sweep_mpi.h"

namespace clustersim::scenarios {

int LaunchedMpiRanks() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}) {
    int ranks = 0;
    const char* value = std::getenv(name);
    if (value != nullptr && absl::SimpleAtoi(value, &ranks) && ranks >= 1) return ranks;
  }
  return 1;
}

}  // namespace clustersim::scenarios
