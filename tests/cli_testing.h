// File: tests/cli_testing.h
//
// The fixture of the tests that run the built clustersim binary as a user
// would (cli_*test.cc, validate_scenarios_cli_test.cc): Run passes a command
// line and returns the exit code, stdout and stderr (tests/binary_fixture.h
// gives the paths and the temporary folder).
#ifndef CLUSTERSIM_TESTS_CLI_TESTING_H_
#define CLUSTERSIM_TESTS_CLI_TESTING_H_

#include <cstdlib>
#include <string>

#include "tests/binary_fixture.h"
#include "tests/slurp.h"

namespace clustersim {

struct Outcome {
  int code;
  std::string out;
  std::string err;
};

class CliTest : public BinaryFixture {
 protected:
  CliTest() : BinaryFixture("clustersim_cli_") {}

  Outcome Run(const std::string& args) {
    const std::string out = (dir_ / "stdout").string();
    const std::string err = (dir_ / "stderr").string();
    const std::string cmd = bin_ + " " + args + " >" + out + " 2>" + err;
    const int status = std::system(cmd.c_str());
    return Outcome{WEXITSTATUS(status), Slurp(out), Slurp(err)};
  }
};

}  // namespace clustersim

#endif  // CLUSTERSIM_TESTS_CLI_TESTING_H_
