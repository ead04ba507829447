#include "models/memory_verdict.h"

#include <array>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace clustersim::models {
namespace {

struct Candidate {
  std::string change;  // what to do, with the flag that does it
  MemoryInputs in;
};

std::string Gib(sim::Bytes b) { return absl::StrFormat("%.1f GiB", b.ToGiB()); }

// The candidate changes for `term`, in the order they are preferred. Records
// in `v` whether block recompute was tried and its smallest N.
std::vector<Candidate> Candidates(const MemoryInputs& in, std::string_view term,
                                  sim::Bytes capacity, RemedyOptions options, MemoryVerdict* v) {
  std::vector<Candidate> out;
  auto add = [&](std::string change, auto edit) {
    Candidate c{std::move(change), in};
    edit(c.in);
    out.push_back(std::move(c));
  };
  const ShardSpec& s = in.shard;
  const bool data_parallel = in.data_parallel * s.context_parallel > 1;
  const bool lora = in.finetune.method == FinetuneMethod::kLora;
  const int zero = std::max(in.zero_stage, in.distributed_optimizer ? 1 : 0);
  auto qlora = [&] {
    if (lora) {
      add("fine-tune with QLoRA, a 4-bit base (training.finetune=qlora)",
          [](MemoryInputs& m) { m.finetune.method = FinetuneMethod::kQlora; });
    }
  };
  if (term == "activations") {
    if (in.model.attention_backend == AttentionBackend::kUnfused &&
        s.recompute == Recompute::kNone) {
      // The s² scores go without the recompute cost of selective recompute.
      MemoryInputs flash = in;
      flash.model.attention_backend = AttentionBackend::kFlash;
      const sim::Bytes saved =
          EstimateMemory(in).activations - EstimateMemory(flash).activations;
      add(absl::StrCat("use FlashAttention (training.attention=flash; drops ", Gib(saved),
                       " of s² attention scores)"),
          [](MemoryInputs& m) { m.model.attention_backend = AttentionBackend::kFlash; });
    }
    if (s.recompute == Recompute::kNone) {
      add("enable selective recompute (--recompute-granularity selective)",
          [](MemoryInputs& m) { m.shard.recompute = Recompute::kSelective; });
    }
    if (s.tensor_parallel > 1 && !s.sequence_parallel) {
      add("enable sequence parallelism (--sequence-parallel)",
          [](MemoryInputs& m) { m.shard.sequence_parallel = true; });
    }
    if (s.tensor_parallel > 1 && !s.sequence_parallel && s.recompute == Recompute::kNone) {
      add("enable sequence parallelism and selective recompute (--sequence-parallel "
          "--recompute-granularity selective; Korthikanti et al. 2022)",
          [](MemoryInputs& m) {
            m.shard.sequence_parallel = true;
            m.shard.recompute = Recompute::kSelective;
          });
    }
    // Ahead of the micro-batch and full recompute: replaying a few layers per
    // chunk costs a fraction of replaying all of them.
    if (options.block_recompute) {
      v->block_recompute_tried = true;
      v->block_recompute_layers = SmallestBlockRecompute(in, capacity);
      if (const std::optional<int> n = v->block_recompute_layers) {
        add(absl::StrCat("recompute the first ", *n, " layer", *n == 1 ? "" : "s",
                         " of each model chunk (--recompute-granularity full "
                         "--recompute-method block --recompute-num-layers ",
                         *n, ")"),
            [n](MemoryInputs& m) { m = WithBlockRecompute(m, *n); });
      }
    }
    if (s.micro_batch_size > 1) {
      add(absl::StrCat("use a smaller micro-batch (--micro-batch-size ", s.micro_batch_size / 2,
                       ")"),
          [](MemoryInputs& m) { m.shard.micro_batch_size /= 2; });
    }
    if (s.recompute != Recompute::kFull) {
      add("enable full recompute (--recompute-granularity full)",
          [](MemoryInputs& m) { m.shard.recompute = Recompute::kFull; });
    }
  } else if (term == "optimizer") {
    if (data_parallel && zero < 1) {
      add("use the distributed optimizer (--use-distributed-optimizer)",
          [](MemoryInputs& m) { m.distributed_optimizer = true; });
    }
    qlora();
  } else if (term == "gradients") {
    if (data_parallel && zero < 2) {
      add("shard gradients with ZeRO stage 2 (parallelism.zero_stage=2)",
          [](MemoryInputs& m) { m.zero_stage = 2; });
    }
    qlora();
  } else if (term == "weights") {
    qlora();
    if (data_parallel && zero < 3) {
      add("shard parameters with ZeRO stage 3 / FSDP (parallelism.zero_stage=3)",
          [](MemoryInputs& m) { m.zero_stage = 3; });
    }
  }
  if (term == "other") return out;
  // Model parallelism on the same GPUs takes the factor from data parallelism
  // when it can (same world size); otherwise it needs more GPUs.
  auto from_data_parallel = [](MemoryInputs& m, int factor) {
    if (m.data_parallel % factor == 0) m.data_parallel /= factor;
  };
  for (int tp : {2, 4, 8}) {
    if (tp <= s.tensor_parallel || tp % s.tensor_parallel != 0) continue;
    const int factor = tp / s.tensor_parallel;
    add(absl::StrCat("raise tp to ", tp, " (--tensor-model-parallel-size ", tp, ")"),
        [&, tp, factor](MemoryInputs& m) {
          from_data_parallel(m, factor);
          m.shard.tensor_parallel = tp;
        });
  }
  for (int factor : {2, 4}) {
    const int pp = in.pipeline_parallel * factor;
    add(absl::StrCat("raise pp to ", pp, " (--pipeline-model-parallel-size ", pp, ")"),
        [&, pp, factor](MemoryInputs& m) {
          from_data_parallel(m, factor);
          m.pipeline_parallel = pp;
          m.num_microbatches = std::max(m.num_microbatches, pp);
        });
  }
  return out;
}

}  // namespace

MemoryInputs WithBlockRecompute(const MemoryInputs& in, int num_layers) {
  MemoryInputs out = in;
  out.shard.recompute = Recompute::kFull;
  out.shard.recompute_method = RecomputeMethod::kBlock;
  out.shard.recompute_num_layers = num_layers;
  return out;
}

std::optional<int> SmallestBlockRecompute(const MemoryInputs& in, sim::Bytes capacity) {
  auto peak = [&](int n) { return EstimateMemory(WithBlockRecompute(in, n)).Total(); };
  // N = num_layers replays every layer of every chunk: full recompute.
  const sim::Bytes every_layer = peak(in.model.num_layers);
  if (every_layer > capacity) return std::nullopt;
  int lo = 1, hi = in.model.num_layers;  // peak(hi) fits
  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;
    if (peak(mid) <= capacity) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  // A layer kept whole holds more than its input checkpoint, so the peak
  // equals full recompute's only once N covers every chunk.
  if (peak(lo) == every_layer) return std::nullopt;
  return lo;
}

MemoryVerdict JudgeMemory(const MemoryInputs& in, const MemoryBreakdown& m, sim::Bytes capacity,
                          RemedyOptions options) {
  MemoryVerdict v;
  v.fits = m.Total() <= capacity;
  const std::array<std::pair<const char*, sim::Bytes>, 5> terms = {{{"weights", m.weights},
                                                                    {"gradients", m.gradients},
                                                                    {"optimizer", m.optimizer},
                                                                    {"activations", m.activations},
                                                                    {"other", m.other}}};
  const auto* biggest = &terms[0];
  for (const auto& t : terms) {
    if (t.second > biggest->second) biggest = &t;
  }
  v.biggest_term = biggest->first;
  if (v.fits) return v;

  const Candidate* best = nullptr;
  sim::Bytes best_total = m.Total();
  const std::vector<Candidate> candidates = Candidates(in, v.biggest_term, capacity, options, &v);
  for (const Candidate& c : candidates) {
    if (!ValidateMemoryInputs(c.in).ok()) continue;  // e.g. tp not dividing the heads
    const sim::Bytes total = EstimateMemory(c.in).Total();
    if (total <= capacity) {
      v.remedy = absl::StrCat(c.change, ": peak ", Gib(total), " of ", Gib(capacity));
      return v;
    }
    if (total < best_total) {
      best = &c;
      best_total = total;
    }
  }
  if (best == nullptr) {
    v.remedy =
        absl::StrCat("no single change to this configuration reduces the ", v.biggest_term, " (",
                     Gib(biggest->second), "); use a GPU with more memory than ", Gib(capacity));
  } else {
    v.remedy = absl::StrCat(best->change, ": peak ", Gib(best_total), ", still above ",
                            Gib(capacity), "; combine it with further changes");
  }
  return v;
}

}  // namespace clustersim::models
