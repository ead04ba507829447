// `clustersim serve --search` through the binary: bad input exits 2 with one
// line naming the field (or flag) and a fix; a search's cheapest deployment,
// served alone with `clustersim serve` and the flags the search printed for
// it, meets the targets it was chosen for; the HTML page has the Pareto
// front (docs/serving.md, "Deployment search").
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "scenarios/proto/deployment_search.pb.h"
#include "scenarios/proto/serve_result.pb.h"
#include "tests/slurp.h"

namespace clustersim {
namespace {

std::filesystem::path TempDir(const std::string& name) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      ("clustersim_serve_search_" + std::to_string(::getpid()) + name);
  std::filesystem::create_directories(dir);
  return dir;
}

// Runs `clustersim serve ARGS`; returns the exit status, stdout and stderr.
int Serve(const std::string& args, const std::filesystem::path& dir, std::string* out,
          std::string* err) {
  const std::string bin = std::string(std::getenv("CLUSTERSIM_BINARY_DIR")) + "/cli/clustersim";
  const std::string o = (dir / "stdout").string(), e = (dir / "stderr").string();
  const int status =
      std::system(("timeout 120 " + bin + " serve " + args + " >" + o + " 2>" + e).c_str());
  *out = Slurp(o);
  *err = Slurp(e);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

struct Case {
  const char* name;
  std::string args;                   // after `clustersim serve`
  std::vector<std::string> expected;  // substrings of stderr
};

class ServeSearchCliTest : public ::testing::TestWithParam<Case> {};

TEST_P(ServeSearchCliTest, ExitsTwoNamingTheFieldAndAFix) {
  const Case& c = GetParam();
  const std::filesystem::path dir = TempDir(c.name);
  std::string out, message;
  const int code = Serve(c.args, dir, &out, &message);
  std::filesystem::remove_all(dir);
  EXPECT_EQ(code, 2) << message;
  EXPECT_EQ(message.rfind("clustersim: error: ", 0), 0u) << message;
  EXPECT_EQ(std::count(message.begin(), message.end(), '\n'), 1) << message;
  for (const std::string& e : c.expected) {
    EXPECT_NE(message.find(e), std::string::npos) << e << " in " << message;
  }
}

constexpr char kModel[] = "--model llama3-8b ";

INSTANTIATE_TEST_SUITE_P(
    Cli, ServeSearchCliTest,
    ::testing::Values(
        Case{"UnknownGpu",
             std::string(kModel) +
                 "--search --search-gpus h100-sxm5-80gb,h900 --request-rate 4 --target-tpot-ms 50",
             {"--search-gpus", "\"h900\" is not a catalog GPU", "h200-sxm-141gb"}},
        Case{"EmptyGpuName",
             std::string(kModel) +
                 "--search --search-gpus h100-sxm5-80gb,, --request-rate 4 --target-tpot-ms 50",
             {"--search-gpus", "empty name"}},
        Case{"UnpricedGpu",
             std::string(kModel) +
                 "--search --search-gpus l40s --request-rate 4 --target-tpot-ms 50",
             {"--search-gpus", "no catalog price", "--search-gpu-prices l40s=USD"}},
        Case{"MalformedGpuPrice",
             std::string(kModel) +
                 "--search --search-gpu-prices h100-sxm5-80gb --request-rate 4 --target-tpot-ms 50",
             {"--search-gpu-prices", "is not NAME=USD"}},
        Case{"NegativeGpuPrice",
             std::string(kModel) +
                 "--search --search-gpus h100-sxm5-80gb --search-gpu-prices h100-sxm5-80gb=-1 "
                 "--request-rate 4 --target-tpot-ms 50",
             {"gpu_prices[h100-sxm5-80gb] (--search-gpu-prices)=-1", "(0, 1000]"}},
        Case{"ZeroRate",
             std::string(kModel) + "--search --request-rate 0 --target-tpot-ms 50",
             {"inference.workload.request_rate_per_s=0", "must be > 0"}},
        Case{"NegativeRate",
             std::string(kModel) + "--search --request-rate=-3 --target-tpot-ms 50",
             {"inference.workload.request_rate_per_s=-3"}},
        Case{"NoRate",
             std::string(kModel) + "--search --target-tpot-ms 50",
             {"needs a request rate", "--request-rate"}},
        Case{"NoTargets",
             std::string(kModel) + "--search --request-rate 4",
             {"needs a latency target", "--target-ttft-ms", "--target-tpot-ms"}},
        Case{"ZeroMaxGpus",
             std::string(kModel) +
                 "--search --search-max-gpus 0 --request-rate 4 --target-tpot-ms 50",
             {"--search-max-gpus", "must be between 1 and 1024"}},
        Case{"ChosenFlag",
             std::string(kModel) + "--search --tp 2 --request-rate 4 --target-tpot-ms 50",
             {"--tp is chosen by --search", "--search-gpus"}},
        Case{"OfflineKind",
             std::string(kModel) + "--search --offline --target-tpot-ms 50",
             {"inference.workload.kind=\"offline\"", "--request-rate"}},
        Case{"TooBigForEveryCandidate",
             "--model llama3-405b --search --search-gpus a100-sxm4-40gb --search-max-gpus 2 "
             "--request-rate 1 --target-tpot-ms 500",
             {"does not fit any candidate", "--search-max-gpus"}}),
    [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

constexpr char kWorkload[] =
    "--model llama3-8b --prompt-len 512 --output-len 64 --request-rate 20 ";
constexpr char kTargets[] = "--target-ttft-ms 300 --target-tpot-ms 30 ";

TEST(ServeSearchCliTest, TheCheapestServedAloneMeetsItsTargets) {
  const std::filesystem::path dir = TempDir("alone");
  const std::string report = (dir / "search.html").string();
  std::string out, err;
  ASSERT_EQ(Serve(std::string(kWorkload) + kTargets +
                      "--search --search-gpus h100-sxm5-80gb,a100-sxm4-80gb --search-max-gpus 4 "
                      "--search-requests 60 --format json --report " +
                      report,
                  dir, &out, &err),
            0)
      << err;
  config::DeploymentSearchResult search;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(out, &search).ok()) << out;
  ASSERT_GT(search.candidate_size(), 0);
  const config::DeploymentCandidate& best = search.candidate(0);
  ASSERT_TRUE(best.meets_slo()) << best.name();
  ASSERT_EQ(best.mode(), "aggregated");
  const std::string html = Slurp(report);
  EXPECT_NE(html.find("id=\"deploy-pareto\""), std::string::npos);

  // The flags it printed, with the search's model and workload: no search,
  // the targets (so `serve` also reports the sustainable rate).
  ASSERT_EQ(
      Serve(std::string(kWorkload) + kTargets + best.reproduce() + " --no-curve --format json", dir,
            &out, &err),
      0)
      << err;
  config::ServeResult alone;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(out, &alone).ok()) << out;
  std::filesystem::remove_all(dir);
  EXPECT_EQ(alone.num_gpus(), best.num_gpus());
  EXPECT_EQ(alone.gpu(), best.gpu());
  EXPECT_FALSE(alone.saturated());
  EXPECT_LE(alone.ttft_ms().p99(), 300);
  EXPECT_LE(alone.tpot_ms().p99(), 30);
  EXPECT_NEAR(alone.tpot_ms().p99(), best.tpot_p99_ms(), 1e-9);
}

}  // namespace
}  // namespace clustersim
