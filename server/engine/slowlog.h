// The slow log (SLOWLOG) and the latency monitor's samples (LATENCY), process-wide.
//
// Recording. Every command's run is already timed for INFO commandstats (CycleClock
// ticks; Worker::CountCall). Each worker keeps, refreshed once per loop turn and at its
// own CONFIG SET, the least number of ticks that is worth a look: the smaller of
// slowlog-log-slower-than and latency-monitor-threshold, or "never". A command under it
// costs one comparison; one over it comes here, which happens for slow commands only.
//
// Storage. One list for the whole process, under a mutex, as Redis has one list: entries
// carry a process-wide id, so SLOWLOG GET gives the newest first across every worker, and
// slowlog-max-len bounds the whole. With slowlog-log-slower-than 0 (log everything) every
// command takes the mutex; that setting is for debugging, as in Redis.
//
// What an entry holds, as Redis 7: id, the Unix time, the duration in microseconds, at
// most 32 arguments (the 32nd says how many more there were) of at most 128 bytes each
// (the rest counted as "... (N more bytes)"), the client's address and name. Secrets are
// not kept: AUTH's arguments, HELLO's AUTH pair, MIGRATE's AUTH/AUTH2 passwords and
// CONFIG SET of requirepass/masterauth are "(redacted)". EXEC is not logged (the
// commands it ran are); a blocking command is logged for its own run, never for the time
// it waited.
//
// The latency monitor keeps, per event ("command", "fast-command"), the last 160 samples
// of at most one per second (the worst of that second) and the worst ever, in
// milliseconds, when latency-monitor-threshold is on and a run reached it.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "server/engine/command.h"

namespace strata {

// Which arguments of a call are secrets, shown as kRedactedArgument by SLOWLOG and MONITOR:
// AUTH's, HELLO's AUTH pair, MIGRATE's AUTH/AUTH2 passwords, CONFIG SET requirepass and
// masterauth values, and everything after ACL SETUSER (its rules hold passwords).
inline constexpr std::string_view kRedactedArgument = "(redacted)";
std::vector<bool> SecretArguments(const CommandSpec* spec, CmdArgs args);

struct SlowLogEntry {
  uint64_t id = 0;
  int64_t time_sec = 0;
  uint64_t duration_us = 0;
  std::vector<std::string> args;
  std::string addr;
  std::string name;
};

struct LatencySample {
  int64_t time_sec = 0;
  uint32_t latency_ms = 0;
};

struct LatencyEvent {
  std::deque<LatencySample> samples;  // oldest first, at most kLatencySamples
  uint32_t max_ms = 0;
};

class SlowLog {
 public:
  static constexpr size_t kMaxArgs = 32;
  static constexpr size_t kMaxArgBytes = 128;
  static constexpr size_t kLatencySamples = 160;

  // Logs a command that took duration_us, keeping at most max_len entries.
  void Add(const CommandSpec* spec, CmdArgs args, uint64_t duration_us, std::string addr,
           std::string name, int64_t now_sec, size_t max_len);
  // The newest `count` entries, newest first (all of them when count < 0).
  std::vector<SlowLogEntry> Newest(int64_t count) const;
  size_t Length() const;
  void Reset();
  // Drops entries beyond max_len (slowlog-max-len lowered).
  void Trim(size_t max_len);

  // The latency monitor.
  void AddLatency(std::string_view event, uint32_t latency_ms, int64_t now_sec);
  std::map<std::string, LatencyEvent> LatencyEvents() const;
  // Resets the named events (all of them when names is empty); the number reset.
  size_t ResetLatency(const std::vector<std::string>& names);

  // The arguments an entry keeps (truncated, secrets redacted).
  static std::vector<std::string> EntryArgs(const CommandSpec* spec, CmdArgs args);

 private:
  mutable std::mutex mu_;
  std::deque<SlowLogEntry> entries_;  // newest first
  uint64_t next_id_ = 0;
  std::map<std::string, LatencyEvent, std::less<>> latency_;
};

}  // namespace strata
