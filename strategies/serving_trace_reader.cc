#include "strategies/serving_trace_reader.h"

#include <cmath>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "sim/csv_table.h"
#include "sim/input_file.h"

namespace clustersim::strategies {
namespace {

using google::protobuf::Value;

constexpr int64_t kMaxTokens = 10'000'000;
// Traces longer than this from first to last record are refused: simulated
// time is int64 picoseconds (about ±106 days, sim/units.h).
constexpr int64_t kMaxSpanNs = int64_t{100} * 86'400 * 1'000'000'000;

// Days from 1970-01-01 to a proleptic Gregorian date (H. Hinnant's
// days_from_civil, howardhinnant.github.io/date_algorithms.html).
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

// "YYYY-MM-DD HH:MM:SS[.fraction][Z|+HH:MM|-HH:MM]" (or a 'T' separator) in
// nanoseconds since 1970 UTC; nullopt when it is not one.
std::optional<int64_t> ParseDateTime(std::string_view s) {
  auto digits = [&](size_t pos, size_t n, int64_t* out) {
    if (pos + n > s.size()) return false;
    int64_t v = 0;
    for (size_t i = pos; i < pos + n; ++i) {
      if (s[i] < '0' || s[i] > '9') return false;
      v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return true;
  };
  int64_t y, mo, d, h, mi, sec;
  if (s.size() < 19 || !digits(0, 4, &y) || s[4] != '-' || !digits(5, 2, &mo) || s[7] != '-' ||
      !digits(8, 2, &d) || (s[10] != ' ' && s[10] != 'T') || !digits(11, 2, &h) || s[13] != ':' ||
      !digits(14, 2, &mi) || s[16] != ':' || !digits(17, 2, &sec)) {
    return std::nullopt;
  }
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60 || y < 1970 ||
      y > 2200) {
    return std::nullopt;
  }
  size_t pos = 19;
  int64_t frac_ns = 0;
  if (pos < s.size() && s[pos] == '.') {
    int64_t scale = 100'000'000;
    for (++pos; pos < s.size() && s[pos] >= '0' && s[pos] <= '9'; ++pos) {
      frac_ns += (s[pos] - '0') * scale;  // digits past nanoseconds add 0
      scale /= 10;
    }
    if (pos == 20) return std::nullopt;  // a '.' without digits
  }
  // An optional UTC offset: "Z", "+HH:MM" or "-HH:MM".
  int64_t offset_s = 0;
  if (pos < s.size() && s[pos] == 'Z') {
    ++pos;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    int64_t oh, om;
    if (!digits(pos + 1, 2, &oh) || pos + 3 >= s.size() || s[pos + 3] != ':' ||
        !digits(pos + 4, 2, &om) || oh > 23 || om > 59) {
      return std::nullopt;
    }
    offset_s = (s[pos] == '+' ? 1 : -1) * (oh * 3'600 + om * 60);
    pos += 6;
  }
  if (pos != s.size()) return std::nullopt;
  const int64_t seconds = DaysFromCivil(y, mo, d) * 86'400 + h * 3'600 + mi * 60 + sec - offset_s;
  return seconds * 1'000'000'000 + frac_ns;
}

// Builds the trace record by record, checking times and lengths.
class Builder {
 public:
  explicit Builder(std::string_view origin) : origin_(origin) {}

  absl::Status Error(int line, const std::string& what) const {
    return absl::InvalidArgumentError(absl::StrCat(origin_, ": line ", line, ": ", what));
  }

  // A token count: a whole number between 1 and 10^7.
  absl::StatusOr<int64_t> Tokens(int line, const std::string& name, double v) const {
    if (!(v >= 1 && v <= kMaxTokens) || v != std::floor(v)) {
      return Error(line, absl::StrCat(name, "=", v,
                                      " must be a whole number of tokens between 1 and 10000000; "
                                      "fix or remove the record"));
    }
    return static_cast<int64_t>(v);
  }

  // Adds a record at `time_ns` (absolute, in the file's clock).
  absl::Status Add(int line, const std::string& time_name, int64_t time_ns, int64_t prompt,
                   int64_t output, std::vector<int64_t> hash_ids) {
    if (time_ns < 0) {
      return Error(line, absl::StrCat(time_name, " is negative; times must be >= 0"));
    }
    if (!trace_.requests.empty() && time_ns < last_ns_) {
      return Error(
          line, absl::StrCat(time_name, " is before the previous record's; sort the file by time"));
    }
    if (trace_.requests.empty()) first_ns_ = time_ns;
    if (time_ns - first_ns_ > kMaxSpanNs) {
      return Error(line, absl::StrCat(time_name,
                                      " is more than 100 days after the first record; "
                                      "split the trace"));
    }
    last_ns_ = time_ns;
    trace_.requests.push_back({.arrival = sim::Time::Zero() + sim::Nanoseconds(time_ns - first_ns_),
                               .prompt_tokens = prompt,
                               .output_tokens = output});
    trace_.hash_ids.push_back(std::move(hash_ids));
    return absl::OkStatus();
  }

  absl::StatusOr<RequestTrace> Finish(const std::string& fix) && {
    if (trace_.requests.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(origin_, ": no requests in the file; ", fix));
    }
    return std::move(trace_);
  }

  RequestTrace& trace() { return trace_; }

 private:
  std::string origin_;
  RequestTrace trace_;
  int64_t first_ns_ = 0, last_ns_ = 0;
};

constexpr char kAzureFix[] =
    "the Azure trace format is a CSV with the header TIMESTAMP,ContextTokens,GeneratedTokens";
constexpr char kMooncakeFix[] =
    "the Mooncake trace format is one JSON object per line: "
    "{\"timestamp\": ms, \"input_length\": n, \"output_length\": n, \"hash_ids\": [...]}";

}  // namespace

absl::StatusOr<RequestTrace> ParseAzureTrace(std::string_view text, std::string_view origin) {
  absl::StatusOr<sim::CsvTable> table = sim::ParseCsv(text, origin);
  if (!table.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(std::string(table.status().message()), "; ", kAzureFix));
  }
  for (const char* column : {"TIMESTAMP", "ContextTokens", "GeneratedTokens"}) {
    if (table->Column(column) < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(std::string(origin), ": line 1: no ", column, " column; ", kAzureFix));
    }
  }
  Builder b(origin);
  for (size_t r = 0; r < table->rows.size(); ++r) {
    const sim::CsvTable::Row& row = table->rows[r];
    const int line = table->row_lines[r];
    auto number = [&](const std::string& column) -> absl::StatusOr<double> {
      const std::string cell(absl::StripAsciiWhitespace(table->Get(row, column)));
      double v;
      if (cell.empty()) return b.Error(line, absl::StrCat(column, " is missing; fill it in"));
      if (!absl::SimpleAtod(cell, &v) || !std::isfinite(v)) {
        return b.Error(line, absl::StrCat(column, "=\"", cell, "\" is not a number"));
      }
      return v;
    };
    const std::string stamp(absl::StripAsciiWhitespace(table->Get(row, "TIMESTAMP")));
    int64_t time_ns;
    if (std::optional<int64_t> t = ParseDateTime(stamp)) {
      time_ns = *t;
    } else {
      double seconds;
      if (stamp.empty()) return b.Error(line, "TIMESTAMP is missing; fill it in");
      if (!absl::SimpleAtod(stamp, &seconds) || !std::isfinite(seconds) || seconds > 1e10) {
        return b.Error(line, absl::StrCat("TIMESTAMP=\"", stamp,
                                          "\" is neither a time YYYY-MM-DD HH:MM:SS[.fraction] "
                                          "nor a number of seconds"));
      }
      time_ns = std::llround(seconds * 1e9);
    }
    absl::StatusOr<double> context = number("ContextTokens");
    if (!context.ok()) return context.status();
    absl::StatusOr<double> generated = number("GeneratedTokens");
    if (!generated.ok()) return generated.status();
    absl::StatusOr<int64_t> prompt = b.Tokens(line, "ContextTokens", *context);
    if (!prompt.ok()) return prompt.status();
    absl::StatusOr<int64_t> output = b.Tokens(line, "GeneratedTokens", *generated);
    if (!output.ok()) return output.status();
    if (absl::Status s = b.Add(line, "TIMESTAMP", time_ns, *prompt, *output, {}); !s.ok()) {
      return s;
    }
  }
  return std::move(b).Finish(kAzureFix);
}

absl::StatusOr<RequestTrace> ParseMooncakeTrace(std::string_view text, std::string_view origin) {
  Builder b(origin);
  int line = 0;
  for (absl::string_view raw : absl::StrSplit(absl::string_view(text.data(), text.size()), '\n')) {
    ++line;
    const absl::string_view json = absl::StripAsciiWhitespace(raw);
    if (json.empty()) continue;
    google::protobuf::Struct record;
    if (!google::protobuf::util::JsonStringToMessage(
             google::protobuf::StringPiece(json.data(), json.size()), &record)
             .ok()) {
      return b.Error(line, absl::StrCat("not a JSON object; ", kMooncakeFix));
    }
    auto number = [&](const char* key) -> absl::StatusOr<double> {
      auto it = record.fields().find(key);
      if (it == record.fields().end()) {
        return b.Error(line, absl::StrCat("no \"", key, "\"; ", kMooncakeFix));
      }
      if (it->second.kind_case() != Value::kNumberValue) {
        return b.Error(line, absl::StrCat("\"", key, "\" is not a number"));
      }
      return it->second.number_value();
    };
    absl::StatusOr<double> ms = number("timestamp");
    if (!ms.ok()) return ms.status();
    absl::StatusOr<double> input = number("input_length");
    if (!input.ok()) return input.status();
    absl::StatusOr<double> output_len = number("output_length");
    if (!output_len.ok()) return output_len.status();
    if (!(*ms <= 1e13)) return b.Error(line, "\"timestamp\" is too large (milliseconds)");
    absl::StatusOr<int64_t> prompt = b.Tokens(line, "input_length", *input);
    if (!prompt.ok()) return prompt.status();
    absl::StatusOr<int64_t> output = b.Tokens(line, "output_length", *output_len);
    if (!output.ok()) return output.status();
    std::vector<int64_t> ids;
    if (auto it = record.fields().find("hash_ids"); it != record.fields().end()) {
      if (it->second.kind_case() != Value::kListValue) {
        return b.Error(line, "\"hash_ids\" is not a list of whole numbers");
      }
      for (const Value& v : it->second.list_value().values()) {
        if (v.kind_case() != Value::kNumberValue ||
            v.number_value() != std::floor(v.number_value()) ||
            std::fabs(v.number_value()) > 9.0e15) {
          return b.Error(line, "\"hash_ids\" is not a list of whole numbers");
        }
        ids.push_back(static_cast<int64_t>(v.number_value()));
      }
      b.trace().has_hash_ids = true;
    }
    const int64_t time_ns = std::llround(*ms * 1e6);
    if (absl::Status s = b.Add(line, "\"timestamp\"", time_ns, *prompt, *output, std::move(ids));
        !s.ok()) {
      return s;
    }
  }
  return std::move(b).Finish(kMooncakeFix);
}

absl::StatusOr<RequestTrace> ReadRequestTrace(const std::string& path, RequestTraceFormat format,
                                              std::string_view field) {
  const std::string origin = absl::StrCat(std::string(field), "=", path);
  absl::StatusOr<std::string> text = sim::ReadInputFileFor(path, field);
  if (!text.ok()) return text.status();
  return format == RequestTraceFormat::kAzure ? ParseAzureTrace(*text, origin)
                                              : ParseMooncakeTrace(*text, origin);
}

}  // namespace clustersim::strategies
