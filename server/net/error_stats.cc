#include "server/net/error_stats.h"

#include <algorithm>
#include <atomic>
#include <cstring>

namespace strata {
namespace {
thread_local ErrorStats* t_error_stats = nullptr;
std::atomic<void (*)()> g_on_codes_disabled{nullptr};
}  // namespace

std::string_view ErrorStats::CodeOf(std::string_view msg) {
  // Redis looks for the space within the first 32 bytes of the reply, its '-' included.
  const void* space =
      std::memchr(msg.data(), ' ', std::min<size_t>(msg.size(), kCodeSearchBytes - 1));
  if (space == nullptr) return "ERR";
  size_t n = static_cast<size_t>(static_cast<const char*>(space) - msg.data());
  if (n == 0) return "ERR";
  return msg.substr(0, n);
}

void ErrorStats::Count(std::string_view msg) {
  total++;
  std::string_view code = codes_disabled ? kDisabledCode : CodeOf(msg);
  auto it = by_code.find(code);
  if (it != by_code.end()) {
    it->second++;
    return;
  }
  if (by_code.size() >= kMaxCodes) {
    by_code.clear();
    codes_disabled = true;
    code = kDisabledCode;
    if (auto hook = g_on_codes_disabled.load(std::memory_order_relaxed)) hook();
  }
  by_code.emplace(std::string(code), 1);
}

void ErrorStats::Add(const ErrorStats& other) {
  total += other.total;
  codes_disabled |= other.codes_disabled;
  for (const auto& [code, n] : other.by_code) by_code[code] += n;
}

void ErrorStats::SetForThisThread(ErrorStats* stats) { t_error_stats = stats; }
ErrorStats* ErrorStats::ForThisThread() { return t_error_stats; }
void ErrorStats::SetCodesDisabledHook(void (*hook)()) {
  g_on_codes_disabled.store(hook, std::memory_order_relaxed);
}

}  // namespace strata
