#include "traces/json_format.h"

#include <cstdint>
#include <limits>
#include <string>

#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "sim/units.h"

namespace clustersim::traces {
namespace {

std::string Micros(int64_t ps) {
  std::string s;
  AppendMicroseconds(&s, ps);
  return s;
}

std::string Quoted(std::string_view v) {
  std::string s;
  AppendJsonString(&s, v);
  return s;
}

// Parses `json_value` with protobuf's JSON parser (an independent reader).
google::protobuf::Value Parse(const std::string& json_value) {
  google::protobuf::Value v;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(json_value, &v).ok()) << json_value;
  return v;
}

TEST(JsonFormatTest, MicrosecondsHaveSixExactDecimals) {
  EXPECT_EQ(Micros(0), "0.000000");
  EXPECT_EQ(Micros(1), "0.000001");
  EXPECT_EQ(Micros(sim::Microseconds(12).picoseconds() + 345678), "12.345678");
  EXPECT_EQ(Micros(sim::Nanoseconds(1500).picoseconds()), "1.500000");
  EXPECT_EQ(Micros(sim::Seconds(3600).picoseconds()), "3600000000.000000");
  EXPECT_EQ(Micros(-2500000), "-2.500000");
  // The extremes of int64 picoseconds print exactly (a double would not).
  EXPECT_EQ(Micros(std::numeric_limits<int64_t>::max()), "9223372036854.775807");
  EXPECT_EQ(Micros(std::numeric_limits<int64_t>::min()), "-9223372036854.775808");
}

TEST(JsonFormatTest, StringsRoundTripThroughAJsonParser) {
  const std::string nasty =
      std::string("q\"b\\s/ n\n r\r t\t b\b f\f nul") + '\0' + "\x01\x1f end \xc3\xa9";
  const std::string text = Quoted(nasty);
  EXPECT_EQ(text.find('\n'), std::string::npos);
  EXPECT_EQ(Parse(text).string_value(), nasty);
  EXPECT_EQ(Quoted("a\x01"), "\"a\\u0001\"");
  EXPECT_EQ(Quoted("\"\\"), "\"\\\"\\\\\"");
}

TEST(JsonFormatTest, DoublesReadBackExactly) {
  for (const double v : {0.0, 1.0, -0.5, 0.1, 1.0 / 3.0, 3.4e9, 1e300, 5e-324}) {
    std::string s;
    AppendJsonDouble(&s, v);
    EXPECT_EQ(Parse(s).number_value(), v) << s;
  }
}

TEST(JsonFormatTest, ArgValuesOfEachKind) {
  std::string s;
  AppendArgValue(&s, sim::ArgValue(int64_t{-9007199254740993}));
  EXPECT_EQ(s, "-9007199254740993");
  s.clear();
  AppendArgValue(&s, sim::ArgValue(2.5));
  EXPECT_EQ(s, "2.5");
  s.clear();
  AppendArgValue(&s, sim::ArgValue(std::string("bf16")));
  EXPECT_EQ(s, "\"bf16\"");
}

TEST(JsonFormatDeathTest, NonFiniteDoubleIsABug) {
  std::string s;
  EXPECT_DEATH(AppendJsonDouble(&s, std::numeric_limits<double>::quiet_NaN()), "not finite");
}

}  // namespace
}  // namespace clustersim::traces
