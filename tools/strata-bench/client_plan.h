// Client plan: what one strata-bench client is set up with, the same for a plain
// Connection and a --cluster-mode ClusterClient: how many requests -n allkeys gives it,
// and how large its connections' out buffers start.
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tools/strata-bench/options.h"
#include "tools/strata-bench/request_writer.h"
#include "tools/strata-bench/workload.h"

namespace strata::bench {

// Requests one client sends under -n allkeys: one per key of the range its requests walk
// (its own slice with P), divided by the keys per request. With P and fewer keys than
// clients, the first clients take one key each and the rest send nothing, so every key
// is still written once.
uint64_t AllKeysTarget(const Options& o, uint32_t client_index, const KeyGenerator& set_keys,
                       const KeyGenerator& get_keys);

// Room for a pipeline's worth of the largest request the mix sends (at most 64 of them;
// a deeper pipeline grows the buffer on its first batch).
size_t InitialOutCapacity(const Options& o, const RequestWriter& w);

}  // namespace strata::bench
