#include "strategies/search_space.h"

#include <algorithm>
#include <string_view>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "models/memory_verdict.h"
#include "strategies/memory_inputs.h"

namespace clustersim::strategies {
namespace {

std::vector<int> PowersOfTwoUpTo(int limit) {
  std::vector<int> out;
  for (int v = 1; v <= limit; v *= 2) out.push_back(v);
  return out;
}

bool IsFieldPath(std::string_view w) {
  const size_t dot = w.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == w.size()) return false;
  return std::all_of(w.begin(), w.end(), [](char c) { return absl::ascii_islower(c) || c == '_' || c == '.'; });
}

// The first scenario field a validation message names ("parallelism.zero_stage"),
// else its first four words: the key rejections are counted under.
std::string FieldOf(const std::string& message) {
  const std::vector<absl::string_view> words =
      absl::StrSplit(message, absl::ByAnyChar(" =:(),;"), absl::SkipEmpty());
  for (absl::string_view w : words) {
    if (IsFieldPath(std::string_view(w.data(), w.size()))) return std::string(w);
  }
  std::vector<absl::string_view> head(words.begin(), words.begin() + std::min<size_t>(4, words.size()));
  return absl::StrJoin(head, " ");
}

// The hybrid-sharding group of one node: the data-parallel ranks that share a
// node (tp and cp ranks are placed innermost), when that is more than one and
// fewer than all of them; 0 otherwise, and for mixture-of-experts models,
// whose hybrid sharding is not simulated.
int NodeShard(const models::TransformerConfig& model, const SearchSpace& space, int tp, int pp,
              int cp) {
  if (model.num_experts > 0 || space.gpus_per_node % (tp * cp) != 0) return 0;
  if (space.num_gpus % (tp * pp * cp) != 0) return 0;
  const int dp = space.num_gpus / (tp * pp * cp);
  const int shard = space.gpus_per_node / (tp * cp);
  return shard > 1 && shard < dp && dp % shard == 0 ? shard : 0;
}

}  // namespace

std::vector<ParallelConfig> EnumerateStrategies(const models::TransformerConfig& model,
                                                const SearchSpace& space) {
  struct Optimizer {
    bool distributed;
    int zero_stage;
    bool node_shard;  // ZeRO-3 sharded over the data-parallel ranks of one node
  };
  constexpr Optimizer kOptimizers[] = {
      {false, 0, false}, {true, 0, false}, {false, 3, false}, {false, 3, true}};
  constexpr models::Recompute kRecompute[] = {models::Recompute::kNone,
                                              models::Recompute::kSelective,
                                              models::Recompute::kFull};
  const std::vector<int> eps = model.num_experts > 0 ? std::vector<int>{1, 2, 4, 8}
                                                     : std::vector<int>{1};
  std::vector<ParallelConfig> out;
  for (int tp : PowersOfTwoUpTo(std::min(space.gpus_per_node, space.num_gpus))) {
    for (int pp : PowersOfTwoUpTo(std::min(model.num_layers, space.num_gpus / tp))) {
      for (int vp : pp > 1 ? std::vector<int>{1, 2, 4} : std::vector<int>{1}) {
        const std::vector<Schedule> schedules =
            vp > 1    ? std::vector<Schedule>{Schedule::kInterleaved1F1B}
            : pp > 1  ? std::vector<Schedule>{Schedule::k1F1B, Schedule::kZeroBubbleH1}
                      : std::vector<Schedule>{Schedule::k1F1B};
        for (Schedule schedule : schedules) {
          for (int cp : {1, 2}) {
            for (int ep : eps) {
              for (int mbs : {1, 2, 4, 8}) {
                for (models::Recompute rc : kRecompute) {
                  for (const Optimizer& opt : kOptimizers) {
                    const int shard =
                        opt.node_shard ? NodeShard(model, space, tp, pp, cp) : 0;
                    if (opt.node_shard && shard == 0) continue;
                    ParallelConfig c;
                    c.tensor_parallel = tp;
                    c.pipeline_parallel = pp;
                    c.virtual_pipeline = vp;
                    c.schedule = schedule;
                    c.context_parallel = cp;
                    c.expert_parallel = ep;
                    c.micro_batch_size = mbs;
                    c.global_batch_size = space.global_batch_size;
                    c.recompute = rc;
                    c.distributed_optimizer = opt.distributed;
                    c.zero_stage = opt.zero_stage;
                    c.data_parallel_shard = shard;
                    c.sequence_parallel = tp > 1;
                    c.overlap_grad_reduce = true;
                    c.overlap_param_gather = opt.distributed;
                    c.precision = space.precision;
                    c.data_parallel = 0;
                    out.push_back(c);
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  return out;
}

Pruning PruneStrategy(const models::TransformerConfig& model, sim::Bytes gpu_memory,
                      const models::FinetuneSpec& finetune, int num_gpus, ParallelConfig* config,
                      bool keep_non_layer_gathered) {
  config->data_parallel = 0;
  if (absl::Status s = ValidateParallelConfig(model, num_gpus, config); !s.ok()) {
    const bool unsupported = s.code() == absl::StatusCode::kUnimplemented;
    return {absl::StrCat(unsupported ? "unsupported: " : "invalid: ", FieldOf(std::string(s.message()))),
            std::string(s.message())};
  }
  models::MemoryInputs in = MemoryInputsFor(model, *config, finetune);
  in.keep_non_layer_gathered = keep_non_layer_gathered;
  if (absl::Status s = models::ValidateMemoryInputs(in); !s.ok()) {
    return {absl::StrCat("invalid: ", FieldOf(std::string(s.message()))), std::string(s.message())};
  }
  const models::MemoryBreakdown m = models::EstimateMemory(in);
  if (m.Total() <= gpu_memory) return {};
  const models::MemoryVerdict v = models::JudgeMemory(
      in, m, gpu_memory, {.block_recompute = config->AllowsBlockRecompute()});
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  return {absl::StrCat("memory: ", v.biggest_term),
          absl::StrFormat("needs %.1f GiB per GPU of %.1f GiB (%s biggest); %s",
                          m.Total().count() / kGiB, gpu_memory.count() / kGiB, v.biggest_term,
                          v.remedy),
          v};
}

std::optional<ParallelConfig> BlockRecomputeVariant(const models::TransformerConfig& model,
                                                    sim::Bytes gpu_memory,
                                                    const models::FinetuneSpec& finetune,
                                                    int num_gpus, const ParallelConfig& config,
                                                    const Pruning& why,
                                                    bool keep_non_layer_gathered) {
  if (!config.AllowsBlockRecompute()) return std::nullopt;
  auto bisect = [&] {
    models::MemoryInputs in = MemoryInputsFor(model, config, finetune);
    in.keep_non_layer_gathered = keep_non_layer_gathered;
    return models::SmallestBlockRecompute(in, gpu_memory);
  };
  const std::optional<int> n =
      why.memory.block_recompute_tried ? why.memory.block_recompute_layers : bisect();
  if (!n) return std::nullopt;
  ParallelConfig variant = config;
  variant.recompute = models::Recompute::kFull;
  variant.recompute_method = models::RecomputeMethod::kBlock;
  variant.recompute_num_layers = *n;
  variant.recompute_mlp_up = variant.recompute_op_sac = false;
  if (!PruneStrategy(model, gpu_memory, finetune, num_gpus, &variant, keep_non_layer_gathered)
           .reason.empty()) {
    return std::nullopt;
  }
  return variant;
}

}  // namespace clustersim::strategies
