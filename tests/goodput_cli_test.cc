// Goodput through the clustersim binary against Llama 3 405B's 54-day
// snapshot (Dubey et al. 2024, §3.3.4): 466 interruptions, >90% effective
// training time. The shipped example's failure-free run is about 49 days.
// The interruption count is a consistency check (the default rates are
// derived from the same table, topology/data/reliability.textproto); the
// effective training time is not fitted to it.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "scenarios/proto/result.pb.h"

namespace clustersim {
namespace {

std::string RunJson(const std::string& args) {
  const std::string bin = std::string(std::getenv("CLUSTERSIM_BINARY_DIR")) + "/cli/clustersim";
  FILE* p = popen((bin + " run " + args + " --format json").c_str(), "r");
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  EXPECT_EQ(pclose(p), 0);
  return out;
}

TEST(GoodputCliTest, Llama3405bOn16kH100For54Days) {
  const std::string src = std::getenv("CLUSTERSIM_SOURCE_DIR");
  config::Result r;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(
                  RunJson(src + "/scenarios/examples/llama3-405b-goodput.textproto"), &r)
                  .ok());
  ASSERT_TRUE(r.has_goodput());
  const config::Goodput& g = r.goodput();
  EXPECT_GT(g.time_to_train_days().p50(), 50);
  EXPECT_LT(g.time_to_train_days().p50(), 58);
  EXPECT_GE(g.expected_interruptions(), 350);
  EXPECT_LE(g.expected_interruptions(), 600);
  EXPECT_GE(g.effective_training_time(), 0.85);
  EXPECT_LE(g.effective_training_time(), 0.95);
  RecordProperty("interruptions", std::to_string(g.expected_interruptions()));
  RecordProperty("effective_training_time", std::to_string(g.effective_training_time()));
}

TEST(GoodputCliTest, SameSeedSameBytesAndOptIn) {
  const std::string src = std::getenv("CLUSTERSIM_SOURCE_DIR");
  const std::string base = src + "/scenarios/examples/llama2-7b-h100.json --train-tokens 1e10";
  EXPECT_EQ(RunJson(base + " --goodput --trials 50"), RunJson(base + " --goodput --trials 50"));
  EXPECT_EQ(RunJson(base).find("goodput"), std::string::npos);
}

}  // namespace
}  // namespace clustersim
