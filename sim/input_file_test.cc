#include "sim/input_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace clustersim::sim {
namespace {

class InputFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("input_file_test_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(InputFileTest, ReadsARegularFileWhole) {
  const std::string path = (dir_ / "a.textproto").string();
  std::string bytes = "name: \"x\"\n";
  bytes.push_back('\0');  // binary-safe
  bytes += "tail";
  std::ofstream(path, std::ios::binary) << bytes;
  absl::StatusOr<std::string> text = ReadInputFile(path);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, bytes);
}

TEST_F(InputFileTest, MissingFileIsNotFoundNamingThePath) {
  absl::StatusOr<std::string> text = ReadInputFile((dir_ / "nope.json").string());
  EXPECT_EQ(text.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(text.status().message().find("nope.json"), std::string::npos);
  EXPECT_NE(text.status().message().find("check the path"), std::string::npos);
}

TEST_F(InputFileTest, ForAFieldTheErrorNamesTheFieldAndKeepsTheCode) {
  const std::string path = (dir_ / "nope.csv").string();
  absl::StatusOr<std::string> text = ReadInputFileFor(path, "inference.workload.lengths_file");
  EXPECT_EQ(text.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(text.status().message().rfind("inference.workload.lengths_file=" + path + ": ", 0), 0u)
      << text.status();
  EXPECT_NE(text.status().message().find("relative paths resolve"), std::string::npos);
}

// Fuzzing found `clustersim run /dev/zero` reading until memory ran out.
TEST_F(InputFileTest, RefusesDevZeroInsteadOfReadingForever) {
  absl::StatusOr<std::string> text = ReadInputFile("/dev/zero");
  EXPECT_EQ(text.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(text.status().message().find("/dev/zero: not a regular file"), std::string::npos)
      << text.status();
}

TEST_F(InputFileTest, RefusesAFolder) {
  absl::StatusOr<std::string> text = ReadInputFile(dir_.string());
  EXPECT_EQ(text.status().code(), absl::StatusCode::kInvalidArgument) << text.status();
}

// A FIFO with no writer would block a plain open(); it is refused at once.
TEST_F(InputFileTest, RefusesAFifoWithoutWaitingForAWriter) {
  const std::string path = (dir_ / "fifo").string();
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  absl::StatusOr<std::string> text = ReadInputFile(path);
  EXPECT_EQ(text.status().code(), absl::StatusCode::kInvalidArgument) << text.status();
}

TEST_F(InputFileTest, RefusesAFileOverTheLimitAndAcceptsOneAtIt) {
  const std::filesystem::path path = dir_ / "big.csv";
  std::ofstream(path) << "x";
  std::filesystem::resize_file(path, kMaxInputFileBytes + 1);  // sparse: no disk used
  absl::StatusOr<std::string> text = ReadInputFile(path.string());
  EXPECT_EQ(text.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(text.status().message().find("64 MiB limit"), std::string::npos) << text.status();
  std::filesystem::resize_file(path, kMaxInputFileBytes);
  text = ReadInputFile(path.string());
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(static_cast<int64_t>(text->size()), kMaxInputFileBytes);
}

}  // namespace
}  // namespace clustersim::sim
