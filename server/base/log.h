// Logging: Redis-style lines "pid:role dd Mon yyyy hh:mm:ss.mmm * message" on the log
// file (standard output by default). Thread-safety: any thread; each line is one write.
#pragma once

#include <string>

namespace strata {

enum class LogLevel { kDebug = 0, kVerbose = 1, kNotice = 2, kWarning = 3 };

void SetLogLevel(LogLevel level);
// Opens `path` for appending; "" keeps standard output. Returns false on error.
bool SetLogFile(const std::string& path, std::string* error);
void Log(LogLevel level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

#define LogNotice(...) ::strata::Log(::strata::LogLevel::kNotice, __VA_ARGS__)
#define LogWarning(...) ::strata::Log(::strata::LogLevel::kWarning, __VA_ARGS__)
#define LogVerbose(...) ::strata::Log(::strata::LogLevel::kVerbose, __VA_ARGS__)

}  // namespace strata
