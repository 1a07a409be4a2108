// strata-mem: memory-efficiency tools for Redis-compatible servers (bench, report).
#include <signal.h>

#include <cstdio>
#include <string>
#include <vector>

#include "tools/strata-mem/cli.h"

int main(int argc, char** argv) {
  using namespace strata::mem;
  // A server that closes the connection is seen as a send error, not a signal.
  signal(SIGPIPE, SIG_IGN);
  std::vector<std::string> args(argv, argv + argc);
  CliResult cli = ParseCommandLine(args);
  switch (cli.action) {
    case CliResult::Action::kExit:
      std::fputs(cli.output.c_str(), cli.exit_code == 0 ? stdout : stderr);
      return cli.exit_code;
    case CliResult::Action::kBench:
      return RunBench(cli.bench, stdout);
    case CliResult::Action::kReport:
      return RunReport(cli.report, stdout);
  }
  return 1;
}
