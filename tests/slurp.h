// File: tests/slurp.h
//
// A whole file's bytes, for tests that compare what the clustersim binary
// wrote. A missing file reads as "".
#ifndef CLUSTERSIM_TESTS_SLURP_H_
#define CLUSTERSIM_TESTS_SLURP_H_

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace clustersim {

inline std::string Slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace clustersim

#endif  // CLUSTERSIM_TESTS_SLURP_H_
