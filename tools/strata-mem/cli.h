// Command line of strata-mem (CLI11): the `bench` and `report` subcommands, their flags,
// defaults, limits and --help text, parsed into BenchOptions / ReportOptions.
//
// Parsing prints nothing: help, version and error texts are returned in CliResult so
// main() decides where they go (and tests can look at them). Exit codes: 0 for --help
// and --version, 2 for a usage error (unknown flag, value out of range, bad host:port).
// Thread-safety: pure function.
#pragma once

#include <string>
#include <vector>

#include "tools/strata-mem/bench_cmd.h"
#include "tools/strata-mem/report_cmd.h"

namespace strata::mem {

struct CliResult {
  enum class Action { kBench, kReport, kExit };
  Action action = Action::kExit;
  int exit_code = 0;   // for kExit
  std::string output;  // for kExit: help/version text (stdout) or error text (stderr)
  BenchOptions bench;
  ReportOptions report;
};

// args[0] is the program name.
CliResult ParseCommandLine(const std::vector<std::string>& args);

}  // namespace strata::mem
