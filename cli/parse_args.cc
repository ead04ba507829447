#include "cli/parse_args.h"

#include <exception>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "sim/status_macros.h"

namespace clustersim::cli {
namespace po = boost::program_options;

namespace {

// Boost.Program_options formats its error messages by replacing placeholders
// (%value%, %option%, %canonical_option%, %prefix_option%, %original_token%)
// until none is left; an argument containing the placeholder it is substituted
// for never runs out (`run --tp %value%` hung, growing the message, until
// fuzzing found it). Such arguments are refused before Boost sees them.
absl::Status CheckNoPlaceholder(const std::string& arg, std::string_view command) {
  for (size_t open = arg.find('%'); open != std::string::npos; open = arg.find('%', open + 1)) {
    size_t end = open + 1;
    while (end < arg.size() && (absl::ascii_isalpha(arg[end]) || arg[end] == '_')) ++end;
    if (end > open + 1 && end < arg.size() && arg[end] == '%') {
      return absl::InvalidArgumentError(absl::StrCat(
          "argument '", arg, "' contains '", arg.substr(open, end + 1 - open),
          "', which clustersim does not accept in arguments; remove the % signs; see "
          "clustersim ", std::string(command), " --help"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ParseArgs(const std::vector<std::string>& args, const po::options_description& options,
                       const po::positional_options_description* positional,
                       std::string_view command, po::variables_map* vm) {
  for (const std::string& arg : args) {
    CLUSTERSIM_RETURN_IF_ERROR(CheckNoPlaceholder(arg, command));
  }
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
