// File: cli/parse_args.h
//
// Runs Boost.Program_options over a subcommand's arguments and turns its
// exceptions into an INVALID_ARGUMENT status that names the problem and points
// at the command's --help. The one place in clustersim that catches them.
//
// Example:
//   po::variables_map vm;
//   if (absl::Status s = ParseArgs(args, all, &pos, "validate", &vm); !s.ok()) return Fail(s);
//   if (absl::Status s = CheckTableFormat(format); !s.ok()) return Fail(s);
#ifndef CLUSTERSIM_CLI_PARSE_ARGS_H_
#define CLUSTERSIM_CLI_PARSE_ARGS_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "boost/program_options.hpp"

namespace clustersim::cli {

// `positional` may be null. Stores and notifies into `vm`.
absl::Status ParseArgs(const std::vector<std::string>& args,
                       const boost::program_options::options_description& options,
                       const boost::program_options::positional_options_description* positional,
                       std::string_view command, boost::program_options::variables_map* vm);

// --format for the study tables (compare, search): InvalidArgument naming the
// flag and the choices unless `format` is text, csv or json.
absl::Status CheckTableFormat(const std::string& format);

}  // namespace clustersim::cli

#endif  // CLUSTERSIM_CLI_PARSE_ARGS_H_
