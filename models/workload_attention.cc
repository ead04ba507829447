// The attention core's ops: FlashAttention's fused kernel or Megatron's
// unfused CoreAttention, forward and backward (with its selective-recompute
// replay), and Transformer Engine's context-parallel ring attention.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "models/workload.h"
#include "models/workload_ops.h"

namespace clustersim::models::workload_internal {
namespace {

Op AttentionForward(const Dims& d) {
  Op op;
  op.name = "attention_fwd";
  op.kind = OpKind::kAttention;
  op.batch = d.b * d.a_local;
  op.m = d.s_local;
  op.n = d.s;
  op.k = d.d;
  op.causal = true;
  op.window = d.window;
  op.window_share = d.window_share;
  op.flops = sim::Flops(4.0 * op.batch * op.m * op.n * op.k);
  const int64_t q = d.b * d.s_local * d.a_local * d.d;  // also the output
  const int64_t kv = d.b * d.s * d.g_local * d.d;       // K and V each
  op.bytes = sim::Bytes((2 * q + 2 * kv) * d.act);
  if (d.dv != d.d) {
    // MLA: Q·K^T over d (nope + rope), P·V over the value dimension dv.
    op.flops = sim::Flops(2.0 * op.batch * op.m * op.n * (d.d + d.dv));
    op.bytes =
        sim::Bytes((d.b * d.s_local * d.a_local + d.b * d.s * d.g_local) * (d.d + d.dv) * d.act);
  }
  op.dtype = d.attn_dtype;
  return op;
}

// FlashAttention-2 backward: 5 matmuls against the forward's 2 (2.5x FLOPs);
// reads Q, K, V, O, dO and writes dQ, dK, dV (~2x the forward traffic).
Op AttentionBackward(const Op& fwd) {
  Op op = fwd;
  op.name = "attention_bwd";
  op.flops = fwd.flops * 2.5;
  op.bytes = fwd.bytes * 2;
  op.recompute = false;
  return op;
}

// Elements of the b·(a/tp)·s_q·s_kv attention scores of the unfused path.
int64_t ScoreElements(const Dims& d) { return d.b * d.a_local * d.s_local * d.s; }

// The unfused path's softmax over `scores` elements. Megatron's fused
// scale-mask-softmax kernel reads S and writes P in 16 bits. Where its
// constraints fail (Dims::torch_softmax) FusedScaleMaskSoftmax runs PyTorch's
// fallback with softmax_in_fp32 (set whenever query-key layer scaling is on,
// Megatron's default): input.float(), input * scale, masked_fill_ with the
// causal mask, torch.nn.Softmax and probs.half(), five kernels with fp32
// intermediates (Megatron-DeepSpeed megatron/model/fused_softmax.py at
// 0782d75; vTrain's profiled copy, src/model/fused_softmax.py at f8dda84).
// The [s, s] boolean mask is small and read from cache, so not counted.
void SoftmaxForward(const Dims& d, int64_t scores, std::vector<Op>* ops) {
  if (!d.torch_softmax) {
    ops->push_back(MemoryBound(d, "attention_softmax", 2 * scores * d.act));
    return;
  }
  constexpr int64_t kFp32 = 4;
  ops->push_back(MemoryBound(d, "attention_softmax_to_fp32", scores * (d.act + kFp32)));
  ops->push_back(MemoryBound(d, "attention_softmax_scale", 2 * scores * kFp32));
  ops->push_back(MemoryBound(d, "attention_softmax_mask", 2 * scores * kFp32));
  ops->push_back(MemoryBound(d, "attention_softmax", 2 * scores * kFp32));
  ops->push_back(MemoryBound(d, "attention_softmax_to_fp16", scores * (kFp32 + d.act)));
}

// Backward of SoftmaxForward. Fused: reads P and dP, writes dS. Fallback:
// autograd runs each forward kernel's backward in reverse: the gradient cast
// to fp32, the softmax backward (reads dP and the fp32 P, writes dS), the
// masked_fill backward (zeroes the masked gradients), the scale's multiply and
// the cast back to 16 bits.
void SoftmaxBackward(const Dims& d, int64_t scores, std::vector<Op>* ops) {
  if (!d.torch_softmax) {
    ops->push_back(MemoryBound(d, "attention_softmax_bwd", 3 * scores * d.act));
    return;
  }
  constexpr int64_t kFp32 = 4;
  ops->push_back(MemoryBound(d, "attention_softmax_bwd_to_fp32", scores * (d.act + kFp32)));
  ops->push_back(MemoryBound(d, "attention_softmax_bwd", 3 * scores * kFp32));
  ops->push_back(MemoryBound(d, "attention_softmax_mask_bwd", 2 * scores * kFp32));
  ops->push_back(MemoryBound(d, "attention_softmax_scale_bwd", 2 * scores * kFp32));
  ops->push_back(MemoryBound(d, "attention_softmax_bwd_to_fp16", scores * (kFp32 + d.act)));
}

}  // namespace

// The attention core's forward ops: one FlashAttention kernel, or Megatron's
// unfused CoreAttention (K and V expanded to all a/tp heads, as Megatron's
// repeat_interleave does for GQA): S = Q·K^T as a batched GEMM, the
// scale-mask-softmax (SoftmaxForward), dropout (reads P, writes P' and a
// 1-byte mask) and O = P'·V. Every product is the full s_q x s_kv: no kernel
// skips the causal half.
//
// ALiBi (BLOOM's Megatron-DeepSpeed, megatron/model/transformer.py): the
// scores are torch.baddbmm(alibi, Q, K^T, beta=1) with the [b·a, 1, s_kv]
// bias broadcast over the queries. PyTorch's CUDA baddbmm (aten/src/ATen/
// native/cuda/Blas.cpp, baddbmm_out_cuda_impl) first copies the expanded
// input into the output (writes every score) and then runs the batched GEMM
// with beta = 1, whose epilogue reads it back: one extra write and read of
// the scores, costed as a memory pass before the GEMM. FlashAttention adds the
// bias inside its kernel.
void AttentionCoreForward(const Dims& d, std::vector<Op>* ops) {
  if (!d.unfused_attention) {
    ops->push_back(AttentionForward(d));
    return;
  }
  const int64_t batch = d.b * d.a_local, scores = ScoreElements(d);
  if (d.alibi) ops->push_back(MemoryBound(d, "attention_alibi_bias", 2 * scores * d.act));
  ops->push_back(Gemm(d, "attention_scores_gemm", d.s_local, d.s, d.d, batch));
  SoftmaxForward(d, scores, ops);
  ops->push_back(MemoryBound(d, "attention_dropout", scores * (2 * d.act + 1)));
  ops->push_back(Gemm(d, "attention_context_gemm", d.s_local, d.d, d.s, batch));
}

// Backward of AttentionCoreForward, after the selective-recompute copy of its
// forward when `recompute` is kSelective (Korthikanti et al. 2022 recompute
// the attention core; Megatron-core does so for FlashAttention too). Unfused:
// dP' = dO·V^T and dV = P'^T·dO, dropout backward (reads dP' and the mask,
// writes dP), softmax backward (reads P and dP, writes dS), dQ = dS·K and
// dK = dS^T·Q. Both operands of these GEMMs are activations, so none is a
// weight gradient (no "_wgrad" name: zero-bubble schedules must not defer them).
void AttentionCoreBackward(const Dims& d, const std::vector<Op>& fwd, bool replay,
                           std::vector<Op>* ops) {
  if (replay) {
    std::vector<std::string_view> names = {"attention_fwd"};
    if (d.unfused_attention) {
      names = {"attention_scores_gemm"};
      for (const Op& op : fwd) {
        if (op.name.starts_with("attention_softmax")) names.push_back(op.name);
      }
      names.push_back("attention_dropout");
      names.push_back("attention_context_gemm");
      if (d.alibi) names.insert(names.begin(), "attention_alibi_bias");
    }
    Replay(fwd, names, ops);
  }
  if (!d.unfused_attention) {
    ops->push_back(AttentionBackward(FindOp(fwd, "attention_fwd")));
    return;
  }
  const int64_t scores = ScoreElements(d);
  const Op& context = FindOp(fwd, "attention_context_gemm");
  ops->push_back(Gemm(d, "attention_dprobs_gemm", context.m, context.k, context.n, context.batch));
  ops->push_back(Gemm(d, "attention_dv_gemm", context.k, context.n, context.m, context.batch));
  ops->push_back(MemoryBound(d, "attention_dropout_bwd", scores * (2 * d.act + 1)));
  SoftmaxBackward(d, scores, ops);
  const Op& qk = FindOp(fwd, "attention_scores_gemm");
  ops->push_back(Gemm(d, "attention_dq_gemm", qk.m, qk.k, qk.n, qk.batch));
  ops->push_back(Gemm(d, "attention_dk_gemm", qk.n, qk.k, qk.m, qk.batch));
}

// Transformer Engine's ring attention (see the header): the local causal
// block, then cp - 1 half blocks against the K/V that arrive from the ring.
ContextRing MakeContextRing(const Dims& d, int cp) {
  ContextRing r;
  r.steps = cp;
  auto attention = [&d](std::string name, int64_t keys, bool causal) {
    Op op;
    op.name = std::move(name);
    op.kind = OpKind::kAttention;
    op.batch = d.b * d.a_local;
    op.m = d.s_local;
    op.n = keys;
    op.k = d.d;
    op.causal = causal;
    op.flops = sim::Flops(4.0 * op.batch * op.m * op.n * op.k);
    const int64_t q = d.b * d.s_local * d.a_local * d.d;  // also the output
    const int64_t kv = d.b * keys * d.g_local * d.d;      // K and V each
    op.bytes = sim::Bytes((2 * q + 2 * kv) * d.act);
    op.dtype = d.attn_dtype;
    return op;
  };
  r.forward_diagonal = attention("attention_fwd_ring_diagonal", d.s_local, true);
  r.forward_step = attention("attention_fwd_ring_step", d.s_local / 2, false);
  r.backward_diagonal = AttentionBackward(r.forward_diagonal);
  r.backward_diagonal.name = "attention_bwd_ring_diagonal";
  r.backward_step = AttentionBackward(r.forward_step);
  r.backward_step.name = "attention_bwd_ring_step";
  const int64_t kv_chunk = 2 * d.b * d.s_local * d.g_local * d.d * d.act;  // K and V
  r.forward_exchange = Collective(d, "cp_kv_sendrecv", CommKind::kSendRecv, kv_chunk,
                                  CommGroup::kContext);
  r.backward_exchange = Collective(d, "cp_kv_dkv_sendrecv", CommKind::kSendRecv, 2 * kv_chunk,
                                   CommGroup::kContext);
  r.backward_final_exchange = Collective(d, "cp_dkv_sendrecv", CommKind::kSendRecv, kv_chunk,
                                         CommGroup::kContext);
  return r;
}

}  // namespace clustersim::models::workload_internal
