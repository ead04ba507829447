#include "cli/parse_args.h"

#include <exception>

#include "absl/strings/str_cat.h"

namespace clustersim::cli {
namespace po = boost::program_options;

absl::Status ParseArgs(const std::vector<std::string>& args, const po::options_description& options,
                       const po::positional_options_description* positional,
                       std::string_view command, po::variables_map* vm) {
  try {
    po::command_line_parser parser(args);
    parser.options(options);
    if (positional != nullptr) parser.positional(*positional);
    po::store(parser.run(), *vm);
    po::notify(*vm);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(e.what(), "; see clustersim ", std::string(command), " --help"));
  }
  return absl::OkStatus();
}

absl::Status CheckTableFormat(const std::string& format) {
  if (format == "text" || format == "csv" || format == "json") return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("--format=", format, " is not known; use text, csv or json"));
}

}  // namespace clustersim::cli
