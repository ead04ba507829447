// Trace counters across modules: memory in use per GPU following the
// simulated schedule, checked against the memory model; link utilisation from
// the flow tier; both through the trace filters, both formats, and reruns.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "scenarios/input/loader.h"
#include "scenarios/input/resolve.h"
#include "scenarios/run/runner.h"
#include "traces/id_ranges.h"
#include "traces/trace_checker.h"

namespace clustersim {
namespace {

using google::protobuf::Struct;
using google::protobuf::Value;

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          absl::StrCat("counters_", name, ".", ::getpid(), ".json"))
      .string();
}

// GPT 22B on 16 A100s, tp 4, pp 4, 8 micro-batches; `extra` adds fields.
scenarios::ResolvedScenario Pipeline(const std::string& parallel_extra,
                                     const std::string& extra = "") {
  const std::string text = absl::StrCat(
      R"pb(name: "counters" cluster { gpu: "a100-sxm4-80gb" num_gpus: 16 }
           model { preset: "gpt-22b" }
           parallelism { tensor_model_parallel_size: 4 pipeline_model_parallel_size: 4 )pb",
      parallel_extra,
      R"pb( }
           training { micro_batch_size: 1 global_batch_size: 8 precision: "bf16"
                      recompute_granularity: "selective" } )pb",
      extra);
  absl::StatusOr<config::Scenario> s = scenarios::ParseScenarioText(text, "test");
  EXPECT_TRUE(s.ok()) << s.status();
  absl::StatusOr<scenarios::ResolvedScenario> r = scenarios::Resolve(*s);
  EXPECT_TRUE(r.ok()) << r.status();
  return *r;
}

struct Sample {
  double ts;
  double total;                            // sum of the series
  std::map<std::string, double> series;
};

// Counter samples by (pid, name), in file order, of a checked trace.
struct Counters {
  std::map<std::pair<int64_t, std::string>, std::vector<Sample>> tracks;
  Struct other_data;
};

Counters ReadCounters(const std::string& path) {
  absl::StatusOr<std::string> json = scenarios::ReadFile(path);
  EXPECT_TRUE(json.ok()) << json.status();
  absl::StatusOr<traces::TraceStats> stats = traces::CheckChromeTrace(*json);
  EXPECT_TRUE(stats.ok()) << stats.status();
  Struct root;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(*json, &root).ok());
  Counters c;
  c.other_data = root.fields().at("otherData").struct_value();
  for (const Value& v : root.fields().at("traceEvents").list_value().values()) {
    const auto& f = v.struct_value().fields();
    if (f.at("ph").string_value() != "C") continue;
    Sample s{f.at("ts").number_value(), 0, {}};
    for (const auto& [k, x] : f.at("args").struct_value().fields()) {
      s.series[k] = x.number_value();
      s.total += x.number_value();
    }
    c.tracks[{static_cast<int64_t>(f.at("pid").number_value()), f.at("name").string_value()}]
        .push_back(std::move(s));
  }
  return c;
}

constexpr char kMemory[] = "memory in use (GiB)";

double Peak(const std::vector<Sample>& samples) {
  double peak = 0;
  for (const Sample& s : samples) peak = std::max(peak, s.total);
  return peak;
}

TEST(TraceCountersTest, MemoryCounterFollows1F1BAndAgreesWithTheMemoryModel) {
  const scenarios::ResolvedScenario s = Pipeline("");
  const std::string path = TempPath("1f1b");
  // Layer detail: fewer slices to parse; counters are the same at any detail.
  absl::StatusOr<config::Result> r = scenarios::RunScenario(
      s, {.trace_path = path, .trace_detail = traces::TraceDetail::kLayer});
  ASSERT_TRUE(r.ok()) << r.status();
  const Counters c = ReadCounters(path);
  std::filesystem::remove(path);
  ASSERT_EQ(r->memory_per_stage_gib_size(), 4);
  for (int gpu = 0; gpu < 16; ++gpu) {
    const auto it = c.tracks.find({gpu, kMemory});
    ASSERT_NE(it, c.tracks.end()) << "GPU " << gpu << " has no memory counter";
    const std::vector<Sample>& samples = it->second;
    for (const Sample& x : samples) EXPECT_GE(x.series.at("activations"), 0.0);
    EXPECT_EQ(samples.front().series.at("activations"), 0.0) << "starts with no activations";
    EXPECT_EQ(samples.back().series.at("activations"), 0.0) << "every backward freed its own";
    // Placement: tp fastest, so GPUs 4s..4s+3 form stage s.
    const config::StageMemoryGib& stage = r->memory_per_stage_gib(gpu / 4);
    // 1F1B keeps min(m, p - s) micro-batches in flight, as the model assumes:
    // the peak read off the trace equals the model's stage total (1e-9: the
    // sums of GiB doubles).
    EXPECT_NEAR(Peak(samples), stage.total_gib(), 1e-9 * stage.total_gib()) << "GPU " << gpu;
    EXPECT_NEAR(stage.simulated_peak_gib(), stage.total_gib(), 1e-9 * stage.total_gib());
  }
  EXPECT_NEAR(Peak(c.tracks.at({0, kMemory})), r->peak_memory_gib(), 1e-9 * r->peak_memory_gib());
  std::printf("1F1B stage 0: trace peak %.6f GiB, Result.peak_memory_gib %.6f GiB\n",
              Peak(c.tracks.at({0, kMemory})), r->peak_memory_gib());
  // Analytic tier: no link counters, and the trace says why.
  EXPECT_EQ(c.other_data.fields().at("link_utilisation").string_value(),
            "none: link counters need --network-tier flow");
  for (const auto& [track, samples] : c.tracks) EXPECT_EQ(track.second, kMemory);
}

TEST(TraceCountersTest, GPipeKeepsEveryMicroBatchInFlight) {
  // m = 8 micro-batches over p = 4 stages: GPipe holds all 8 on every stage,
  // where the memory model's 1F1B accounting holds min(m, p - s).
  const scenarios::ResolvedScenario s = Pipeline(R"pb(pipeline_schedule: "gpipe")pb");
  absl::StatusOr<config::Result> r = scenarios::RunScenario(s, {});
  ASSERT_TRUE(r.ok()) << r.status();
  for (const config::StageMemoryGib& st : r->memory_per_stage_gib()) {
    const int p = 4, m = 8, stage = st.stage();
    // The last stage's head (logits) is held once by the model, per
    // micro-batch by the timeline; compare the other stages exactly.
    if (stage == p - 1) {
      EXPECT_GT(st.simulated_peak_activations_gib(), st.breakdown().activations());
      continue;
    }
    const double ratio = st.simulated_peak_activations_gib() / st.breakdown().activations();
    EXPECT_NEAR(ratio, static_cast<double>(m) / std::min(m, p - stage), 1e-9) << "stage " << stage;
  }
  EXPECT_GT(r->memory_per_stage_gib(0).simulated_peak_gib(), r->peak_memory_gib());
}

TEST(TraceCountersTest, InterleavedPeakMatchesMegatronsInterleavingFactor) {
  // v = 2 chunks: Megatron's accounting holds p (1 + (p-1)/(p v)) micro-batches'
  // layers on stage 0; the simulated warm-up depth in chunks gives the same
  // layers. The embedding term differs (the model scales it by the same
  // factor; the timeline holds it only for chunk-0 micro-batches): within 1%.
  const scenarios::ResolvedScenario s =
      Pipeline(R"pb(virtual_pipeline_model_parallel_size: 2)pb");
  absl::StatusOr<config::Result> r = scenarios::RunScenario(s, {});
  ASSERT_TRUE(r.ok()) << r.status();
  const config::StageMemoryGib& st = r->memory_per_stage_gib(0);
  const double rel = st.simulated_peak_activations_gib() / st.breakdown().activations() - 1;
  std::printf("interleaved v=2 stage 0: simulated activations %.4f GiB, model %.4f GiB (%+.3f%%)\n",
              st.simulated_peak_activations_gib(), st.breakdown().activations(), 100 * rel);
  EXPECT_LT(std::abs(rel), 0.01);
  EXPECT_NEAR(st.simulated_peak_gib(), r->peak_memory_gib(), 0.01 * r->peak_memory_gib());
}

TEST(TraceCountersTest, FlowTierWritesBoundedLinkUtilisationWithinCapacity) {
  const scenarios::ResolvedScenario s = Pipeline("", R"pb(network { tier: "flow" })pb");
  std::string files[2];
  for (int i = 0; i < 2; ++i) {
    const std::string path = TempPath(absl::StrCat("flow", i));
    ASSERT_TRUE(scenarios::RunScenario(
                    s, {.trace_path = path, .trace_detail = traces::TraceDetail::kLayer})
                    .ok());
    files[i] = *scenarios::ReadFile(path);
    if (i == 1) {
      const Counters c = ReadCounters(path);
      int nvlink = 0, nic = 0, busy = 0;
      for (const auto& [track, samples] : c.tracks) {
        if (track.second == kMemory) continue;
        ASSERT_NE(track.second.find("utilisation"), std::string::npos) << track.second;
        nvlink += track.second == "NVLink out utilisation";
        nic += track.second.find(" NIC out ") != std::string::npos;
        EXPECT_EQ(samples.front().ts, 0.0) << track.second;
        for (const Sample& x : samples) {
          EXPECT_GE(x.total, 0.0) << track.second;
          EXPECT_LE(x.total, 1.0) << track.second;
          busy += x.total > 0.5;
        }
        EXPECT_EQ(samples.back().total, 0.0) << track.second << " ends idle";
      }
      EXPECT_EQ(nvlink, 16) << "one NVLink track per GPU";
      EXPECT_EQ(nic, 2) << "one NIC track per node";
      EXPECT_GT(busy, 0) << "tensor-parallel all-reduces load NVLink";
    }
    std::filesystem::remove(path);
  }
  EXPECT_EQ(files[0], files[1]) << "same run, same bytes";
}

TEST(TraceCountersTest, TraceRanksKeepOnlyTheirGpusCountersAndNodes) {
  const scenarios::ResolvedScenario s = Pipeline("", R"pb(network { tier: "flow" })pb");
  const std::string path = TempPath("ranks");
  absl::StatusOr<traces::IdRanges> ranks = traces::IdRanges::Parse("8-9", "--trace-ranks");
  ASSERT_TRUE(ranks.ok()) << ranks.status();
  ASSERT_TRUE(scenarios::RunScenario(s, {.trace_path = path,
                                         .trace_ranks = *ranks,
                                         .trace_detail = traces::TraceDetail::kLayer})
                  .ok());
  const Counters c = ReadCounters(path);
  std::filesystem::remove(path);
  std::vector<std::string> names;
  for (const auto& [track, samples] : c.tracks) {
    if (track.first == 0x7fffffff) {
      names.push_back(track.second);
    } else {
      EXPECT_TRUE(track.first == 8 || track.first == 9) << track.first << " " << track.second;
    }
  }
  EXPECT_EQ(c.tracks.count({8, kMemory}), 1u);
  EXPECT_EQ(c.tracks.count({9, "NVLink out utilisation"}), 1u);
  // GPUs 8 and 9 sit on node 1 (8 GPUs a node): its NIC, not node 0's.
  EXPECT_NE(std::find(names.begin(), names.end(), "node1 NIC out utilisation"), names.end());
  EXPECT_EQ(std::find(names.begin(), names.end(), "node0 NIC out utilisation"), names.end());
}

// protoc's decoding (PROTOC, Debian protobuf-compiler) of a Perfetto trace
// with the field subset in traces/testdata/perfetto_subset.proto.
std::string DecodePerfetto(const std::string& path) {
  const char* protoc = std::getenv("PROTOC");
  const char* src = std::getenv("CLUSTERSIM_SOURCE_DIR");
  const std::string cmd = absl::StrCat(
      "'", protoc ? protoc : "protoc", "' --proto_path='", src ? src : ".",
      "/traces/testdata' --decode=perfetto.protos.Trace perfetto_subset.proto < '", path,
      "' 2>&1");
  std::string out;
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (pipe == nullptr) return out;
  std::array<char, 4096> buf;
  while (size_t n = std::fread(buf.data(), 1, buf.size(), pipe)) out.append(buf.data(), n);
  EXPECT_EQ(::pclose(pipe), 0) << out.substr(0, 2000);
  return out;
}

// Counter values by track name, from the decoded text: counter track
// descriptors (uuid, name) and TYPE_COUNTER events (track_uuid, value).
std::map<std::string, std::vector<double>> DecodedCounters(const std::string& text) {
  std::map<uint64_t, std::string> names;
  std::map<uint64_t, std::vector<double>> values;
  struct Packet {
    bool counter_track = false, has_value = false;
    uint64_t uuid = 0, track_uuid = 0;
    std::string name;
    double value = 0;
  } p;
  const auto flush = [&] {
    if (p.counter_track) names[p.uuid] = p.name;
    if (p.has_value) values[p.track_uuid].push_back(p.value);
    p = Packet{};
  };
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const std::string l(absl::StripLeadingAsciiWhitespace(line));
    const auto after = [&](std::string_view prefix) { return l.substr(prefix.size()); };
    if (l == "packet {") {
      flush();
    } else if (absl::StartsWith(l, "counter {")) {
      p.counter_track = true;
    } else if (absl::StartsWith(l, "uuid: ")) {
      EXPECT_TRUE(absl::SimpleAtoi(after("uuid: "), &p.uuid)) << l;
    } else if (absl::StartsWith(l, "name: \"")) {
      p.name = after("name: \"");
      p.name.pop_back();  // the closing quote
    } else if (absl::StartsWith(l, "track_uuid: ")) {
      EXPECT_TRUE(absl::SimpleAtoi(after("track_uuid: "), &p.track_uuid)) << l;
    } else if (absl::StartsWith(l, "double_counter_value: ")) {
      p.has_value = true;
      EXPECT_TRUE(absl::SimpleAtod(after("double_counter_value: "), &p.value)) << l;
    }
  }
  flush();
  std::map<std::string, std::vector<double>> by_name;
  for (const auto& [uuid, v] : values) {
    EXPECT_EQ(names.count(uuid), 1u) << "counter values on undeclared track " << uuid;
    std::vector<double>& all = by_name[names[uuid]];
    all.insert(all.end(), v.begin(), v.end());
  }
  for (auto& [name, v] : by_name) std::sort(v.begin(), v.end());
  return by_name;
}

// The Perfetto trace of the same run, decoded by protoc, holds the Chrome
// trace's counters: track "<counter> <series>" for every series, with the same
// number of samples and the same values (memory in use per GPU; link
// utilisation of NVLink and the NICs on the flow tier).
TEST(TraceCountersTest, PerfettoTraceDecodesToTheSameCounters) {
  const scenarios::ResolvedScenario s = Pipeline("", R"pb(network { tier: "flow" })pb");
  const std::string json_path = TempPath("chrome"), path = TempPath("perfetto");
  const auto detail = traces::TraceDetail::kLayer;
  ASSERT_TRUE(scenarios::RunScenario(s, {.trace_path = json_path, .trace_detail = detail}).ok());
  ASSERT_TRUE(scenarios::RunScenario(
                  s, {.trace_path = path, .trace_format = "perfetto", .trace_detail = detail})
                  .ok());
  const Counters chrome = ReadCounters(json_path);
  const std::map<std::string, std::vector<double>> decoded = DecodedCounters(DecodePerfetto(path));
  std::filesystem::remove(json_path);
  std::filesystem::remove(path);
  std::map<std::string, std::vector<double>> expected;
  for (const auto& [track, samples] : chrome.tracks) {
    for (const Sample& x : samples) {
      for (const auto& [series, v] : x.series) {
        expected[absl::StrCat(track.second, " ", series)].push_back(v);
      }
    }
  }
  for (auto& [name, v] : expected) std::sort(v.begin(), v.end());
  for (const char* name : {"memory in use (GiB) activations", "memory in use (GiB) weights",
                           "NVLink out utilisation utilisation",
                           "node0 NIC out utilisation utilisation"}) {
    ASSERT_EQ(decoded.count(name), 1u) << name;
    EXPECT_GT(*std::max_element(decoded.at(name).begin(), decoded.at(name).end()), 0.0) << name;
  }
  ASSERT_EQ(decoded.size(), expected.size());
  for (const auto& [name, want] : expected) {
    ASSERT_EQ(decoded.count(name), 1u) << name;
    const std::vector<double>& got = decoded.at(name);
    ASSERT_EQ(got.size(), want.size()) << name;
    for (size_t i = 0; i < got.size(); ++i) {
      // The Chrome trace prints values with fewer digits than protoc.
      EXPECT_NEAR(got[i], want[i], 1e-6 * std::max(1.0, std::fabs(want[i]))) << name << " #" << i;
    }
  }
}

}  // namespace
}  // namespace clustersim
