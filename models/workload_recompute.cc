// Selective-recompute replays of the transformer layer (models/workload.h):
// copies of forward ops, marked recomputed, placed just before the backward
// that reads their outputs. For models/workload.cc.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "models/workload_ops.h"

namespace clustersim::models::workload_internal {

// Appends copies of the forward ops `names`, marked recomputed: a
// selective-recompute replay just before the backward that reads them.
void Replay(const std::vector<Op>& fwd, const std::vector<std::string_view>& names,
            std::vector<Op>* ops) {
  for (std::string_view name : names) {
    Op again = FindOp(fwd, name);
    again.recompute = true;
    ops->push_back(std::move(again));
  }
}

// The selective replay of the dense MLP's input side (ShardSpec::
// recompute_mlp_up): layernorm2, the sequence-parallel gather, fc1 and the
// activation, which the fc2 and activation backward read.
void MlpUpReplay(const Dims& d, const std::vector<Op>& fwd, std::vector<Op>* ops) {
  std::vector<std::string_view> names = {"layernorm2"};
  if (d.sp) names.push_back("tp_allgather_mlp");
  names.push_back("fc1_gemm");
  names.push_back(d.act_name);
  Replay(fwd, names, ops);
}

// Recompute module "mlp": the dense MLP's whole forward (gather, fc1, the
// activation, fc2 and the output collective) before its backward.
void MlpReplay(const Dims& d, const std::vector<Op>& fwd, std::vector<Op>* ops) {
  std::vector<std::string_view> names;
  if (d.sp) names.push_back("tp_allgather_mlp");
  names.insert(names.end(), {"fc1_gemm", d.act_name, "fc2_gemm"});
  if (d.sp) {
    names.push_back("tp_reducescatter_mlp");
  } else if (d.t > 1) {
    names.push_back("tp_allreduce_mlp");
  }
  Replay(fwd, names, ops);
}

// ShardSpec::recompute_op_sac: the block's forward replayed in order up to the
// SwiGLU product, with the ops torchtitan's policy saves (wq, wv, w1, SDPA, the
// reduce-scatters) left out. bf16 replays wk and w3 as slices of the fused
// QKV and FC1 GEMMs; fp8 replays both whole and casts their inputs again.
void OpSacReplay(const Dims& d, const std::vector<Op>& fwd, std::vector<Op>* ops) {
  const bool fp8 = IsQuantizedGemmDtype(d.dtype);
  std::vector<Op> replay;
  auto again = [&](std::string_view name) { replay.push_back(FindOp(fwd, name)); };
  // A slice of a fused forward GEMM: the same rows and inner size, n columns.
  auto slice = [&](std::string_view name, std::string part, int64_t n) {
    const Op& g = FindOp(fwd, name);
    replay.push_back(Gemm(d, absl::StrCat(std::string(name), "_", part), g.m, n, g.k));
  };
  again("layernorm1");
  if (d.sp) again("tp_allgather_attn");
  if (fp8) {
    again("qkv_gemm");
  } else {
    slice("qkv_gemm", "wk", d.g_local * d.d);
  }
  if (EagerRope(d)) again("rope");
  again("out_proj_gemm");
  again("dropout_residual1");
  again("layernorm2");
  if (d.sp) again("tp_allgather_mlp");
  if (fp8) {
    again("fc1_gemm");
  } else if (d.swiglu) {
    slice("fc1_gemm", "w3", d.f_local);
  }
  again(d.act_name);
  if (const int64_t cast = Fp8CastBytes(replay, /*backward=*/false, d.fp8_recipe); cast > 0) {
    replay.insert(replay.begin() + 1, MemoryBound(d, "fp8_cast_fwd", cast));
    SetFp8CastKernels(replay, d.fp8_recipe, &replay[1]);
  }
  for (Op& op : replay) {
    op.recompute = true;
    ops->push_back(std::move(op));
  }
}

}  // namespace clustersim::models::workload_internal
