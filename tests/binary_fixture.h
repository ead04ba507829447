// File: tests/binary_fixture.h
//
// A GoogleTest fixture for tests that run the built clustersim binary: the
// source and binary directories (CTest sets CLUSTERSIM_SOURCE_DIR and
// CLUSTERSIM_BINARY_DIR) and a fresh per-process temporary folder, removed
// after each test.
//
// Example:
//   class MyTest : public BinaryFixture {
//    protected:
//     MyTest() : BinaryFixture("clustersim_my_") {}
//   };
//   TEST_F(MyTest, Runs) { std::system((bin_ + " run ... >" + (dir_ / "out").string()).c_str()); }
#ifndef CLUSTERSIM_TESTS_BINARY_FIXTURE_H_
#define CLUSTERSIM_TESTS_BINARY_FIXTURE_H_

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "gtest/gtest.h"

namespace clustersim {

class BinaryFixture : public ::testing::Test {
 protected:
  // `temp_prefix` names the folder under the system temp directory (the pid is appended).
  explicit BinaryFixture(std::string temp_prefix) : temp_prefix_(std::move(temp_prefix)) {}

  void SetUp() override {
    src_ = std::getenv("CLUSTERSIM_SOURCE_DIR");
    bin_ = std::string(std::getenv("CLUSTERSIM_BINARY_DIR")) + "/cli/clustersim";
    dir_ = std::filesystem::temp_directory_path() / (temp_prefix_ + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string src_, bin_;
  std::filesystem::path dir_;

 private:
  std::string temp_prefix_;
};

}  // namespace clustersim

#endif  // CLUSTERSIM_TESTS_BINARY_FIXTURE_H_
