#include "tools/strata-mem/rate_limit.h"

#include <algorithm>

namespace strata::mem {

TokenBucket::TokenBucket(double rate, double burst, double now_s)
    : rate_(rate),
      burst_(burst > 0 ? burst : std::max(1.0, rate / 10)),
      tokens_(0),
      last_s_(now_s) {}

double TokenBucket::Take(double n, double now_s) {
  if (unlimited()) return 0;
  if (now_s > last_s_) {
    tokens_ = std::min(burst_, tokens_ + (now_s - last_s_) * rate_);
    last_s_ = now_s;
  }
  tokens_ -= n;
  if (tokens_ >= 0) return 0;
  return -tokens_ / rate_;
}

}  // namespace strata::mem
