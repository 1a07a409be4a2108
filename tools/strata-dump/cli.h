// The command line of strata-dump (CLI11): the verbs, their options and the help text.
// Thread-safety: main thread.
#pragma once

#include <string>
#include <vector>

#include "tools/strata-dump/verbs.h"

namespace strata::dump {

struct CliResult {
  enum class Verb { kExit, kDump, kRestore, kCopy, kVerify, kInspect };
  Verb verb = Verb::kExit;
  int exit_code = 0;
  std::string output;  // help or a usage error, for kExit
  DumpOptions dump;
  RestoreVerbOptions restore;
  CopyOptions copy;
  VerifyOptions verify;
  InspectOptions inspect;
};

CliResult ParseCommandLine(const std::vector<std::string>& args);

// "0:1" -> {0: 1}; false with *error for a malformed pair.
bool ParseDbMap(const std::vector<std::string>& pairs, std::map<uint32_t, uint32_t>* out,
                std::string* error);
// "64mb", "1gb", "1000" -> bytes.
bool ParseBytes(const std::string& text, uint64_t* out);

}  // namespace strata::dump
