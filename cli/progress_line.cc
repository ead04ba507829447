#include "cli/progress_line.h"

#include <unistd.h>

#include <chrono>
#include <iostream>

#include "absl/strings/str_format.h"

namespace clustersim::cli {

ProgressLine::ProgressLine(CommandIo& io, std::string unit)
    : io_(io), previous_(io.control), unit_(std::move(unit)) {
  if (io.control != nullptr || !io.terminal || !isatty(STDERR_FILENO)) return;
  io_.control = &control_;
  thread_ = std::thread([this] { Loop(); });
}

ProgressLine::~ProgressLine() {
  if (!thread_.joinable()) return;
  stop_ = true;
  thread_.join();
  if (drew_) std::cerr << "\n";
  io_.control = previous_;
}

void ProgressLine::Loop() {
  const auto start = std::chrono::steady_clock::now();
  while (!stop_) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    if (stop_ || std::chrono::steady_clock::now() - start < std::chrono::seconds(1)) continue;
    const size_t total = control_.total.load(std::memory_order_relaxed);
    const size_t done = control_.done.load(std::memory_order_relaxed);
    if (total == 0) continue;
    constexpr int kWidth = 30;
    const int filled = static_cast<int>(kWidth * std::min(done, total) / total);
    std::cerr << absl::StrFormat("\r[%s%s] %d/%d %s", std::string(filled, '#'),
                                 std::string(kWidth - filled, ' '), done, total, unit_)
              << std::flush;
    drew_ = true;
  }
}

}  // namespace clustersim::cli
