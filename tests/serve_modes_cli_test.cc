// `clustersim serve`'s benchmark modes through the binary: every bad trace
// file and bad mode flag exits 2 with one line naming the field (or the
// file's line) and a fix (docs/serving.md, "Benchmark modes").
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/slurp.h"

namespace clustersim {
namespace {

struct Case {
  const char* name;
  std::string args;  // after `clustersim serve`; TRACE is replaced by the file below
  std::string trace_name;
  std::string trace;                  // the trace file's text, when the case needs one
  std::vector<std::string> expected;  // substrings of stderr
};

constexpr char kDeploy[] = "--model llama3-8b --gpu h100-sxm5-80gb --no-curve ";
constexpr char kAzureHeader[] = "TIMESTAMP,ContextTokens,GeneratedTokens\n";

class ServeModesCliTest : public ::testing::TestWithParam<Case> {};

TEST_P(ServeModesCliTest, ExitsTwoNamingTheFieldAndAFix) {
  const Case& c = GetParam();
  const std::string bin = std::string(std::getenv("CLUSTERSIM_BINARY_DIR")) + "/cli/clustersim";
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      ("clustersim_serve_modes_" + std::to_string(::getpid()) + c.name);
  std::filesystem::create_directories(dir);
  std::string args = std::string(kDeploy) + c.args;
  if (!c.trace_name.empty()) {
    const std::string path = (dir / c.trace_name).string();
    std::ofstream(path) << c.trace;
    args.replace(args.find("TRACE"), 5, path);
  }
  const std::string err = (dir / "stderr").string();
  const int status =
      std::system(("timeout 60 " + bin + " serve " + args + " >/dev/null 2>" + err).c_str());
  const std::string message = Slurp(err);
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(WIFEXITED(status)) << c.name;
  EXPECT_EQ(WEXITSTATUS(status), 2) << message;
  EXPECT_EQ(message.rfind("clustersim: error: ", 0), 0u) << message;
  EXPECT_EQ(std::count(message.begin(), message.end(), '\n'), 1) << message;
  for (const std::string& e : c.expected) {
    EXPECT_NE(message.find(e), std::string::npos) << e << " in " << message;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cli, ServeModesCliTest,
    ::testing::Values(
        Case{"NegativeTime",
             "--trace-file TRACE",
             "t.csv",
             std::string(kAzureHeader) + "-2,10,10\n",
             {"inference.workload.trace_file=", "line 2", "TIMESTAMP is negative"}},
        Case{"DecreasingTime",
             "--trace-file TRACE",
             "t.csv",
             std::string(kAzureHeader) + "5,10,10\n4,10,10\n",
             {"line 3", "before the previous record's; sort the file by time"}},
        Case{"MissingField",
             "--trace-file TRACE",
             "t.csv",
             std::string(kAzureHeader) + "5,,10\n",
             {"line 2", "ContextTokens is missing"}},
        Case{"MissingColumn",
             "--trace-file TRACE",
             "t.csv",
             "TIMESTAMP,ContextTokens\n5,10\n",
             {"no GeneratedTokens column", "TIMESTAMP,ContextTokens,GeneratedTokens"}},
        Case{"NonNumeric",
             "--trace-file TRACE",
             "t.csv",
             std::string(kAzureHeader) + "5,ten,10\n",
             {"line 2", "ContextTokens=\"ten\" is not a number"}},
        Case{"EmptyFile", "--trace-file TRACE", "t.csv", "", {"empty table"}},
        Case{"HeaderOnly", "--trace-file TRACE", "t.csv", kAzureHeader, {"no requests"}},
        Case{"UnreadablePath",
             "--trace-file /nonexistent/trace.csv",
             "",
             "",
             {"inference.workload.trace_file=/nonexistent/trace.csv"}},
        Case{"MooncakeNotJson",
             "--trace-file TRACE",
             "t.jsonl",
             "{\"timestamp\": 1,\n",
             {"line 1", "not a JSON object"}},
        Case{"MooncakeMissingKey",
             "--trace-file TRACE",
             "t.jsonl",
             "{\"timestamp\": 1, \"output_length\": 5}\n",
             {"line 1", "no \"input_length\""}},
        Case{"MooncakeDecreasing",
             "--trace-file TRACE",
             "t.jsonl",
             "{\"timestamp\": 9, \"input_length\": 5, \"output_length\": 5}\n"
             "{\"timestamp\": 1, \"input_length\": 5, \"output_length\": 5}\n",
             {"line 2", "before the previous"}},
        Case{"UnknownFormat",
             "--trace-file TRACE",
             "t.txt",
             "x",
             {"inference.workload.trace_format"}},
        Case{"ZeroTimeScale",
             "--trace-file TRACE --trace-time-scale 0",
             "t.csv",
             std::string(kAzureHeader) + "1,5,5\n",
             {"inference.workload.trace_time_scale=0"}},
        Case{"LruWithoutHashIds",
             "--trace-file TRACE --enable-prefix-caching",
             "t.csv",
             std::string(kAzureHeader) + "1,5,5\n",
             {"inference.enable_prefix_caching", "prefix_cache_hit_rate"}},
        Case{"ZeroClients", "--concurrency 0", "", "", {"inference.workload.concurrency=0"}},
        Case{"ServerWithoutTarget",
             "--server",
             "",
             "",
             {"needs a latency target", "inference.mlperf_benchmark"}},
        Case{"UnknownMlperf",
             "--server --mlperf-benchmark gpt-j",
             "",
             "",
             {"inference.mlperf_benchmark=\"gpt-j\" is not known", "llama2-70b"}},
        Case{"ZeroDuration",
             "--server --mlperf-benchmark llama2-70b --duration-s 0",
             "",
             "",
             {"inference.workload.duration_s=0 must be > 0"}},
        Case{"DurationOnConcurrency",
             "--concurrency 4 --duration-s 60",
             "",
             "",
             {"inference.workload.duration_s does not apply to kind \"concurrency\""}},
        Case{"HitRateAboveOne",
             "--offline --prefix-cache-hit-rate 2",
             "",
             "",
             {"inference.prefix_cache_hit_rate=2"}},
        Case{"TwoModes",
             "--offline --concurrency 4",
             "",
             "",
             {"--offline, --concurrency each set the workload kind; keep one"}}),
    [](const ::testing::TestParamInfo<Case>& i) { return std::string(i.param.name); });

}  // namespace
}  // namespace clustersim
