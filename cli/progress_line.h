// File: cli/progress_line.h
//
// A progress line on stderr for a long call of the CLI: a thread polls a
// sim::RunControl every half second and, once the call has run for more than
// a second, redraws "[####    ] 1234567/9658512 tasks"; it ends the line when
// the call returns. Nothing is drawn unless stderr is a terminal, so outputs
// and tests are unaffected.
//
// Example:
//   ProgressLine progress(io, "tasks");           // io.control now points at it
//   options.control = io.control;
//   RunScenario(...);                              // the destructor stops the thread
#ifndef CLUSTERSIM_CLI_PROGRESS_LINE_H_
#define CLUSTERSIM_CLI_PROGRESS_LINE_H_

#include <atomic>
#include <string>
#include <thread>

#include "cli/commands.h"
#include "sim/run_control.h"

namespace clustersim::cli {

class ProgressLine {
 public:
  // Draws for `io` when it has no control of its own (the Python module's)
  // and its stderr is a terminal; then sets io.control to this line's.
  ProgressLine(CommandIo& io, std::string unit);
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

 private:
  void Loop();

  CommandIo& io_;
  sim::RunControl* previous_;
  std::string unit_;
  sim::RunControl control_;
  std::atomic<bool> stop_{false};
  bool drew_ = false;
  std::thread thread_;
};

}  // namespace clustersim::cli

#endif  // CLUSTERSIM_CLI_PROGRESS_LINE_H_
