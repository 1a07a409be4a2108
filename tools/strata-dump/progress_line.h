// ProgressLine: how a long verb shows progress - on a terminal, one redrawn line with a
// bar, keys, bytes, rate and ETA; otherwise a plain line every kPlainIntervalS seconds
// (logs and CI), and a last line at the end either way.
//
// Thread-safety: the caller's thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

#include "tools/strata-mem/progress.h"

namespace strata::dump {

class ProgressLine {
 public:
  static constexpr int kPlainIntervalS = 5;
  ProgressLine(mem::ProgressMode mode, std::string label, FILE* out = stderr);
  // done/total in the source's unit (bytes of a file, keys of a server; total 0 when
  // unknown), with the keys and value bytes written so far.
  void Update(uint64_t done, uint64_t total, uint64_t keys, uint64_t bytes, bool force = false);
  void Finish(uint64_t keys, uint64_t bytes);
  // The text of one update: pure, for tests.
  static std::string Format(const std::string& label, uint64_t done, uint64_t total, uint64_t keys,
                            uint64_t bytes, double seconds, bool bar);

 private:
  bool tty_;
  std::string label_;
  FILE* out_;
  std::chrono::steady_clock::time_point start_, last_;
  bool drawn_ = false;
};

}  // namespace strata::dump
