// The clustersim command: wiring only. Subcommands:
//   run [SCENARIO] [flags]     simulate one training step
//   list gpus|models|clusters  print the catalogs
// Exit codes: 0 success, 2 bad input (one line on stderr naming the field and
// a fix; no output file written), 1 internal error.
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "cli/run_flags.h"
#include "google/protobuf/util/json_util.h"
#include "models/gpu_catalog.h"
#include "models/transformer_config.h"
#include "scenarios/loader.h"
#include "scenarios/resolve.h"
#include "scenarios/runner.h"
#include "topology/cluster.h"
#include "traces/atomic_file.h"
#include "viz/summary_text.h"

namespace clustersim::cli {
namespace {

constexpr const char* kUsage =
    "usage: clustersim <command> [args]\n"
    "commands:\n"
    "  run [SCENARIO] [flags]       simulate one training step (clustersim run --help)\n"
    "  list gpus|models|clusters    print the GPU, model and cluster catalogs\n";

int Fail(const absl::Status& s) {
  std::cerr << "clustersim: error: " << s.message() << std::endl;
  const bool input = s.code() == absl::StatusCode::kInvalidArgument ||
                     s.code() == absl::StatusCode::kNotFound ||
                     s.code() == absl::StatusCode::kUnimplemented ||
                     s.code() == absl::StatusCode::kFailedPrecondition;
  return input ? 2 : 1;
}

absl::StatusOr<std::string> ToJson(const google::protobuf::Message& m) {
  std::string json;
  google::protobuf::util::JsonPrintOptions o;
  o.add_whitespace = true;
  o.always_print_primitive_fields = true;
  o.preserve_proto_field_names = true;
  const auto st = google::protobuf::util::MessageToJsonString(m, &json, o);
  if (!st.ok()) return absl::InternalError(std::string(st.message()));
  return json;
}

int Run(const std::vector<std::string>& args) {
  absl::StatusOr<RunFlags> flags = ParseRunFlags(args);
  if (!flags.ok()) return Fail(flags.status());
  if (flags->help) {
    std::cout << flags->help_text;
    return 0;
  }
  config::Scenario scenario;
  if (!flags->scenario_path.empty()) {
    absl::StatusOr<config::Scenario> loaded = scenarios::LoadScenarioFile(flags->scenario_path);
    if (!loaded.ok()) return Fail(loaded.status());
    scenario = *std::move(loaded);
  }
  scenario.MergeFrom(flags->overrides);
  absl::StatusOr<scenarios::ResolvedScenario> resolved = scenarios::Resolve(scenario);
  if (!resolved.ok()) return Fail(resolved.status());

  scenarios::RunOptions options;
  options.trace_path = flags->trace_path;
  options.fold_data_parallel = !flags->no_fold;
  if (!flags->output_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(flags->output_dir, ec);
    if (ec) {
      return Fail(absl::InvalidArgumentError(absl::StrCat(
          "--output-dir ", flags->output_dir, ": ", ec.message(), "; choose a writable folder")));
    }
    if (options.trace_path.empty()) options.trace_path = flags->output_dir + "/trace.json";
  }
  absl::StatusOr<config::Result> result = scenarios::RunScenario(*resolved, options);
  if (!result.ok()) return Fail(result.status());
  absl::StatusOr<std::string> json = ToJson(*result);
  if (!json.ok()) return Fail(json.status());
  if (!flags->output_dir.empty()) {
    if (auto s = traces::WriteFileAtomically(flags->output_dir + "/result.json", *json); !s.ok()) {
      return Fail(s);
    }
  }
  if (flags->format == "json") {
    std::cout << *json;
  } else {
    std::cout << viz::FormatSummary(*result);
    if (!options.trace_path.empty()) std::cout << "  trace                      " << options.trace_path << "\n";
    if (!flags->output_dir.empty()) {
      std::cout << "  result                     " << flags->output_dir << "/result.json\n";
    }
  }
  return 0;
}

int List(const std::vector<std::string>& args) {
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

int Main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << kUsage;
    return 2;
  }
  const std::string cmd = argv[1];
  const std::vector<std::string> args(argv + 2, argv + argc);
  if (cmd == "run") return Run(args);
  if (cmd == "list") return List(args);
  if (cmd == "help" || cmd == "--help" || cmd == "-h") {
    std::cout << kUsage;
    return 0;
  }
  std::cerr << "clustersim: error: unknown command \"" << cmd << "\"\n" << kUsage;
  return 2;
}

}  // namespace
}  // namespace clustersim::cli

int main(int argc, char** argv) { return clustersim::cli::Main(argc, argv); }
