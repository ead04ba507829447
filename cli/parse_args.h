// File: cli/parse_args.h
//
// Runs Boost.Program_options over a subcommand's arguments and turns its
// exceptions into an INVALID_ARGUMENT status that names the problem and points
// at the command's --help. The one place in clustersim that catches them.
//
// Example:
//   std::optional<int> tp;
//   Opt(options, "tp", &tp, "tensor-parallel size");
//   po::variables_map vm;
//   if (absl::Status s = ParseArgs(args, all, &pos, "validate", &vm); !s.ok()) return Fail(s);
//   if (absl::Status s = CheckTableFormat(format); !s.ok()) return Fail(s);
#ifndef CLUSTERSIM_CLI_PARSE_ARGS_H_
#define CLUSTERSIM_CLI_PARSE_ARGS_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "boost/program_options.hpp"

namespace clustersim::cli {

// Adds option `name` whose value, when given, lands in `*slot`; an option not
// given leaves it empty (so only the flags a user typed override a scenario).
template <typename T>
void Opt(boost::program_options::options_description& d, const char* name, std::optional<T>* slot,
         const char* help) {
  d.add_options()(name,
                  boost::program_options::value<T>()->notifier([slot](const T& v) { *slot = v; }),
                  help);
}

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
