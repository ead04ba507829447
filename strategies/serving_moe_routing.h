// File: strategies/serving_moe_routing.h
//
// What uniform top-k routing makes of one MoE layer's grouped GEMM, computed
// from the binomial (balls-in-bins) distribution of the rows each expert and
// each expert-parallel rank receives, not fitted. T tokens each pick k of E
// experts (k distinct experts, every expert equally likely), so expert e
// receives m_e ~ Binomial(T, k/E) rows: its marginal, exact for top-k without
// replacement by symmetry.
//
//   Tile padding     a grouped GEMM (vLLM's fused MoE, TensorRT-LLM's CUTLASS
//                    MoE GEMM) runs each expert's rows as whole M tiles of
//                    `tile` rows, so it computes Σ_e ceil(m_e/tile)·tile rows,
//                    in expectation E·Σ_{j>=0} tile·P(m_e > j·tile). Mixtral
//                    8x7B (E 8, k 2) at T 700 decode tokens: m_e ~ 175 ± 11,
//                    two 128-row tiles each, 256 rows computed per 175 routed.
//   Rank imbalance   with expert parallelism over `ranks` GPUs holding E/ranks
//                    experts each, every routed row lands on a given rank with
//                    probability 1/ranks, and the layer waits for the most
//                    loaded rank. The T·k rows over the ranks are a
//                    multinomial; its maximum is taken as that of `ranks`
//                    independent Poisson(T·k/ranks) loads (Poissonization, as
//                    in Raab & Steger, "Balls into Bins" - A Simple and Tight
//                    Analysis, RANDOM 1998): E[max] = Σ_{x>=0} (1 − F(x)^ranks).
//                    It overstates the spread of top-k without replacement by
//                    at most (E − 1)/(E − k) in variance (DeepSeek-V3 255/248).
//                    DeepSeek-V3 (E 256, k 8) on 8 ranks: one decode token
//                    sends its 8 rows to a busiest rank of 2.6 rows (drawn
//                    routing: 2.57); 7,168 tokens, 7,168 rows per rank on
//                    average and ~7,290 at the busiest (+1.7%).
//   Skewed routers   real routers favour some experts. With a per-expert load
//                    coefficient of variation c (the spread of the experts'
//                    popularity in one layer and iteration,
//                    TransformerConfig::moe_expert_load_cv), each expert's
//                    popularity is taken as Gamma-distributed with mean 1 and
//                    CV c, so a rank's g = E/ranks experts carry a
//                    Gamma(g/c²) share and its rows are negative binomial:
//                    mean μ = T·k/ranks, variance μ + μ²·c²·f/g, where
//                    f = (1 − 1/ranks)·E/(E + c²) is the variance left once
//                    the shares are held to their fixed total (a Dirichlet
//                    share's). DeepSeek-R1 (c 1.28) on 8 ranks: 7,168 tokens,
//                    the busiest rank ~1.3x the mean rather than 1.02x.
//   Rank's experts   the experts that rank's R rows touch, each row picking one
//                    of its g = E/ranks experts: g·(1 − (1 − 1/g)^R), whose
//                    weights it reads.
//
// Example:
//   double rows = ExpectedPaddedRows(8, 2, 700, kGroupedGemmTileRows);  // ~2048
//   double busiest = ExpectedMaxRankRows(256, 8, 64, 8);                 // > 64
#ifndef CLUSTERSIM_STRATEGIES_SERVING_MOE_ROUTING_H_
#define CLUSTERSIM_STRATEGIES_SERVING_MOE_ROUTING_H_

#include <cstdint>

namespace clustersim::strategies {

// M tile of a grouped expert GEMM. vLLM's fused MoE pads each expert's rows to
// a multiple of the kernel's BLOCK_SIZE_M (vllm/model_executor/layers/
// fused_moe/moe_align_block_size.py: up to numel + E·(block − 1) padded rows);
// TensorRT-LLM's CUTLASS MoE GEMM runs each expert's rows in whole CTA tiles.
// 128 rows is the smallest M of the tile shapes models::KernelModel costs a
// GEMM with (128x256, 256x128, 128x128); tuned kernels pick smaller M tiles for
// small batches, where the GEMM streams its weights and the padding is hidden.
inline constexpr int kGroupedGemmTileRows = 128;

// M tile of a grouped expert GEMM whose experts get fewer rows than a whole
// kGroupedGemmTileRows tile. vLLM's fused MoE picks BLOCK_SIZE_M 16 (with
// BLOCK_SIZE_N 32) when the tokens are at most the experts
// (vllm/model_executor/layers/fused_moe/fused_moe.py, get_default_config:
// "if M <= E ..."), and moe_align_block_size pads each expert's rows to that
// block, so the kernel computes each expert's rows in 16-row tiles and splits
// the experts' columns over many small CTAs. 16 is also the M of one
// mma.sync tensor-core instruction. DeepSeek-R1 at one decode token on tp 8:
// 8 experts of 1 row each compute 8 x 16 rows, not 8 x 128.
inline constexpr int kGroupedGemmSmallTileRows = 16;

// Op::roofline_overlap of a grouped expert GEMM: its time is
// (compute^p + memory^p)^(1/p), not the larger of the two. DeepGEMM's grouped
// FP8 GEMM tables on H800 (deepseek-ai/DeepGEMM README.md @ 55ab91f7, "Grouped
// GEMMs for MoE models", contiguous and masked layouts: N x K 4096 x 7168 and
// 7168 x 2048, 256 to 8192 rows per expert) lose 31% and 33% of their
// large-M TFLOPS at 256 rows per expert, where the weights' HBM time
// approaches the tensor-core time, and 23% and 25% at 512 rows; max() of the
// two loses 18% and 32% at 256 rows and 6% and 23% at 512. Costing those ten shapes with the
// shipped H100 SXM calibration (H800: the H100's SMs and HBM) and normalising
// each N x K pair by its largest-M shape (which leaves out the kernel's own
// ceiling), p = 3 gives 5.5% mean absolute error on the six smaller-M shapes
// against 7.9% for max() (p = 2.8 minimises it, 3 has the smallest mean bias,
// -0.6%). Script: models/data/calibration/fit_grouped_gemm_overlap.py. Applied
// where the touched experts average at least kGroupedGemmTileRows rows; below
// that, kernels of smaller M tiles (kGroupedGemmSmallTileRows) stream the
// weights and max() stays.
inline constexpr double kGroupedGemmRooflineOverlap = 3.0;

// E[Σ_e ceil(m_e/tile)·tile] over the E experts, m_e ~ Binomial(T, k/E).
// 0 for a dense model or no tokens. REQUIRES: tile >= 1.
double ExpectedPaddedRows(int experts, int top_k, int64_t tokens, int tile);

// E[max_r L_r] over `ranks` ranks, L_r ~ Poisson(T·k/ranks) independent (or,
// with expert_load_cv c > 0, negative binomial as above), at most T·k; T·k for
// one rank. 0 for a dense model or no tokens. REQUIRES: ranks >= 1, c >= 0.
double ExpectedMaxRankRows(int experts, int top_k, int64_t tokens, int ranks,
                           double expert_load_cv = 0);

// Distinct experts `rows` routed rows touch on a rank of `experts_on_rank`
// experts, each row picking one uniformly: g·(1 − (1 − 1/g)^rows).
double ExpectedRankExpertsTouched(int experts_on_rank, double rows);

}  // namespace clustersim::strategies

#endif  // CLUSTERSIM_STRATEGIES_SERVING_MOE_ROUTING_H_
