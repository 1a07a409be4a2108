#include "tools/strata-dump/progress_line.h"

#include <unistd.h>

#include "tools/strata-mem/escape.h"

namespace strata::dump {

ProgressLine::ProgressLine(mem::ProgressMode mode, std::string label, FILE* out)
    : tty_(mode == mem::ProgressMode::kOn ||
           (mode == mem::ProgressMode::kAuto && isatty(fileno(out)))),
      label_(std::move(label)),
      out_(out),
      start_(std::chrono::steady_clock::now()),
      last_(start_) {
  if (mode == mem::ProgressMode::kOff) out_ = nullptr;
}

std::string ProgressLine::Format(const std::string& label, uint64_t done, uint64_t total,
                                 uint64_t keys, uint64_t bytes, double seconds, bool bar) {
  std::string s = label + ":";
  if (bar && total > 0) {
    int width = 20;
    int filled = static_cast<int>(static_cast<double>(done) / static_cast<double>(total) * width);
    if (filled > width) filled = width;
    s += " [" + std::string(static_cast<size_t>(filled), '#') +
         std::string(static_cast<size_t>(width - filled), ' ') + "]";
  }
  if (total > 0) {
    s += " " + std::to_string(done * 100 / total) + "%";
  }
  double rate = seconds > 0 ? static_cast<double>(keys) / seconds : 0;
  s += " " + std::to_string(keys) + " keys, " + mem::HumanBytes(static_cast<double>(bytes)) + ", " +
       std::to_string(static_cast<uint64_t>(rate)) + " keys/s";
  if (total > 0 && done > 0 && done < total && seconds > 0) {
    double eta = seconds * static_cast<double>(total - done) / static_cast<double>(done);
    int e = static_cast<int>(eta);
    char buf[32];
    std::snprintf(buf, sizeof(buf), ", ETA %d:%02d", e / 60, e % 60);
    s += buf;
  }
  return s;
}

void ProgressLine::Update(uint64_t done, uint64_t total, uint64_t keys, uint64_t bytes,
                          bool force) {
  if (out_ == nullptr) return;
  auto now = std::chrono::steady_clock::now();
  auto since = now - last_;
  if (!force && (tty_ ? since < std::chrono::milliseconds(200)
                      : since < std::chrono::seconds(kPlainIntervalS))) {
    return;
  }
  last_ = now;
  double secs = std::chrono::duration<double>(now - start_).count();
  std::string line = Format(label_, done, total, keys, bytes, secs, tty_);
  if (tty_) {
    std::fprintf(out_, "\r%s\033[K", line.c_str());
    drawn_ = true;
  } else {
    std::fprintf(out_, "%s\n", line.c_str());
  }
  std::fflush(out_);
}

void ProgressLine::Finish(uint64_t keys, uint64_t bytes) {
  if (out_ == nullptr) return;
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::string line = Format(label_, 0, 0, keys, bytes, secs, false);
  char buf[48];
  std::snprintf(buf, sizeof(buf), " in %.2f s", secs);
  std::fprintf(out_, "%s%s%s\n", tty_ && drawn_ ? "\r\033[K" : "", line.c_str(), buf);
  std::fflush(out_);
}

}  // namespace strata::dump
