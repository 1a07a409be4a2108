#include "tools/strata-mem/progress.h"

#include <unistd.h>

#include <algorithm>

namespace strata::mem {

bool ProgressEnabled(ProgressMode mode, int fd) {
  switch (mode) {
    case ProgressMode::kOn:
      return true;
    case ProgressMode::kOff:
      return false;
    case ProgressMode::kAuto:
      return ::isatty(fd) == 1;
  }
  return false;
}

std::string FormatProgress(const std::string& label, uint64_t done, uint64_t total, double per_sec,
                           int width) {
  double fraction = total == 0 ? 1.0 : std::min(1.0, static_cast<double>(done) / total);
  int filled = static_cast<int>(fraction * width);
  std::string bar =
      label + " [" + std::string(filled, '#') + std::string(width - filled, ' ') + "] ";
  char tail[96];
  std::snprintf(tail, sizeof(tail), "%3d%% %llu/%llu keys %.0f keys/s",
                static_cast<int>(fraction * 100), static_cast<unsigned long long>(done),
                static_cast<unsigned long long>(total), per_sec);
  return bar + tail;
}

Progress::Progress(bool enabled, std::string label, uint64_t total, FILE* out)
    : enabled_(enabled),
      label_(std::move(label)),
      total_(total),
      out_(out),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_ - kRedrawInterval) {}

void Progress::Draw(uint64_t done) {
  auto now = std::chrono::steady_clock::now();
  double secs = std::chrono::duration<double>(now - start_).count();
  double rate = secs > 0 ? static_cast<double>(done) / secs : 0.0;
  std::string line = FormatProgress(label_, done, total_, rate, kBarWidth);
  // "\x1b[K" clears what a longer previous line left behind.
  std::fprintf(out_, "\r%s\x1b[K", line.c_str());
  std::fflush(out_);
  drawn_ = true;
  last_draw_ = now;
}

void Progress::Update(uint64_t done) {
  if (!enabled_) return;
  auto now = std::chrono::steady_clock::now();
  if (now - last_draw_ < kRedrawInterval) return;
  Draw(done);
}

void Progress::Finish(uint64_t done) {
  if (!enabled_) return;
  Draw(done);
  std::fputc('\n', out_);
  std::fflush(out_);
  drawn_ = false;
}

void Progress::Abandon() {
  if (!enabled_ || !drawn_) return;
  std::fputs("\r\x1b[K", out_);
  std::fflush(out_);
  drawn_ = false;
}

}  // namespace strata::mem
