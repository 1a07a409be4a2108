// Streams in Redis's RDB encoding (docs/FORMAT.md "RDB", streams): reading the stream
// types into an RdbStream, and writing strata's stream values as type 19 or 21. Called by
// DecodeValue and EncodeValue (rdb_value.h).
// Thread-safety: pure functions over the caller's buffers.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "storage/rdb_value.h"

namespace strata::rdb {

DecodeResult DecodeStream(uint8_t type, RdbInput* in, RdbValue* out);
uint8_t EncodeStream(std::string_view data, const EncodeOptions& o, std::string* out);

}  // namespace strata::rdb
