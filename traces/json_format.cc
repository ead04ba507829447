#include "traces/json_format.h"

#include <charconv>
#include <cmath>
#include <system_error>

#include "sim/check.h"

namespace clustersim::traces {
namespace {

constexpr uint64_t kPicosecondsPerMicrosecond = 1000000;

void AppendUnsigned(std::string* out, uint64_t v) {
  char buf[24];
  const std::to_chars_result r = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, r.ptr);
}

}  // namespace

void AppendJsonString(std::string* out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->push_back('"');
  for (const char c : s) {
    const unsigned char u = static_cast<unsigned char>(c);
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\b':
        out->append("\\b");
        break;
      case '\f':
        out->append("\\f");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      default:
        if (u < 0x20) {
          out->append("\\u00");
          out->push_back(kHex[u >> 4]);
          out->push_back(kHex[u & 0xf]);
        } else {
          out->push_back(c);
        }
    }
  }
  out->push_back('"');
}

void AppendMicroseconds(std::string* out, int64_t picoseconds) {
  // Magnitude in uint64 so that INT64_MIN needs no special case.
  uint64_t magnitude = static_cast<uint64_t>(picoseconds);
  if (picoseconds < 0) {
    out->push_back('-');
    magnitude = ~magnitude + 1;
  }
  AppendUnsigned(out, magnitude / kPicosecondsPerMicrosecond);
  out->push_back('.');
  uint64_t fraction = magnitude % kPicosecondsPerMicrosecond;
  char digits[6];
  for (int i = 5; i >= 0; --i) {
    digits[i] = static_cast<char>('0' + fraction % 10);
    fraction /= 10;
  }
  out->append(digits, sizeof(digits));
}

void AppendJsonDouble(std::string* out, double v) {
  SIM_CHECK(std::isfinite(v)) << "trace value " << v << " is not finite; JSON cannot represent it";
  char buf[32];
  const std::to_chars_result r = std::to_chars(buf, buf + sizeof(buf), v);
  SIM_CHECK(r.ec == std::errc()) << "to_chars failed for " << v;
  out->append(buf, r.ptr);
}

void AppendArgValue(std::string* out, const sim::ArgValue& v) {
  if (const int64_t* i = std::get_if<int64_t>(&v)) {
    char buf[24];
    const std::to_chars_result r = std::to_chars(buf, buf + sizeof(buf), *i);
    out->append(buf, r.ptr);
  } else if (const double* d = std::get_if<double>(&v)) {
    AppendJsonDouble(out, *d);
  } else {
    AppendJsonString(out, std::get<std::string>(v));
  }
}

}  // namespace clustersim::traces
