// PerfettoTraceWriter's output, decoded by protoc: with the Perfetto field
// subset (traces/testdata/perfetto_subset.proto) and raw.
#include "traces/perfetto_trace_writer.h"

#include <stdlib.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/engine.h"
#include "sim/simulator.h"

namespace clustersim::traces {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class TestDescriber : public sim::SpanDescriber {
 public:
  void Describe(const sim::TaskGraph&, const sim::Span& s, sim::SpanDescription* out) const override {
    out->name = absl::StrCat("fwd mb0 L", s.tag, " gemm");
    out->category = "compute,gemm";
    out->args.emplace_back("layer", int64_t{s.tag});
    out->args.emplace_back("efficiency", 0.5);
    out->args.emplace_back("cost_source", std::string("table"));
  }
  std::string ProcessName(uint32_t group) const override {
    return absl::StrCat("node0/gpu", group, " (pp ", group, ")");
  }
  std::string ThreadName(const sim::TaskGraph& g, sim::ResourceId r) const override {
    return g.resource(r).name;
  }
};

int64_t Count(const std::string& text, const std::string& what) {
  int64_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

class PerfettoTraceWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = ::testing::TempDir() + "/perfetto_trace_writer_test.XXXXXX";
    ASSERT_NE(::mkdtemp(templ.data()), nullptr);
    dir_ = templ;
    // Two GPUs; on each, two 2 us ops (layers 0 and 1) on the compute stream.
    for (uint32_t gpu = 0; gpu < 2; ++gpu) {
      const sim::ResourceId c = graph_.AddResource("compute", gpu, 0);
      graph_.AddTask(c, sim::Microseconds(2), 0);
      graph_.AddTask(c, sim::Microseconds(2) + sim::Picoseconds(1500), 1);
    }
  }
  void TearDown() override {
    for (const std::string& p : written_) ::unlink(p.c_str());
    ::rmdir(dir_.c_str());
  }

  std::string Write(const std::string& name, PerfettoTraceWriter::Options options) {
    const std::string path = dir_ + "/" + name;
    written_.push_back(path);
    absl::StatusOr<std::unique_ptr<PerfettoTraceWriter>> w =
        PerfettoTraceWriter::Open(path, describer_, std::move(options));
    EXPECT_TRUE(w.ok()) << w.status();
    sim::Simulator simulator;
    sim::Engine engine(graph_, simulator);
    engine.AddObserver(w->get());
    EXPECT_TRUE(engine.Run().ok());
    (*w)->AddFlow("pp send", 0, 0, sim::Time::Zero() + sim::Microseconds(1), 1, 0,
                  sim::Time::Zero() + sim::Microseconds(3));
    (*w)->AddCounter(0, "hbm_gib", sim::Time::Zero(), {{"weights", 0.75}});
    EXPECT_TRUE((*w)->Finish().ok());
    return path;
  }

  // protoc's decoding of `path` (`args` as --decode or --decode_raw); *status
  // gets its exit status.
  static std::string Decode(const std::string& path, const std::string& args, int* status) {
    const char* protoc = std::getenv("PROTOC");
    const char* src = std::getenv("CLUSTERSIM_SOURCE_DIR");
    const std::string cmd =
        absl::StrCat("'", protoc ? protoc : "protoc", "' --proto_path='", src ? src : ".",
                     "/traces/testdata' ", args, " < '", path, "' 2>&1");
    std::string out;
    FILE* pipe = ::popen(cmd.c_str(), "r");
    if (pipe == nullptr) return out;
    std::array<char, 4096> buf;
    while (size_t n = std::fread(buf.data(), 1, buf.size(), pipe)) out.append(buf.data(), n);
    *status = ::pclose(pipe);
    return out;
  }

  static std::string DecodeTrace(const std::string& path) {
    int status = -1;
    const std::string text =
        Decode(path, "--decode=perfetto.protos.Trace perfetto_subset.proto", &status);
    EXPECT_EQ(status, 0) << text;
    return text;
  }

  std::string dir_;
  std::vector<std::string> written_;
  TestDescriber describer_;
  sim::TaskGraph graph_;
};

TEST_F(PerfettoTraceWriterTest, DecodesAsPerfettoTracePackets) {
  const std::string text = DecodeTrace(Write("t.pftrace", {}));
  EXPECT_EQ(Count(text, "type: TYPE_SLICE_BEGIN"), 4);
  EXPECT_EQ(Count(text, "type: TYPE_SLICE_END"), 4);
  EXPECT_EQ(Count(text, "trusted_packet_sequence_id: 1"), Count(text, "packet {"));
  EXPECT_THAT(text, HasSubstr("process_name: \"node0/gpu1 (pp 1)\""));
  EXPECT_THAT(text, HasSubstr("thread_name: \"compute\""));
  EXPECT_THAT(text, HasSubstr("name: \"fwd mb0 L1 gemm\""));
  EXPECT_THAT(text, HasSubstr("categories: \"compute,gemm\""));
  EXPECT_THAT(text, HasSubstr("string_value: \"table\""));
  EXPECT_THAT(text, HasSubstr("double_value: 0.5"));
  // The second op starts at 2 us and ends 2 us + 1.5 ns later: floored to ns.
  EXPECT_THAT(text, HasSubstr("timestamp: 2000\n"));
  EXPECT_THAT(text, HasSubstr("timestamp: 4001\n"));
  EXPECT_THAT(text, HasSubstr("flow_ids: 1"));
  EXPECT_THAT(text, HasSubstr("terminating_flow_ids: 1"));
  EXPECT_THAT(text, HasSubstr("double_counter_value: 0.75"));
  EXPECT_THAT(text, HasSubstr("name: \"hbm_gib weights\""));
  EXPECT_EQ(Count(text, "process {"), 2);  // one descriptor per GPU
  EXPECT_EQ(Count(text, "thread {"), 2);
}

TEST_F(PerfettoTraceWriterTest, RawDecodingSeesOnlyPacketsAtTheTop) {
  const std::string path = Write("raw.pftrace", {});
  int status = -1;
  const std::string raw = Decode(path, "--decode_raw", &status);
  ASSERT_EQ(status, 0) << raw;
  // Every top-level field is a packet (field 1); nothing else at column 0.
  std::istringstream lines(raw);
  int packets = 0;
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line[0] != ' ' && line[0] != '}') {
      EXPECT_EQ(line, "1 {");
      ++packets;
    }
  }
  // sequence start, 2 processes, 2 threads, 8 slice events, 2 flow
  // instants, 1 counter track, 1 counter value.
  EXPECT_EQ(packets, 1 + 2 + 2 + 8 + 2 + 1 + 1);
}

TEST_F(PerfettoTraceWriterTest, RanksFilterGpus) {
  PerfettoTraceWriter::Options options;
  options.ranks = *IdRanges::Parse("1", "--trace-ranks");
  const std::string text = DecodeTrace(Write("ranks.pftrace", options));
  EXPECT_EQ(Count(text, "type: TYPE_SLICE_BEGIN"), 2);
  EXPECT_THAT(text, Not(HasSubstr("gpu0")));
  EXPECT_THAT(text, Not(HasSubstr("flow_ids")));  // its sending end is filtered out
}

TEST_F(PerfettoTraceWriterTest, OutputIsByteIdenticalAcrossRuns) {
  auto read = [](const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  };
  const std::string a = read(Write("a.pftrace", {}));
  EXPECT_FALSE(a.empty());
  EXPECT_EQ(a, read(Write("b.pftrace", {})));
}

}  // namespace
}  // namespace clustersim::traces
