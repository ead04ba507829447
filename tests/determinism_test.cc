// Same input, same bytes (docs/reliability.md): runs the clustersim binary
// twice, or with different thread counts, and compares what it writes byte for
// byte. Each test names what it compares; a difference prints the first
// differing offset. The MPI-vs-one-process sweep comparison is
// tests/sweep_mpi_test.cmake (CTest sweep_mpi_test).
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "gtest/gtest.h"
#include "tests/binary_fixture.h"
#include "tests/slurp.h"

namespace clustersim {
namespace {

namespace fs = std::filesystem;

// "" when equal, else where the two first differ.
std::string Difference(const std::string& a, const std::string& b) {
  if (a == b) return "";
  const auto [ia, ib] = std::mismatch(a.begin(), a.end(), b.begin(), b.end());
  const size_t at = static_cast<size_t>(ia - a.begin());
  return "sizes " + std::to_string(a.size()) + " vs " + std::to_string(b.size()) +
         ", first difference at byte " + std::to_string(at) + ": \"" + a.substr(at, 60) +
         "\" vs \"" + b.substr(at, 60) + "\"";
}

class DeterminismTest : public BinaryFixture {
 protected:
  DeterminismTest() : BinaryFixture("clustersim_determinism_") {}

  // Runs `clustersim args` with stdout to `out` (stderr holds wall-clock
  // timings, so it is not compared); the exit code must be 0.
  void Run(const std::string& args, const fs::path& out) {
    const std::string cmd = bin_ + " " + args + " >" + out.string() + " 2>" +
                            (dir_ / "stderr.txt").string();
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd << "\n" << Slurp(dir_ / "stderr.txt");
  }

  // Runs `args` twice, each time into its own folder (a/ and b/, passed as
  // {DIR}), and expects each of `outputs` (stdout.txt and the files named in
  // args) byte-identical. Also requires each to be non-trivial.
  void ExpectSameTwice(const std::string& args, const std::vector<std::string>& outputs) {
    for (const char* run : {"a", "b"}) {
      const fs::path d = dir_ / run;
      fs::create_directories(d);
      std::string expanded = args;
      for (size_t at; (at = expanded.find("{DIR}")) != std::string::npos;) {
        expanded.replace(at, 5, d.string());
      }
      ASSERT_NO_FATAL_FAILURE(Run(expanded, d / "stdout.txt"));
    }
    for (const std::string& name : outputs) {
      const std::string a = Slurp(dir_ / "a" / name), b = Slurp(dir_ / "b" / name);
      EXPECT_GT(a.size(), 100u) << name << " is (nearly) empty";
      EXPECT_EQ(Difference(a, b), "") << name << " differs between two identical runs";
    }
  }
};

// Pipeline parallel (pp 4, expert parallel 8) on the flow tier (collectives as
// flows sharing links): the JSON result, the Chrome trace and the HTML report.
TEST_F(DeterminismTest, FlowTierPipelineRunIsByteIdenticalTwice) {
  ExpectSameTwice("run " + src_ + "/scenarios/examples/mixtral-8x7b-h100.textproto --network-tier flow "
                  "--global-batch-size 32 --format json --trace {DIR}/trace.json "
                  "--report {DIR}/report.html",
                  {"stdout.txt", "trace.json", "report.html"});
}

// The serving simulator: the JSON result, its trace and its report.
TEST_F(DeterminismTest, ServeRunIsByteIdenticalTwice) {
  ExpectSameTwice("serve " + src_ + "/scenarios/examples/serve-llama3-8b-h100.textproto --format json "
                  "--trace {DIR}/trace.json --report {DIR}/report.html",
                  {"stdout.txt", "trace.json", "report.html"});
}

// Speculative decoding's seeded acceptance draws, and its re-simulation
// without speculation: the JSON result.
TEST_F(DeterminismTest, SpeculativeServeRunIsByteIdenticalTwice) {
  ExpectSameTwice("serve " + src_ +
                      "/scenarios/examples/serve-llama3-8b-eagle-h100.textproto --format json",
                  {"stdout.txt"});
}

// The search's printed ranking (every simulated strategy, all columns) on one
// thread and on all cores (at least 4, so the pool always runs concurrently).
TEST_F(DeterminismTest, SearchRanksIdenticallyOnOneThreadAndOnAllCores) {
  const int all = std::max(4, static_cast<int>(std::thread::hardware_concurrency()));
  const std::string args =
      "search --model gpt3-1.3b --gpu a100-sxm4-80gb --num-gpus 8 --global-batch-size 16 "
      "--top-k 1000 --format csv --no-progress --threads ";
  Run(args + "1", dir_ / "one.csv");
  Run(args + std::to_string(all), dir_ / "all.csv");
  const std::string one = Slurp(dir_ / "one.csv"), many = Slurp(dir_ / "all.csv");
  EXPECT_GT(std::count(one.begin(), one.end(), '\n'), 10) << one;
  EXPECT_EQ(Difference(one, many), "") << "1 thread vs " << all << " threads";
}

}  // namespace
}  // namespace clustersim
