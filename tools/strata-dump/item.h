// Item: one key on its way through strata-dump - read from an RDB file, a live server's
// DUMP replies or a replication transfer, and written to a file or a server.
//
// The value stays in RDB encoding as its source had it (the bytes after the key in a
// file, a DUMP payload without its footer), so a restore passes it on as a RESTORE
// payload without decoding it; only verify, inspect and the fallbacks decode it.
//
// Thread-safety: a value type.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace strata::dump {

struct Item {
  uint32_t db = 0;
  std::string key;
  uint8_t type_id = 0;
  std::string value;       // the value's RDB bytes, after the type id
  int64_t expire_ms = -1;  // absolute unix ms, -1 for none
  int64_t idle_s = -1;
  int freq = -1;
  // A DUMP payload of the value: type id, value, the lowest RDB version that defines
  // the type id, CRC-64.
  std::string Payload() const;
  // Appends `RESTORE key ttl <payload> [ABSTTL] [REPLACE] [IDLETIME n | FREQ n]` as a
  // RESP command, building the payload in place (no copy of the value but this one).
  void AppendRestore(bool replace, std::string* out) const;
};

// Exit codes, for scripts.
enum ExitCode : int {
  kExitOk = 0,
  kExitDifferences = 1,  // verify found differences
  kExitUsage = 2,
  kExitConnection = 3,   // unreachable server, wrong password, refused handshake
  kExitData = 4,         // a damaged file or payload, a value that cannot be written
  kExitTarget = 5,       // the target refused a write
  kExitInterrupted = 6,  // stopped by a signal (a checkpoint is kept with --resume)
};

}  // namespace strata::dump
