#include "cli/commands.h"
namespace clustersim::cli {
int SearchCommand(const Args&) { return Fail(absl::UnimplementedError("search: not yet")); }
}  // namespace clustersim::cli
