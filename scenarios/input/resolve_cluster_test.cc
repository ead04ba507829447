// Resolve (resolve.h, resolve_cluster.h) of the cluster: a custom node, GB200
// NVL72 racks, FP8 and context parallelism on the GPUs that allow them, and
// the single-device hosts of PCIe and serving-only parts.
#include <cstdlib>
#include <string>
#include <utility>

#include "gtest/gtest.h"
#include "scenarios/input/loader.h"
#include "scenarios/input/resolve.h"
#include "scenarios/input/resolve_cluster.h"
#include "scenarios/input/resolve_testing.h"

namespace clustersim::scenarios {
namespace {

using resolve_testing::Parse;

TEST(ResolveTest, CustomNodeBuildsItsOwnCluster) {
  absl::StatusOr<config::Scenario> s = LoadScenarioFile(
      std::string(std::getenv("CLUSTERSIM_SOURCE_DIR")) + "/scenarios/examples/custom-cluster.textproto");
  ASSERT_TRUE(s.ok()) << s.status();
  absl::StatusOr<ResolvedScenario> r = Resolve(*s);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->cluster.custom_node.has_value());
  EXPECT_EQ(r->cluster.num_nodes, 4);
  EXPECT_EQ(r->cluster.custom_node->nic_link, "roce-100g");
  EXPECT_TRUE(r->echo.cluster().has_custom_node());
}

// A GB200 job runs on NVL72 racks: one NVLink domain of 72 GPUs, the
// remainder on part of the next rack.
TEST(ResolveTest, Gb200RunsOnNvl72Racks) {
  absl::StatusOr<ResolvedScenario> r = Resolve(Parse(R"pb(
    cluster { gpu: "gb200-186gb" num_gpus: 128 }
    model { preset: "llama3-8b" }
  )pb"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->cluster.node_preset, "gb200-nvl72");
  EXPECT_EQ(r->cluster.num_nodes, 2);
}

// Host memory sits behind the node's host link: NVLink-C2C on a Grace
// superchip node, the PCIe link elsewhere and on a custom node that names none.
TEST(ResolveTest, HostLinkIsTheNodesOrItsPcie) {
  absl::StatusOr<ResolvedScenario> gb200 = Resolve(Parse(R"pb(
    cluster { gpu: "gb200-186gb" num_gpus: 72 }
    model { preset: "llama3-8b" }
  )pb"));
  ASSERT_TRUE(gb200.ok()) << gb200.status();
  ASSERT_NE(gb200->host_link, nullptr);
  EXPECT_EQ(gb200->host_link->name, "nvlink-c2c-gb200");
  absl::StatusOr<ResolvedScenario> h100 = Resolve(Parse(R"pb(
    cluster { gpu: "h100-sxm5-80gb" num_gpus: 8 }
    model { preset: "llama3-8b" }
  )pb"));
  ASSERT_TRUE(h100.ok()) << h100.status();
  ASSERT_NE(h100->host_link, nullptr);
  EXPECT_EQ(h100->host_link->name, "pcie5-x16");
  absl::StatusOr<ResolvedScenario> custom = Resolve(Parse(R"pb(
    cluster { gpu: "gb200-186gb" num_gpus: 4 custom_node { gpus_per_node: 4 pcie: "pcie5-x16" } }
    model { preset: "llama3-8b" }
  )pb"));
  ASSERT_TRUE(custom.ok()) << custom.status();
  ASSERT_NE(custom->host_link, nullptr);
  EXPECT_EQ(custom->host_link->name, "pcie5-x16");
  EXPECT_FALSE(custom->echo.cluster().custom_node().has_host_link());
  absl::StatusOr<ResolvedScenario> c2c = Resolve(Parse(R"pb(
    cluster {
      gpu: "gb200-186gb" num_gpus: 4
      custom_node { gpus_per_node: 4 host_link: "nvlink-c2c-gb200" }
    }
    model { preset: "llama3-8b" }
  )pb"));
  ASSERT_TRUE(c2c.ok()) << c2c.status();
  ASSERT_NE(c2c->host_link, nullptr);
  EXPECT_EQ(c2c->host_link->name, "nvlink-c2c-gb200");
  EXPECT_EQ(c2c->echo.cluster().custom_node().host_link(), "nvlink-c2c-gb200");
}

TEST(ResolveTest, UnknownHostLinkNamesTheField) {
  absl::StatusOr<ResolvedScenario> r = Resolve(Parse(R"pb(
    cluster { gpu: "gb200-186gb" num_gpus: 4 custom_node { gpus_per_node: 4 host_link: "c2c" } }
    model { preset: "llama3-8b" }
  )pb"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("cluster.custom_node"), std::string::npos) << r.status();
  EXPECT_NE(r.status().message().find("c2c"), std::string::npos) << r.status();
}

TEST(ResolveTest, CustomNodeErrorsNameTheField) {
  absl::StatusOr<ResolvedScenario> r = Resolve(Parse(R"pb(
    cluster { gpu: "l40s" node: "pcie-l40s-8x" custom_node { gpus_per_node: 4 } }
    model { preset: "gpt-22b" }
  )pb"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("cluster.node and cluster.custom_node"), std::string::npos);
}

TEST(ResolveTest, Fp8NeedsAGpuWithFp8) {
  absl::StatusOr<ResolvedScenario> h100 = Resolve(Parse(R"pb(
    cluster { gpu: "h100-sxm5-80gb" }
    model { preset: "llama2-7b" }
    training { precision: "fp8" }
  )pb"));
  ASSERT_TRUE(h100.ok()) << h100.status();
  EXPECT_EQ(h100->parallel.precision, models::Dtype::kFp8);
  absl::StatusOr<ResolvedScenario> a100 = Resolve(Parse(R"pb(
    cluster { gpu: "a100-sxm4-80gb" }
    model { preset: "llama2-7b" }
    training { precision: "fp8" }
  )pb"));
  ASSERT_FALSE(a100.ok());
  EXPECT_EQ(a100.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(a100.status().message().find(
                "training.precision: dtype fp8 is not supported by a100-sxm4-80gb"),
            std::string::npos)
      << a100.status();
  EXPECT_NE(a100.status().message().find("supported: fp32, tf32, bf16, fp16"), std::string::npos)
      << a100.status();
}

TEST(ResolveTest, ContextParallelDerivesDataParallel) {
  absl::StatusOr<ResolvedScenario> r = Resolve(Parse(R"pb(
    cluster { gpu: "h100-sxm5-80gb" num_gpus: 16 }
    model { preset: "llama3-8b" }
    parallelism { tensor_model_parallel_size: 2 context_parallel_size: 4 }
  )pb"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->parallel.data_parallel, 2);
  EXPECT_EQ(r->echo.parallelism().context_parallel_size(), 4);
}

// Serving-only devices resolve their cluster (single-device hosts) but
// a training run on them is a clear error naming the field.
TEST(ResolveTest, ServingDevicesResolveClustersButRefuseTraining) {
  for (const char* gpu : {"apple-m2-ultra", "jetson-agx-orin-64gb", "jetson-agx-orin-32gb",
                          "xeon-platinum-8480plus"}) {
    config::ClusterConfig c;
    c.set_gpu(gpu);
    absl::StatusOr<ResolvedCluster> cluster = ResolveCluster(c);
    ASSERT_TRUE(cluster.ok()) << gpu << ": " << cluster.status();
    EXPECT_EQ(cluster->gpus_per_node, 1) << gpu;  // the preset's count, not 8
    EXPECT_EQ(cluster->num_gpus, 1) << gpu;

    config::Scenario s = Parse(R"pb(model { preset: "llama2-7b" })pb");
    s.mutable_cluster()->set_gpu(gpu);
    absl::StatusOr<ResolvedScenario> r = Resolve(s);
    ASSERT_FALSE(r.ok()) << gpu;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("cluster.gpu: "), absl::string_view::npos);
    EXPECT_NE(r.status().message().find("training is modelled on discrete GPUs only"),
              absl::string_view::npos)
        << r.status();
  }
}

TEST(ResolveTest, SingleDeviceHostsAreTheDefaultsForPcieParts) {
  for (auto [gpu, node] : {std::pair{"apple-m2-ultra", "mac-studio-m2-ultra"},
                           std::pair{"jetson-agx-orin-32gb", "jetson-agx-orin"},
                           std::pair{"xeon-platinum-8480plus", "cpu-server-xeon-8480plus"},
                           std::pair{"rtx-3090", "workstation-rtx3090-1x"},
                           std::pair{"h100-pcie-80gb", "pcie-h100-1x"},
                           std::pair{"a100-pcie-80gb", "pcie-a100-1x"},
                           std::pair{"a10-pcie-24gb", "pcie-a10-1x"},
                           std::pair{"rtx-a6000", "workstation-rtx-a6000-1x"},
                           // Unchanged: the 8-GPU server stays the 4090's default.
                           std::pair{"rtx-4090", "pcie-rtx4090-8x"}}) {
    config::ClusterConfig c;
    c.set_gpu(gpu);
    absl::StatusOr<ResolvedCluster> cluster = ResolveCluster(c);
    ASSERT_TRUE(cluster.ok()) << gpu << ": " << cluster.status();
    EXPECT_EQ(cluster->spec.node_preset, node);
  }
  // 2x RTX 4090 over PCIe: a workstation preset with 2 GPUs per node.
  config::ClusterConfig c;
  c.set_gpu("rtx-4090");
  c.set_node("workstation-rtx4090-2x");
  absl::StatusOr<ResolvedCluster> two = ResolveCluster(c);
  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_EQ(two->gpus_per_node, 2);
  EXPECT_EQ(two->num_gpus, 2);
  EXPECT_EQ(two->spec.num_nodes, 1);
}

// A PCIe GPU trains on a single-GPU host (training still works there).
TEST(ResolveTest, TrainingOnASingleGpuHostResolves) {
  absl::StatusOr<ResolvedScenario> r = Resolve(Parse(R"pb(
    cluster { gpu: "h100-pcie-80gb" }
    model { preset: "llama2-7b" }
  )pb"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->num_gpus, 1);
  EXPECT_EQ(r->cluster.node_preset, "pcie-h100-1x");
}

}  // namespace
}  // namespace clustersim::scenarios
