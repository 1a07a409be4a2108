// notify-keyspace-events: which keyspace notifications are published, as Redis's flag
// letters (K E g $ l s h z x e t m d n A) and its bit values.
//
// The setting is process-wide and read on every write that could notify, so its current
// bits live in one atomic (g_notify_flags) that a command tests with one relaxed load:
// with notifications off that load and a branch are all they cost.
// Thread-safety: the parse and render functions are pure; g_notify_flags is written by
// the config (CONFIG SET, start-up) and read by every worker.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

namespace strata {

enum NotifyClass : uint32_t {
  kNotifyKeyspace = 1 << 0,  // K: __keyspace@<db>__:<key> channels
  kNotifyKeyevent = 1 << 1,  // E: __keyevent@<db>__:<event> channels
  kNotifyGeneric = 1 << 2,   // g: DEL, EXPIRE, RENAME, ...
  kNotifyString = 1 << 3,    // $
  kNotifyList = 1 << 4,      // l
  kNotifySet = 1 << 5,       // s
  kNotifyHash = 1 << 6,      // h
  kNotifyZSet = 1 << 7,      // z
  kNotifyExpired = 1 << 8,   // x
  kNotifyEvicted = 1 << 9,   // e
  kNotifyStream = 1 << 10,   // t
  kNotifyKeyMiss = 1 << 11,  // m (not part of A)
  kNotifyModule = 1 << 13,   // d
  kNotifyNew = 1 << 14,      // n (not part of A)
  kNotifyAll = kNotifyGeneric | kNotifyString | kNotifyList | kNotifySet | kNotifyHash |
               kNotifyZSet | kNotifyExpired | kNotifyEvicted | kNotifyStream | kNotifyModule,
};

// The setting's bits.
inline std::atomic<uint32_t> g_notify_flags{0};

// What NotifyKeyspaceEvent tests: the setting's bits, plus every change class and
// kNotifyTracking while a client tracks keys (client-side caching learns of changes
// through the same calls; server/engine/tracking.h). Written only through
// SetNotifyFlags and SetTrackingGate.
inline constexpr uint32_t kNotifyTracking = 1u << 20;
inline std::atomic<uint32_t> g_notify_gate{0};
void SetNotifyFlags(uint32_t flags);
// Opens the gate while `refs` > 0 (read under the setters' lock, so two workers changing
// the count at once leave the gate as the count says).
void SetTrackingGate(const std::atomic<int64_t>& refs);

// Redis's letters to bits; false on a letter it does not know.
bool ParseNotifyFlags(std::string_view text, uint32_t* flags);
// Bits to the text CONFIG GET shows (Redis 7.0's: A or the class letters g$lshzxetdn,
// then K E m; n is not shown next to A, though it stays on).
std::string RenderNotifyFlags(uint32_t flags);

}  // namespace strata
