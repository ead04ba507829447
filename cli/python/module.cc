// The extension module `clustersim._clustersim` (pybind11): the commands of
// cli/commands.h, called in process with the same arguments, output and
// errors as the `clustersim` binary, plus the catalogs as Python lists. The
// pure-Python layer (clustersim/__init__.py) turns keyword arguments into
// the commands' flags and their JSON output into dicts.
//
// Each command runs on a worker thread (one per calling thread, reused) while
// the calling thread, without the GIL, waits for it in slices of
// kPollInterval: between slices it checks for signals (Ctrl-C sets the run's
// cancel flag, waits for the command to return and raises KeyboardInterrupt)
// and calls the progress callback with the sim::RunControl counts. Python
// code therefore runs only on the calling thread, and no command outlives
// its call.
//
// Errors: a command's error status raises clustersim.Error (a ValueError)
// with the status message, the text after "clustersim: error: " on the
// command line, and `exit_code` 2 (bad input) or 1 (internal).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli/commands.h"
#include "models/gpu_catalog.h"
#include "models/pricing.h"
#include "models/transformer_config.h"
#include "scenarios/input/resolve.h"
#include "scenarios/run/runner.h"
#include "topology/cluster.h"

namespace clustersim::cli {
namespace {

namespace py = pybind11;

constexpr std::chrono::milliseconds kPollInterval(50);

using CommandFn = absl::Status (*)(const Args&, CommandIo&);

struct NamedCommand {
  const char* name;
  CommandFn fn;
};

constexpr NamedCommand kCommands[] = {
    {"run", RunCommand},           {"serve", ServeCommand}, {"search", SearchCommand},
    {"compare", CompareCommand},   {"sweep", SweepCommand}, {"collective", CollectiveCommand},
    {"validate", ValidateCommand}, {"list", ListCommand},
};

// clustersim.Error, created in PYBIND11_MODULE.
PyObject* error_type = nullptr;

// The field an error names first, as its message starts with it: a scenario
// path ("cluster.num_gpus=0 must be ...", "training.precision: ...") or a
// flag ("--format=..."); None when the message starts otherwise.
py::object LeadingField(std::string_view message) {
  size_t n = 0;
  while (n < message.size() && (std::isalnum(static_cast<unsigned char>(message[n])) ||
                                message[n] == '_' || message[n] == '.' || message[n] == '-')) {
    ++n;
  }
  const std::string_view lead = message.substr(0, n);
  const bool path = lead.find('.') != std::string_view::npos && lead.front() != '.' &&
                    lead.back() != '.' && !std::isdigit(static_cast<unsigned char>(lead.front()));
  const bool flag = lead.size() > 2 && lead.substr(0, 2) == "--";
  if (!path && !flag) return py::none();
  return py::str(std::string(lead));
}

[[noreturn]] void RaiseError(const absl::Status& s) {
  py::object error = py::reinterpret_borrow<py::object>(error_type)(std::string(s.message()));
  error.attr("field") = LeadingField(std::string(s.message()));
  error.attr("exit_code") = ExitCode(s);
  error.attr("code") = absl::StatusCodeToString(s.code());
  PyErr_SetObject(error_type, error.ptr());
  throw py::error_already_set();
}

// A thread that runs one calling Python thread's commands, one at a time,
// kept for the calling thread's life (ThisThreadsWorker): a fresh thread per
// call would start with cold allocator caches, which costs more than the
// binding's own work on a small run.
class Worker {
 public:
  Worker() : pid_(getpid()), thread_([this] { Loop(); }) {}
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;
  ~Worker() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

  pid_t pid() const { return pid_; }

  // Hands `task` to the thread. REQUIRES: the previous task has returned.
  void Start(std::function<void()> task) {
    std::lock_guard<std::mutex> lock(mu_);
    task_ = std::move(task);
    done_ = false;
    cv_.notify_all();
  }

  // Waits up to `timeout` for the task; true once it has returned.
  bool WaitFor(std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, timeout, [this] { return done_; });
  }

 private:
  void Loop() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      cv_.wait(lock, [this] { return stop_ || task_ != nullptr; });
      if (task_ == nullptr) return;
      std::function<void()> task = std::move(task_);
      task_ = nullptr;
      lock.unlock();
      task();
      lock.lock();
      done_ = true;
      cv_.notify_all();
    }
  }

  const pid_t pid_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::function<void()> task_;
  bool done_ = true;
  bool stop_ = false;
  std::thread thread_;  // last: it starts after the fields it reads
};

// The calling thread's worker, started on first use and joined when the
// calling thread ends. After a fork the child has no such thread: the old
// object is dropped unfreed and a new worker started.
Worker& ThisThreadsWorker() {
  thread_local std::unique_ptr<Worker> worker;
  if (worker != nullptr && worker->pid() != getpid()) (void)worker.release();
  if (worker == nullptr) worker = std::make_unique<Worker>();
  return *worker;
}

// The command's stdout, stderr and exit code (0, or 1 for a bound exceeded).
py::tuple Command(const std::string& name, const Args& args,
                  std::optional<std::string> scenario_json, py::object progress) {
  CommandFn fn = nullptr;
  for (const NamedCommand& c : kCommands) {
    if (name == c.name) fn = c.fn;
  }
  if (fn == nullptr) throw py::value_error("unknown command " + name);

  std::ostringstream out, err;
  sim::RunControl control;
  CommandIo io{.out = &out, .err = &err, .terminal = false, .control = &control};
  if (scenario_json) io.scenario_json = &*scenario_json;
  absl::Status status;
  Worker& worker = ThisThreadsWorker();
  worker.Start([&] { status = fn(args, io); });
  // Stops the command and waits for it (on a signal, or an exception raised
  // by the progress callback); the pending Python error propagates after.
  const auto cancel_and_wait = [&] {
    control.cancel = true;
    py::gil_scoped_release release;
    while (!worker.WaitFor(kPollInterval)) {
    }
  };
  size_t reported = static_cast<size_t>(-1);
  for (;;) {
    {
      py::gil_scoped_release release;
      if (worker.WaitFor(kPollInterval)) break;
    }
    if (PyErr_CheckSignals() != 0) {
      cancel_and_wait();
      throw py::error_already_set();
    }
    const size_t done = control.done.load(std::memory_order_relaxed);
    if (!progress.is_none() && done != reported) {
      reported = done;
      try {
        progress(done, control.total.load(std::memory_order_relaxed));
      } catch (...) {
        cancel_and_wait();
        throw;
      }
    }
  }
  if (!status.ok()) RaiseError(status);
  if (!progress.is_none()) {
    const size_t total = control.total.load(std::memory_order_relaxed);
    if (total != 0 && reported != total) progress(total, total);
  }
  return py::make_tuple(py::bytes(out.str()), py::bytes(err.str()), io.exit_code);
}

py::list Prices() {
  py::list rows;
  for (const models::PriceEntry& e : models::PriceCatalog::Default().entries()) {
    py::dict row;
    row["name"] = e.name;
    row["gpu"] = e.gpu;
    row["provider"] = e.provider;
    row["kind"] = e.kind;
    row["owned"] = e.owned;
    row["usd_per_gpu_hour"] = e.owned ? py::object(py::none()) : py::float_(e.usd_per_gpu_hour);
    if (e.owned) {
      const models::OwnedCosts& c = e.owned_costs;
      row["purchase_usd_per_gpu"] = c.purchase_usd_per_gpu;
      row["amortisation_years"] = c.amortisation_years;
      row["utilisation"] = c.utilisation;
      row["pue"] = c.pue;
      row["usd_per_kwh"] = c.usd_per_kwh;
      row["hosting_usd_per_node_month"] = c.hosting_usd_per_node_month;
      row["assumptions"] = e.assumptions;
    }
    row["date"] = e.date;
    row["source"] = e.source;
    rows.append(row);
  }
  return rows;
}

// Seconds per call of what the binding's `run` does in C++ for a scenario
// given as JSON (parse, resolve, simulate, print the JSON), timed inside over
// `calls` calls: the baseline of cli/python/benchmarks/overhead.py.
double TimeRunInside(const std::string& scenario_json, int calls) {
  py::gil_scoped_release release;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) {
    std::ostringstream out, err;
    CommandIo io{.out = &out, .err = &err, .terminal = false, .scenario_json = &scenario_json};
    if (!RunCommand({"--format=json"}, io).ok()) return -1;
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / calls;
}

}  // namespace
}  // namespace clustersim::cli

PYBIND11_MODULE(_clustersim, m) {
  m.doc() = "clustersim's commands in process (see the clustersim package)";
  clustersim::cli::error_type = PyErr_NewExceptionWithDoc(
      "clustersim.Error",
      "Bad input (exit_code 2) or an internal error (exit_code 1): the message the "
      "clustersim command prints after 'clustersim: error: '.",
      PyExc_ValueError, nullptr);
  m.add_object("Error", pybind11::handle(clustersim::cli::error_type));
  m.def("command", &clustersim::cli::Command, pybind11::arg("name"), pybind11::arg("args"),
        pybind11::arg("scenario_json"), pybind11::arg("progress"),
        "Runs a clustersim command in process: (stdout bytes, stderr bytes, exit code).");
  m.def("gpus", [] { return clustersim::models::GpuCatalog::Default().Names(); });
  m.def("models", [] { return clustersim::models::ModelCatalog::Default().Names(); });
  m.def("clusters", [] { return clustersim::topology::NodePresetNames(); });
  m.def("prices", &clustersim::cli::Prices);
  m.def("time_run_inside", &clustersim::cli::TimeRunInside, pybind11::arg("scenario_json"),
        pybind11::arg("calls"));
}
