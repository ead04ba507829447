#include "traces/trace_checker.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <initializer_list>
#include <map>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "sim/status_macros.h"

namespace clustersim::traces {
namespace {

using google::protobuf::Struct;
using google::protobuf::Value;

// Largest magnitude accepted for ts/dur (microseconds): keeps picoseconds in int64.
constexpr double kMaxMicroseconds = 1e12;
// Largest magnitude accepted for pid/tid/id: integers exact in a double.
constexpr double kMaxInteger = 9007199254740992.0;  // 2^53

constexpr std::string_view kKnownPhases = "BEXIiCbneSTpFstfPNODMVvRc";

// One event being checked: its index and fields, for lookups and messages.
class Event {
 public:
  Event(int64_t index, const Struct& fields, const std::string& ph)
      : index_(index), fields_(fields), ph_(ph) {}

  int64_t index() const { return index_; }

  const Value* Find(const std::string& key) const {
    const auto it = fields_.fields().find(key);
    return it == fields_.fields().end() ? nullptr : &it->second;
  }

  absl::Status Error(absl::string_view why) const {
    std::string where = absl::StrCat("traceEvents[", index_, "] (ph \"", ph_, "\"");
    const Value* name = Find("name");
    if (name != nullptr && name->kind_case() == Value::kStringValue) {
      absl::StrAppend(&where, ", name \"", name->string_value(), "\"");
    }
    return absl::InvalidArgumentError(absl::StrCat(where, "): ", why));
  }

  absl::StatusOr<std::string> String(const std::string& key) const {
    const Value* v = Find(key);
    if (v == nullptr) return Error(absl::StrCat("missing \"", key, "\""));
    if (v->kind_case() != Value::kStringValue) {
      return Error(absl::StrCat("\"", key, "\" must be a string"));
    }
    return v->string_value();
  }

  absl::StatusOr<double> Number(const std::string& key) const {
    const Value* v = Find(key);
    if (v == nullptr) return Error(absl::StrCat("missing \"", key, "\""));
    if (v->kind_case() != Value::kNumberValue) {
      return Error(absl::StrCat("\"", key, "\" must be a number"));
    }
    return v->number_value();
  }

  absl::StatusOr<int64_t> Integer(const std::string& key) const {
    absl::StatusOr<double> v = Number(key);
    if (!v.ok()) return v.status();
    if (std::floor(*v) != *v || std::fabs(*v) > kMaxInteger) {
      return Error(absl::StrCat("\"", key, "\" must be an integer, got ", *v));
    }
    return static_cast<int64_t>(*v);
  }

  // A time field (microseconds) as integer picoseconds.
  absl::StatusOr<int64_t> Picoseconds(const std::string& key) const {
    absl::StatusOr<double> v = Number(key);
    if (!v.ok()) return v.status();
    if (!(std::fabs(*v) <= kMaxMicroseconds)) {
      return Error(absl::StrCat("\"", key, "\" = ", *v, " us is out of range"));
    }
    return std::llround(*v * 1e6);
  }

  absl::StatusOr<const Struct*> Args() const {
    const Value* v = Find("args");
    if (v == nullptr) return Error("missing \"args\"");
    if (v->kind_case() != Value::kStructValue) return Error("\"args\" must be an object");
    return &v->struct_value();
  }

 private:
  int64_t index_;
  const Struct& fields_;
  const std::string& ph_;
};

// The first error among checks of fields that are validated but not used.
absl::Status FirstError(std::initializer_list<absl::Status> checks) {
  for (const absl::Status& s : checks) {
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

struct Slice {
  int64_t start;
  int64_t end;
  int64_t index;
};

struct FlowEnds {
  int starts = 0;
  int finishes = 0;
  int64_t first_index = 0;
  int64_t start_ts = 0;
  int64_t finish_ts = 0;
};

using ThreadKey = std::pair<int64_t, int64_t>;

struct CounterTrack {
  int64_t last_ts = 0;
  int64_t first_index = 0;
  int64_t samples = 0;
};

// Everything gathered in one pass over the events.
struct Collected {
  std::map<std::pair<int64_t, std::string>, CounterTrack> counters;  // by (pid, name)
  std::map<ThreadKey, std::vector<Slice>> slices;
  std::set<int64_t> named_processes;
  std::set<ThreadKey> named_threads;
  std::map<std::string, FlowEnds> flows;
};

absl::Status CheckComplete(const Event& e, Collected* c) {
  std::string name;
  int64_t pid, tid, ts, dur;
  CLUSTERSIM_ASSIGN_OR_RETURN(name, e.String("name"));
  CLUSTERSIM_ASSIGN_OR_RETURN(pid, e.Integer("pid"));
  CLUSTERSIM_ASSIGN_OR_RETURN(tid, e.Integer("tid"));
  CLUSTERSIM_ASSIGN_OR_RETURN(ts, e.Picoseconds("ts"));
  CLUSTERSIM_ASSIGN_OR_RETURN(dur, e.Picoseconds("dur"));
  if (dur < 0) return e.Error("\"dur\" is negative; a complete event needs dur >= 0");
  c->slices[{pid, tid}].push_back({ts, ts + dur, e.index()});
  return absl::OkStatus();
}

absl::Status CheckMetadata(const Event& e, Collected* c) {
  std::string name;
  int64_t pid;
  const Struct* args;
  CLUSTERSIM_ASSIGN_OR_RETURN(name, e.String("name"));
  CLUSTERSIM_ASSIGN_OR_RETURN(pid, e.Integer("pid"));
  CLUSTERSIM_ASSIGN_OR_RETURN(args, e.Args());
  const bool names = name == "process_name" || name == "thread_name";
  const bool sorts = name == "process_sort_index" || name == "thread_sort_index";
  if (names || sorts) {
    const auto it = args->fields().find(names ? "name" : "sort_index");
    const Value::KindCase want = names ? Value::kStringValue : Value::kNumberValue;
    if (it == args->fields().end() || it->second.kind_case() != want) {
      return e.Error(names ? "needs a string \"args.name\"" : "needs a number \"args.sort_index\"");
    }
  }
  int64_t tid = 0;
  if (name.starts_with("thread_")) {
    CLUSTERSIM_ASSIGN_OR_RETURN(tid, e.Integer("tid"));
  }
  if (name == "process_name") c->named_processes.insert(pid);
  if (name == "thread_name") c->named_threads.insert({pid, tid});
  return absl::OkStatus();
}

absl::Status CheckCounter(const Event& e, Collected* c) {
  std::string name;
  int64_t pid, ts;
  CLUSTERSIM_ASSIGN_OR_RETURN(name, e.String("name"));
  CLUSTERSIM_ASSIGN_OR_RETURN(pid, e.Integer("pid"));
  CLUSTERSIM_ASSIGN_OR_RETURN(ts, e.Picoseconds("ts"));
  CounterTrack& track = c->counters[{pid, name}];
  if (track.samples > 0 && ts < track.last_ts) {
    return e.Error(absl::StrCat("counter sample at ", ts, " ps comes after one at ",
                                track.last_ts, " ps on the same track (pid ", pid,
                                "); write each counter's samples in time order"));
  }
  if (track.samples == 0) track.first_index = e.index();
  track.last_ts = ts;
  ++track.samples;
  const Struct* args;
  CLUSTERSIM_ASSIGN_OR_RETURN(args, e.Args());
  if (args->fields().empty()) return e.Error("a counter needs at least one series in \"args\"");
  // Sorted so that the message for several bad series is deterministic.
  std::set<std::string> bad;
  for (const auto& [key, v] : args->fields()) {
    if (v.kind_case() != Value::kNumberValue) bad.insert(key);
  }
  if (!bad.empty()) {
    return e.Error(absl::StrCat("counter series \"", *bad.begin(), "\" must be a number"));
  }
  return absl::OkStatus();
}

absl::Status CheckFlow(const Event& e, char ph, Collected* c) {
  const Value* id = e.Find("id");
  if (id == nullptr) return e.Error("missing \"id\"; flow events are paired by id");
  std::string key;
  if (id->kind_case() == Value::kStringValue) {
    key = absl::StrCat("\"", id->string_value(), "\"");
  } else {
    int64_t n;
    CLUSTERSIM_ASSIGN_OR_RETURN(n, e.Integer("id"));
    key = absl::StrCat(n);
  }
  if (absl::Status s = FirstError({e.Integer("pid").status(), e.Integer("tid").status()});
      !s.ok()) {
    return s;
  }
  int64_t ts;
  CLUSTERSIM_ASSIGN_OR_RETURN(ts, e.Picoseconds("ts"));
  FlowEnds& f = c->flows[key];
  if (f.starts + f.finishes == 0) f.first_index = e.index();
  if (ph == 's') {
    ++f.starts;
    f.start_ts = ts;
  } else if (ph == 'f') {
    ++f.finishes;
    f.finish_ts = ts;
  }
  return absl::OkStatus();
}

absl::Status CheckEvent(int64_t index, const Value& v, Collected* c) {
  if (v.kind_case() != Value::kStructValue) {
    return absl::InvalidArgumentError(
        absl::StrCat("traceEvents[", index, "] is not an object; every event is {\"ph\":...}"));
  }
  const Struct& fields = v.struct_value();
  const auto ph_it = fields.fields().find("ph");
  if (ph_it == fields.fields().end() || ph_it->second.kind_case() != Value::kStringValue) {
    return absl::InvalidArgumentError(
        absl::StrCat("traceEvents[", index, "] has no string \"ph\" (the event phase)"));
  }
  const std::string& ph = ph_it->second.string_value();
  const Event e(index, fields, ph);
  if (ph.size() != 1 || kKnownPhases.find(ph[0]) == std::string_view::npos) {
    return e.Error("unknown phase; see the Trace Event Format for the phase letters");
  }
  switch (ph[0]) {
    case 'X':
      return CheckComplete(e, c);
    case 'M':
      return CheckMetadata(e, c);
    case 'C':
      return CheckCounter(e, c);
    case 's':
    case 't':
    case 'f':
      return CheckFlow(e, ph[0], c);
    default:
      return absl::OkStatus();
  }
}

// The nesting rule on one thread: sorted by start (longer first), each slice
// must end within the innermost open slice that contains its start.
absl::Status CheckNesting(const ThreadKey& thread, std::vector<Slice>& slices) {
  std::sort(slices.begin(), slices.end(), [](const Slice& a, const Slice& b) {
    if (a.start != b.start) return a.start < b.start;
    if (a.end != b.end) return a.end > b.end;
    return a.index < b.index;
  });
  std::vector<const Slice*> open;
  for (const Slice& s : slices) {
    while (!open.empty() && open.back()->end <= s.start) open.pop_back();
    if (!open.empty() && s.end > open.back()->end) {
      return absl::InvalidArgumentError(absl::StrCat(
          "traceEvents[", s.index, "] partially overlaps traceEvents[", open.back()->index,
          "] on pid ", thread.first, " tid ", thread.second,
          "; complete events on one thread must be disjoint or nested (give concurrent work its "
          "own tid)"));
    }
    open.push_back(&s);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<TraceStats> CheckChromeTrace(std::string_view json) {
  Struct root;
  const auto parsed = google::protobuf::util::JsonStringToMessage(
      google::protobuf::StringPiece(json.data(), json.size()), &root);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("trace is not a well-formed JSON object: ", parsed.message().ToString()));
  }
  const auto events_it = root.fields().find("traceEvents");
  if (events_it == root.fields().end() || events_it->second.kind_case() != Value::kListValue) {
    return absl::InvalidArgumentError(
        "trace has no \"traceEvents\" array; write {\"traceEvents\":[...]}");
  }
  const auto& events = events_it->second.list_value().values();

  Collected c;
  for (int i = 0; i < events.size(); ++i) {
    CLUSTERSIM_RETURN_IF_ERROR(CheckEvent(i, events.Get(i), &c));
  }

  TraceStats stats;
  std::set<int64_t> pids;
  for (auto& [thread, slices] : c.slices) {
    CLUSTERSIM_RETURN_IF_ERROR(CheckNesting(thread, slices));
    const int64_t first = slices.front().index;
    if (!c.named_processes.contains(thread.first)) {
      return absl::InvalidArgumentError(
          absl::StrCat("traceEvents[", first, "] uses pid ", thread.first,
                       ", which has no process_name metadata (\"ph\":\"M\")"));
    }
    if (!c.named_threads.contains(thread)) {
      return absl::InvalidArgumentError(
          absl::StrCat("traceEvents[", first, "] uses pid ", thread.first, " tid ", thread.second,
                       ", which has no thread_name metadata (\"ph\":\"M\")"));
    }
    stats.complete_events += static_cast<int64_t>(slices.size());
    pids.insert(thread.first);
  }
  stats.processes = static_cast<int64_t>(pids.size());
  stats.threads = static_cast<int64_t>(c.slices.size());

  for (const auto& [track, t] : c.counters) {
    if (!c.named_processes.contains(track.first)) {
      return absl::InvalidArgumentError(
          absl::StrCat("traceEvents[", t.first_index, "]: counter \"", track.second, "\" uses pid ",
                       track.first, ", which has no process_name metadata (\"ph\":\"M\")"));
    }
    stats.counter_events += t.samples;
    ++stats.counter_tracks;
  }
  for (const auto& [id, f] : c.flows) {
    if (f.starts != 1 || f.finishes != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "traceEvents[", f.first_index, "]: flow id ", id, " has ", f.starts, " \"s\" and ",
          f.finishes, " \"f\" events; each flow needs exactly one of each"));
    }
    if (f.finish_ts < f.start_ts) {
      return absl::InvalidArgumentError(
          absl::StrCat("traceEvents[", f.first_index, "]: flow id ", id, " ends before it starts"));
    }
    ++stats.flows;
  }
  return stats;
}

absl::StatusOr<TraceStats> CheckChromeTraceFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read trace file ", path));
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<TraceStats> stats = CheckChromeTrace(text.str());
  if (!stats.ok()) {
    return absl::Status(stats.status().code(), absl::StrCat(path, ": ", stats.status().message()));
  }
  return stats;
}

}  // namespace clustersim::traces
