#include "traces/chrome_trace_writer.h"

#include <algorithm>
#include <utility>

#include "sim/check.h"
#include "traces/json_format.h"

namespace clustersim::traces {
namespace {

uint64_t ThreadKey(uint32_t group, uint32_t lane) {
  return (static_cast<uint64_t>(group) << 32) | lane;
}

void AppendInt(std::string* out, int64_t v) { AppendArgValue(out, ArgValue(v)); }

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

}  // namespace

absl::StatusOr<std::unique_ptr<ChromeTraceWriter>> ChromeTraceWriter::Open(
    const std::string& path, const SpanDescriber& describer, Options options) {
  absl::StatusOr<std::unique_ptr<AtomicFile>> file = AtomicFile::Create(path);
  if (!file.ok()) return file.status();
  return std::unique_ptr<ChromeTraceWriter>(
      new ChromeTraceWriter(*std::move(file), describer, std::move(options)));
}

ChromeTraceWriter::ChromeTraceWriter(std::unique_ptr<AtomicFile> file,
                                     const SpanDescriber& describer, Options options)
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
  const uint64_t key = ThreadKey(res.group, res.lane);
  if (!thread_names_.contains(key)) {
    thread_names_.emplace(key, describer_.ThreadName(g, s.resource));
    NoteProcess(res.group);
  }

  description_.name.clear();
  description_.category.clear();
  description_.args.clear();
  describer_.Describe(g, s, &description_);

  BeginEvent();
  line_.append("{\"ph\":\"X\",\"name\":");
  AppendJsonString(&line_, description_.name);
  if (!description_.category.empty()) {
    line_.append(",\"cat\":");
    AppendJsonString(&line_, description_.category);
  }
  AppendPlace(res.group, res.lane, s.start);
  line_.append(",\"dur\":");
  AppendMicroseconds(&line_, (s.end - s.start).picoseconds());
  if (!description_.args.empty()) {
    line_.append(",\"args\":{");
    bool first = true;
    for (const auto& [key_name, value] : description_.args) {
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

void ChromeTraceWriter::AddFlow(std::string_view name, uint32_t from_group, uint32_t from_lane,
                                sim::Time from_time, uint32_t to_group, uint32_t to_lane,
                                sim::Time to_time) {
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
                                   const std::vector<std::pair<std::string, double>>& series) {
  SIM_CHECK(!series.empty()) << "counter \"" << name << "\" has no series";
  NoteProcess(group);
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

void ChromeTraceWriter::AppendMetadata(std::string_view name, uint32_t pid, const int64_t* tid,
                                       std::string_view arg_key, const ArgValue& arg_value) {
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
  for (const auto& [group, name] : SortedByKey(process_names_)) {
    AppendMetadata("process_name", group, nullptr, "name", *name);
    AppendMetadata("process_sort_index", group, nullptr, "sort_index", int64_t{group});
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
