#include "cli/run_flags.h"

#include <cstdint>
#include <exception>
#include <optional>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "boost/program_options.hpp"
#include "cli/parse_args.h"
#include "sim/status_macros.h"

namespace clustersim::cli {
namespace po = boost::program_options;

namespace {

struct Values {
  std::optional<std::string> model, gpu, recompute, precision, fp8_recipe, node, algorithm, protocol, schedule,
      dispatcher, tier, model_config, finetune, attention, framework, price_source, failure_profile,
      storage, checkpoint_mode, recompute_method;
  std::optional<double> checkpoint_interval;
  std::optional<double> straggler_fraction, straggler_throughput, throughput_spread;
  std::optional<double> power_cap;
  std::optional<int> trials, spare_nodes;
  std::optional<uint64_t> seed;
  std::optional<int> num_layers, hidden, ffn, heads, groups, seq, vocab;
  std::optional<int> num_gpus, gpus_per_node, tp, pp, cp, ep, etp, vp, mbs, gbs, first_layers,
      last_layers, recompute_layers, offload_layers;
  std::optional<double> price, purchase, amortisation, utilisation, pue, kwh, hosting, tokens;
  std::optional<int64_t> steps;
};

}  // namespace

absl::StatusOr<RunFlags> ParseRunFlags(const std::vector<std::string>& args) {
  RunFlags f;
  Values v;
  po::options_description model("Model (override the scenario; Megatron-LM names)");
  Opt(model, "model", &v.model, "model preset (clustersim list models)");
  Opt(model, "model-config", &v.model_config, "a Hugging Face config.json");
  Opt(model, "num-layers", &v.num_layers, "transformer layers");
  Opt(model, "hidden-size", &v.hidden, "hidden size");
  Opt(model, "ffn-hidden-size", &v.ffn, "MLP hidden size");
  Opt(model, "num-attention-heads", &v.heads, "attention heads");
  Opt(model, "num-query-groups", &v.groups, "key/value groups (GQA)");
  Opt(model, "seq-length", &v.seq, "sequence length");
  Opt(model, "vocab-size", &v.vocab, "(padded) vocabulary size");
  model.add_options()("swiglu", po::bool_switch(), "SwiGLU MLP");
  po::options_description cluster("Cluster");
  Opt(cluster, "gpu", &v.gpu, "GPU name (clustersim list gpus)");
  Opt(cluster, "num-gpus", &v.num_gpus, "GPUs in the job");
  Opt(cluster, "gpus-per-node", &v.gpus_per_node, "GPUs per node");
  Opt(cluster, "node", &v.node, "node preset (clustersim list clusters)");
  Opt(cluster, "collective-algorithm", &v.algorithm, "auto|ring|tree|nvls|hierarchical");
  Opt(cluster, "collective-protocol", &v.protocol, "NCCL protocol: auto|ll|ll128|simple");
  Opt(cluster, "network-tier", &v.tier, "analytic (alpha-beta) | flow (link contention)");
  Opt(cluster, "power-cap-w", &v.power_cap,
      "board power limit per GPU, W (nvidia-smi -pl), e.g. 500 on an H100 SXM");
  po::options_description money("Money (clustersim list prices)");
  Opt(money, "price-source", &v.price_source, "price catalog entry, e.g. aws-p5, lambda-h100");
  Opt(money, "usd-per-gpu-hour", &v.price, "price per GPU-hour (overrides the catalog)");
  Opt(money, "purchase-usd-per-gpu", &v.purchase, "owned hardware: purchase price per GPU");
  Opt(money, "amortisation-years", &v.amortisation, "owned hardware: years to amortise over");
  Opt(money, "utilisation", &v.utilisation, "average power draw / TDP, (0, 1]");
  Opt(money, "pue", &v.pue, "power usage effectiveness, >= 1");
  Opt(money, "usd-per-kwh", &v.kwh, "owned hardware: electricity price");
  Opt(money, "hosting-usd-per-node-month", &v.hosting, "owned hardware: hosting per node-month");
  Opt(money, "train-tokens", &v.tokens, "price a run of this many tokens, e.g. 1e12");
  Opt(money, "train-steps", &v.steps, "price a run of this many steps");
  po::options_description goodput(
      "Goodput: the whole run with failures, checkpoints and restarts (needs --train-tokens or "
      "--train-steps; docs/goodput.md)");
  goodput.add_options()("goodput", po::bool_switch(), "simulate the run's failures and restarts")(
      "no-hot-spares", po::bool_switch(), "wait for repairs instead of swapping in spare nodes");
  Opt(goodput, "failure-profile", &v.failure_profile, "llama3-h100 (default) | meta-rsc-a100");
  Opt(goodput, "storage", &v.storage, "lustre (default) | nfs | object-store | meta-tectonic");
  Opt(goodput, "checkpoint-mode", &v.checkpoint_mode, "async (default) | blocking");
  Opt(goodput, "checkpoint-interval-s", &v.checkpoint_interval,
      "seconds between checkpoints (default: Young/Daly)");
  Opt(goodput, "spare-nodes", &v.spare_nodes,
      "hot spare nodes kept and billed; failed nodes rejoin after repair (default: unlimited, "
      "not billed)");
  Opt(goodput, "trials", &v.trials, "Monte Carlo trials (default 1000)");
  Opt(goodput, "seed", &v.seed, "Monte Carlo seed (default 1)");
  Opt(goodput, "straggler-fraction", &v.straggler_fraction,
      "probability that a GPU is slow, [0, 1] (docs/goodput.md#stragglers)");
  Opt(goodput, "straggler-throughput", &v.straggler_throughput,
      "a slow GPU's throughput vs a typical one, (0, 1] (default 0.667)");
  Opt(goodput, "throughput-spread", &v.throughput_spread,
      "relative std dev of every GPU's throughput, [0, 0.3]");
  po::options_description strategy("Strategy");
  Opt(strategy, "tensor-model-parallel-size", &v.tp, "tensor-parallel size");
  Opt(strategy, "pipeline-model-parallel-size", &v.pp, "pipeline-parallel size");
  Opt(strategy, "context-parallel-size", &v.cp, "context-parallel size");
  Opt(strategy, "expert-model-parallel-size", &v.ep, "expert-parallel size");
  Opt(strategy, "expert-tensor-parallel-size", &v.etp,
      "ranks one expert is split over: tp (default) or 1 (MoE parallel folding)");
  Opt(strategy, "moe-token-dispatcher", &v.dispatcher,
      "alltoall (default)|deepep|hybridep: how MoE tokens reach the expert-parallel ranks");
  Opt(strategy, "virtual-pipeline-model-parallel-size", &v.vp, "virtual pipeline stages");
  Opt(strategy, "pipeline-schedule", &v.schedule, "1f1b|gpipe|interleaved-1f1b|zb-h1");
  Opt(strategy, "decoder-first-pipeline-num-layers", &v.first_layers, "layers on the first stage");
  Opt(strategy, "decoder-last-pipeline-num-layers", &v.last_layers, "layers on the last stage");
  Opt(strategy, "micro-batch-size", &v.mbs, "micro-batch size");
  Opt(strategy, "global-batch-size", &v.gbs, "global batch size");
  Opt(strategy, "recompute-granularity", &v.recompute,
      "none|selective|full, selective+mlp_up (also replays the MLP's input projection) or "
      "selective+op (torchtitan's per-op policy)");
  Opt(strategy, "recompute-method", &v.recompute_method,
      "with full recompute: uniform (default; checkpoints every --recompute-num-layers layers) "
      "or block (replays only the first --recompute-num-layers layers of each model chunk)");
  Opt(strategy, "recompute-num-layers", &v.recompute_layers,
      "with full recompute: the layers of a uniform group, or the block's replayed layers");
  Opt(strategy, "cpu-offloading-num-layers", &v.offload_layers,
      "offload the saved activations of the first N layers to host memory (Megatron-Core's "
      "activation offload; pp 1, no recompute)");
  Opt(strategy, "precision", &v.precision,
      "bf16|fp16|fp8|nvfp4 (nvfp4: Transformer Engine's NVFP4 recipe, linear-layer GEMMs on "
      "the FP4 tensor cores; Blackwell)");
  Opt(strategy, "fp8-recipe", &v.fp8_recipe,
      "with fp8: delayed (default; amax history, all-reduced each step) | current (per-tensor "
      "amax of each cast) | mxfp8 (1-byte scale per 32 elements; Blackwell) | rowwise "
      "(torchao's per-row scales)");
  Opt(strategy, "finetune", &v.finetune, "full|lora|qlora");
  Opt(strategy, "framework", &v.framework,
      "training stack: megatron-core (default), megatron-deepspeed, pytorch-fsdp, ... "
      "(clustersim list frameworks)");
  Opt(strategy, "attention", &v.attention,
      "flash (fused kernel, default) | unfused (Megatron before FlashAttention)");
  strategy.add_options()("sequence-parallel", po::bool_switch(), "sequence parallelism")(
      "use-distributed-optimizer", po::bool_switch(), "shard optimizer states over data parallel")(
      "overlap-grad-reduce", po::bool_switch(), "overlap gradient reduction with backward")(
      "overlap-param-gather", po::bool_switch(),
      "distributed optimizer: gather parameters under the next step's forward")(
      "tp-comm-overlap", po::bool_switch(),
      "overlap sequence-parallel all-gather/reduce-scatter with GEMMs")(
      "overlap-moe-expert-parallel-comm", po::bool_switch(),
      "MoE: merge steady-state forward/backward pairs, each one's all-to-alls under the other's "
      "compute");
  po::options_description output("Output");
  output.add_options()("format", po::value<std::string>(&f.format)->default_value("text"),
                       "text|json")("trace", po::value<std::string>(&f.trace_path),
                                    "write a Chrome trace (open in ui.perfetto.dev)")(
      "trace-format", po::value<std::string>(&f.trace_format)->default_value("json"),
      "json (Chrome trace) | perfetto (protobuf, for very large traces)")(
      "trace-ranks", po::value<std::string>(&f.trace_ranks), "GPUs to keep, e.g. 0-7,64")(
      "trace-steps", po::value<std::string>(&f.trace_steps), "steps to keep, e.g. 0")(
      "trace-detail", po::value<std::string>(&f.trace_detail)->default_value("op"),
      "op (every kernel) | layer (one slice per layer per micro-batch and pass)")(
      "report", po::value<std::string>(&f.report_path),
      "write a self-contained HTML report (pipeline, breakdown, memory)")(
      "output-dir", po::value<std::string>(&f.output_dir),
      "write result.json and trace.json into DIR")(
      "no-fold", po::bool_switch(&f.no_fold),
      "simulate every data-parallel replica instead of one representative")(
      "help,h", po::bool_switch(&f.help), "show this help");
  po::options_description hidden;
  hidden.add_options()("scenario", po::value<std::string>(&f.scenario_path), "scenario file");
  po::positional_options_description pos;
  pos.add("scenario", 1);
  po::options_description all;
  all.add(model).add(cluster).add(strategy).add(money).add(goodput).add(output).add(hidden);
  po::options_description visible;
  visible.add(model).add(cluster).add(strategy).add(money).add(goodput).add(output);
  std::ostringstream help;
  help << "usage: clustersim run [SCENARIO] [flags]\n\n" << visible;
  f.help_text = help.str();

  po::variables_map vm;
  CLUSTERSIM_RETURN_IF_ERROR(ParseArgs(args, all, &pos, "run", &vm));
  if (f.trace_format != "json" && f.trace_format != "perfetto") {
    return absl::InvalidArgumentError(absl::StrCat(
        "--trace-format=", f.trace_format, " is not known; use json or perfetto"));
  }
  if (f.format != "text" && f.format != "json") {
    return absl::InvalidArgumentError(
        absl::StrCat("--format=", f.format, " is not known; use text or json"));
  }

  config::Scenario& o = f.overrides;
  config::ModelConfig* m = o.mutable_model();
  if (v.model) m->set_preset(*v.model);
  if (v.model_config) m->set_model_config_file(*v.model_config);
  if (v.num_layers) m->set_num_layers(*v.num_layers);
  if (v.hidden) m->set_hidden_size(*v.hidden);
  if (v.ffn) m->set_ffn_hidden_size(*v.ffn);
  if (v.heads) m->set_num_attention_heads(*v.heads);
  if (v.groups) m->set_num_query_groups(*v.groups);
  if (v.seq) m->set_seq_length(*v.seq);
  if (v.vocab) m->set_vocab_size(*v.vocab);
  if (vm["swiglu"].as<bool>()) m->set_swiglu(true);
  config::ClusterConfig* c = o.mutable_cluster();
  if (v.gpu) c->set_gpu(*v.gpu);
  if (v.num_gpus) c->set_num_gpus(*v.num_gpus);
  if (v.gpus_per_node) c->set_gpus_per_node(*v.gpus_per_node);
  if (v.node) c->set_node(*v.node);
  if (v.power_cap) c->set_power_cap_w(*v.power_cap);
  if (v.algorithm) o.mutable_network()->set_collective_algorithm(*v.algorithm);
  if (v.protocol) o.mutable_network()->set_collective_protocol(*v.protocol);
  if (v.tier) o.mutable_network()->set_tier(*v.tier);
  config::PricingConfig* pr = o.mutable_pricing();
  if (v.price) pr->set_usd_per_gpu_hour(*v.price);
  if (v.price_source) pr->set_price_source(*v.price_source);
  if (v.purchase) pr->set_purchase_usd_per_gpu(*v.purchase);
  if (v.amortisation) pr->set_amortisation_years(*v.amortisation);
  if (v.utilisation) pr->set_utilisation(*v.utilisation);
  if (v.pue) pr->set_pue(*v.pue);
  if (v.kwh) pr->set_usd_per_kwh(*v.kwh);
  if (v.hosting) pr->set_hosting_usd_per_node_month(*v.hosting);
  if (v.tokens) pr->set_train_tokens(*v.tokens);
  if (v.steps) pr->set_train_steps(*v.steps);
  config::ParallelismConfig* p = o.mutable_parallelism();
  if (v.tp) p->set_tensor_model_parallel_size(*v.tp);
  if (v.pp) p->set_pipeline_model_parallel_size(*v.pp);
  if (v.cp) p->set_context_parallel_size(*v.cp);
  if (v.ep) p->set_expert_model_parallel_size(*v.ep);
  if (v.etp) p->set_expert_tensor_parallel_size(*v.etp);
  if (v.vp) p->set_virtual_pipeline_model_parallel_size(*v.vp);
  if (v.schedule) p->set_pipeline_schedule(*v.schedule);
  if (v.dispatcher) p->set_moe_token_dispatcher(*v.dispatcher);
  if (v.first_layers) p->set_first_pipeline_num_layers(*v.first_layers);
  if (v.last_layers) p->set_last_pipeline_num_layers(*v.last_layers);
  if (vm["sequence-parallel"].as<bool>()) p->set_sequence_parallel(true);
  if (vm["use-distributed-optimizer"].as<bool>()) p->set_use_distributed_optimizer(true);
  if (vm["overlap-grad-reduce"].as<bool>()) p->set_overlap_grad_reduce(true);
  if (vm["tp-comm-overlap"].as<bool>()) p->set_tp_comm_overlap(true);
  if (vm["overlap-param-gather"].as<bool>()) p->set_overlap_param_gather(true);
  if (vm["overlap-moe-expert-parallel-comm"].as<bool>()) {
    p->set_overlap_moe_expert_parallel_comm(true);
  }
  const bool any_goodput = vm["goodput"].as<bool>() || vm["no-hot-spares"].as<bool>() ||
                           v.failure_profile || v.storage || v.checkpoint_mode ||
                           v.checkpoint_interval || v.trials || v.seed || v.spare_nodes;
  if (any_goodput) {
    config::ReliabilityConfig* r = o.mutable_reliability();
    r->set_enabled(true);
    if (vm["no-hot-spares"].as<bool>()) r->set_hot_spares(false);
    if (v.failure_profile) r->set_failure_profile(*v.failure_profile);
    if (v.storage) r->set_storage(*v.storage);
    if (v.checkpoint_mode) r->set_checkpoint_mode(*v.checkpoint_mode);
    if (v.checkpoint_interval) r->set_checkpoint_interval_s(*v.checkpoint_interval);
    if (v.trials) r->set_trials(*v.trials);
    if (v.spare_nodes) r->set_spare_nodes(*v.spare_nodes);
    if (v.seed) r->set_seed(*v.seed);
  }
  if (v.straggler_fraction || v.straggler_throughput || v.throughput_spread) {
    config::StragglerConfig* st = o.mutable_reliability()->mutable_stragglers();
    if (v.straggler_fraction) st->set_slow_gpu_fraction(*v.straggler_fraction);
    if (v.straggler_throughput) st->set_slow_gpu_throughput(*v.straggler_throughput);
    if (v.throughput_spread) st->set_throughput_spread(*v.throughput_spread);
  }
  config::TrainingConfig* t = o.mutable_training();
  if (v.mbs) t->set_micro_batch_size(*v.mbs);
  if (v.gbs) t->set_global_batch_size(*v.gbs);
  if (v.recompute) t->set_recompute_granularity(*v.recompute);
  if (v.recompute_method) t->set_recompute_method(*v.recompute_method);
  if (v.recompute_layers) t->set_recompute_num_layers(*v.recompute_layers);
  if (v.offload_layers) t->set_cpu_offload_layers(*v.offload_layers);
  if (v.precision) t->set_precision(*v.precision);
  if (v.fp8_recipe) t->set_fp8_recipe(*v.fp8_recipe);
  if (v.finetune) t->set_finetune(*v.finetune);
  if (v.attention) t->set_attention(*v.attention);
  if (v.framework) t->set_framework(*v.framework);
  return f;
}

}  // namespace clustersim::cli
