// File: cli/commands.h
//
// One function per `clustersim` subcommand; main.cc dispatches by name. Each
// takes the arguments after the subcommand's name and returns the exit code:
// 0 success, 2 bad input (one line on stderr naming the field and a fix, no
// output file written), 1 internal error. The commands the Python module
// calls also have a form that writes to a CommandIo and returns the error.
//
// To add a command: write cli/<name>_command.cc defining the function, declare
// it here, and add one row to kCommands in main.cc.
#ifndef CLUSTERSIM_CLI_COMMANDS_H_
#define CLUSTERSIM_CLI_COMMANDS_H_

#include <iostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "scenarios/proto/scenario.pb.h"
#include "sim/run_control.h"

namespace clustersim::cli {

using Args = std::vector<std::string>;

int RunCommand(const Args& args);         // run [SCENARIO] [flags]
int ListCommand(const Args& args);        // list gpus|models|clusters|prices|frameworks
int CollectiveCommand(const Args& args);  // collective [flags]
int ValidateCommand(const Args& args);    // validate FILE.csv... [flags]
int FitCommand(const Args& args);         // fit FILE.csv... [--threads N] [--grid G,...]
int CalibrateCommand(const Args& args);   // calibrate MEASUREMENTS [--output FILE]
int ValidateKernelsCommand(const Args& args);  // validate-kernels MEASUREMENTS [--calibration FILE]
int CompareCommand(const Args& args);     // compare SCENARIO... [--set k=v] [--variant "k=v,..."]
int SearchCommand(const Args& args);      // search --model M --gpu G --num-gpus N [flags]
int SweepCommand(const Args& args);       // sweep SWEEP_FILE --output PREFIX [--shard i/N]
int ServeCommand(const Args& args);       // serve [SCENARIO] [flags]

// Where a command writes, and what an in-process caller (the Python module,
// cli/python/) hands it. The process's own command line uses StdIo().
struct CommandIo {
  std::ostream* out = &std::cout;  // what the command prints on stdout
  std::ostream* err = &std::cerr;  // timing lines, warnings, bound violations
  // Progress bars are drawn on `err` only when it is the process's terminal.
  bool terminal = true;
  // The base scenario as JSON text in the scenario schema, used instead of a
  // SCENARIO file argument; null: the file (if any).
  const std::string* scenario_json = nullptr;
  // Progress and cancellation of the long calls (sim/run_control.h); null: none.
  sim::RunControl* control = nullptr;
  // Set to 1 when the command succeeded but a bound it was given was
  // exceeded (validate --max-mape): the process's exit code.
  int exit_code = 0;
};

// The commands the Python module calls in process: the same parsing, output
// and errors as the command line (an error is returned, not printed).
absl::Status RunCommand(const Args& args, CommandIo& io);
absl::Status ServeCommand(const Args& args, CommandIo& io);
absl::Status SearchCommand(const Args& args, CommandIo& io);
absl::Status CompareCommand(const Args& args, CommandIo& io);
absl::Status SweepCommand(const Args& args, CommandIo& io);
absl::Status CollectiveCommand(const Args& args, CommandIo& io);
absl::Status ValidateCommand(const Args& args, CommandIo& io);
absl::Status ListCommand(const Args& args, CommandIo& io);

// The base scenario of run, serve and search: io.scenario_json when set (it
// is named "<scenario>" in errors), else the file at `path`, else empty.
absl::StatusOr<config::Scenario> LoadBaseScenario(const std::string& path, const CommandIo& io);

// Runs `command` on the standard streams: its exit code, an error printed by Fail.
int RunOnStdIo(absl::Status (*command)(const Args&, CommandIo&), const Args& args);

// Prints "clustersim: error: <message>" and returns the exit code for `s`.
int Fail(const absl::Status& s);
// The exit code for `s`: 0 ok, 2 bad input, 1 internal error.
int ExitCode(const absl::Status& s);

}  // namespace clustersim::cli

#endif  // CLUSTERSIM_CLI_COMMANDS_H_
