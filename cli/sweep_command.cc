// `clustersim sweep SWEEP_FILE --output PREFIX [--shard i/N]`: simulate every
// grid point not yet in PREFIX.jsonl, append to PREFIX.csv / PREFIX.jsonl, and
// print the time-vs-cost Pareto front (scenarios/studies/sweep.h); --report FILE.html
// draws every line of PREFIX.jsonl as a table and a scatter. Under
// `mpirun -np N` the points are spread over the ranks (scenarios/studies/sweep_mpi.h).
#include <iostream>

#include "absl/strings/str_format.h"
#include "boost/program_options.hpp"
#include "cli/commands.h"
#include "cli/parse_args.h"
#include "scenarios/studies/study_report_rows.h"
#include "scenarios/studies/sweep.h"
#include "scenarios/studies/sweep_mpi.h"

namespace clustersim::cli {
namespace po = boost::program_options;

absl::Status SweepCommand(const Args& args, CommandIo& io) {
  std::string path, shard, report;
  scenarios::SweepOptions options;
  bool help = false;
  po::options_description visible("Options");
  visible.add_options()("output", po::value(&options.output_prefix),
                        "PREFIX: results go to PREFIX.csv and PREFIX.jsonl (appended; a rerun "
                        "skips the points already there)")(
      "shard", po::value(&shard), "i/N: run the points whose index is i modulo N")(
      "report", po::value(&report),
      "FILE.html: a table and a time-vs-cost scatter of every point in PREFIX.jsonl")(
      "help,h", po::bool_switch(&help), "show this help");
  po::options_description all;
  all.add(visible).add_options()("sweep", po::value(&path), "sweep file");
  po::positional_options_description pos;
  pos.add("sweep", 1);
  po::variables_map vm;
  if (absl::Status s = ParseArgs(args, all, &pos, "sweep", &vm); !s.ok()) return s;
  if (help) {
    *io.out << "usage: [mpirun -np N] clustersim sweep SWEEP_FILE --output PREFIX [--shard i/N] "
               "[--report FILE.html]\n"
               "SWEEP_FILE: scenarios/proto/sweep.proto (SweepFile), e.g. "
               "scenarios/examples/sweeps/gpt-22b-grid.textproto\n\n"
            << visible;
    return absl::OkStatus();
  }
  if (path.empty()) {
    return absl::InvalidArgumentError("sweep needs a SWEEP_FILE (scenarios/proto/sweep.proto)");
  }
  if (!shard.empty()) {
    if (absl::Status s = scenarios::ParseShard(shard, &options); !s.ok()) return s;
  }
  absl::StatusOr<scenarios::SweepSummary> summary;
  if (scenarios::LaunchedMpiRanks() > 1) {
    scenarios::MpiSweepOutcome outcome =
        scenarios::RunSweepOverMpi([&] { return scenarios::LoadSweep(path); }, options);
    if (!outcome.coordinator) {  // rank 0 reports
      io.exit_code = outcome.summary.ok() ? 0 : 1;
      return absl::OkStatus();
    }
    summary = std::move(outcome.summary);
  } else {
    absl::StatusOr<std::vector<scenarios::SweepPoint>> points = scenarios::LoadSweep(path);
    if (!points.ok()) return points.status();
    summary = scenarios::RunSweep(*points, options, scenarios::InProcessExecutor(io.control));
  }
  if (!summary.ok()) return summary.status();
  *io.out << absl::StrFormat(
      "sweep: %d points in shard %d/%d: %d already done, %d run (%d rejected)\n", summary->points,
      options.shard, options.num_shards, summary->skipped, summary->ran, summary->failed);
  *io.out << absl::StrFormat("Pareto front (%s vs %s), every point in %s.jsonl:\n",
                             !summary->train_axes     ? "step seconds"
                             : summary->goodput_axes ? "days to train, p50 with failures"
                                                     : "days to train",
                             !summary->train_axes     ? "$ per million tokens"
                             : summary->goodput_axes ? "total $ with failures"
                                                     : "total $",
                             options.output_prefix);
  for (const scenarios::ParetoPoint& p : summary->pareto) {
    *io.out << absl::StrFormat("  %12.4f  %12.4f  %s\n", p.time, p.cost, p.label);
  }
  if (!report.empty()) {
    std::vector<scenarios::ReportPoint> report_points;
    for (const std::string& line : summary->lines) {
      if (std::optional<scenarios::ReportPoint> p = scenarios::ReportPointOfJson(line)) {
        report_points.push_back(*std::move(p));
      }
    }
    const absl::Status s = scenarios::WriteStudyReport(
        report, report_points,
        {.title = absl::StrCat("clustersim sweep ", path),
         .subtitle = absl::StrCat(summary->lines.size(), " points in ", options.output_prefix,
                                  ".jsonl (", report_points.size(), " simulated)")});
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

int SweepCommand(const Args& args) { return RunOnStdIo(SweepCommand, args); }

}  // namespace clustersim::cli
