// strata-dump: dump, restore, copy, verify and inspect between strata, Redis and Valkey
// (docs/STRATA-DUMP.md).
#include <signal.h>

#include <cstdio>
#include <string>
#include <vector>

#include "tools/strata-dump/cli.h"

namespace {
void OnSignal(int) { strata::dump::Stop(); }
}  // namespace

int main(int argc, char** argv) {
  using namespace strata::dump;
  signal(SIGPIPE, SIG_IGN);
  struct sigaction sa = {};
  sa.sa_handler = OnSignal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  std::vector<std::string> args(argv, argv + argc);
  CliResult cli = ParseCommandLine(args);
  switch (cli.verb) {
    case CliResult::Verb::kExit:
      std::fputs(cli.output.c_str(), cli.exit_code == 0 ? stdout : stderr);
      return cli.exit_code;
    case CliResult::Verb::kDump:
      return RunDump(cli.dump, stdout);
    case CliResult::Verb::kRestore:
      return RunRestore(cli.restore, stdout);
    case CliResult::Verb::kCopy:
      return RunCopy(cli.copy, stdout);
    case CliResult::Verb::kVerify:
      return RunVerify(cli.verify, stdout);
    case CliResult::Verb::kInspect:
      return RunInspect(cli.inspect, stdout);
  }
  return 1;
}
