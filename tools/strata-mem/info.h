// INFO replies: parsing "field:value" lines, and the few figures strata-mem reads.
//
// Fields read, all optional except where a caller says otherwise:
//   INFO memory: used_memory, used_memory_rss
//   INFO server: server_name, strata_version, valkey_version, redis_version
// Thread-safety: value types and pure functions, plus one helper over a client.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "tools/strata-mem/resp_client.h"

namespace strata::mem {

using InfoFields = std::map<std::string, std::string, std::less<>>;

// "# Section" lines and blank lines are skipped; CRLF or LF line ends.
InfoFields ParseInfo(std::string_view text);
std::optional<uint64_t> InfoUint(const InfoFields& fields, std::string_view name);

struct MemoryFigures {
  uint64_t used_memory = 0;
  uint64_t used_memory_rss = 0;
};

struct ServerIdentity {
  std::string name;     // "strata", "valkey", "redis", or server_name when given
  std::string version;  // that server's own version

  // "redis 7.0.15", "strata" (no version), or "unknown" (neither).
  std::string Describe() const;
};

ServerIdentity IdentifyServer(const InfoFields& server_section);

// Sends INFO <section> and parses it; fails on an error reply or a non-bulk reply.
bool FetchInfo(RespClient* client, std::string_view section, InfoFields* out, std::string* error);
// INFO memory; fails with a clear message if used_memory or used_memory_rss is missing.
bool FetchMemory(RespClient* client, MemoryFigures* out, std::string* error);

}  // namespace strata::mem
