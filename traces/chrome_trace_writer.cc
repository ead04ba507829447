#include "traces/chrome_trace_writer.h"

#include <algorithm>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"
#include "sim/check.h"
#include "traces/json_format.h"

namespace clustersim::traces {
namespace {

uint64_t ThreadKey(uint32_t group, uint32_t lane) {
  return (static_cast<uint64_t>(group) << 32) | lane;
}

void AppendInt(std::string* out, int64_t v) { AppendArgValue(out, sim::ArgValue(v)); }

// Entries of a hash map sorted by key, so that output does not depend on hashing.
template <typename K>
std::vector<std::pair<K, const std::string*>> SortedByKey(
    const absl::flat_hash_map<K, std::string>& m) {
  std::vector<std::pair<K, const std::string*>> v;
  v.reserve(m.size());
  for (const auto& [k, name] : m) v.emplace_back(k, &name);
  std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return v;
}

// The numeric value of arg `key` in `args`, or 0.
double NumericArg(const std::vector<std::pair<std::string, sim::ArgValue>>& args, std::string_view key) {
  for (const auto& [name, value] : args) {
    if (name != key) continue;
    if (const int64_t* i = std::get_if<int64_t>(&value)) return static_cast<double>(*i);
    if (const double* d = std::get_if<double>(&value)) return *d;
  }
  return 0;
}

}  // namespace

absl::StatusOr<TraceDetail> ParseTraceDetail(std::string_view text, std::string_view flag) {
  if (text == "op") return TraceDetail::kOp;
  if (text == "layer") return TraceDetail::kLayer;
  return absl::InvalidArgumentError(absl::StrCat(std::string(flag), "=\"", std::string(text),
                                                 "\" is not a detail level; use op (every op) "
                                                 "or layer (one event per layer per pass)"));
}

absl::StatusOr<std::unique_ptr<ChromeTraceWriter>> ChromeTraceWriter::Open(
    const std::string& path, const sim::SpanDescriber& describer, Options options) {
  absl::StatusOr<std::unique_ptr<sim::AtomicFile>> file = sim::AtomicFile::Create(path);
  if (!file.ok()) return file.status();
  return std::unique_ptr<ChromeTraceWriter>(
      new ChromeTraceWriter(*std::move(file), describer, std::move(options)));
}

ChromeTraceWriter::ChromeTraceWriter(std::unique_ptr<sim::AtomicFile> file,
                                     const sim::SpanDescriber& describer, Options options)
    : file_(std::move(file)), describer_(describer), options_(std::move(options)) {
  file_->Write("{\"traceEvents\":[\n");
}

void ChromeTraceWriter::BeginEvent() {
  SIM_CHECK(!finished_) << "trace event added after ChromeTraceWriter::Finish (" << file_->path()
                        << ")";
  line_.clear();
  if (!first_event_) line_.append(",\n");
  first_event_ = false;
}

void ChromeTraceWriter::EmitLine() {
  file_->Write(line_);
  ++events_written_;
}

void ChromeTraceWriter::NoteProcess(uint32_t group) {
  if (!process_names_.contains(group)) process_names_.emplace(group, describer_.ProcessName(group));
}

void ChromeTraceWriter::AppendPlace(uint32_t group, uint32_t lane, sim::Time t) {
  line_.append(",\"pid\":");
  AppendInt(&line_, group);
  line_.append(",\"tid\":");
  AppendInt(&line_, static_cast<int64_t>(lane) + 1);
  line_.append(",\"ts\":");
  AppendMicroseconds(&line_, t.picoseconds());
}

void ChromeTraceWriter::OnSpan(const sim::TaskGraph& g, const sim::Span& s) {
  SIM_CHECK(s.end >= s.start) << "span of task " << s.task << " ends before it starts";
  const sim::TaskGraph::Resource& res = g.resource(s.resource);
  if (!KeepsGroup(res.group)) return;
  if (options_.steps.has_value() && !options_.steps->Contains(step_)) return;
  const uint64_t key = ThreadKey(res.group, res.lane);
  if (!thread_names_.contains(key)) {
    thread_names_.emplace(key, describer_.ThreadName(g, s.resource));
    NoteProcess(res.group);
  }

  description_.name.clear();
  description_.category.clear();
  description_.args.clear();
  describer_.Describe(g, s, &description_);
  if (options_.detail == TraceDetail::kLayer) {
    Aggregate(res.group, res.lane, s);
  } else {
    EmitComplete(res.group, res.lane, s.start, s.end, description_);
  }
}

void ChromeTraceWriter::EmitComplete(uint32_t group, uint32_t lane, sim::Time start,
                                     sim::Time end, const sim::SpanDescription& d) {
  BeginEvent();
  line_.append("{\"ph\":\"X\",\"name\":");
  AppendJsonString(&line_, d.name);
  if (!d.category.empty()) {
    line_.append(",\"cat\":");
    AppendJsonString(&line_, d.category);
  }
  AppendPlace(group, lane, start);
  line_.append(",\"dur\":");
  AppendMicroseconds(&line_, (end - start).picoseconds());
  if (!d.args.empty()) {
    line_.append(",\"args\":{");
    bool first = true;
    for (const auto& [key_name, value] : d.args) {
      if (!first) line_.push_back(',');
      first = false;
      AppendJsonString(&line_, key_name);
      line_.push_back(':');
      AppendArgValue(&line_, value);
    }
    line_.push_back('}');
  }
  line_.push_back('}');
  EmitLine();
}

void ChromeTraceWriter::Aggregate(uint32_t group, uint32_t lane, const sim::Span& s) {
  const std::string_view full = description_.name;
  const size_t cut = full.rfind(' ');
  const std::string_view run_name = cut == std::string_view::npos ? full : full.substr(0, cut);
  const uint64_t key = ThreadKey(group, lane);
  auto it = pending_.find(key);
  if (it != pending_.end() && it->second.description.name == run_name &&
      it->second.description.category == description_.category) {
    Pending& p = it->second;
    p.end = sim::Max(p.end, s.end);
    ++p.ops;
    p.flops += NumericArg(description_.args, "flops");
    p.bytes += NumericArg(description_.args, "bytes");
    return;
  }
  if (it != pending_.end()) {
    EmitPending(it->second);
  } else {
    it = pending_.try_emplace(key).first;
  }
  Pending& p = it->second;
  p.group = group;
  p.lane = lane;
  p.start = s.start;
  p.end = s.end;
  p.description.name.assign(run_name);
  p.description.category = description_.category;
  p.description.args.clear();
  for (const auto& [name, value] : description_.args) {
    if (name == "microbatch" || name == "layer" || name == "stage" || name == "chunk") {
      p.description.args.emplace_back(name, value);
    }
  }
  p.ops = 1;
  p.flops = NumericArg(description_.args, "flops");
  p.bytes = NumericArg(description_.args, "bytes");
}

void ChromeTraceWriter::EmitPending(Pending& p) {
  p.description.args.emplace_back("ops", p.ops);
  if (p.flops > 0) p.description.args.emplace_back("flops", p.flops);
  if (p.bytes > 0) p.description.args.emplace_back("bytes", p.bytes);
  EmitComplete(p.group, p.lane, p.start, p.end, p.description);
}

void ChromeTraceWriter::FlushPending() {
  std::vector<uint64_t> keys;
  keys.reserve(pending_.size());
  for (const auto& [key, p] : pending_) keys.push_back(key);
  std::sort(keys.begin(), keys.end());
  for (const uint64_t key : keys) EmitPending(pending_.at(key));
  pending_.clear();
}

void ChromeTraceWriter::BeginStep(int64_t step) {
  FlushPending();
  step_ = step;
}

void ChromeTraceWriter::AddFlow(std::string_view name, uint32_t from_group, uint32_t from_lane,
                                sim::Time from_time, uint32_t to_group, uint32_t to_lane,
                                sim::Time to_time) {
  if (!KeepsGroup(from_group) || !KeepsGroup(to_group)) return;
  if (options_.steps.has_value() && !options_.steps->Contains(step_)) return;
  NoteProcess(from_group);
  NoteProcess(to_group);
  const int64_t id = next_flow_id_++;
  for (const bool start : {true, false}) {
    BeginEvent();
    line_.append(start ? "{\"ph\":\"s\",\"name\":" : "{\"ph\":\"f\",\"bp\":\"e\",\"name\":");
    AppendJsonString(&line_, name);
    line_.append(",\"cat\":\"flow\",\"id\":");
    AppendInt(&line_, id);
    if (start) {
      AppendPlace(from_group, from_lane, from_time);
    } else {
      AppendPlace(to_group, to_lane, to_time);
    }
    line_.push_back('}');
    EmitLine();
  }
}

void ChromeTraceWriter::AddCounter(uint32_t group, std::string_view name, sim::Time t,
                                   const CounterSeries& series) {
  SIM_CHECK(!series.empty()) << "counter \"" << name << "\" has no series";
  if (!KeepsGroup(group) && group != kNetworkPid) return;
  if (options_.steps.has_value() && !options_.steps->Contains(step_)) return;
  if (group != kNetworkPid) NoteProcess(group);
  BeginEvent();
  line_.append("{\"ph\":\"C\",\"name\":");
  AppendJsonString(&line_, name);
  line_.append(",\"pid\":");
  AppendInt(&line_, group);
  line_.append(",\"ts\":");
  AppendMicroseconds(&line_, t.picoseconds());
  line_.append(",\"args\":{");
  bool first = true;
  for (const auto& [series_name, value] : series) {
    if (!first) line_.push_back(',');
    first = false;
    AppendJsonString(&line_, series_name);
    line_.push_back(':');
    AppendJsonDouble(&line_, value);
  }
  line_.append("}}");
  EmitLine();
}

void ChromeTraceWriter::AddNetworkCounter(std::string_view name, sim::Time t,
                                          const CounterSeries& series) {
  if (!process_names_.contains(kNetworkPid)) process_names_.emplace(kNetworkPid, "network");
  AddCounter(kNetworkPid, name, t, series);
}

void ChromeTraceWriter::AppendMetadata(std::string_view name, uint32_t pid, const int64_t* tid,
                                       std::string_view arg_key, const sim::ArgValue& arg_value) {
  BeginEvent();
  line_.append("{\"ph\":\"M\",\"name\":");
  AppendJsonString(&line_, name);
  line_.append(",\"pid\":");
  AppendInt(&line_, pid);
  if (tid != nullptr) {
    line_.append(",\"tid\":");
    AppendInt(&line_, *tid);
  }
  line_.append(",\"args\":{");
  AppendJsonString(&line_, arg_key);
  line_.push_back(':');
  AppendArgValue(&line_, arg_value);
  line_.append("}}");
  file_->Write(line_);
}

absl::Status ChromeTraceWriter::Finish() {
  SIM_CHECK(!finished_) << "ChromeTraceWriter::Finish called twice (" << file_->path() << ")";
  FlushPending();
  for (const auto& [group, name] : SortedByKey(process_names_)) {
    const int64_t sort_index =
        group == kNetworkPid          ? int64_t{kNetworkPid}
        : options_.process_sort_index ? options_.process_sort_index(group)
                                      : int64_t{group};
    AppendMetadata("process_name", group, nullptr, "name", *name);
    AppendMetadata("process_sort_index", group, nullptr, "sort_index", sort_index);
  }
  for (const auto& [key, name] : SortedByKey(thread_names_)) {
    const uint32_t group = static_cast<uint32_t>(key >> 32);
    const uint32_t lane = static_cast<uint32_t>(key & 0xffffffffu);
    const int64_t tid = static_cast<int64_t>(lane) + 1;
    AppendMetadata("thread_name", group, &tid, "name", *name);
    AppendMetadata("thread_sort_index", group, &tid, "sort_index", int64_t{lane});
  }
  finished_ = true;
  line_.assign("\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{");
  bool first = true;
  for (const auto& [key, value] : options_.other_data) {
    if (!first) line_.push_back(',');
    first = false;
    AppendJsonString(&line_, key);
    line_.push_back(':');
    AppendJsonString(&line_, value);
  }
  line_.append("}}\n");
  file_->Write(line_);
  return file_->Commit();
}

}  // namespace clustersim::traces
