// File: cli/commands.h
//
// One function per `clustersim` subcommand; main.cc dispatches by name. Each
// takes the arguments after the subcommand's name and returns the exit code:
// 0 success, 2 bad input (one line on stderr naming the field and a fix, no
// output file written), 1 internal error.
//
// To add a command: write cli/<name>_command.cc defining the function, declare
// it here, and add one row to kCommands in main.cc.
#ifndef CLUSTERSIM_CLI_COMMANDS_H_
#define CLUSTERSIM_CLI_COMMANDS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"

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

// Prints "clustersim: error: <message>" and returns the exit code for `s`.
int Fail(const absl::Status& s);

}  // namespace clustersim::cli

#endif  // CLUSTERSIM_CLI_COMMANDS_H_
