#include "traces/trace_checker.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace clustersim::traces {
namespace {

using ::testing::HasSubstr;

// Metadata naming pid 1 and its tids 1 and 2.
constexpr char kNames[] =
    R"({"ph":"M","name":"process_name","pid":1,"args":{"name":"gpu1"}},)"
    R"({"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"compute"}},)"
    R"({"ph":"M","name":"thread_name","pid":1,"tid":2,"args":{"name":"comm"}})";

// A trace of `events` (comma-separated JSON objects) plus kNames.
std::string Trace(const std::string& events) {
  return absl::StrCat(R"({"traceEvents":[)", events, events.empty() ? "" : ",", kNames, "]}");
}

std::string X(const std::string& name, int tid, const std::string& ts, const std::string& dur) {
  return absl::StrCat(R"({"ph":"X","name":")", name, R"(","pid":1,"tid":)", tid, R"(,"ts":)", ts,
                      R"(,"dur":)", dur, "}");
}

absl::Status Check(const std::string& json) { return CheckChromeTrace(json).status(); }

// The error message for `json` (empty when it passes), printable by gmock.
std::string Why(const std::string& json) { return std::string(Check(json).message()); }

TEST(TraceCheckerTest, CountsAWellFormedTrace) {
  const std::string json = Trace(absl::StrCat(
      X("a", 1, "0", "10"), ",", X("a.inner", 1, "2", "3"), ",", X("b", 2, "5", "1"), ",",
      R"({"ph":"s","name":"pp","id":7,"pid":1,"tid":1,"ts":10},)",
      R"({"ph":"f","bp":"e","name":"pp","id":7,"pid":1,"tid":2,"ts":10.5},)",
      R"({"ph":"C","name":"hbm","pid":1,"ts":0,"args":{"w":1.5e9,"a":0}},)",
      R"({"ph":"M","name":"thread_sort_index","pid":1,"tid":1,"args":{"sort_index":0}})"));
  absl::StatusOr<TraceStats> stats = CheckChromeTrace(json);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->complete_events, 3);
  EXPECT_EQ(stats->processes, 1);
  EXPECT_EQ(stats->threads, 2);
  EXPECT_EQ(stats->flows, 1);
  EXPECT_EQ(stats->counter_events, 1);
  EXPECT_EQ(stats->counter_tracks, 1);
}

std::string C(const std::string& name, int pid, const std::string& ts, const std::string& args) {
  return absl::StrCat(R"({"ph":"C","name":")", name, R"(","pid":)", pid, R"(,"ts":)", ts,
                      R"(,"args":{)", args, "}}");
}

TEST(TraceCheckerTest, CountersGoForwardInTimePerTrack) {
  // Two tracks interleaved, each in order; a repeated time is allowed.
  absl::StatusOr<TraceStats> stats = CheckChromeTrace(Trace(absl::StrCat(
      C("mem", 1, "0", R"("w":1)"), ",", C("util", 1, "5", R"("u":0.5)"), ",",
      C("mem", 1, "3", R"("w":2)"), ",", C("util", 1, "5", R"("u":0)"), ",",
      C("mem", 1, "3.000001", R"("w":1)"))));
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->counter_events, 5);
  EXPECT_EQ(stats->counter_tracks, 2);
  EXPECT_THAT(Why(Trace(absl::StrCat(C("mem", 1, "3", R"("w":1)"), ",",
                                     C("mem", 1, "2.999999", R"("w":1)")))),
              HasSubstr("traceEvents[1] (ph \"C\", name \"mem\"): counter sample at 2999999 ps "
                        "comes after one at 3000000 ps"));
}

TEST(TraceCheckerTest, CountersNeedANamedProcessAndNumbers) {
  EXPECT_THAT(Why(Trace(C("mem", 9, "0", R"("w":1)"))),
              HasSubstr("counter \"mem\" uses pid 9, which has no process_name"));
  EXPECT_THAT(Why(Trace(C("mem", 1, "0", R"("w":"1")"))),
              HasSubstr("counter series \"w\" must be a number"));
  EXPECT_THAT(Why(Trace(C("mem", 1, "0", ""))), HasSubstr("at least one series"));
}

TEST(TraceCheckerTest, RejectsMalformedJson) {
  EXPECT_THAT(Why(R"({"traceEvents":[)"), HasSubstr("not a well-formed JSON"));
  EXPECT_THAT(Why("[]"), HasSubstr("not a well-formed JSON"));
  EXPECT_THAT(Why(R"({"traceEvents":[{"ph":"X"]})"), HasSubstr("not a well-formed JSON"));
  EXPECT_THAT(Why(R"({"traceEvents":[{"ph":"X"}] "extra")"), HasSubstr("not a well-formed JSON"));
}

TEST(TraceCheckerTest, RequiresTraceEventsArray) {
  EXPECT_THAT(Why("{}"), HasSubstr("traceEvents"));
  EXPECT_THAT(Why(R"({"traceEvents":{}})"), HasSubstr("traceEvents"));
  EXPECT_TRUE(Check(R"({"traceEvents":[]})").ok());
}

TEST(TraceCheckerTest, NamesTheEventMissingAField) {
  const absl::Status s = Check(Trace(absl::StrCat(
      X("ok", 1, "0", "1"), ",", R"({"ph":"X","name":"nodur","pid":1,"tid":1,"ts":3})")));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("traceEvents[1]"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("nodur"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("missing \"dur\""));
}

TEST(TraceCheckerTest, RejectsEachMissingOrWrongField) {
  const struct {
    std::string event;
    std::string why;
  } kCases[] = {
      {R"({"name":"x"})", "no string \"ph\""},
      {R"({"ph":"Q","name":"x"})", "unknown phase"},
      {R"({"ph":"X","pid":1,"tid":1,"ts":0,"dur":1})", "missing \"name\""},
      {R"({"ph":"X","name":"x","tid":1,"ts":0,"dur":1})", "missing \"pid\""},
      {R"({"ph":"X","name":"x","pid":1,"ts":0,"dur":1})", "missing \"tid\""},
      {R"({"ph":"X","name":"x","pid":1,"tid":1,"dur":1})", "missing \"ts\""},
      {R"({"ph":"X","name":"x","pid":1,"tid":1,"ts":"0","dur":1})", "\"ts\" must be a number"},
      {R"({"ph":"X","name":"x","pid":1.5,"tid":1,"ts":0,"dur":1})", "must be an integer"},
      {R"({"ph":"X","name":"x","pid":1,"tid":1,"ts":0,"dur":-1})", "negative"},
      {R"({"ph":"M","name":"process_name","pid":1,"args":{}})", "args.name"},
      {R"({"ph":"M","name":"thread_name","pid":1,"args":{"name":"t"}})", "missing \"tid\""},
      {R"({"ph":"M","name":"thread_sort_index","pid":1,"tid":1,"args":{"sort_index":"0"}})",
       "args.sort_index"},
      {R"({"ph":"M","name":"process_name","pid":1})", "missing \"args\""},
      {R"({"ph":"C","name":"hbm","pid":1,"ts":0,"args":{"w":"big"}})", "\"w\" must be a number"},
      {R"({"ph":"C","name":"hbm","pid":1,"ts":0,"args":{}})", "at least one series"},
      {R"({"ph":"C","name":"hbm","pid":1,"args":{"w":1}})", "missing \"ts\""},
      {R"({"ph":"s","name":"pp","pid":1,"tid":1,"ts":0})", "missing \"id\""},
      {R"({"ph":"f","name":"pp","id":1,"pid":1,"ts":0})", "missing \"tid\""},
      {"3", "not an object"},
  };
  for (const auto& c : kCases) {
    const absl::Status s = Check(Trace(c.event));
    const std::string why(s.message());
    EXPECT_FALSE(s.ok()) << c.event;
    EXPECT_THAT(why, HasSubstr(c.why)) << c.event;
    EXPECT_THAT(why, HasSubstr("traceEvents[0]")) << c.event;
  }
}

TEST(TraceCheckerTest, RejectsPartialOverlapOnOneThread) {
  const absl::Status s =
      Check(Trace(absl::StrCat(X("a", 1, "0", "10"), ",", X("b", 1, "5", "10"))));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("traceEvents[1] partially overlaps traceEvents[0]"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("pid 1 tid 1"));
}

TEST(TraceCheckerTest, RejectsOverlapBelowAParent) {
  // b nests in a, c nests in a but overlaps b: any order of events.
  const absl::Status s = Check(Trace(
      absl::StrCat(X("c", 1, "4", "3"), ",", X("a", 1, "0", "10"), ",", X("b", 1, "1", "4"))));
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("traceEvents[0] partially overlaps traceEvents[2]"));
}

TEST(TraceCheckerTest, AcceptsNestedAbuttingAndOtherThreadOverlap) {
  // 0.1 + 0.2 != 0.3 in doubles; the checker compares integer picoseconds.
  EXPECT_TRUE(Check(Trace(absl::StrCat(X("a", 1, "0.1", "0.2"), ",", X("b", 1, "0.3", "1")))).ok());
  EXPECT_TRUE(
      Check(Trace(absl::StrCat(X("outer", 1, "0", "10"), ",", X("inner", 1, "0", "10"), ",",
                               X("leaf", 1, "10", "0"), ",", X("end", 1, "9.999999", "0.000001"))))
          .ok());
  EXPECT_TRUE(Check(Trace(absl::StrCat(X("a", 1, "0", "10"), ",", X("b", 2, "5", "10")))).ok());
}

TEST(TraceCheckerTest, RejectsUnpairedFlows) {
  const std::string s7 = R"({"ph":"s","name":"pp","id":7,"pid":1,"tid":1,"ts":1})";
  const std::string f7 = R"({"ph":"f","bp":"e","name":"pp","id":7,"pid":1,"tid":2,"ts":2})";
  EXPECT_THAT(Why(Trace(s7)), HasSubstr("flow id 7 has 1 \"s\" and 0 \"f\""));
  EXPECT_THAT(Why(Trace(f7)), HasSubstr("flow id 7 has 0 \"s\" and 1 \"f\""));
  EXPECT_THAT(Why(Trace(absl::StrCat(s7, ",", f7, ",", f7))), HasSubstr("1 \"s\" and 2 \"f\""));
  const std::string early_f = R"({"ph":"f","name":"pp","id":7,"pid":1,"tid":2,"ts":0.5})";
  EXPECT_THAT(Why(Trace(absl::StrCat(s7, ",", early_f))), HasSubstr("ends before it starts"));
  // String ids pair with string ids only.
  EXPECT_FALSE(Check(Trace(absl::StrCat(
                         s7, ",", R"({"ph":"f","name":"pp","id":"7","pid":1,"tid":2,"ts":2})")))
                   .ok());
}

TEST(TraceCheckerTest, RequiresNamesForUsedProcessesAndThreads) {
  const std::string no_thread = Trace(X("a", 3, "0", "1"));
  EXPECT_THAT(Why(no_thread), HasSubstr("tid 3, which has no thread_name"));
  const std::string no_process = absl::StrCat(
      R"({"traceEvents":[)", R"({"ph":"X","name":"a","pid":2,"tid":1,"ts":0,"dur":1},)",
      R"({"ph":"M","name":"thread_name","pid":2,"tid":1,"args":{"name":"compute"}}]})");
  EXPECT_THAT(Why(no_process), HasSubstr("pid 2, which has no process_name"));
}

}  // namespace
}  // namespace clustersim::traces
