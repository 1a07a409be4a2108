#include "server/base/notify_flags.h"

#include <mutex>

namespace strata {

namespace {
std::mutex g_gate_mu;
bool g_tracking_open = false;

void RecomputeGate() {
  uint32_t gate = g_notify_flags.load(std::memory_order_relaxed);
  if (g_tracking_open) gate |= kNotifyAll | kNotifyTracking;
  g_notify_gate.store(gate, std::memory_order_relaxed);
}
}  // namespace

void SetNotifyFlags(uint32_t flags) {
  std::lock_guard<std::mutex> l(g_gate_mu);
  g_notify_flags.store(flags, std::memory_order_relaxed);
  RecomputeGate();
}

void SetTrackingGate(const std::atomic<int64_t>& refs) {
  std::lock_guard<std::mutex> l(g_gate_mu);
  g_tracking_open = refs.load(std::memory_order_relaxed) > 0;
  RecomputeGate();
}

bool ParseNotifyFlags(std::string_view text, uint32_t* flags) {
  uint32_t f = 0;
  for (char c : text) {
    switch (c) {
      case 'A':
        f |= kNotifyAll;
        break;
      case 'g':
        f |= kNotifyGeneric;
        break;
      case '$':
        f |= kNotifyString;
        break;
      case 'l':
        f |= kNotifyList;
        break;
      case 's':
        f |= kNotifySet;
        break;
      case 'h':
        f |= kNotifyHash;
        break;
      case 'z':
        f |= kNotifyZSet;
        break;
      case 'x':
        f |= kNotifyExpired;
        break;
      case 'e':
        f |= kNotifyEvicted;
        break;
      case 'K':
        f |= kNotifyKeyspace;
        break;
      case 'E':
        f |= kNotifyKeyevent;
        break;
      case 't':
        f |= kNotifyStream;
        break;
      case 'm':
        f |= kNotifyKeyMiss;
        break;
      case 'd':
        f |= kNotifyModule;
        break;
      case 'n':
        f |= kNotifyNew;
        break;
      default:
        return false;
    }
  }
  *flags = f;
  return true;
}

std::string RenderNotifyFlags(uint32_t flags) {
  std::string out;
  if ((flags & kNotifyAll) == kNotifyAll) {
    out += 'A';
  } else {
    if (flags & kNotifyGeneric) out += 'g';
    if (flags & kNotifyString) out += '$';
    if (flags & kNotifyList) out += 'l';
    if (flags & kNotifySet) out += 's';
    if (flags & kNotifyHash) out += 'h';
    if (flags & kNotifyZSet) out += 'z';
    if (flags & kNotifyExpired) out += 'x';
    if (flags & kNotifyEvicted) out += 'e';
    if (flags & kNotifyStream) out += 't';
    if (flags & kNotifyModule) out += 'd';
    // Redis 7.0 writes n only here: next to A it is kept but not shown.
    if (flags & kNotifyNew) out += 'n';
  }
  if (flags & kNotifyKeyspace) out += 'K';
  if (flags & kNotifyKeyevent) out += 'E';
  if (flags & kNotifyKeyMiss) out += 'm';
  return out;
}

}  // namespace strata
