#include "server/base/log.h"

#include <fcntl.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <ctime>

namespace strata {
namespace {
std::atomic<int> g_level{static_cast<int>(LogLevel::kNotice)};
std::atomic<int> g_fd{STDOUT_FILENO};
}  // namespace

void SetLogLevel(LogLevel level) { g_level.store(static_cast<int>(level)); }

bool SetLogFile(const std::string& path, std::string* error) {
  if (path.empty()) return true;
  int fd = open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    *error = "Can't open the log file: " + std::string(std::strerror(errno));
    return false;
  }
  g_fd.store(fd);
  return true;
}

void Log(LogLevel level, const char* fmt, ...) {
  if (static_cast<int>(level) < g_level.load(std::memory_order_relaxed)) return;
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  timeval tv;
  gettimeofday(&tv, nullptr);
  tm tm_now;
  localtime_r(&tv.tv_sec, &tm_now);
  char ts[64];
  size_t off = strftime(ts, sizeof(ts), "%d %b %Y %H:%M:%S.", &tm_now);
  snprintf(ts + off, sizeof(ts) - off, "%03d", static_cast<int>(tv.tv_usec / 1000));
  const char marks[] = ".-*#";
  char line[1200];
  int n = snprintf(line, sizeof(line), "%d:M %s %c %s\n", static_cast<int>(getpid()), ts,
                   marks[static_cast<int>(level)], msg);
  if (n > 0) {
    ssize_t w = write(g_fd.load(std::memory_order_relaxed), line,
                      std::min(static_cast<size_t>(n), sizeof(line) - 1));
    (void)w;  // logging never fails a command
  }
}

}  // namespace strata
