// Progress: a one-line progress bar on stderr ("\r[####    ] 45% 450000/1000000 keys").
//
// Drawn only when enabled: ProgressMode::kAuto enables it when stderr is a terminal,
// kOn always (--progress), kOff never (--no-progress). Redraws are limited to one per
// kRedrawInterval so a fast loop costs a clock read per Update, not a write.
// Thread-safety: one bar per thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace strata::mem {

enum class ProgressMode { kAuto, kOn, kOff };

bool ProgressEnabled(ProgressMode mode, int fd);

// The bar's text for done of total at rate per_sec (no "\r"): pure, for tests.
std::string FormatProgress(const std::string& label, uint64_t done, uint64_t total, double per_sec,
                           int width);

class Progress {
 public:
  static constexpr std::chrono::milliseconds kRedrawInterval{100};
  static constexpr int kBarWidth = 30;

  Progress(bool enabled, std::string label, uint64_t total, FILE* out = stderr);
  void Update(uint64_t done);
  // Draws the final state and ends the line.
  void Finish(uint64_t done);
  // Clears the line (on error, before a message is printed).
  void Abandon();

 private:
  void Draw(uint64_t done);

  bool enabled_;
  std::string label_;
  uint64_t total_;
  FILE* out_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
};

}  // namespace strata::mem
