// Helpers shared by the stream unit tests.
#pragma once

#include <cstdint>

#include "core/stream_type.h"

namespace strata::test {

inline StreamId Id(uint64_t ms, uint64_t seq) { return StreamId{ms, seq}; }

}  // namespace strata::test
