// File: traces/json_format.h
//
// The few JSON formatting primitives the trace writers need, all appending to a
// std::string and all deterministic (the same value always gives the same
// bytes, on every platform, with no locale).
//
// Example:
//   std::string out;
//   AppendJsonString(&out, "say \"hi\"\n");             // "say \"hi\"\n" (escaped)
//   out += ',';
//   AppendMicroseconds(&out, sim::Microseconds(12).picoseconds() + 345678);
//   // out == "\"say \\\"hi\\\"\\n\",12.345678"
#ifndef CLUSTERSIM_TRACES_JSON_FORMAT_H_
#define CLUSTERSIM_TRACES_JSON_FORMAT_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "sim/span_describer.h"

namespace clustersim::traces {

// Appends `s` as a quoted JSON string: '"' and '\\' are backslash-escaped,
// control characters (< 0x20) become \n, \t, ... or \u00XX. Other bytes are
// copied as they are. REQUIRES: `s` is UTF-8 (JSON text must be).
void AppendJsonString(std::string* out, std::string_view s);

// Appends integer picoseconds as microseconds with exactly six decimals
// ("0.000001" for 1 ps, "-2.500000" for -2500000 ps), by integer arithmetic
// only, so the text is exact for every int64.
void AppendMicroseconds(std::string* out, int64_t picoseconds);

// Appends the shortest decimal text that reads back as exactly `v`
// (std::to_chars). REQUIRES: `v` is finite; JSON has no NaN or infinity.
void AppendJsonDouble(std::string* out, double v);

// Appends an int64, a double (as above) or a string (quoted and escaped).
void AppendArgValue(std::string* out, const sim::ArgValue& v);

}  // namespace clustersim::traces

#endif  // CLUSTERSIM_TRACES_JSON_FORMAT_H_
