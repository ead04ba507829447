#include "scenarios/studies/sweep.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "scenarios/goodput/goodput.h"
#include "scenarios/input/loader.h"
#include "scenarios/input/resolve.h"
#include "scenarios/input/scenario_edit.h"
#include "scenarios/proto/sweep.pb.h"
#include "scenarios/run/runner.h"
#include "scenarios/studies/study_table.h"
#include "sim/check.h"
#include "sim/status_macros.h"

namespace clustersim::scenarios {
namespace {

// One of the sweep's output files, read back on resume: its whole lines, with a
// torn last line (no newline: the writer was killed mid-append) cut off the
// file itself. A missing file has no lines.
absl::StatusOr<std::vector<std::string>> ReadLinesCuttingTornTail(const std::string& path) {
  if (!std::filesystem::exists(path)) return std::vector<std::string>{};
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  const size_t last = text->rfind('\n');
  const size_t whole = last == std::string::npos ? 0 : last + 1;
  if (whole != text->size()) {
    std::error_code ec;
    std::filesystem::resize_file(path, whole, ec);
    if (ec) {
      return absl::InternalError(absl::StrCat("cannot cut the torn last line off ", path, ": ",
                                              ec.message(), "; check the file's permissions"));
    }
  }
  std::vector<std::string> lines = absl::StrSplit(text->substr(0, whole), '\n', absl::SkipEmpty());
  return lines;
}

// A PREFIX.jsonl line for a point that failed (it has no CSV row).
bool IsErrorLine(const std::string& line) {
  return line.find("\"error\": ") != std::string::npos;
}

// Makes PREFIX.jsonl and PREFIX.csv agree after a kill. Each point appends its
// CSV row first and its JSON line second, so a kill between the two leaves the
// CSV one row ahead: that row is dropped (its point runs again). A JSONL line
// whose CSV row is missing (the CSV's last append lost) is dropped likewise,
// with every line after it. The files lose whole trailing lines only; a
// mismatch larger than one point means they were edited or mixed up: an error.
// On return `lines` and `csv_lines` (header first) are what the files hold.
absl::Status Reconcile(const std::string& jsonl_path, const std::string& csv_path,
                       std::vector<std::string>* lines, std::vector<std::string>* csv_lines) {
  const size_t rows = csv_lines->empty() ? 0 : csv_lines->size() - 1;
  size_t keep = 0, kept_rows = 0;  // the longest prefix of `lines` the CSV backs
  for (; keep < lines->size(); ++keep) {
    if (IsErrorLine((*lines)[keep])) continue;
    if (kept_rows == rows) break;
    ++kept_rows;
  }
  const size_t successful = static_cast<size_t>(std::count_if(
      lines->begin(), lines->end(), [](const std::string& l) { return !IsErrorLine(l); }));
  if (rows > successful + 1 || successful > rows + 1) {
    return absl::FailedPreconditionError(absl::StrCat(
        csv_path, " has ", rows, " rows but its .jsonl has ", successful,
        " successful points; the files were edited or mixed up. Delete both files to start "
        "the sweep over, or restore them together"));
  }
  const auto cut = [](const std::string& path, const std::vector<std::string>& keep_lines,
                      size_t n) -> absl::Status {
    size_t bytes = 0;
    for (size_t i = 0; i < n; ++i) bytes += keep_lines[i].size() + 1;
    std::error_code ec;
    std::filesystem::resize_file(path, bytes, ec);
    if (!ec) return absl::OkStatus();
    return absl::InternalError(absl::StrCat("cannot drop the unmatched last line of ", path, ": ",
                                            ec.message(), "; check the file's permissions"));
  };
  if (keep < lines->size()) {
    CLUSTERSIM_RETURN_IF_ERROR(cut(jsonl_path, *lines, keep));
    lines->resize(keep);
  }
  if (rows > kept_rows) {
    CLUSTERSIM_RETURN_IF_ERROR(cut(csv_path, *csv_lines, kept_rows + 1));
    csv_lines->resize(kept_rows + 1);
  }
  return absl::OkStatus();
}

// An output file that grows by whole lines: each Append is written and
// fsync'ed before it returns, so a finished point survives a kill, and a kill
// mid-append leaves at most a torn last line (cut off on resume).
class DurableAppender {
 public:
  ~DurableAppender() {
    if (fd_ >= 0) ::close(fd_);
  }
  absl::Status Open(const std::string& path) {
    path_ = path;
    const bool existed = std::filesystem::exists(path);
    fd_ = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) return Error();
    if (!existed) {  // the new directory entry itself must survive a crash
      const std::string dir = std::filesystem::path(path).parent_path().string();
      const int dir_fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY);
      if (dir_fd >= 0) {
        ::fsync(dir_fd);
        ::close(dir_fd);
      }
    }
    return absl::OkStatus();
  }
  absl::Status Append(std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = ::write(fd_, bytes.data(), bytes.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return Error();
      bytes.remove_prefix(static_cast<size_t>(n));
    }
    return ::fsync(fd_) == 0 ? absl::OkStatus() : Error();
  }

 private:
  absl::Status Error() const {
    return absl::InvalidArgumentError(absl::StrCat(path_, ": ", std::strerror(errno)));
  }
  std::string path_;
  int fd_ = -1;
};

std::string JsonEscape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c == '\n' ? ' ' : c;
  }
  return out;
}

// A point's days to train and total dollars: the goodput Monte Carlo's median
// and total (failures, checkpoints and restarts included) where the point ran
// it, else the failure-free estimate.
std::pair<std::optional<double>, std::optional<double>> TrainAxes(const std::string& line) {
  if (std::optional<double> days = StudyJsonNumber(line, "goodput_p50_days")) {
    return {days, StudyJsonNumber(line, "goodput_total_usd")};
  }
  return {StudyJsonNumber(line, "time_to_train_days"), StudyJsonNumber(line, "total_usd")};
}

std::vector<ParetoPoint> ParetoFront(const std::vector<std::string>& lines, bool* train_axes,
                                     bool* goodput_axes) {
  *train_axes = std::any_of(lines.begin(), lines.end(), [](const std::string& l) {
    return StudyJsonNumber(l, "total_usd").has_value();
  });
  *goodput_axes = std::any_of(lines.begin(), lines.end(), [](const std::string& l) {
    return StudyJsonNumber(l, "goodput_p50_days").has_value();
  });
  std::vector<ParetoPoint> all;
  for (const std::string& l : lines) {
    const auto [t, c] = *train_axes ? TrainAxes(l)
                                    : std::pair{StudyJsonNumber(l, "step_time_s"),
                                                StudyJsonNumber(l, "usd_per_million_tokens")};
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
  return ParseSweep(*text, path, std::filesystem::path(path).parent_path().string());
}

absl::StatusOr<std::vector<SweepPoint>> ParseSweep(std::string_view text, const std::string& path,
                                                   const std::string& base_dir) {
  config::SweepFile file;
  CLUSTERSIM_RETURN_IF_ERROR(ParseTextMessage(text, path, &file));
  double grid = 1;
  for (const config::SweepAxis& axis : file.axis()) grid *= std::max(1, axis.values_size());
  if (grid > kMaxSweepPoints) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": the axes make ", grid, " points, over the limit of ", kMaxSweepPoints,
        "; split the sweep into several files or drop values"));
  }
  config::Scenario base;
  if (!file.base_scenario().empty()) {
    const std::filesystem::path scenario_path =
        std::filesystem::path(base_dir) / file.base_scenario();
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
  const bool goodput = SweepHasGoodput(points);
  for (size_t i = 0; i < points.size(); ++i) {
    points[i].index = i;
    if (points[i].key.empty()) points[i].key = "base";
    points[i].goodput_columns = goodput;
  }
  return points;
}

bool SweepHasGoodput(const std::vector<SweepPoint>& points) {
  return std::any_of(points.begin(), points.end(),
                     [](const SweepPoint& p) { return GoodputRequested(p.scenario); });
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
  return {StudyJsonObject(row), StudyCsvRow(row, p.goodput_columns), false};
}

SweepExecutor InProcessExecutor(sim::RunControl* control) {
  return [control](const std::vector<const SweepPoint*>& todo, const SweepEmit& emit) {
    for (size_t i = 0; i < todo.size(); ++i) {
      if (control != nullptr) {
        if (control->Cancelled()) return absl::CancelledError("sweep cancelled");
        control->Report(i, todo.size());
      }
      CLUSTERSIM_RETURN_IF_ERROR(emit(i, SimulateSweepPoint(*todo[i])));
    }
    if (control != nullptr) control->Report(todo.size(), todo.size());
    return absl::OkStatus();
  };
}

absl::Status SimulateInProcess(const std::vector<const SweepPoint*>& todo, const SweepEmit& emit) {
  return InProcessExecutor(nullptr)(todo, emit);
}

absl::StatusOr<SweepSummary> RunSweep(const std::vector<SweepPoint>& points,
                                      const SweepOptions& options, const SweepExecutor& executor) {
  if (options.output_prefix.empty()) {
    return absl::InvalidArgumentError("--output PREFIX is required (writes PREFIX.csv, PREFIX.jsonl)");
  }
  const std::string jsonl_path = options.output_prefix + ".jsonl";
  const std::string csv_path = options.output_prefix + ".csv";
  absl::StatusOr<std::vector<std::string>> lines = ReadLinesCuttingTornTail(jsonl_path);
  if (!lines.ok()) return lines.status();
  absl::StatusOr<std::vector<std::string>> csv_lines = ReadLinesCuttingTornTail(csv_path);
  if (!csv_lines.ok()) return csv_lines.status();
  CLUSTERSIM_RETURN_IF_ERROR(Reconcile(jsonl_path, csv_path, &*lines, &*csv_lines));
  std::set<std::string> done;
  for (const std::string& l : *lines) done.insert(StudyJsonLabel(l));
  // Each finished point is appended and fsync'ed (CSV row, then JSON line):
  // O(1) I/O per point, and a kill loses at most the point being written.
  DurableAppender csv, jsonl;
  const auto output_error = [&](const absl::Status& s) {
    return absl::InvalidArgumentError(absl::StrCat("--output ", options.output_prefix,
                                                   ": cannot write ", s.message(),
                                                   "; choose a writable folder"));
  };
  for (const auto& [file, path] : {std::pair{&csv, &csv_path}, std::pair{&jsonl, &jsonl_path}}) {
    if (absl::Status s = file->Open(*path); !s.ok()) return output_error(s);
  }
  if (csv_lines->empty()) {
    const bool goodput = std::any_of(points.begin(), points.end(),
                                     [](const SweepPoint& p) { return p.goodput_columns; });
    if (absl::Status s = csv.Append(StudyCsvHeader(goodput)); !s.ok()) return output_error(s);
  }
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
  // point order (one line is appended to each file at a time).
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
      if (absl::Status s = csv.Append(it->second.csv); !s.ok()) return output_error(s);
      if (absl::Status s = jsonl.Append(absl::StrCat(it->second.json, "\n")); !s.ok()) {
        return output_error(s);
      }
      lines->push_back(std::move(it->second.json));
    }
    return absl::OkStatus();
  };
  CLUSTERSIM_RETURN_IF_ERROR(executor(todo, emit));
  SIM_CHECK(next == todo.size()) << "the sweep executor finished " << next << " of " << todo.size()
                                 << " points";
  summary.pareto = ParetoFront(*lines, &summary.train_axes, &summary.goodput_axes);
  summary.lines = *std::move(lines);
  return summary;
}

}  // namespace clustersim::scenarios
