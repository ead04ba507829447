#include "strategies/step_describer.h"

#include <cstdint>

#include "absl/strings/str_cat.h"

namespace clustersim::strategies {
namespace {

std::string_view PhaseName(Phase p) {
  switch (p) {
    case Phase::kForward: return "fwd";
    case Phase::kBackward: return "bwd";
    case Phase::kBackwardWeight: return "wgrad";
    case Phase::kOptimizer: return "step";
  }
  return "?";
}

std::string_view OpKindName(models::OpKind k) {
  switch (k) {
    case models::OpKind::kGemm: return "gemm";
    case models::OpKind::kAttention: return "attention";
    case models::OpKind::kMemoryBound: return "memory";
    case models::OpKind::kCollective: return "collective";
  }
  return "?";
}

std::string_view GroupName(models::CommGroup g) {
  switch (g) {
    case models::CommGroup::kTensor: return "tp";
    case models::CommGroup::kContext: return "cp";
    case models::CommGroup::kExpert: return "ep";
    case models::CommGroup::kData: return "dp";
    case models::CommGroup::kPipeline: return "pp";
  }
  return "?";
}

}  // namespace

void StepDescriber::Describe(const sim::TaskGraph&, const sim::Span& s,
                             sim::SpanDescription* out) const {
  const TaskInfo& info = plan_.infos[s.tag];
  const models::Op& op = *info.op;
  std::string where;
  if (info.microbatch >= 0) absl::StrAppend(&where, " mb", info.microbatch);
  if (info.layer >= 0) absl::StrAppend(&where, " L", info.layer);
  if (info.chunk > 0) absl::StrAppend(&where, " chunk", info.chunk);
  if (info.bucket >= 0) absl::StrAppend(&where, " bucket", info.bucket);
  out->name = absl::StrCat(std::string(PhaseName(info.phase)), where, " ", op.name);
  out->args.clear();
  out->args.emplace_back("op", op.name);
  if (info.microbatch >= 0) out->args.emplace_back("microbatch", int64_t{info.microbatch});
  if (info.layer >= 0) out->args.emplace_back("layer", int64_t{info.layer});
  if (info.stage >= 0) out->args.emplace_back("stage", int64_t{info.stage});
  if (info.chunk >= 0) out->args.emplace_back("chunk", int64_t{info.chunk});
  if (info.is_collective) {
    out->category = absl::StrCat("comm,", std::string(GroupName(op.group)));
    out->args.emplace_back("bytes", op.comm_bytes.count());
    out->args.emplace_back("group_size", int64_t{info.group_size});
    out->args.emplace_back("algorithm", std::string(topology::AlgorithmName(info.algorithm)));
    out->args.emplace_back("busbw_gbs", info.busbw_gbs);
    return;
  }
  out->category = absl::StrCat("compute,", std::string(OpKindName(op.kind)));
  if (op.kind == models::OpKind::kGemm || op.kind == models::OpKind::kAttention) {
    out->args.emplace_back("M", op.m);
    out->args.emplace_back("N", op.n);
    out->args.emplace_back("K", op.k);
    out->args.emplace_back("batch", op.batch);
  }
  out->args.emplace_back("flops", op.flops.count());
  out->args.emplace_back("bytes", op.bytes.count());
  out->args.emplace_back("dtype", std::string(models::DtypeName(op.dtype)));
  out->args.emplace_back("recompute", int64_t{op.recompute ? 1 : 0});
  out->args.emplace_back("efficiency", info.efficiency);
  out->args.emplace_back("cost_source", std::string(models::CostSourceName(info.source)));
}

std::string StepDescriber::ProcessName(uint32_t group) const {
  const int gpu = static_cast<int>(group);
  const RankCoords c = placement_.CoordsOf(gpu);
  return absl::StrCat("node", gpu / gpus_per_node_, "/gpu", gpu % gpus_per_node_, " (tp ", c.tp,
                      ", cp ", c.cp, ", pp ", c.pp, ", dp ", c.dp, ")");
}

std::string StepDescriber::ThreadName(const sim::TaskGraph& g, sim::ResourceId r) const {
  switch (g.resource(r).lane) {
    case kComputeLane: return "compute";
    case kTensorCommLane: return "comm: tp";
    case kDataCommLane: return "comm: dp";
    case kPipelineCommLane: return "comm: pp";
    case kHostLane: return "host: launch";
    case kExpertCommLane: return "comm: ep";
    case kContextCommLane: return "comm: cp";
    case kHostCopyLane: break;  // two streams (D2H, H2D): their resource names
  }
  return g.resource(r).name;
}

}  // namespace clustersim::strategies
