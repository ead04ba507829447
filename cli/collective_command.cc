// `clustersim collective`: an nccl-tests-style table (size, time, algbw,
// busbw) of one collective on a cluster preset, from the analytic network.
//   clustersim collective --node dgx-h100 --num-gpus 8 --op all_reduce
//       --algorithm nvls --protocol auto --min-bytes 1M --max-bytes 1G --factor 2
// The last column names the algorithm and NCCL protocol chosen for each size.
#include <cstdint>
#include <exception>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "boost/program_options.hpp"
#include "cli/commands.h"
#include "cli/parse_args.h"
#include "topology/analytic_network.h"
#include "topology/cluster.h"
#include "topology/collective_table.h"

namespace clustersim::cli {
namespace po = boost::program_options;
namespace {

// "8", "64K", "128M", "1G" (binary multiples, as nccl-tests reads -b/-e).
absl::StatusOr<sim::Bytes> ParseSize(const std::string& flag, const std::string& text) {
  int64_t mult = 1;
  std::string digits = text;
  if (!text.empty()) {
    switch (text.back()) {
      case 'K': case 'k': mult = int64_t{1} << 10; break;
      case 'M': case 'm': mult = int64_t{1} << 20; break;
      case 'G': case 'g': mult = int64_t{1} << 30; break;
      default: break;
    }
    if (mult != 1) digits.pop_back();
  }
  int64_t n = 0;
  if (!absl::SimpleAtoi(digits, &n) || n <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--", flag, "=", text, " is not a positive size; write e.g. 8, 64K, 128M or 1G"));
  }
  return sim::Bytes(n * mult);
}

}  // namespace

absl::Status CollectiveCommand(const Args& args, CommandIo& io) {
  std::string node = "dgx-a100", op_name = "all_reduce", algo_name = "auto", proto_name = "auto";
  std::string min_text = "1M", max_text = "1G";
  int num_gpus = 8, factor = 2, nics = 0;
  bool help = false;
  po::options_description d("usage: clustersim collective [flags]");
  d.add_options()("node", po::value(&node)->default_value(node),
                  "node preset (clustersim list clusters)")(
      "num-gpus", po::value(&num_gpus)->default_value(num_gpus),
      "participating GPUs (ranks 0..n-1; nodes are added as needed)")(
      "nics-per-node", po::value(&nics)->default_value(0), "override the preset's NIC count")(
      "op", po::value(&op_name)->default_value(op_name),
      "all_reduce|reduce_scatter|all_gather|all_to_all|broadcast|send_recv")(
      "algorithm", po::value(&algo_name)->default_value(algo_name),
      "auto|ring|tree|nvls|hierarchical")(
      "protocol", po::value(&proto_name)->default_value(proto_name),
      "NCCL protocol: auto|ll|ll128|simple")(
      "min-bytes,b", po::value(&min_text)->default_value(min_text), "smallest size")(
      "max-bytes,e", po::value(&max_text)->default_value(max_text), "largest size")(
      "factor,f", po::value(&factor)->default_value(factor), "size multiplier per row")(
      "help,h", po::bool_switch(&help), "show this help");
  po::variables_map vm;
  if (absl::Status s = ParseArgs(args, d, nullptr, "collective", &vm); !s.ok()) return s;
  if (help) {
    *io.out << d;
    return absl::OkStatus();
  }
  absl::StatusOr<topology::Collective> op = topology::ParseCollective(op_name);
  if (!op.ok()) return absl::InvalidArgumentError(absl::StrCat("--op: ", op.status().message()));
  absl::StatusOr<topology::Algorithm> algo = topology::ParseAlgorithm(algo_name);
  if (!algo.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--algorithm: ", algo.status().message()));
  }
  absl::StatusOr<topology::Protocol> proto = topology::ParseProtocol(proto_name);
  if (!proto.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--protocol: ", proto.status().message()));
  }
  absl::StatusOr<sim::Bytes> lo = ParseSize("min-bytes", min_text);
  if (!lo.ok()) return lo.status();
  absl::StatusOr<sim::Bytes> hi = ParseSize("max-bytes", max_text);
  if (!hi.ok()) return hi.status();
  if (num_gpus < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("--num-gpus=", num_gpus, " must be at least 2 for a collective"));
  }
  absl::StatusOr<const topology::NodePreset*> preset = topology::FindNodePreset(node);
  if (!preset.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--node: ", preset.status().message()));
  }
  topology::ClusterSpec spec;
  spec.node_preset = node;
  spec.nics_per_node = nics;
  const int per_node = (*preset)->gpus_per_node;
  spec.num_nodes = (num_gpus + per_node - 1) / per_node;
  absl::StatusOr<topology::Cluster> cluster = topology::BuildCluster(spec);
  if (!cluster.ok()) return cluster.status();
  const topology::AnalyticNetwork network(*cluster);
  std::vector<int> gpus;
  for (int g = 0; g < num_gpus; ++g) gpus.push_back(g);
  absl::StatusOr<std::string> table =
      topology::FormatCollectiveTable(network, *op, *algo, *proto, gpus, *lo, *hi, factor);
  if (!table.ok()) return table.status();
  *io.out << "# " << cluster->Describe() << ", " << num_gpus << " ranks, " << op_name
          << ", algorithm " << algo_name << ", protocol " << proto_name
          << " (analytic alpha-beta model)\n"
          << *table;
  return absl::OkStatus();
}

int CollectiveCommand(const Args& args) { return RunOnStdIo(CollectiveCommand, args); }

}  // namespace clustersim::cli
