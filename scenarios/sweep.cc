#include "scenarios/sweep.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "scenarios/loader.h"
#include "scenarios/resolve.h"
#include "scenarios/runner.h"
#include "scenarios/scenario_edit.h"
#include "scenarios/study_table.h"
#include "scenarios/sweep.pb.h"
#include "sim/check.h"
#include "traces/atomic_file.h"

namespace clustersim::scenarios {
namespace {

// Lines of `path`, with a torn last line (no newline: a writer from before
// files were replaced whole, or one killed mid-write) cut off the file. A
// missing file has no lines. The repair itself replaces the file atomically.
absl::StatusOr<std::vector<std::string>> ReadLinesRepairing(const std::string& path) {
  if (!std::filesystem::exists(path)) return std::vector<std::string>{};
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  const size_t last = text->rfind('\n');
  const std::string whole = last == std::string::npos ? "" : text->substr(0, last + 1);
  if (whole.size() != text->size()) {
    if (absl::Status s = traces::WriteFileAtomically(path, whole); !s.ok()) {
      return absl::InternalError(absl::StrCat("cannot repair ", path, ": ", s.message()));
    }
  }
  std::vector<std::string> lines = absl::StrSplit(whole, '\n', absl::SkipEmpty());
  return lines;
}

// A PREFIX.jsonl line for a point that failed (it has no CSV row).
bool IsErrorLine(const std::string& line) {
  return line.find("\"error\": ") != std::string::npos;
}

// PREFIX.csv as it must be beside `lines`: the header and one row per
// successful line, in order. The CSV is replaced before the JSONL for each
// point, so after a kill it may hold one row more than PREFIX.jsonl; that row
// is dropped (its point runs again). Fewer rows mean the files were edited.
absl::StatusOr<std::string> ReconcileCsv(const std::string& csv_path,
                                         const std::vector<std::string>& csv_lines,
                                         const std::vector<std::string>& lines) {
  const size_t rows =
      static_cast<size_t>(std::count_if(lines.begin(), lines.end(),
                                        [](const std::string& l) { return !IsErrorLine(l); }));
  if (csv_lines.empty()) {
    if (rows == 0) return StudyCsvHeader();
  } else if (csv_lines.size() >= rows + 1) {
    std::string csv;
    for (size_t i = 0; i < rows + 1; ++i) absl::StrAppend(&csv, csv_lines[i], "\n");
    return csv;
  }
  return absl::FailedPreconditionError(absl::StrCat(
      csv_path, " has ", csv_lines.empty() ? 0 : csv_lines.size() - 1, " rows but its .jsonl has ",
      rows, " successful points; the files were edited or mixed up. Delete both files to start "
      "the sweep over, or restore them together"));
}
std::string JsonEscape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c == '\n' ? ' ' : c;
  }
  return out;
}

std::vector<ParetoPoint> ParetoFront(const std::vector<std::string>& lines, bool* train_axes) {
  *train_axes = std::any_of(lines.begin(), lines.end(), [](const std::string& l) {
    return StudyJsonNumber(l, "total_usd").has_value();
  });
  std::vector<ParetoPoint> all;
  for (const std::string& l : lines) {
    const std::optional<double> t = StudyJsonNumber(l, *train_axes ? "time_to_train_days" : "step_time_s");
    const std::optional<double> c =
        StudyJsonNumber(l, *train_axes ? "total_usd" : "usd_per_million_tokens");
    if (l.find("\"fits_in_memory\": true") == std::string::npos || !t || !c) continue;
    all.push_back({StudyJsonLabel(l), *t, *c});
  }
  std::sort(all.begin(), all.end(), [](const ParetoPoint& a, const ParetoPoint& b) {
    return a.time != b.time ? a.time < b.time : a.cost != b.cost ? a.cost < b.cost : a.label < b.label;
  });
  std::vector<ParetoPoint> front;
  for (const ParetoPoint& p : all) {
    if (front.empty() || p.cost < front.back().cost) front.push_back(p);
  }
  return front;
}

}  // namespace

absl::Status ParseShard(const std::string& text, SweepOptions* options) {
  const std::vector<std::string> parts = absl::StrSplit(text, '/');
  int i = 0, n = 0;
  if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &i) || !absl::SimpleAtoi(parts[1], &n) ||
      n < 1 || i < 0 || i >= n) {
    return absl::InvalidArgumentError(
        absl::StrCat("--shard=", text, " is not i/N with 0 <= i < N; e.g. --shard 0/4"));
  }
  options->shard = i;
  options->num_shards = n;
  return absl::OkStatus();
}

absl::StatusOr<std::vector<SweepPoint>> LoadSweep(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  config::SweepFile file;
  if (absl::Status s = ParseTextMessage(*text, path, &file); !s.ok()) return s;
  config::Scenario base;
  if (!file.base_scenario().empty()) {
    const std::filesystem::path scenario_path =
        std::filesystem::path(path).parent_path() / file.base_scenario();
    absl::StatusOr<config::Scenario> loaded = LoadScenarioFile(scenario_path.string());
    if (!loaded.ok()) return loaded.status();
    base = *std::move(loaded);
  }
  base.MergeFrom(file.base());
  std::vector<SweepPoint> points = {{0, "", base}};
  for (int a = 0; a < file.axis_size(); ++a) {
    const config::SweepAxis& axis = file.axis(a);
    if (axis.values().empty()) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": axis[", a, "] (", axis.field(),
                                                     ") has no values; add values: \"...\""));
    }
    std::vector<SweepPoint> next;
    for (const SweepPoint& p : points) {
      for (const std::string& v : axis.values()) {
        SweepPoint q = p;
        const std::string assignment = absl::StrCat(axis.field(), "=", v);
        if (absl::Status s = SetScenarioField(assignment, &q.scenario); !s.ok()) {
          return absl::InvalidArgumentError(
              absl::StrCat(path, ": axis[", a, "]: ", s.message()));
        }
        q.key = q.key.empty() ? assignment : absl::StrCat(q.key, ",", assignment);
        next.push_back(std::move(q));
      }
    }
    points = std::move(next);
  }
  for (size_t i = 0; i < points.size(); ++i) {
    points[i].index = i;
    if (points[i].key.empty()) points[i].key = "base";
  }
  return points;
}

SweepLine SimulateSweepPoint(const SweepPoint& p) {
  absl::StatusOr<ResolvedScenario> resolved = Resolve(p.scenario);
  absl::StatusOr<config::Result> result =
      resolved.ok() ? RunScenario(*resolved, RunOptions{}) : resolved.status();
  if (!result.ok()) {
    return {absl::StrCat("{\"label\": \"", JsonEscape(p.key), "\", \"error\": \"",
                         JsonEscape(std::string(result.status().message())), "\"}"),
            "", true};
  }
  const StudyRow row{p.key, *result};
  return {StudyJsonObject(row), StudyCsvRow(row), false};
}

absl::Status SimulateInProcess(const std::vector<const SweepPoint*>& todo, const SweepEmit& emit) {
  for (size_t i = 0; i < todo.size(); ++i) {
    if (absl::Status s = emit(i, SimulateSweepPoint(*todo[i])); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<SweepSummary> RunSweep(const std::vector<SweepPoint>& points,
                                      const SweepOptions& options, const SweepExecutor& executor) {
  if (options.output_prefix.empty()) {
    return absl::InvalidArgumentError("--output PREFIX is required (writes PREFIX.csv, PREFIX.jsonl)");
  }
  const std::string jsonl_path = options.output_prefix + ".jsonl";
  const std::string csv_path = options.output_prefix + ".csv";
  absl::StatusOr<std::vector<std::string>> lines = ReadLinesRepairing(jsonl_path);
  if (!lines.ok()) return lines.status();
  absl::StatusOr<std::vector<std::string>> csv_lines = ReadLinesRepairing(csv_path);
  if (!csv_lines.ok()) return csv_lines.status();
  std::set<std::string> done;
  for (const std::string& l : *lines) done.insert(StudyJsonLabel(l));
  absl::StatusOr<std::string> csv = ReconcileCsv(csv_path, *csv_lines, *lines);
  if (!csv.ok()) return csv.status();
  std::string jsonl;
  for (const std::string& l : *lines) absl::StrAppend(&jsonl, l, "\n");
  // Both files are replaced whole (traces/atomic_file.h) after every point:
  // a kill leaves the previous complete file, never a torn one.
  const auto commit = [&]() -> absl::Status {
    for (const auto& [path, text] : {std::pair{&csv_path, &*csv}, std::pair{&jsonl_path, &jsonl}}) {
      if (absl::Status s = traces::WriteFileAtomically(*path, *text); !s.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("--output ", options.output_prefix,
                                                       ": cannot write ", *path, " (", s.message(),
                                                       "); choose a writable folder"));
      }
    }
    return absl::OkStatus();
  };
  if (absl::Status s = commit(); !s.ok()) return s;
  SweepSummary summary;
  std::vector<const SweepPoint*> todo;
  for (const SweepPoint& p : points) {
    if (static_cast<int>(p.index % options.num_shards) != options.shard) continue;
    ++summary.points;
    if (done.count(p.key)) {
      ++summary.skipped;
    } else {
      todo.push_back(&p);
    }
  }
  // Lines finished ahead of an earlier point wait here, so the files keep
  // point order (one line is added, and both files replaced, at a time).
  std::map<size_t, SweepLine> waiting;
  size_t next = 0;
  const SweepEmit emit = [&](size_t position, SweepLine line) -> absl::Status {
    SIM_CHECK(position >= next && position < todo.size() && !waiting.count(position))
        << "sweep point " << position << " emitted twice or out of range";
    waiting.emplace(position, std::move(line));
    for (auto it = waiting.begin(); it != waiting.end() && it->first == next;
         it = waiting.erase(it), ++next) {
      ++summary.ran;
      if (it->second.failed) ++summary.failed;
      csv->append(it->second.csv);
      absl::StrAppend(&jsonl, it->second.json, "\n");
      lines->push_back(std::move(it->second.json));
      if (absl::Status s = commit(); !s.ok()) return s;
    }
    return absl::OkStatus();
  };
  if (absl::Status s = executor(todo, emit); !s.ok()) return s;
  SIM_CHECK(next == todo.size()) << "the sweep executor finished " << next << " of " << todo.size()
                                 << " points";
  summary.pareto = ParetoFront(*lines, &summary.train_axes);
  summary.lines = *std::move(lines);
  return summary;
}

}  // namespace clustersim::scenarios
