// DUMP payloads: one value in RDB encoding, then the RDB version (2 bytes, little-endian)
// and the CRC-64 of everything before (8 bytes, little-endian), byte-compatible with
// Redis's DUMP and RESTORE (docs/FORMAT.md "RDB").
//
// strata writes the lowest version that defines the value's type id (6 for strings and
// intsets, 10 for listpacks and quicklist 2), so that an older Redis accepts what it can
// read; Redis 7.0 reads every payload strata writes. Parsing accepts versions up to 12
// (Redis 7.4) and Valkey 9's 80, checks the checksum, decodes the value in full and
// requires it to end exactly at the footer.
//
// Thread-safety: pure functions; any thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/entry.h"
#include "storage/rdb_value.h"

namespace strata::rdb {

// The payload of a strata value (a string, or a collection's canonical form).
std::string MakeDumpPayload(ValueType type, std::string_view data, const EncodeOptions& opts);

enum class PayloadStatus : uint8_t {
  kOk,
  kBadFooter,  // too short, a version this reader does not know, or a wrong checksum
  kBadData,    // the value is malformed, empty, or does not end at the footer
};

// Parses a payload into *out; *error says what was wrong (for logs and the tool).
PayloadStatus ParseDumpPayload(std::string_view payload, const DecodeOptions& opts, RdbValue* out,
                               std::string* error);

// FUNCTION DUMP's payload: each library as a FUNCTION2 record (the opcode, then its code
// as an RDB string), then the same footer (version 10, as Redis 7.0 writes). Parsing
// accepts the versions above, checks the checksum and that every record is a library.
std::string MakeFunctionPayload(const std::vector<std::string>& codes);
PayloadStatus ParseFunctionPayload(std::string_view payload, std::vector<std::string>* codes,
                                   std::string* error);

}  // namespace strata::rdb
