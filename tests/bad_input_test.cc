// Absurd input through the clustersim binary: each case must exit 2 (never a
// crash, a wrap-around or a multi-gigabyte run) with a message naming the
// field and a fix. docs/reliability.md lists these cases.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace clustersim {
namespace {

struct Case {
  const char* name;
  std::string args;     // after `clustersim run`; FILE is replaced by the textproto below
  std::string scenario;  // a textproto, when the case needs one
  std::vector<std::string> expected;  // substrings of stderr
};

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

constexpr char kGpt22b[] = "SRC/scenarios/examples/gpt-22b-a100.textproto";
constexpr char kTokens[] = " --train-tokens 1e10";
constexpr char kGoodput[] =
    "model { preset: \"llama2-7b\" } cluster { gpu: \"h100-sxm5-80gb\" num_gpus: 8 } "
    "pricing { train_tokens: 1e9 } ";
constexpr char kCluster16[] = "cluster { gpu: \"h100-sxm5-80gb\" num_gpus: 16 ";

class BadInputTest : public ::testing::TestWithParam<Case> {};

TEST_P(BadInputTest, ExitsTwoNamingTheFieldAndAFix) {
  const Case& c = GetParam();
  const std::string src = std::getenv("CLUSTERSIM_SOURCE_DIR");
  const std::string bin = std::string(std::getenv("CLUSTERSIM_BINARY_DIR")) + "/cli/clustersim";
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("clustersim_bad_" + std::to_string(::getpid()) + c.name);
  std::filesystem::create_directories(dir);
  std::string args = c.args;
  if (!c.scenario.empty()) {
    std::ofstream((dir / "s.textproto").string()) << c.scenario;
    args.replace(args.find("FILE"), 4, (dir / "s.textproto").string());
  }
  if (const size_t at = args.find("SRC"); at != std::string::npos) args.replace(at, 3, src);
  const std::string err = (dir / "stderr").string();
  // A 60 s limit: a case that simulates instead of refusing fails, not hangs.
  const int status = std::system(
      ("timeout 60 " + bin + " run " + args + " >/dev/null 2>" + err).c_str());
  const std::string message = Slurp(err);
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(WIFEXITED(status)) << c.name;
  EXPECT_EQ(WEXITSTATUS(status), 2) << message;
  EXPECT_EQ(message.rfind("clustersim: error: ", 0), 0u) << message;
  for (const std::string& e : c.expected) EXPECT_NE(message.find(e), std::string::npos) << e << " in " << message;
}

INSTANTIATE_TEST_SUITE_P(
    Cli, BadInputTest,
    ::testing::Values(
        Case{"ZeroGpus", std::string(kGpt22b) + " --num-gpus 0", "", {"cluster.num_gpus=0", "at least 1"}},
        Case{"NegativeGpus", std::string(kGpt22b) + " --num-gpus -8", "", {"cluster.num_gpus=-8"}},
        Case{"TrillionLayersFlag", std::string(kGpt22b) + " --num-layers 1000000000000", "",
             {"--num-layers", "clustersim run --help"}},
        Case{"TrillionLayersFile", "FILE", "model { preset: \"gpt-22b\" num_layers: 1000000000000 }",
             {"line 1", "out of range", "scenario.proto"}},
        Case{"HugeHiddenSize", std::string(kGpt22b) + " --hidden-size 2147483647", "",
             {"model.hidden_size=2147483647 is too large"}},
        Case{"ZeroLayers", std::string(kGpt22b) + " --num-layers 0", "", {"model.num_layers"}},
        Case{"UnknownDispatcher", std::string(kGpt22b) + " --moe-token-dispatcher nccl", "",
             {"parallelism.moe_token_dispatcher", "use alltoall, deepep or hybridep"}},
        Case{"EpOverlapWithoutExpertParallelism",
             std::string(kGpt22b) + " --overlap-moe-expert-parallel-comm", "",
             {"parallelism.overlap_moe_expert_parallel_comm=true",
              "expert_model_parallel_size > 1"}},
        Case{"UnknownFp8Recipe",
             std::string(kGpt22b) + " --gpu h100-sxm5-80gb --precision fp8 --fp8-recipe tensorwise",
             "", {"training.fp8_recipe", "delayed"}},
        // MXFP8 needs Blackwell's block-scaled tensor cores, which an H100 lacks.
        Case{"Mxfp8OffBlackwell",
             std::string(kGpt22b) + " --gpu h100-sxm5-80gb --precision fp8 --fp8-recipe mxfp8", "",
             {"training.fp8_recipe=\"mxfp8\"", "Blackwell"}},
        // NVFP4 training needs FP4 tensor cores, which an H100 lacks.
        Case{"Nvfp4OffBlackwell",
             std::string(kGpt22b) + " --gpu h100-sxm5-80gb --precision nvfp4", "",
             {"training.precision=\"nvfp4\"", "use fp8 or bf16"}},
        // Hybrid sharding's group must divide the 8 data-parallel ranks.
        Case{"ShardGroupNotDividingDataParallel", "FILE",
             "cluster { gpu: \"h100-sxm5-80gb\" num_gpus: 8 }\nmodel { preset: \"llama2-7b\" }\n"
             "parallelism { zero_stage: 3 data_parallel_shard_size: 3 }\n"
             "training { global_batch_size: 8 }",
             {"parallelism.data_parallel_shard_size=3 must divide data_parallel_size=8"}},
        // Megatron-Core offloads fewer layers than the model has, and not with
        // pipeline parallelism.
        Case{"OffloadAllLayers", "FILE",
             "cluster { gpu: \"h100-sxm5-80gb\" num_gpus: 8 }\nmodel { preset: \"llama2-7b\" }\n"
             "training { global_batch_size: 8 cpu_offload_layers: 32 }",
             {"training.cpu_offload_layers=32", "model.num_layers=32"}},
        Case{"OffloadWithPipeline", "FILE",
             "cluster { gpu: \"h100-sxm5-80gb\" num_gpus: 8 }\nmodel { preset: \"llama2-7b\" }\n"
             "parallelism { pipeline_model_parallel_size: 2 }\n"
             "training { global_batch_size: 8 cpu_offload_layers: 4 }",
             {"training.cpu_offload_layers=4", "pipeline_model_parallel_size=1"}},
        Case{"UnknownFramework", std::string(kGpt22b) + " --framework tensorflow", "",
             {"training.framework='tensorflow' is not known", "megatron-core"}},
        Case{"UnknownElementwiseKernels", "FILE",
             "cluster { gpu: \"h100-sxm5-80gb\" num_gpus: 8 }\nmodel { preset: \"llama2-7b\" }\n"
             "training { elementwise: \"compiled\" }",
             {"training.elementwise=\"compiled\" is not known", "use fused", "or eager"}},
        // FSDP alone has no tensor parallelism: the scenario's tp 8 is refused.
        Case{"FeatureTheStackLacks", std::string(kGpt22b) + " --framework pytorch-fsdp", "",
             {"parallelism.tensor_model_parallel_size=8", "pytorch-fsdp2"}},
        // 10^9 tokens: ~5.7e9 s of ideal step, far past the picosecond clock.
        Case{"BillionTokenSequence", std::string(kGpt22b) + " --seq-length 1000000000", "",
             {"simulated time per step", "picosecond clock", "model.seq_length"}},
        Case{"NegativeMicroBatch", std::string(kGpt22b) + " --micro-batch-size -1", "",
             {"training.micro_batch_size=-1"}},
        Case{"NegativeGlobalBatch", std::string(kGpt22b) + " --global-batch-size -4", "",
             {"training.global_batch_size=-4"}},
        // Power limits outside the board's settable range (nvidia-smi -pl's).
        Case{"ZeroPowerCap", std::string(kGpt22b) + " --power-cap-w 0", "",
             {"cluster.power_cap_w=0", "[100, 400] W"}},
        Case{"PowerCapBelowMinimum", std::string(kGpt22b) + " --power-cap-w 50", "",
             {"cluster.power_cap_w=50", "a100-sxm4-80gb", "[100, 400] W"}},
        Case{"PowerCapAboveTdp", std::string(kGpt22b) + " --power-cap-w 450", "",
             {"cluster.power_cap_w=450", "[100, 400] W"}},
        Case{"NanPowerCap", std::string(kGpt22b) + " --power-cap-w nan", "",
             {"cluster.power_cap_w=nan"}},
        Case{"PowerCapFileH100", "FILE",
             "cluster { gpu: \"h100-sxm5-80gb\" num_gpus: 8 power_cap_w: 150 }\n"
             "model { preset: \"llama2-7b\" }",
             {"cluster.power_cap_w=150", "[200, 700] W"}},
        // 16384 micro-batches on 8 ranks: ~3.2e8 tasks, ~32 GiB.
        Case{"HugeMicroBatchCount", std::string(kGpt22b) + " --global-batch-size 65536", "",
             {"tasks", "GiB", "training.global_batch_size", "training.micro_batch_size"}},
        Case{"BatchBeyondClock", std::string(kGpt22b) + " --global-batch-size 2000000000", "",
             {"picosecond clock", "training.global_batch_size"}},
        Case{"NanPrice", std::string(kGpt22b) + " --usd-per-gpu-hour nan", "",
             {"pricing.usd_per_gpu_hour=nan", "finite"}},
        Case{"InfPrice", std::string(kGpt22b) + " --usd-per-gpu-hour inf", "",
             {"pricing.usd_per_gpu_hour=inf", "finite"}},
        Case{"NanOversubscription", "FILE",
             std::string(kCluster16) +
                 "fabric { kind: \"fat-tree\" tiers: 2 oversubscription: nan } }\n"
                 "model { preset: \"llama2-7b\" }",
             {"cluster.fabric.oversubscription=nan"}},
        Case{"NegativeInfOversubscription", "FILE",
             std::string(kCluster16) +
                 "fabric { kind: \"fat-tree\" tiers: 2 oversubscription: -inf } }\n"
                 "model { preset: \"llama2-7b\" }",
             {"cluster.fabric.oversubscription=-inf"}},
        // Links are named technologies; a "negative bandwidth" link is not one.
        Case{"NegativeBandwidthLink", "FILE",
             std::string(kCluster16) +
                 "custom_node { gpus_per_node: 8 gpu_link: \"nvlink4\" nic_link: \"-100g\" "
                 "nics: 1 } }\nmodel { preset: \"llama2-7b\" }",
             {"cluster.custom_node", "'-100g'", "valid: "}},
        Case{"NegativeNicCount", "FILE",
             std::string(kCluster16) +
                 "custom_node { gpus_per_node: 8 gpu_link: \"nvlink4\" nic_link: \"roce-100g\" "
                 "nics: -2 } }\nmodel { preset: \"llama2-7b\" }",
             {"cluster.custom_node.nics=-2"}},
        // Found by fuzzing (docs/reliability.md). /dev/zero was read until memory
        // ran out; a FIFO would block; a model config naming /dev/zero likewise.
        Case{"DevZeroScenario", "/dev/zero", "", {"/dev/zero: not a regular file"}},
        Case{"FolderAsScenario", "SRC/scenarios", "", {"not a regular file"}},
        Case{"DevZeroModelConfig", "--model-config /dev/zero --gpu h100-sxm5-80gb", "",
             {"/dev/zero: not a regular file"}},
        // Boost's error message substituted %value% with the value forever (hang).
        Case{"BoostPlaceholderInAValue", std::string(kGpt22b) + " --num-gpus %value%", "",
             {"%value%", "remove the % signs"}},
        // Goodput (docs/goodput.md): each reliability field names itself.
        Case{"NegativeFailureRate", "FILE",
             std::string(kGoodput) + "reliability { cause_rate { cause: \"gpu-hbm3\" rate: -1 } }",
             {"reliability.cause_rate[0].rate=-1", ">= 0"}},
        Case{"ZeroCheckpointInterval", std::string(kGpt22b) + kTokens + " --checkpoint-interval-s 0",
             "", {"reliability.checkpoint_interval_s=0", "Young/Daly"}},
        Case{"ZeroStorageBandwidth", "FILE",
             std::string(kGoodput) + "reliability { storage_write_gb_per_s_aggregate: 0 }",
             {"reliability.storage_write_gb_per_s_aggregate=0", "GB/s"}},
        Case{"ZeroTrials", std::string(kGpt22b) + kTokens + " --trials 0", "",
             {"reliability.trials=0", "[1, 100000]"}},
        Case{"BillionTrials", std::string(kGpt22b) + kTokens + " --trials 1000000000", "",
             {"reliability.trials=1000000000"}},
        Case{"GoodputWithoutRunLength", std::string(kGpt22b) + " --goodput", "",
             {"reliability needs a run length", "--train-tokens"}},
        Case{"NegativeSpareNodes", std::string(kGpt22b) + kTokens + " --spare-nodes -1", "",
             {"reliability.spare_nodes=-1", "unlimited"}},
        Case{"SparesWithoutHotSpares",
             std::string(kGpt22b) + kTokens + " --spare-nodes 2 --no-hot-spares", "",
             {"reliability.spare_nodes", "hot_spares is false"}},
        Case{"CorrelatedSoftwareCause", "FILE",
             std::string(kGoodput) +
                 "reliability { cause_nodes { cause: \"software-bug\" nodes: 4 } }",
             {"reliability.cause_nodes[0].cause='software-bug'", "hardware cause"}},
        Case{"CorrelatedZeroNodes", "FILE",
             std::string(kGoodput) +
                 "reliability { cause_nodes { cause: \"network-switch-cable\" nodes: 0 } }",
             {"reliability.cause_nodes[0].nodes=0"}}),
    [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace clustersim
