// `clustersim list gpus|models|clusters`: the catalogs' canonical names.
#include <iostream>
#include <string>

#include "absl/strings/str_cat.h"
#include "cli/commands.h"
#include "models/gpu_catalog.h"
#include "models/transformer_config.h"
#include "topology/cluster.h"

namespace clustersim::cli {

int ListCommand(const Args& args) {
  const std::string what = args.empty() ? "" : args[0];
  std::vector<std::string> names;
  if (what == "gpus") {
    names = models::GpuCatalog::Default().Names();
  } else if (what == "models") {
    names = models::ModelCatalog::Default().Names();
  } else if (what == "clusters") {
    names = topology::NodePresetNames();
  } else {
    return Fail(absl::InvalidArgumentError(absl::StrCat(
        "list: unknown catalog \"", what, "\"; use gpus, models or clusters")));
  }
  for (const std::string& n : names) std::cout << n << "\n";
  return 0;
}

}  // namespace clustersim::cli
