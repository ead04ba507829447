// Kills the clustersim binary (SIGKILL) while it writes a trace, a report or a
// sweep table, and checks what is left: for traces and reports the previous
// complete file or the complete new one (byte-identical to an uninterrupted
// run), never a partial one; for sweep tables (appended a point at a time)
// the uninterrupted run's first lines, at most a torn last line after them;
// and that a sweep restarted after kills neither redoes nor loses a point.
// Kill times are random; the seed is printed so a failure can be replayed with
// CLUSTERSIM_CRASH_SEED.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "tests/binary_fixture.h"
#include "tests/slurp.h"

namespace clustersim {
namespace {

namespace fs = std::filesystem;

// Lines that end in a newline (a torn last line does not count).
size_t WholeLines(const std::string& text) {
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

class CrashSafetyTest : public BinaryFixture {
 protected:
  CrashSafetyTest() : BinaryFixture("clustersim_crash_") {}

  void SetUp() override {
    BinaryFixture::SetUp();
    const char* seed = std::getenv("CLUSTERSIM_CRASH_SEED");
    seed_ = seed ? std::strtoul(seed, nullptr, 10) : std::random_device{}();
    rng_.seed(seed_);
    std::cout << "CLUSTERSIM_CRASH_SEED=" << seed_ << "\n";
  }

  // Starts `clustersim args...` with stdout and stderr discarded.
  pid_t Start(const std::vector<std::string>& args) {
    std::cout.flush();  // or the child would print the parent's buffer again
    std::fflush(stdout);
    const pid_t pid = ::fork();
    if (pid == 0) {
      std::vector<char*> argv = {const_cast<char*>(bin_.c_str())};
      for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      std::freopen("/dev/null", "w", stdout);
      std::freopen("/dev/null", "w", stderr);
      ::execv(bin_.c_str(), argv.data());
      std::_Exit(127);
    }
    return pid;
  }

  // Waits for `pid`; returns its exit code, or -signal.
  static int Wait(pid_t pid) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
  }

  // Runs to completion; returns the exit code.
  int RunToEnd(const std::vector<std::string>& args) { return Wait(Start(args)); }

  // Polls until `ready` holds or the process ends; true when it held.
  template <typename Pred>
  static bool PollUntil(pid_t pid, Pred ready) {
    for (int i = 0; i < 60000; ++i) {
      if (ready()) return true;
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) == pid) return false;  // reaped
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    return false;
  }

  // Sleeps a random time in [0, max_ms] milliseconds, then SIGKILLs and reaps
  // `pid`. Returns true when the kill landed (the process was still running).
  bool KillAfterRandomDelay(pid_t pid, int max_ms) {
    std::uniform_int_distribution<int> us(0, max_ms * 1000);
    std::this_thread::sleep_for(std::chrono::microseconds(us(rng_)));
    ::kill(pid, SIGKILL);
    return Wait(pid) == -SIGKILL;
  }

  unsigned seed_ = 0;
  std::mt19937 rng_;
};

// A trace of ~28 MB (GPT 22B, 8 GPUs, 4 micro-batches) and an HTML report.
std::vector<std::string> TraceRun(const std::string& src, const std::string& trace,
                                  const std::string& report) {
  return {"run", src + "/scenarios/examples/gpt-22b-a100.textproto", "--global-batch-size", "16",
          "--trace", trace, "--report", report};
}

TEST_F(CrashSafetyTest, KilledWhileWritingTraceLeavesThePreviousFile) {
  const std::string trace = (dir_ / "trace.json").string();
  const std::string report = (dir_ / "report.html").string();
  std::ofstream(trace) << "previous trace\n";
  std::ofstream(report) << "previous report\n";
  const pid_t pid = Start(TraceRun(src_, trace, report));
  const std::string temp = trace + ".tmp." + std::to_string(pid);
  // Kill once the new trace has bytes on disk, i.e. mid-write.
  ASSERT_TRUE(PollUntil(pid, [&] {
    std::error_code ec;
    return fs::file_size(temp, ec) > 0 && !ec;
  })) << "the run ended before its trace reached the disk";
  ::kill(pid, SIGKILL);
  ASSERT_EQ(Wait(pid), -SIGKILL);
  EXPECT_EQ(Slurp(trace), "previous trace\n");
  EXPECT_EQ(Slurp(report), "previous report\n");
}

TEST_F(CrashSafetyTest, KilledAtRandomTimesLeavesPreviousOrCompleteOutputs) {
  // The complete outputs, from an uninterrupted run.
  const std::string ref_trace = (dir_ / "ref.json").string();
  const std::string ref_report = (dir_ / "ref.html").string();
  ASSERT_EQ(RunToEnd(TraceRun(src_, ref_trace, ref_report)), 0);
  const std::string full_trace = Slurp(ref_trace);
  const std::string full_report = Slurp(ref_report);
  ASSERT_GT(full_trace.size(), 10u << 20);

  const auto started = std::chrono::steady_clock::now();
  ASSERT_EQ(RunToEnd(TraceRun(src_, ref_trace, ref_report)), 0);
  const int run_ms = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                          std::chrono::steady_clock::now() - started)
                                          .count());
  int killed = 0;
  for (int round = 0; round < 6; ++round) {
    for (const bool had_previous : {true, false}) {
      const std::string trace = (dir_ / "trace.json").string();
      const std::string report = (dir_ / "report.html").string();
      fs::remove(trace);
      fs::remove(report);
      if (had_previous) {
        std::ofstream(trace) << "previous trace\n";
        std::ofstream(report) << "previous report\n";
      }
      const pid_t pid = Start(TraceRun(src_, trace, report));
      killed += KillAfterRandomDelay(pid, run_ms + 50);
      for (const auto& [path, previous, full] :
           {std::tuple{trace, std::string("previous trace\n"), &full_trace},
            std::tuple{report, std::string("previous report\n"), &full_report}}) {
        if (!fs::exists(path)) {
          EXPECT_FALSE(had_previous) << path << " vanished";
          continue;
        }
        const std::string now = Slurp(path);
        EXPECT_TRUE((had_previous && now == previous) || now == *full)
            << path << ": " << now.size() << " bytes, neither the previous file nor the "
            << full->size() << "-byte complete one (seed " << seed_ << ")";
      }
    }
  }
  std::cout << "killed " << killed << " of 12 runs mid-flight\n";
}

TEST_F(CrashSafetyTest, SweepKilledAndResumedMatchesAnUninterruptedSweep) {
  const std::string grid = src_ + "/scenarios/examples/sweeps/gpt-22b-grid.textproto";
  const std::string ref = (dir_ / "ref").string();
  const auto started = std::chrono::steady_clock::now();
  ASSERT_EQ(RunToEnd({"sweep", grid, "--output", ref}), 0);
  // Kill delays are drawn within about two points' time, so that a kill lands
  // mid-sweep on a fast machine too (a whole sweep takes ~100 ms on some).
  const int sweep_ms = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                            std::chrono::steady_clock::now() - started)
                                            .count());
  const int max_delay_ms = std::max(1, sweep_ms / 8);
  const std::string ref_jsonl = Slurp(ref + ".jsonl");
  const std::string ref_csv = Slurp(ref + ".csv");
  ASSERT_EQ(WholeLines(ref_jsonl), 16u);

  const std::string prefix = (dir_ / "grid").string();
  size_t before = 0;
  int kills = 0;
  for (int attempt = 0; attempt < 4 && before < 16; ++attempt) {
    const pid_t pid = Start({"sweep", grid, "--output", prefix});
    // Kill at a random point after the first new line lands.
    const bool progressed = PollUntil(pid, [&] { return WholeLines(Slurp(prefix + ".jsonl")) > before; });
    if (progressed) kills += KillAfterRandomDelay(pid, max_delay_ms);
    else Wait(pid);
    std::string jsonl = Slurp(prefix + ".jsonl");
    const std::string csv = Slurp(prefix + ".csv");
    // Every byte is a prefix of the uninterrupted run's file: whole lines in
    // order, then at most a torn line (a kill mid-append); nothing finished
    // before is lost.
    ASSERT_EQ(ref_jsonl.compare(0, jsonl.size(), jsonl), 0) << "not a prefix: " << jsonl;
    ASSERT_EQ(ref_csv.compare(0, csv.size(), csv), 0) << "not a prefix: " << csv;
    const size_t now = WholeLines(jsonl);
    ASSERT_GE(now, before) << "finished points were lost";
    // The CSV row is appended first, so it may be one point ahead of the JSONL.
    const size_t rows = WholeLines(csv) == 0 ? 0 : WholeLines(csv) - 1;
    EXPECT_TRUE(rows == now || rows == now + 1) << rows << " rows beside " << now << " lines";
    // A kill inside write(2) of a ~1 KB line is rare; make one torn line
    // happen: half of the next line, as a kill mid-append leaves it.
    if (attempt == 0 && now < 16 && (jsonl.empty() || jsonl.back() == '\n')) {
      const size_t end = ref_jsonl.find('\n', jsonl.size());
      std::ofstream(prefix + ".jsonl", std::ios::app)
          << ref_jsonl.substr(jsonl.size(), (end - jsonl.size()) / 2);
    }
    before = now;
  }
  ASSERT_GT(kills, 0) << "no run was killed mid-sweep";
  // The restart skips exactly the points already on disk and runs the rest.
  const std::string out = (dir_ / "resume.out").string();
  const std::string cmd = bin_ + " sweep " + grid + " --output " + prefix + " >" + out;
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  EXPECT_NE(Slurp(out).find("16 points in shard 0/1: " + std::to_string(before) +
                            " already done, " + std::to_string(16 - before) + " run"),
            std::string::npos)
      << Slurp(out);
  EXPECT_EQ(Slurp(prefix + ".jsonl"), ref_jsonl);
  EXPECT_EQ(Slurp(prefix + ".csv"), ref_csv);
  std::cout << kills << " kills; " << before << " of 16 points were done before the restart\n";
}

}  // namespace
}  // namespace clustersim
