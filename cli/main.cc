// The clustersim command: dispatch only (see cli/commands.h).
#include <iostream>
#include <string>
#include <string_view>

#include "cli/commands.h"

namespace clustersim::cli {
namespace {

struct Command {
  std::string_view name;
  int (*run)(const Args&);
  std::string_view help;
};

constexpr Command kCommands[] = {
    {"run", RunCommand, "run [SCENARIO] [flags]      simulate one training step (run --help)"},
    {"list", ListCommand, "list gpus|models|clusters|prices|frameworks  print the catalogs"},
    {"collective", CollectiveCommand,
     "collective [flags]          nccl-tests-style table for a cluster (collective --help)"},
    {"validate", ValidateCommand,
     "validate FILE.csv...        simulate published runs, print errors and MAPE"},
    {"fit", FitCommand,
     "fit FILE.csv...             refit each software stack's GEMM factor on the tables"},
    {"calibrate", CalibrateCommand,
     "calibrate MEASUREMENTS      fit the kernel model to measurements (calibrate --help)"},
    {"validate-kernels", ValidateKernelsCommand,
     "validate-kernels MEASUREMENTS  kernel predictions vs measurements, held-out error"},
    {"compare", CompareCommand,
     "compare SCENARIO... [--variant \"tp=4\"]  side-by-side table of runs (compare --help)"},
    {"search", SearchCommand,
     "search --model M --gpu G --num-gpus N  rank parallel strategies (search --help)"},
    {"sweep", SweepCommand,
     "sweep SWEEP_FILE --output PREFIX  grid to CSV + JSON lines, resumable (sweep --help)"},
    {"serve", ServeCommand,
     "serve [SCENARIO] [flags]    simulate serving: latency, throughput, $ (serve --help)"},
};

void Usage(std::ostream& out) {
  out << "usage: clustersim <command> [args]\ncommands:\n";
  for (const Command& c : kCommands) out << "  " << c.help << "\n";
}

int Main(int argc, char** argv) {
  if (argc < 2) {
    Usage(std::cerr);
    return 2;
  }
  const std::string_view name = argv[1];
  if (name == "help" || name == "--help" || name == "-h") {
    Usage(std::cout);
    return 0;
  }
  const Args args(argv + 2, argv + argc);
  for (const Command& c : kCommands) {
    if (c.name == name) return c.run(args);
  }
  std::cerr << "clustersim: error: unknown command \"" << name << "\"; see clustersim help\n";
  return 2;
}

}  // namespace
}  // namespace clustersim::cli

int main(int argc, char** argv) { return clustersim::cli::Main(argc, argv); }
