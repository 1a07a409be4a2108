#include "tools/strata-bench/client_plan.h"

#include <algorithm>
#include <limits>

namespace strata::bench {

uint64_t AllKeysTarget(const Options& o, uint32_t client_index, const KeyGenerator& set_keys,
                       const KeyGenerator& get_keys) {
  const bool sets = o.ratio_sets > 0;
  const KeyGenerator& g = sets ? set_keys : get_keys;
  const KeyPattern pattern = sets ? o.set_pattern : o.get_pattern;
  const uint64_t per = std::max<uint32_t>(1, sets ? o.multi_key_set : o.multi_key_get);
  const uint64_t range = o.keys.max - o.keys.min + 1;  // 0 only for the full 2^64 range
  if (pattern == KeyPattern::kParallel && range != 0 && range < o.total_clients() &&
      client_index >= range) {
    return 0;
  }
  const uint64_t keys = g.hi() - g.lo() + 1;
  return keys == 0 ? std::numeric_limits<uint64_t>::max() : (keys + per - 1) / per;
}

size_t InitialOutCapacity(const Options& o, const RequestWriter& w) {
  size_t largest = w.MaxSize(o.multi_key_get > 0 ? RequestKind::kMGet : RequestKind::kGet,
                             std::max<uint32_t>(1, o.multi_key_get));
  if (o.ratio_sets > 0) {
    largest =
        std::max(largest, w.MaxSize(o.multi_key_set > 0 ? RequestKind::kMSet : RequestKind::kSet,
                                    std::max<uint32_t>(1, o.multi_key_set)));
  }
  return std::max<size_t>(4096, largest * std::min<uint32_t>(o.pipeline, 64));
}

}  // namespace strata::bench
